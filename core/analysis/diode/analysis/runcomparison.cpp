#include "runcomparison.h"

#include "diode/infer/timingagreement.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace diode {

namespace {

// A run's times of one method: per problem, per candidate key, the first time the input gave.
struct RunTimes {
    std::map<GemmProblem, std::map<std::string, double>> candidates;
    std::map<GemmProblem, double> plain;
    int64_t repeated = 0;
};

RunTimes timesOf(const std::vector<ProblemRecord> &records, TimingMethod method) {
    RunTimes run;
    for (const auto &r : records) {
        for (const auto &c : r.candidates)
            if (const auto t = c.timeMs(method); t && *t > 0)
                run.repeated += !run.candidates[r.problem].emplace(c.config.key(), *t).second;
        if (const auto *plain = r.baseline(BaselineTiming::kPlain, method); plain && plain->timeMs > 0)
            run.plain.emplace(r.problem, plain->timeMs);
    }
    return run;
}

} // namespace

RunComparison compareRuns(const std::vector<ProblemRecord> &a, const std::vector<ProblemRecord> &b,
                          TimingMethod method) {
    const RunTimes ra = timesOf(a, method), rb = timesOf(b, method);
    RunComparison c;
    c.method = method;
    c.problemsA = int64_t(ra.candidates.size());
    c.problemsB = int64_t(rb.candidates.size());
    c.repeatedLines = ra.repeated + rb.repeated;
    std::vector<double> logs, differences, fastestLogs, crossRun, plainLogs;
    for (const auto &[problem, timesA] : ra.candidates) {
        const auto other = rb.candidates.find(problem);
        if (other == rb.candidates.end())
            continue;
        ++c.common;
        std::vector<std::pair<double, double>> both; // (A, B) per candidate timed in both
        for (const auto &[key, msA] : timesA)
            if (const auto t = other->second.find(key); t != other->second.end()) {
                both.emplace_back(msA, t->second);
                logs.push_back(std::log(t->second / msA));
                differences.push_back(std::abs(t->second / msA - 1));
                c.candidatesAgree += timesAgree(t->second, msA);
            }
        if (const auto pa = ra.plain.find(problem), pb = rb.plain.find(problem);
            pa != ra.plain.end() && pb != rb.plain.end()) {
            plainLogs.push_back(std::log(pb->second / pa->second));
            c.plainAgree += timesAgree(pb->second, pa->second);
        }
        if (both.size() < 2)
            continue;
        ++c.ranked;
        // A run's fastest of all it timed may have no time in the other run: then it is not in `both`.
        const auto fastestKey = [](const std::map<std::string, double> &times) {
            return std::ranges::min_element(times, {}, &std::pair<const std::string, double>::second)->first;
        };
        c.fastestUntimedElsewhere +=
            !other->second.count(fastestKey(timesA)) || !timesA.count(fastestKey(other->second));
        const auto fa = std::ranges::min_element(both, {}, &std::pair<double, double>::first);
        const auto fb = std::ranges::min_element(both, {}, &std::pair<double, double>::second);
        c.sameFastest += fa == fb;
        fastestLogs.push_back(std::log(fb->second / fa->first));
        c.fastestAgree += timesAgree(fb->second, fa->first);
        // A's fastest scored on B's times, and B's on A's.
        crossRun.push_back(fb->second / fa->second);
        crossRun.push_back(fa->first / fb->first);
    }
    if (logs.empty())
        throw InvalidInput(fmt::format("the two inputs share no candidate timed by {} ({} and {} problems "
                                       "with such times, {} in both)",
                                       toString(method), c.problemsA, c.problemsB, c.common));
    c.candidates = int64_t(logs.size());
    c.candidateGeomean = *geomeanOfLogs(logs);
    std::sort(differences.begin(), differences.end());
    c.medianDifference = quantileOfSorted(differences, 0.5);
    c.p90Difference = quantileOfSorted(differences, 0.9);
    c.fastestGeomean = geomeanOfLogs(fastestLogs).value_or(0);
    c.crossRun = Distribution::of(std::move(crossRun));
    c.plainCompared = int64_t(plainLogs.size());
    c.plainGeomean = geomeanOfLogs(plainLogs).value_or(0);
    return c;
}

nlohmann::json RunComparison::toJson() const {
    // A figure over nothing is null, not 0.
    const auto over = [](int64_t n, double v) { return n ? nlohmann::json(v) : nlohmann::json(); };
    return {{"method", toString(method)},
            {"problems", {{"a", problemsA}, {"b", problemsB}, {"common", common}}},
            {"repeated_lines", repeatedLines},
            {"candidates",
             {{"compared", candidates},
              {"agree", candidatesAgree},
              {"geomean_b_over_a", over(candidates, candidateGeomean)},
              {"median_difference", over(candidates, medianDifference)},
              {"p90_difference", over(candidates, p90Difference)}}},
            {"fastest",
             {{"compared", ranked},
              {"agree", fastestAgree},
              {"same_candidate", sameFastest},
              {"untimed_in_the_other", fastestUntimedElsewhere},
              {"geomean_b_over_a", over(ranked, fastestGeomean)}}},
            {"cross_run_top1",
             {{"picks", crossRun.count},
              {"mean", over(crossRun.count, crossRun.mean)},
              {"p10", over(crossRun.count, crossRun.p10)},
              {"min", over(crossRun.count, crossRun.min)}}},
            {"plain_function",
             {{"compared", plainCompared},
              {"agree", plainAgree},
              {"geomean_b_over_a", over(plainCompared, plainGeomean)}}}};
}

std::string formatRunComparison(const RunComparison &c, const std::string &nameA, const std::string &nameB) {
    const auto pct = [](int64_t part, int64_t whole) {
        return whole ? 100.0 * double(part) / double(whole) : 0.0;
    };
    std::string out = fmt::format("{}: {} problems in both ({} in {}, {} in {})", toString(c.method),
                                  c.common, c.problemsA, nameA, c.problemsB, nameB);
    if (c.repeatedLines)
        out +=
            fmt::format("; {} repeated (problem, candidate) times skipped, the first kept", c.repeatedLines);
    out += fmt::format(
        "\n  candidates:        {:>6}  B/A geomean {:.4f}, agree {:.1f} %, |B/A-1| median {:.1f} % "
        "P90 {:.1f} %\n",
        c.candidates, c.candidateGeomean, pct(c.candidatesAgree, c.candidates), 100 * c.medianDifference,
        100 * c.p90Difference);
    if (c.ranked)
        out += fmt::format(
            "  fastest of each:   {:>6}  B/A geomean {:.4f}, agree {:.1f} %, the same candidate "
            "on {:.1f} %\n"
            "  each run's fastest scored on the other run's times (cross-run top-1): mean {:.4f}, P10 "
            "{:.4f}, min {:.4f} ({} picks)\n",
            c.ranked, c.fastestGeomean, pct(c.fastestAgree, c.ranked), pct(c.sameFastest, c.ranked),
            c.crossRun.mean, c.crossRun.p10, c.crossRun.min, c.crossRun.count);
    if (c.fastestUntimedElsewhere)
        out += fmt::format(
            "  on {} problems a run's fastest candidate has no time in the other run: left out above\n",
            c.fastestUntimedElsewhere);
    if (c.plainCompared)
        out += fmt::format("  plain torch.compile's function: {:>6}  B/A geomean {:.4f}, agree {:.1f} %\n",
                           c.plainCompared, c.plainGeomean, pct(c.plainAgree, c.plainCompared));
    out += fmt::format("  agree: within {:.0f} % or {:.1f} us of A's time\n", 100 * kAgreementRelative,
                       1000 * kAgreementAbsoluteMs);
    return out;
}

} // namespace diode
