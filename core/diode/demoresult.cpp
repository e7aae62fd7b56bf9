#include "demoresult.h"

#include "gemmproblem.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>

namespace diode {

namespace {

std::optional<double> number(const nlohmann::json &j, const char *key, const std::string &where) {
    if (!j.contains(key) || j[key].is_null())
        return std::nullopt;
    if (!j[key].is_number())
        throw InvalidInput(fmt::format("{}: '{}' must be a number", where, key));
    return j[key].get<double>();
}

} // namespace

DemoResult DemoResult::fromJson(const nlohmann::json &j, const std::string &where) {
    if (!j.is_object())
        throw InvalidInput(fmt::format("{}: a demo result must be a JSON object", where));
    if (j.value("schema", "") != "diode-demo/1")
        throw InvalidInput(
            fmt::format("{}: schema is '{}', this build reads 'diode-demo/1'", where, j.value("schema", "")));
    DemoResult r;
    r.gpu = j.value("gpu", "");
    r.torch = j.value("torch", "");
    r.createdAt = j.value("created_at", "");
    if (!j.contains("modes") || !j["modes"].is_array())
        throw InvalidInput(fmt::format("{}: 'modes' must be a list", where));
    r.modes = j["modes"].get<std::vector<std::string>>();
    if (!j.contains("cases") || !j["cases"].is_array())
        throw InvalidInput(fmt::format("{}: 'cases' must be a list", where));
    for (size_t i = 0; i < j["cases"].size(); ++i) {
        const auto &c = j["cases"][i];
        const std::string at = fmt::format("{}: cases[{}]", where, i);
        if (!c.is_object() || !c.contains("results") || !c["results"].is_object())
            throw InvalidInput(fmt::format("{}: needs 'name' and a 'results' object", at));
        DemoCase dc{c.value("name", ""), c.value("kind", "gemm"), {}};
        for (const auto &[mode, t] : c["results"].items()) {
            const std::string mat = fmt::format("{}.results.{}", at, mode);
            if (!t.is_object())
                throw InvalidInput(fmt::format("{}: must be an object", mat));
            dc.results[mode] = {number(t, "compile_s", mat), number(t, "kernel_ms", mat),
                                t.value("error", "")};
        }
        r.cases.push_back(std::move(dc));
    }
    r.summary = j.value("summary", nlohmann::json::object());
    return r;
}

DemoResult DemoResult::load(const std::string &path) {
    std::ifstream f(path);
    if (!f)
        throw InvalidInput(fmt::format("cannot read '{}'", path));
    nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
    if (j.is_discarded())
        throw InvalidInput(fmt::format("{}: not valid JSON", path));
    return fromJson(j, path);
}

namespace {

const DemoTiming *timing(const DemoCase &c, const std::string &mode) {
    const auto it = c.results.find(mode);
    return it == c.results.end() || !it->second.error.empty() ? nullptr : &it->second;
}

} // namespace

double DemoResult::compileSpeedup(const DemoCase &c, const std::string &mode) {
    const auto *t = timing(c, mode), *ref = timing(c, kReference);
    if (!t || !ref || !t->compileS || !ref->compileS || *t->compileS <= 0)
        return std::nan("");
    return *ref->compileS / *t->compileS;
}

double DemoResult::kernelSpeedup(const DemoCase &c, const std::string &mode) {
    const auto *t = timing(c, mode), *ref = timing(c, kReference);
    if (!t || !ref || !t->kernelMs || !ref->kernelMs || *t->kernelMs <= 0 || *ref->kernelMs <= 0)
        return std::nan("");
    return *ref->kernelMs / *t->kernelMs;
}

DemoModeSummary DemoResult::summaryOf(const std::string &mode) const {
    std::vector<double> compile;
    double logSum = 0;
    DemoModeSummary s;
    s.kernelSpeedupWorst = std::nan("");
    for (const auto &c : cases) {
        if (const double v = compileSpeedup(c, mode); !std::isnan(v))
            compile.push_back(v);
        if (const double v = kernelSpeedup(c, mode); !std::isnan(v)) {
            logSum += std::log(v);
            s.kernelSpeedupWorst = s.cases++ ? std::min(s.kernelSpeedupWorst, v) : v;
        }
    }
    std::sort(compile.begin(), compile.end());
    const size_t n = compile.size();
    s.compileSpeedupMedian = n == 0  ? std::nan("")
                             : n % 2 ? compile[n / 2]
                                     : (compile[n / 2 - 1] + compile[n / 2]) / 2;
    s.kernelSpeedupGeomean = s.cases ? std::exp(logSum / s.cases) : std::nan("");
    return s;
}

std::string DemoResult::table() const {
    std::string out = fmt::format("{} (torch {}), {}\n", gpu, torch, createdAt);
    out += fmt::format("{:<44}", "case: compile s / kernel µs");
    for (const auto &m : modes)
        out += fmt::format(" {:>18}", m);
    out += '\n';
    for (const auto &c : cases) {
        out += fmt::format("{:<44}", c.name.substr(0, 44));
        for (const auto &m : modes) {
            const auto it = c.results.find(m);
            if (it == c.results.end() || !it->second.error.empty() || !it->second.compileS ||
                !it->second.kernelMs)
                out += fmt::format(" {:>18}", it == c.results.end() ? "-" : "error");
            else
                out += fmt::format(" {:>18}", fmt::format("{:.2f} / {:.1f}", *it->second.compileS,
                                                          *it->second.kernelMs * 1000));
        }
        out += '\n';
    }
    out += fmt::format(
        "\nspeed-up against {} (higher is better): compile (median), kernel (geomean, worst)\n", kReference);
    for (const auto &m : modes) {
        if (m == kReference)
            continue;
        const DemoModeSummary s = summaryOf(m);
        out += fmt::format("  {:<24} compile {:>6.1f}×  kernel {:.3f}×  worst {:.3f}×  ({} cases)\n", m,
                           s.compileSpeedupMedian, s.kernelSpeedupGeomean, s.kernelSpeedupWorst, s.cases);
    }
    return out;
}

} // namespace diode
