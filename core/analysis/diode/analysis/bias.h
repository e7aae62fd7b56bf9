#pragma once

#include "diode/infer/measurement.h"
#include "diode/infer/timingagreement.h"
#include "diode/infer/timingmethod.h"

#include <optional>
#include <string>
#include <vector>

namespace diode {

/// Where Inductor's own autotune benchmark misleads it, against in-graph truth: per candidate
/// its reported time beside its in-graph time, per problem whether max-autotune's pick is the
/// fastest candidate and what it loses, and per group (op, dtype, size class) the efficiency of
/// max-autotune's pick, of plain `torch.compile` and of the best ATen kernel. Efficiency is the
/// fastest candidate's in-graph time over the kernel's (1 = as fast as the fastest, capped at 1).
struct BiasPoint {
    int problem = 0;    ///< index into BiasReport::problems
    std::string config; ///< KernelConfig::key()
    bool aten = false;
    double inductorMs = 0;
    double graphMs = 0;
};

struct BiasProblem {
    GemmProblem problem;
    std::string sizeClass;
    double fastestMs = 0;
    std::string fastestConfig;
    std::optional<double> pickMs; ///< in-graph time of max-autotune's pick
    std::string pickConfig;
    std::optional<double> defaultMs; ///< plain torch.compile, in graph
    std::optional<double> bestAtenMs;
    /// The ATen candidate plain torch.compile calls (plainAtenName: bias_addmm for an addmm where
    /// measured, else the op's ATen kernel), its in-graph time: what the candidate timing says
    /// plain runs, against defaultMs, what plain's compiled function took.
    std::optional<double> plainAtenMs;
    std::string plainAtenName;
    bool pickIsFastest = false;
    /// defaultMs / plainAtenMs; none without both.
    std::optional<double> functionOverCandidate() const;

    std::optional<double> pickEfficiency() const;
    std::optional<double> defaultEfficiency() const;
    std::optional<double> atenEfficiency() const;
};

/// Mean and 10th percentile of an efficiency over a group's problems (n/a when none has it).
struct EfficiencyStat {
    int count = 0;
    std::optional<double> mean;
    std::optional<double> p10;
};

struct BiasGroup {
    std::string op, dtype, sizeClass; ///< "all" where the group spans every value
    int problems = 0;
    int pickIsFastest = 0; ///< of the maxAutotune.count problems that have a pick
    /// maxAutotune counts only problems where Inductor's own benchmark ran (a sweep may run it on
    /// a sample: worker --inductor-every); the others have no pick.
    EfficiencyStat maxAutotune, plainCompile, bestAten;
    /// Percent of the problems with a pick where it is the fastest candidate; none without picks.
    std::optional<double> pickShare() const;
    /// Geometric mean of Inductor's time over the in-graph time: ATen and Triton candidates apart.
    std::optional<double> atenInflation, tritonInflation;
    /// Plain torch.compile's function against the ATen candidate it calls: the geomean of
    /// BiasProblem::functionOverCandidate, and how many of the `compared` problems agree
    /// (timesAgree).
    std::optional<double> functionOverCandidate;
    int compared = 0, agree = 0;
};

struct BiasReport {
    TimingMethod method = TimingMethod::GraphWarm;
    int skipped = 0; ///< problems without in-graph times of `method`
    std::vector<BiasPoint> points;
    std::vector<BiasProblem> problems;
    std::vector<BiasGroup> groups; ///< first the overall row, then by op, then op x dtype x size class
};

/// "decode (M <= 16)", "small (M 17-255)", "large (M >= 256)".
std::string sizeClass(const GemmProblem &problem);

/// The report over `records` for an in-graph `method` (graph_warm or graph_cold); throws
/// InvalidInput for another method.
BiasReport computeBias(const std::vector<ProblemRecord> &records, TimingMethod method);

class Store;
/// The report over every problem of a store (all runs).
BiasReport computeBias(Store &store, TimingMethod method);

/// The group table as aligned text (what `diode bias` prints).
std::string formatBiasTable(const BiasReport &report);
/// Groups and per-problem rows as JSON (`diode bias --json`); efficiencies n/a are null.
nlohmann::json biasToJson(const BiasReport &report);

} // namespace diode
