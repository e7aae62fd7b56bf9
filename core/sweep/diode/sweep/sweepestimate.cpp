#include "sweepestimate.h"

#include "diode/infer/problemjson.h"

#include <fmt/format.h>

#include <algorithm>

namespace diode {

namespace {

// The reference GEMM ran cpu-smoke (189 MFLOP per config, 16 configs, 5 repeats + 1 warm-up)
// in ~15 s on the 2-core build machine (docs/PLANS.md): 0.9 GFLOP/s per thread. tst_sweeppage
// prints the measured time next to this estimate.
constexpr double kCpuFlopsPerThreadS = 0.9e9;
constexpr double kCpuOverheadPerConfigS = 0.002;
// The shipped H200 dataset: 6,543 choices over 341 problems at 90.6 choices per GPU-minute
// (DEFAULT search space; docs/BENCHMARKS.md).
constexpr double kInductorChoicesPerMinute = 90.6;
constexpr int64_t kInductorChoicesPerProblem = 19;

} // namespace

SweepEstimate estimateDuration(const SweepPlan &plan, const std::string &backend, int cpuThreads) {
    SweepEstimate e;
    e.problems = int64_t(plan.problems.size());
    if (backend == "cpu") {
        e.choicesPerProblem = int64_t(plan.cpuConfigs.size());
        const int cores = std::max(1, cpuThreads);
        for (const auto &p : plan.problems)
            for (const auto &c : plan.cpuConfigs) {
                const double parallel = std::clamp(c.threads, 1, cores);
                e.seconds += (plan.repeats + 1) * p.flops() / (kCpuFlopsPerThreadS * parallel) +
                             kCpuOverheadPerConfigS;
            }
        e.basis =
            fmt::format("{} configs × ({} repeats + warm-up) per problem at {:.2f} GFLOP/s per thread (the "
                        "reference GEMM on cpu-smoke), up to {} threads",
                        e.choicesPerProblem, plan.repeats, kCpuFlopsPerThreadS / 1e9, cores);
        return e;
    }
    e.choicesPerProblem = kInductorChoicesPerProblem;
    e.seconds = double(e.problems * kInductorChoicesPerProblem) / kInductorChoicesPerMinute * 60.0;
    e.basis =
        fmt::format("~{} choices per problem at {} choices/GPU-minute, measured for the shipped H200 dataset "
                    "(DEFAULT search space)",
                    kInductorChoicesPerProblem, kInductorChoicesPerMinute);
    if (plan.searchSpace == kSearchSpaces[1])
        e.basis += "; EXHAUSTIVE times many more choices, so this is a lower bound";
    return e;
}

} // namespace diode
