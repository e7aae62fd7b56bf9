#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace diode {

struct MergeOptions {
    /// Merge runs of different plans, or shards of one plan swept on different GPUs, backends or
    /// torch/Triton versions (refused by default: one sweep's shards must agree).
    bool allowMixed = false;
    /// Merge what is there although shards are missing or unfinished (refused by default).
    bool partial = false;
};

/// What one input gave.
struct MergedInput {
    std::string path;
    std::string what; ///< one line: "run 1 (shard 0/4 of plan 'cpu-smoke', finished): 7 problems added"
    int64_t runsAdded = 0;
    int64_t problemsAdded = 0;
    int64_t measurementsAdded = 0;
    int64_t caseLinesAdded = 0; ///< kernel and site lines added or replacing a case's older line
};

struct MergeResult {
    std::vector<MergedInput> inputs;
    int64_t runsAdded = 0;
    int64_t problemsAdded = 0;
    int64_t measurementsAdded = 0;
    int64_t caseLinesAdded = 0;
};

/// `diode merge OUT SHARD...`: copies shard stores (each run with its record, problems done,
/// measurements failed ones included, baselines and telemetry, and the kernel and site lines the
/// store holds, as storeDecisionData keeps them) and problem JSON lines (imported as `diode import`
/// does) into the store `out`, in one transaction.
///
/// Idempotent: a run is known by its creation time, host, backend and frozen plan, so a run
/// merged before only adds what it has done since (a resumed shard), and a file of JSON lines
/// already imported is left out. Checked before anything is written, each refusal naming the
/// file, the run and its shard (InvalidInput): an input that is missing or neither a diode store
/// nor JSON lines, the output given as an input, runs of different plans, one plan's shards from
/// different GPUs, backends or torch/Triton versions (unless allowMixed), two stores holding different
/// measurements of one kernel or site case (a JSON lines file of such lines is imported as import
/// does: it replaces the case), shards that overlap
/// (a problem in two runs), and, unless partial, shards missing or unfinished.
MergeResult mergeShards(const std::string &out, const std::vector<std::string> &inputs,
                        const MergeOptions &options = {});

} // namespace diode
