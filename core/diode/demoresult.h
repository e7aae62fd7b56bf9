#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace diode {

/// One compile of one case in one mode: seconds to compile, GPU time per call, or the error.
struct DemoTiming {
    std::optional<double> compileS;
    std::optional<double> kernelMs;
    std::string error;
};

struct DemoCase {
    std::string name;
    std::string kind; ///< "gemm" or "model"
    std::map<std::string, DemoTiming> results; ///< by mode
};

/// The result of `diode demo` (`python3 -m torch_diode.demo`), schema "diode-demo/1"
/// (docs/FORMATS.md): what the CLI prints as a table and the workbench's Demo page draws.
struct DemoResult {
    std::string gpu, torch, createdAt;
    std::vector<std::string> modes;
    std::vector<DemoCase> cases;
    nlohmann::json summary; ///< per mode, against max-autotune

    /// Throws InvalidInput naming the field at fault.
    static DemoResult fromJson(const nlohmann::json &j, const std::string &where);
    static DemoResult load(const std::string &path);
    /// Compile seconds and kernel microseconds per case and mode, then the summary.
    std::string table() const;
};

} // namespace diode
