#pragma once

#include "diode/infer/measurement.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace diode {

/// One held-out problem: measured times (nullopt where a candidate has none) and the scores a
/// selector gave its candidates (lower = predicted faster).
struct RankedProblem {
    GemmProblem problem;
    std::vector<std::optional<double>> measuredMs;
    std::vector<double> score;
    std::vector<double> predictedMs; ///< may be empty (baselines predict no times)
};

/// Summary of a distribution: mean, 10th percentile, minimum.
struct Distribution {
    double mean = 0, p10 = 0, min = 0;
    int64_t count = 0;
    static Distribution of(std::vector<double> v);
};

/// The `q`-quantile of `sorted` (ascending, not empty): the value at floor(q x (n - 1)), the rule
/// of every percentile the project prints (Distribution's P10 among them).
double quantileOfSorted(const std::vector<double> &sorted, double q);

/// exp(mean(logs)): the geometric mean of the values whose logarithms are `logs`; none when empty.
std::optional<double> geomeanOfLogs(const std::vector<double> &logs);

/// The evaluation of one selector over problems (docs/MODELS.md says what each number means).
struct SelectorMetrics {
    Distribution top1, top3,
        top5; ///< efficiency: best measured time / best measured time among the top k picked
    double hit1 = 0, hit3 = 0, hit5 = 0; ///< share of problems whose best candidate is among the top k
    double spearman = 0;          ///< mean per-problem rank correlation (problems with >= 3 timed candidates)
    double mape = 0, rmseLog = 0; ///< of predicted vs measured time; 0 when no times are predicted
    int64_t problems = 0;
    nlohmann::json toJson() const;
};

/// Efficiency of picking the `k` best-scored candidates and benchmarking them: best measured
/// time over the best measured time of those picked. Candidates without a time are never best
/// and give 0 efficiency when all picked lack one.
double topKEfficiency(const RankedProblem &p, int k);
SelectorMetrics evaluate(const std::vector<RankedProblem> &problems);

/// Metrics overall and broken down by op, dtype and M <= 32 vs larger.
nlohmann::json evaluateWithBreakdown(const std::vector<RankedProblem> &problems);

/// Baseline selectors' scores: "aten" (ATen first), "first-config" (Inductor's first Triton
/// config), "random" (seeded). Same length as the candidates.
std::vector<double> baselineScores(const std::string &name, const std::vector<KernelConfig> &candidates,
                                   uint64_t seed);

/// The times a decision on `p` is made by: its predictions (its scores where it has none),
/// a candidate without a prediction (NaN) predicted slowest, as rankTable() ranks it.
std::vector<double> policyPredictions(const RankedProblem &p);
/// Top-1 efficiency of a pick on `p` (best measured time over the pick's), 0 when the pick has no
/// time or there is no pick.
double pickEfficiency(const RankedProblem &p, std::optional<size_t> pick);

} // namespace diode
