#include "bias.h"

#include "diode/analysis/metrics.h"
#include "diode/infer/selectionpolicy.h"
#include "diode/store/store.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace diode {
namespace {

std::optional<double> ratio(double fastest, std::optional<double> ms) {
    if (!ms || *ms <= 0)
        return std::nullopt;
    return std::min(1.0, fastest / *ms);
}

// Mean and P10 as every other efficiency figure (Distribution::of).
EfficiencyStat stat(std::vector<double> values) {
    EfficiencyStat s;
    s.count = int(values.size());
    if (values.empty())
        return s;
    const auto d = Distribution::of(std::move(values));
    s.mean = d.mean;
    s.p10 = d.p10;
    return s;
}

/// Max-autotune's pick: the baseline's recorded pick, else the candidate Inductor timed fastest.
const Candidate *pickOf(const ProblemRecord &r) {
    for (const auto &b : r.baselines)
        if (b.baseline == BaselineTiming::kMaxAutotune && b.pick) {
            const auto key = b.pick->key();
            for (const auto &c : r.candidates)
                if (c.config.key() == key)
                    return &c;
        }
    const Candidate *best = nullptr;
    for (const auto &c : r.candidates) {
        auto t = c.timeMs(TimingMethod::InductorAutotune);
        if (t && (!best || *t < *best->timeMs(TimingMethod::InductorAutotune)))
            best = &c;
    }
    return best;
}

BiasGroup group(std::string op, std::string dtype, std::string size,
                const std::vector<const BiasProblem *> &ps, const std::vector<BiasPoint> &points,
                const std::vector<BiasProblem> &all) {
    BiasGroup g;
    g.op = std::move(op);
    g.dtype = std::move(dtype);
    g.sizeClass = std::move(size);
    g.problems = int(ps.size());
    std::vector<double> pick, plain, aten;
    for (const auto *p : ps) {
        g.pickIsFastest += p->pickIsFastest;
        if (auto e = p->pickEfficiency())
            pick.push_back(*e);
        if (auto e = p->defaultEfficiency())
            plain.push_back(*e);
        if (auto e = p->atenEfficiency())
            aten.push_back(*e);
    }
    g.maxAutotune = stat(std::move(pick));
    g.plainCompile = stat(std::move(plain));
    g.bestAten = stat(std::move(aten));
    std::vector<char> member(all.size(), 0);
    for (const auto *p : ps)
        member[size_t(p - all.data())] = 1;
    std::vector<double> atenLogs, tritonLogs;
    for (const auto &pt : points) {
        if (!member[size_t(pt.problem)])
            continue;
        (pt.aten ? atenLogs : tritonLogs).push_back(std::log(pt.inductorMs / pt.graphMs));
    }
    std::vector<double> fnLogs;
    for (const auto *p : ps)
        if (auto r = p->functionOverCandidate()) {
            fnLogs.push_back(std::log(*r));
            g.agree += timesAgree(*p->defaultMs, *p->plainAtenMs);
        }
    g.compared = int(fnLogs.size());
    g.functionOverCandidate = geomeanOfLogs(fnLogs);
    g.atenInflation = geomeanOfLogs(atenLogs);
    g.tritonInflation = geomeanOfLogs(tritonLogs);
    return g;
}

} // namespace

std::optional<double> BiasGroup::pickShare() const {
    if (maxAutotune.count <= 0)
        return std::nullopt;
    return 100.0 * pickIsFastest / maxAutotune.count;
}

std::optional<double> BiasProblem::pickEfficiency() const {
    return ratio(fastestMs, pickMs);
}
std::optional<double> BiasProblem::defaultEfficiency() const {
    return ratio(fastestMs, defaultMs);
}
std::optional<double> BiasProblem::functionOverCandidate() const {
    if (!defaultMs || !plainAtenMs || *defaultMs <= 0 || *plainAtenMs <= 0)
        return std::nullopt;
    return *defaultMs / *plainAtenMs;
}
std::optional<double> BiasProblem::atenEfficiency() const {
    return ratio(fastestMs, bestAtenMs);
}

std::string sizeClass(const GemmProblem &problem) {
    if (problem.m <= 16)
        return "decode (M <= 16)";
    if (problem.m < 256)
        return "small (M 17-255)";
    return "large (M >= 256)";
}

BiasReport computeBias(const std::vector<ProblemRecord> &records, TimingMethod method) {
    if (method != TimingMethod::GraphWarm && method != TimingMethod::GraphCold)
        throw InvalidInput(fmt::format("the bias view compares against in-graph times: choose graph_warm or "
                                       "graph_cold, not {}",
                                       toString(method)));
    BiasReport report;
    report.method = method;
    for (const auto &r : records) {
        const Candidate *fastest = nullptr, *plainAten = nullptr;
        std::optional<double> bestAten;
        std::vector<KernelConfig> configs;
        for (const auto &c : r.candidates) {
            configs.push_back(c.config);
            auto t = c.timeMs(method);
            if (!t || *t <= 0)
                continue;
            if (!fastest || *t < *fastest->timeMs(method))
                fastest = &c;
            if (c.config.kind == "aten")
                bestAten = std::min(bestAten.value_or(*t), *t);
        }
        // The kernel plain torch.compile runs, by the selection policy's one rule (bias_addmm where
        // offered, else the op's ATen kernel); without a time of its own it has no column here.
        if (const auto i = SelectionPolicy().plainCandidate(configs, {}))
            if (const auto t = r.candidates[*i].timeMs(method); t && *t > 0)
                plainAten = &r.candidates[*i];
        if (!fastest) {
            ++report.skipped;
            continue;
        }
        BiasProblem p;
        p.problem = r.problem;
        p.sizeClass = sizeClass(r.problem);
        p.fastestMs = *fastest->timeMs(method);
        p.fastestConfig = fastest->config.key();
        p.bestAtenMs = bestAten;
        if (plainAten) {
            p.plainAtenMs = plainAten->timeMs(method);
            p.plainAtenName = plainAten->config.name;
        }
        if (const auto *pick = pickOf(r)) {
            p.pickMs = pick->timeMs(method);
            p.pickConfig = pick->config.key();
            p.pickIsFastest = pick == fastest;
        }
        if (const auto *b = r.baseline(BaselineTiming::kPlain, method))
            p.defaultMs = b->timeMs;
        const int index = int(report.problems.size());
        for (const auto &c : r.candidates) {
            auto g = c.timeMs(method), i = c.timeMs(TimingMethod::InductorAutotune);
            if (g && i && *g > 0 && *i > 0)
                report.points.push_back({index, c.config.key(), c.config.kind == "aten", *i, *g});
        }
        report.problems.push_back(std::move(p));
    }
    const auto &ps = report.problems;
    std::vector<const BiasProblem *> everything;
    std::map<std::string, std::vector<const BiasProblem *>> byOp;
    std::map<std::tuple<std::string, std::string, std::string>, std::vector<const BiasProblem *>> byGroup;
    for (const auto &p : ps) {
        everything.push_back(&p);
        const std::string op(toString(p.problem.op)), dt(toString(p.problem.dtype));
        byOp[op].push_back(&p);
        byGroup[{op, dt, p.sizeClass}].push_back(&p);
    }
    report.groups.push_back(group("all", "all", "all", everything, report.points, ps));
    for (const auto &[op, members] : byOp)
        report.groups.push_back(group(op, "all", "all", members, report.points, ps));
    for (const auto &[k, members] : byGroup)
        report.groups.push_back(
            group(std::get<0>(k), std::get<1>(k), std::get<2>(k), members, report.points, ps));
    return report;
}

BiasReport computeBias(Store &store, TimingMethod method) {
    std::vector<ProblemRecord> records;
    store.forEachRecord([&](const RunInfo &, const ProblemRecord &r) { records.push_back(r); });
    return computeBias(records, method);
}

nlohmann::json biasToJson(const BiasReport &report) {
    auto opt = [](std::optional<double> v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
    auto eff = [&](const EfficiencyStat &s) {
        return nlohmann::json{{"problems", s.count}, {"mean", opt(s.mean)}, {"p10", opt(s.p10)}};
    };
    nlohmann::json groups = nlohmann::json::array(), problems = nlohmann::json::array();
    for (const auto &g : report.groups)
        groups.push_back({{"op", g.op},
                          {"dtype", g.dtype},
                          {"size", g.sizeClass},
                          {"problems", g.problems},
                          {"pick_is_fastest", g.pickIsFastest},
                          {"max_autotune", eff(g.maxAutotune)},
                          {"plain_compile", eff(g.plainCompile)},
                          {"best_aten", eff(g.bestAten)},
                          {"inductor_over_graph_aten", opt(g.atenInflation)},
                          {"inductor_over_graph_triton", opt(g.tritonInflation)},
                          {"plain_function_over_candidate", opt(g.functionOverCandidate)},
                          {"plain_function_compared", g.compared},
                          {"plain_function_agrees", g.agree}});
    for (const auto &p : report.problems)
        problems.push_back({{"problem", p.problem.label()},
                            {"size", p.sizeClass},
                            {"fastest_ms", p.fastestMs},
                            {"fastest", p.fastestConfig},
                            {"pick_ms", opt(p.pickMs)},
                            {"pick", p.pickConfig},
                            {"pick_is_fastest", p.pickIsFastest},
                            {"plain_compile_ms", opt(p.defaultMs)},
                            {"best_aten_ms", opt(p.bestAtenMs)},
                            {"plain_aten", p.plainAtenName},
                            {"plain_aten_ms", opt(p.plainAtenMs)},
                            {"plain_function_over_candidate", opt(p.functionOverCandidate())}});
    return {{"method", std::string(toString(report.method))},
            {"skipped", report.skipped},
            {"candidates", report.points.size()},
            {"groups", groups},
            {"problems", problems}};
}

std::string formatBiasTable(const BiasReport &report) {
    // A column measured on fewer problems than the row's says how many (max-autotune's pick
    // exists only where Inductor's own benchmark ran).
    auto eff = [](const EfficiencyStat &s, int problems) {
        if (!s.mean)
            return std::string("n/a");
        const std::string v = fmt::format("{:.3f} / {:.3f}", *s.mean, *s.p10);
        return s.count == problems ? v : fmt::format("{} ({})", v, s.count);
    };
    auto x = [](std::optional<double> v) { return v ? fmt::format("{:.2f}x", *v) : std::string("n/a"); };
    auto pct = [](std::optional<double> v) { return v ? fmt::format("{:.0f}%", *v) : std::string("n/a"); };
    std::string out = fmt::format(
        "Efficiency against the fastest candidate in {} time (mean / P10; 1 = fastest); {} problem lines (a "
        "problem once per run that measured it){}\n",
        toString(report.method), report.problems.size(),
        report.skipped ? fmt::format(", {} without {} times skipped", report.skipped, toString(report.method))
                       : "");
    auto fn = [&](const BiasGroup &g) {
        return g.compared
                   ? fmt::format("{:.3f}x {:.0f}%", *g.functionOverCandidate, 100.0 * g.agree / g.compared)
                   : std::string("n/a");
    };
    // The baselines in the order every face shows them: plain torch.compile, then max-autotune.
    out += fmt::format("{:<6} {:<5} {:<18} {:>8} {:>15} {:>21} {:>15} {:>10} {:>16} {:>16} {:>18}\n", "op",
                       "dtype", "size", "lines", "torch.compile", "max-autotune", "best ATen", "pick best",
                       "Inductor/ATen", "Inductor/Triton", "plain fn/ATen");
    for (const auto &g : report.groups)
        out += fmt::format("{:<6} {:<5} {:<18} {:>8} {:>15} {:>21} {:>15} {:>10} {:>16} {:>16} {:>18}\n",
                           g.op, g.dtype, g.sizeClass, g.problems, eff(g.plainCompile, g.problems),
                           eff(g.maxAutotune, g.problems), eff(g.bestAten, g.problems), pct(g.pickShare()),
                           x(g.atenInflation), x(g.tritonInflation), fn(g));
    out += fmt::format(
        "plain fn/ATen: plain torch.compile's function time over the time of the ATen candidate it "
        "calls (geomean), and the share within {:.0f} % or {:.1f} us\n",
        100 * kAgreementRelative, 1000 * kAgreementAbsoluteMs);
    return out;
}

} // namespace diode
