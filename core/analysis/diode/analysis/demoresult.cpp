#include "demoresult.h"

#include "diode/infer/datafile.h"

#include "diode/analysis/wording.h"
#include "diode/infer/gemmproblem.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

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

// "[min, max]": two numbers, min first.
std::optional<std::pair<double, double>> spread(const nlohmann::json &j, const char *key,
                                                const std::string &where) {
    if (!j.contains(key) || j[key].is_null())
        return std::nullopt;
    const auto &v = j[key];
    if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_number())
        throw InvalidInput(fmt::format("{}: '{}' must be [min, max], two numbers", where, key));
    const double lo = v[0].get<double>(), hi = v[1].get<double>();
    if (lo > hi)
        throw InvalidInput(fmt::format("{}: '{}' is [{}, {}]: min above max", where, key, lo, hi));
    return std::pair{lo, hi};
}

std::vector<DemoKernel> breakdown(const nlohmann::json &j, const std::string &where) {
    std::vector<DemoKernel> out;
    if (!j.contains("breakdown") || j["breakdown"].is_null())
        return out;
    if (!j["breakdown"].is_array())
        throw InvalidInput(fmt::format("{}: 'breakdown' must be a list", where));
    for (size_t i = 0; i < j["breakdown"].size(); ++i) {
        const auto &k = j["breakdown"][i];
        const std::string at = fmt::format("{}.breakdown[{}]", where, i);
        if (!k.is_object() || !k.contains("name") || !k["name"].is_string() || !k.contains("category") ||
            !k["category"].is_string())
            throw InvalidInput(fmt::format("{}: needs 'name', 'category' and 'us'", at));
        DemoKernel kernel{k["name"].get<std::string>(), k["category"].get<std::string>(), 0};
        if (std::find(std::begin(DemoResult::kCategories), std::end(DemoResult::kCategories),
                      kernel.category) == std::end(DemoResult::kCategories))
            throw InvalidInput(fmt::format("{}: category '{}' is not one of {}", at, kernel.category,
                                           fmt::join(DemoResult::kCategories, ", ")));
        const auto us = number(k, "us", at);
        if (!us || *us < 0)
            throw InvalidInput(fmt::format("{}: 'us' must be a number of microseconds, at least 0", at));
        kernel.us = *us;
        out.push_back(std::move(kernel));
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const DemoKernel &a, const DemoKernel &b) { return a.us > b.us; });
    return out;
}

DemoCase parseCase(const nlohmann::json &c, const std::string &at) {
    if (!c.is_object() || !c.contains("results") || !c["results"].is_object())
        throw InvalidInput(fmt::format("{}: needs 'name' and a 'results' object", at));
    if (c.contains("name") && !c["name"].is_string())
        throw InvalidInput(fmt::format("{}: 'name' must be a string", at));
    DemoCase dc{c.value("name", ""), c.value("kind", "gemm"), {}};
    for (const auto &[mode, t] : c["results"].items()) {
        const std::string mat = fmt::format("{}.results.{}", at, mode);
        if (!t.is_object())
            throw InvalidInput(fmt::format("{}: must be an object", mat));
        DemoTiming timing{number(t, "compile_s", mat), number(t, "kernel_ms", mat), t.value("error", ""),
                          number(t, "kernel_cold_ms", mat)};
        timing.kernelMsSpread = spread(t, "kernel_ms_spread", mat);
        timing.compileSSpread = spread(t, "compile_s_spread", mat);
        if (const auto n = number(t, "processes", mat)) {
            if (*n < 1 || *n != std::floor(*n))
                throw InvalidInput(fmt::format("{}: 'processes' must be a whole number, at least 1", mat));
            timing.processes = int(*n);
        }
        timing.breakdown = breakdown(t, mat);
        dc.results[mode] = std::move(timing);
    }
    return dc;
}

} // namespace

DemoResult DemoResult::fromJson(const nlohmann::json &j, const std::string &where) {
    if (!j.is_object())
        throw InvalidInput(fmt::format("{}: a demo result must be a JSON object", where));
    const std::string schema = j.value("schema", "");
    if (schema != "diode-demo/1" && schema != "diode-demo/2" && schema != "diode-demo/3")
        throw InvalidInput(fmt::format(
            "{}: schema is '{}', this build reads 'diode-demo/1', 'diode-demo/2' and 'diode-demo/3'", where,
            schema));
    DemoResult r;
    r.schema = schema;
    r.gpu = j.value("gpu", "");
    r.torch = j.value("torch", "");
    r.createdAt = j.value("created_at", "");
    if (!j.contains("modes") || !j["modes"].is_array())
        throw InvalidInput(fmt::format("{}: 'modes' must be a list", where));
    r.modes = j["modes"].get<std::vector<std::string>>();
    if (!j.contains("cases") || !j["cases"].is_array())
        throw InvalidInput(fmt::format("{}: 'cases' must be a list", where));
    for (size_t i = 0; i < j["cases"].size(); ++i)
        r.cases.push_back(parseCase(j["cases"][i], fmt::format("{}: cases[{}]", where, i)));
    r.summary = j.value("summary", nlohmann::json::object());
    return r;
}

DemoResult DemoResult::load(const std::string &path) {
    if (!std::ifstream(path))
        throw InvalidInput(fmt::format("cannot read '{}'", path));
    // Bounded as every data file: a result nested 100,000 deep once overflowed the stack.
    const std::string text = readDataFile(path, "demo result");
    return fromJson(parseJsonBounded(text, path, kDocumentLimits), path);
}

void DemoResult::appendCases(const std::string &path) {
    std::ifstream f(path);
    if (!f)
        throw InvalidInput(fmt::format("cannot read '{}'", path));
    std::vector<DemoCase> read;
    forEachDataLine(f, path, [&](int n, const std::string &line) {
        const std::string at = fmt::format("{}:{}", path, n);
        DemoCase c = parseCase(parseJsonBounded(line, at, kProblemJsonLimits), at);
        // The demo writes a case again when it gains modes: the last line of a name wins, in the
        // place of its first.
        const auto same =
            std::find_if(read.begin(), read.end(), [&](const DemoCase &o) { return o.name == c.name; });
        if (same != read.end())
            *same = std::move(c);
        else
            read.push_back(std::move(c));
    });
    for (auto &c : read) {
        for (const auto &[mode, t] : c.results)
            if (std::find(modes.begin(), modes.end(), mode) == modes.end())
                modes.push_back(mode);
        cases.push_back(std::move(c));
    }
}

std::vector<std::string> DemoResult::modesBaselinesFirst() const {
    std::vector<std::string> out;
    for (const char *baseline : {kPlain, kReference})
        if (std::find(modes.begin(), modes.end(), baseline) != modes.end())
            out.push_back(baseline);
    for (const auto &m : modes)
        if (m != kPlain && m != kReference)
            out.push_back(m);
    return out;
}

std::string DemoResult::baseline() const {
    return std::find(modes.begin(), modes.end(), kPlain) != modes.end() ? kPlain : kReference;
}

namespace {

const DemoTiming *timing(const DemoCase &c, const std::string &mode) {
    const auto it = c.results.find(mode);
    return it == c.results.end() || !it->second.error.empty() ? nullptr : &it->second;
}

} // namespace

double DemoResult::compileSpeedup(const DemoCase &c, const std::string &mode, const std::string &reference) {
    const auto *t = timing(c, mode), *ref = timing(c, reference);
    if (!t || !ref || !t->compileS || !ref->compileS || *t->compileS <= 0)
        return std::nan("");
    return *ref->compileS / *t->compileS;
}

double DemoResult::kernelSpeedup(const DemoCase &c, const std::string &mode, const std::string &reference,
                                 bool cold) {
    const auto *t = timing(c, mode), *ref = timing(c, reference);
    if (!t || !ref)
        return std::nan("");
    const auto &mine = cold ? t->kernelColdMs : t->kernelMs;
    const auto &theirs = cold ? ref->kernelColdMs : ref->kernelMs;
    if (!mine || !theirs || *mine <= 0 || *theirs <= 0)
        return std::nan("");
    return *theirs / *mine;
}

DemoModeSummary DemoResult::summaryOf(const std::string &mode, const std::string &reference,
                                      const std::string &kind, bool cold) const {
    std::vector<double> compile;
    double logSum = 0;
    DemoModeSummary s;
    s.kernelSpeedupWorst = std::nan("");
    for (const auto &c : cases) {
        if (!kind.empty() && c.kind != kind)
            continue;
        if (const double v = compileSpeedup(c, mode, reference); !std::isnan(v))
            compile.push_back(v);
        if (const double v = kernelSpeedup(c, mode, reference, cold); !std::isnan(v)) {
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

std::vector<std::string> DemoResult::kinds() const {
    std::vector<std::string> out;
    for (const auto &c : cases)
        if (std::find(out.begin(), out.end(), c.kind) == out.end())
            out.push_back(c.kind);
    return out;
}

size_t DemoResult::caseCount(const std::string &kind) const {
    return size_t(
        std::count_if(cases.begin(), cases.end(), [&](const DemoCase &c) { return c.kind == kind; }));
}

bool DemoResult::hasColdTimes() const {
    for (const auto &c : cases)
        for (const auto &[mode, t] : c.results)
            if (t.kernelColdMs)
                return true;
    return false;
}

bool DemoResult::measuredBeforeFlushedTimer() const {
    // ISO dates compare as text; a result that does not say when it was made is not judged.
    return createdAt.size() >= 10 && createdAt.substr(0, 10) < kFlushedTimerSince;
}

std::string DemoResult::timerNote() const {
    if (!measuredBeforeFlushedTimer())
        return {};
    return fmt::format(
        "measured {}, before every timing started from a flushed L2 ({}): the mode timed first "
        "could read up to 1.6x faster on fp32 GEMMs of M = 1 (docs/BENCHMARKS.md, \"Where a time "
        "starts\")",
        createdAt.substr(0, 10), kFlushedTimerSince);
}

std::vector<std::pair<std::string, double>> DemoResult::timeByCategory(const DemoTiming &t) {
    std::vector<std::pair<std::string, double>> out;
    if (t.breakdown.empty())
        return out;
    for (const char *c : kCategories) {
        double us = 0;
        for (const auto &k : t.breakdown)
            if (k.category == c)
                us += k.us;
        out.emplace_back(c, us);
    }
    return out;
}

std::string DemoResult::modeTitle(const std::string &mode) {
    return mode == kPlain ? "plain torch.compile" : mode;
}

std::string DemoResult::table() const {
    std::string out = fmt::format("{} (torch {}), {}\n", gpu, torch, createdAt);
    if (const auto note = timerNote(); !note.empty())
        out += fmt::format("note: {}\n", note);
    // Every view's order: plain torch.compile, max-autotune, then the others (modesBaselinesFirst).
    const std::vector<std::string> shown = modesBaselinesFirst();
    out += fmt::format("{:<44}", "case: compile s / kernel µs");
    for (const auto &m : shown)
        out += fmt::format(" {:>19}", modeTitle(m));
    out += '\n';
    for (const auto &c : cases) {
        out += fmt::format("{:<44}", c.name.substr(0, 44));
        for (const auto &m : shown) {
            const auto it = c.results.find(m);
            if (it == c.results.end() || !it->second.error.empty() || !it->second.compileS ||
                !it->second.kernelMs)
                out += fmt::format(" {:>19}", it == c.results.end() ? "-" : "error");
            else
                out += fmt::format(" {:>19}", fmt::format("{:.2f} / {:.1f}", *it->second.compileS,
                                                          *it->second.kernelMs * 1000));
        }
        out += '\n';
    }
    // Per kind of case, against plain torch.compile and against max-autotune, warm and cold.
    const bool cold = hasColdTimes();
    for (const auto &kind : kinds()) {
        const size_t n = caseCount(kind);
        for (const char *ref : {kPlain, kReference}) {
            if (std::find(modes.begin(), modes.end(), ref) == modes.end())
                continue;
            out +=
                fmt::format("\n{} {} cases: speed-up against {} (higher is better): compile (median), kernel "
                            "(geomean, worst){}\n",
                            n, kind, modeTitle(ref), cold ? "; kernel with L2 flushed (geomean, worst)" : "");
            for (const auto &m : shown) {
                if (m == ref)
                    continue;
                const DemoModeSummary s = summaryOf(m, ref, kind);
                if (s.cases == 0) // a mode not run on this kind of case
                    continue;
                // The words and digits of the Demo page (wording.h): 0.012×, never 0.0×.
                out +=
                    fmt::format("  {:<24} compile {:>6}×  kernel {}×  worst {}×", modeTitle(m),
                                speedupText(s.compileSpeedupMedian, 1),
                                speedupText(s.kernelSpeedupGeomean, 3), speedupText(s.kernelSpeedupWorst, 3));
                if (cold) {
                    const DemoModeSummary c = summaryOf(m, ref, kind, true);
                    out += fmt::format("  cold {}×  worst {}×", speedupText(c.kernelSpeedupGeomean, 3),
                                       speedupText(c.kernelSpeedupWorst, 3));
                }
                out += fmt::format("  ({} cases)\n", s.cases);
            }
        }
    }
    // Model steps measured in several processes (schema 3): medians with their spread, and where
    // each mode's step time goes, by kind of kernel.
    bool header = false;
    for (const auto &c : cases)
        for (const auto &m : modesBaselinesFirst()) {
            const auto it = c.results.find(m);
            if (it == c.results.end() || !it->second.error.empty() ||
                (!it->second.kernelMsSpread && it->second.breakdown.empty()))
                continue;
            const DemoTiming &t = it->second;
            if (!header) {
                out += "\nper case and mode: median over the processes [min-max]; where the step time goes\n";
                header = true;
            }
            std::string line = fmt::format("  {:<36} {:<22}", c.name.substr(0, 36), modeTitle(m));
            if (t.kernelMs)
                line += fmt::format(" step {:.1f} us", *t.kernelMs * 1000);
            if (t.kernelMsSpread)
                line += fmt::format(" [{:.1f}-{:.1f}]", t.kernelMsSpread->first * 1000,
                                    t.kernelMsSpread->second * 1000);
            if (t.compileS)
                line += fmt::format("  compile {:.2f} s", *t.compileS);
            if (t.compileSSpread)
                line += fmt::format(" [{:.2f}-{:.2f}]", t.compileSSpread->first, t.compileSSpread->second);
            line += fmt::format("  ({} process{})", t.processes, t.processes == 1 ? "" : "es");
            std::vector<std::string> parts;
            for (const auto &[category, us] : timeByCategory(t))
                if (us > 0)
                    parts.push_back(fmt::format("{} {:.1f}", category, us));
            if (!parts.empty())
                line += fmt::format("\n  {:<36} {:<22} us a step: {}", "", "", fmt::join(parts, ", "));
            out += line + "\n";
        }
    return out;
}

} // namespace diode
