#pragma once

#include "diode/infer/gemmproblem.h"
#include "diode/infer/kernelconfig.h"
#include "diode/infer/problemjson.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace diode {

/// What a plan may ask for (docs/PLANS.md, "Limits"), checked before anything is allocated.
namespace planlimits {
/// Every entry's grid (or explicit list), before `sample` and de-duplication, added up.
inline constexpr int64_t kMaxProblems = 1'000'000;
inline constexpr int64_t kMaxLogUniformCount = 1'000'000;
/// B, M, N and K: the problem type's limit (gemmproblem.h).
inline constexpr int64_t kMaxSize = kMaxProblemSize;
inline constexpr int64_t kMaxRepeats = 1000;
inline constexpr int64_t kMaxInductorEvery = 1'000'000;
inline constexpr int64_t kMaxExhaustiveConfigs = 100'000;
inline constexpr double kMaxTimeoutS = 86'400;
inline constexpr int64_t kMaxCpuConfigs = 4096;
inline constexpr int64_t kMaxCpuBlock = 4096;
inline constexpr int64_t kMaxCpuThreads = 256;
} // namespace planlimits

/// One of `count` disjoint parts of a plan: the problems whose index in the expanded plan is
/// `index` modulo `count` (the standalone worker's `--shard i/n` takes the same ones). The shards
/// 0/n .. n-1/n of a plan cover it exactly, each problem once.
struct PlanShard {
    int64_t index = 0;
    int64_t count = 1;

    /// "i/n" with 0 <= i < n <= planlimits::kMaxProblems; InvalidInput naming `what` otherwise.
    static PlanShard parse(std::string_view text, std::string_view what = "--shard");
    bool whole() const { return count == 1; }
    bool holds(size_t problemIndex) const { return int64_t(problemIndex % size_t(count)) == index; }
    /// How many of `problems` problems it holds.
    int64_t size(size_t problems) const;
    std::string str() const; ///< "i/n"
    bool operator==(const PlanShard &) const = default;
};

/// A problem's sampling hash, the same on every machine and in every run: which problems run
/// Inductor's own benchmark (SweepPlan::inductorBenchmarkFor) and the seed of the EXHAUSTIVE
/// configs the inductor worker draws for it.
uint64_t samplingHash(const GemmProblem &problem);

/// A sweep plan (docs/PLANS.md): which problems to measure, in which search space, and for the
/// CPU backend which tile configurations. Expanded and validated before anything runs; this is
/// the only expander (the standalone worker reads `diode plan PLAN --expand` output).
struct SweepPlan {
    std::string name;
    std::string searchSpace{kSearchSpaces[0]};
    double timeoutS = 600;
    int repeats = 5; ///< CPU backend: timed repeats per config (median kept)
    /// Inductor backend: Inductor's own benchmark (`inductor_autotune` times, the max-autotune
    /// baseline) runs on every n-th DEFAULT problem only (0: never); about two thirds of a
    /// problem's GPU time. The in-graph times of every candidate are measured either way.
    int inductorEvery = 1;
    /// Inductor backend, EXHAUSTIVE plans: ATen and this many Triton configs a template, drawn
    /// (seeded by the problem) from the whole space; 0: all of them.
    int exhaustiveConfigs = 0;
    /// Inductor backend: offer max-autotune the ATen kernels alone, a quick probe of what plain
    /// torch.compile's function launches against the ATen candidate it calls; not training data.
    bool atenOnly = false;
    std::vector<KernelConfig> cpuConfigs;
    std::vector<GemmProblem> problems;
    nlohmann::json source; ///< the plan as written, stored with the run
    /// The part of `problems` a run measures (`diode sweep --shard`); set by the caller, never by
    /// the plan file: a run's frozen plan records it as "shard".
    PlanShard shard;

    /// Whether `problem` runs Inductor's own benchmark under `inductorEvery`: chosen by a hash of
    /// the problem, so the same problems whatever the sharding, order or number of workers; never
    /// in an EXHAUSTIVE plan (a sampled space's pick would be of a sample).
    bool inductorBenchmarkFor(const GemmProblem &problem) const;

    /// Throws InvalidInput naming the entry and field ("entries[2] (bmm): field 'M' has 0; ...").
    static SweepPlan fromJson(const nlohmann::json &j, const std::string &baseDir);
    /// Parses `text` with the plan's JSON limits (depth, duplicate keys), then as fromJson.
    static SweepPlan parse(std::string_view text, const std::string &baseDir);
    /// Reads a plan file; messages start with `path`.
    static SweepPlan load(const std::string &path);
};

/// One expanded problem as a problem JSON line (docs/FORMATS.md) that also carries the plan's
/// "search_space" and its name as "plan": what `python3 -m torch_diode.tools.worker --problems` reads.
nlohmann::json expandedProblemJson(const SweepPlan &plan, const GemmProblem &problem);
/// Writes every problem of `plan` as such a line; returns how many.
int64_t writeExpandedProblems(const SweepPlan &plan, std::ostream &os);

} // namespace diode
