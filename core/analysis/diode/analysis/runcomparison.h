#pragma once

#include "diode/analysis/metrics.h"
#include "diode/infer/measurement.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace diode {

/// Two measurements of the same problems (two runs, two machines, one GPU against two) compared
/// candidate by candidate, by one timing method: how far the truth moves when measured again, and
/// how well one measurement's fastest candidate does when the other measurement judges it.
/// `diode compare`; docs/MODELS.md, "The truth measured twice".
struct RunComparison {
    TimingMethod method = TimingMethod::GraphWarm;
    int64_t problemsA = 0, problemsB = 0; ///< distinct problems with a time of `method`
    int64_t common = 0;                   ///< of those, in both
    int64_t repeatedLines = 0;            ///< a (problem, candidate) timed twice in one input: first kept

    /// Per candidate timed in both: B's time over A's.
    int64_t candidates = 0, candidatesAgree = 0; ///< agree: timesAgree(B, A)
    double candidateGeomean = 0;
    double medianDifference = 0, p90Difference = 0; ///< |B / A - 1|

    /// Per problem with two or more candidates timed in both: the fastest candidate's time, B's
    /// over A's, and whether both runs found the same candidate fastest. Only candidates timed in
    /// both count; `fastestUntimedElsewhere` counts the problems where a run's fastest candidate
    /// has no time in the other run (left out of these figures).
    int64_t ranked = 0, fastestAgree = 0, sameFastest = 0, fastestUntimedElsewhere = 0;
    double fastestGeomean = 0;

    /// Each run's fastest candidate scored on the other run's times (top-1 efficiency, both
    /// directions: 2 x `ranked` picks): what one measurement's arg-min gets when another
    /// measurement judges it. A reference for a model's top-1, not a bound: a model of the mean
    /// times can score above it, since its picks carry no noise of their own.
    Distribution crossRun;

    /// Plain torch.compile's function (the "default" baseline), where both runs timed it.
    int64_t plainCompared = 0, plainAgree = 0;
    double plainGeomean = 0;

    nlohmann::json toJson() const;
};

/// Compares `a` and `b` by `method`. Candidates match by their full configuration
/// (KernelConfig::key), problems by every field of the problem. Throws InvalidInput, naming the
/// method, when the two share no candidate timed by `method`.
RunComparison compareRuns(const std::vector<ProblemRecord> &a, const std::vector<ProblemRecord> &b,
                          TimingMethod method);

/// The comparison as `diode compare` prints it, the runs named `nameA` and `nameB`.
std::string formatRunComparison(const RunComparison &c, const std::string &nameA, const std::string &nameB);

} // namespace diode
