#include "demoresult.h"

#include "gemmproblem.h"

#include <fmt/format.h>

#include <fstream>

namespace diode {

namespace {

std::optional<double> number(const nlohmann::json &j, const char *key, const std::string &where)
{
    if (!j.contains(key) || j[key].is_null()) return std::nullopt;
    if (!j[key].is_number()) throw InvalidInput(fmt::format("{}: '{}' must be a number", where, key));
    return j[key].get<double>();
}

} // namespace

DemoResult DemoResult::fromJson(const nlohmann::json &j, const std::string &where)
{
    if (!j.is_object()) throw InvalidInput(fmt::format("{}: a demo result must be a JSON object", where));
    if (j.value("schema", "") != "diode-demo/1")
        throw InvalidInput(fmt::format("{}: schema is '{}', this build reads 'diode-demo/1'", where, j.value("schema", "")));
    DemoResult r;
    r.gpu = j.value("gpu", "");
    r.torch = j.value("torch", "");
    r.createdAt = j.value("created_at", "");
    if (!j.contains("modes") || !j["modes"].is_array()) throw InvalidInput(fmt::format("{}: 'modes' must be a list", where));
    r.modes = j["modes"].get<std::vector<std::string>>();
    if (!j.contains("cases") || !j["cases"].is_array()) throw InvalidInput(fmt::format("{}: 'cases' must be a list", where));
    for (size_t i = 0; i < j["cases"].size(); ++i) {
        const auto &c = j["cases"][i];
        const std::string at = fmt::format("{}: cases[{}]", where, i);
        if (!c.is_object() || !c.contains("results") || !c["results"].is_object())
            throw InvalidInput(fmt::format("{}: needs 'name' and a 'results' object", at));
        DemoCase dc{c.value("name", ""), c.value("kind", "gemm"), {}};
        for (const auto &[mode, t] : c["results"].items()) {
            const std::string mat = fmt::format("{}.results.{}", at, mode);
            if (!t.is_object()) throw InvalidInput(fmt::format("{}: must be an object", mat));
            dc.results[mode] = {number(t, "compile_s", mat), number(t, "kernel_ms", mat), t.value("error", "")};
        }
        r.cases.push_back(std::move(dc));
    }
    r.summary = j.value("summary", nlohmann::json::object());
    return r;
}

DemoResult DemoResult::load(const std::string &path)
{
    std::ifstream f(path);
    if (!f) throw InvalidInput(fmt::format("cannot read '{}'", path));
    nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
    if (j.is_discarded()) throw InvalidInput(fmt::format("{}: not valid JSON", path));
    return fromJson(j, path);
}

std::string DemoResult::table() const
{
    std::string out = fmt::format("{} (torch {}), {}\n", gpu, torch, createdAt);
    out += fmt::format("{:<44}", "case: compile s / kernel us");
    for (const auto &m : modes) out += fmt::format(" {:>18}", m);
    out += '\n';
    for (const auto &c : cases) {
        out += fmt::format("{:<44}", c.name.substr(0, 44));
        for (const auto &m : modes) {
            const auto it = c.results.find(m);
            if (it == c.results.end() || !it->second.error.empty() || !it->second.compileS || !it->second.kernelMs)
                out += fmt::format(" {:>18}", it == c.results.end() ? "-" : "error");
            else
                out += fmt::format(" {:>18}", fmt::format("{:.2f} / {:.1f}", *it->second.compileS, *it->second.kernelMs * 1000));
        }
        out += '\n';
    }
    out += "\nagainst max-autotune: median compile speed-up, kernel time ratio (geomean, worst)\n";
    for (const auto &[mode, s] : summary.items()) {
        auto num = [&](const char *k) { return s.contains(k) && s[k].is_number() ? s[k].get<double>() : std::nan(""); };
        out += fmt::format("  {:<18} {:>7.1f}x  {:.3f}  {:.3f}  ({} cases)\n", mode, num("compile_speedup_median"),
                           num("kernel_time_ratio_geomean"), num("kernel_time_ratio_worst"), s.value("cases", 0));
    }
    return out;
}

} // namespace diode
