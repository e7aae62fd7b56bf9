#include "lookuptable.h"

#include "diode/infer/datafile.h"
#include "diode/infer/gemmproblem.h"
#include "diode/infer/jsonlimits.h"
#include "diode/infer/problemjson.h"

#include <fmt/format.h>

namespace diode {

void LookupTable::add(std::istream &in, const std::string &source) {
    // Decision lines are problem JSON lines: the same bounded reader, parser and limits.
    forEachDataLine(in, source, [&](int lineNo, const std::string &line) {
        const std::string where = fmt::format("{}:{}", source, lineNo);
        const nlohmann::json d = parseJsonBounded(line, where, kProblemJsonLimits);
        if (!d.is_object())
            throw InvalidInput(fmt::format("{}: expected a decision object", where));
        ++lines;
        const auto it = d.find("inductor_lookup");
        if (it == d.end()) {
            ++withoutEntry;
            return;
        }
        const auto &e = *it;
        if (!e.is_object() || !e.contains("key") || !e["key"].is_string() ||
            e["key"].get<std::string>().empty() || !e.contains("configs") || !e["configs"].is_array() ||
            e["configs"].empty())
            throw InvalidInput(
                fmt::format("{}: field 'inductor_lookup' must be an object with a non-empty string "
                            "'key' and a non-empty list 'configs'",
                            where));
        for (size_t i = 0; i < e["configs"].size(); ++i) {
            const auto &c = e["configs"][i];
            if (!c.is_object() || !c.contains("template_id") || !c["template_id"].is_string())
                throw InvalidInput(fmt::format(
                    "{}: inductor_lookup.configs[{}] must be an object with a string 'template_id'", where,
                    i));
        }
        const std::string key = e["key"].get<std::string>();
        if (table.contains(key)) {
            if (table[key] != e["configs"])
                throw InvalidInput(
                    fmt::format("{}: the GEMM of key '{}' was decided differently at {}; record "
                                "one model compile, or make one table a configuration",
                                where, key, m_origin.at(key)));
            ++repeated;
            return;
        }
        table[key] = e["configs"];
        m_origin[key] = where;
    });
}

} // namespace diode
