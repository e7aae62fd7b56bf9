#pragma once

#include <nlohmann/json.hpp>

#include <istream>
#include <map>
#include <string>

namespace diode {

/// Inductor's own lookup table (torch._inductor.lookup_table, torch >= 2.10) made of the plugin's
/// recorded decisions (torch_diode.record_decisions: each line's `inductor_lookup` {"key",
/// "configs"}), so that a production job compiles with the same kernels and no plugin:
/// `torch._inductor.config.lookup_table.table = table`, choices handler LookupTableChoices.
struct LookupTable {
    nlohmann::json table = nlohmann::json::object(); ///< key -> [config, ...]: Inductor's format
    int lines = 0;                                   ///< decision lines read
    int withoutEntry = 0; ///< lines with no `inductor_lookup` (recorded by a torch without the table)
    int repeated = 0;     ///< lines whose key was already there with the same configs (repeated layers)

    /// Adds the decision lines of `in`; `source` names it in errors. Throws InvalidInput naming
    /// source:line for a line that is not JSON, an entry of the wrong shape, or a key already
    /// there with other configs (two decisions for one GEMM: which one is meant is not known).
    void add(std::istream &in, const std::string &source);

private:
    std::map<std::string, std::string> m_origin; ///< key -> "source:line" that set it
};

} // namespace diode
