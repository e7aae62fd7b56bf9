#pragma once

#include "diode/infer/measurement.h"
#include "diode/infer/modelpackage.h"
#include "diode/infer/selector.h"

#include <optional>
#include <string>
#include <vector>

namespace diode {

/// A package's held-out table (docs/MODELS.md; `diode eval --table`): per group of problems the
/// efficiency (fastest candidate's time / the time of what was run, by one timing method) of the
/// selection policy's top-1 pick, of plain torch.compile's and max-autotune's compiled functions
/// (the problem's `baselines`), of the best ATen candidate and of a random candidate (expected
/// value). Groups: all, per op, dtype, M band (<= 32, 33-1024, > 1024) and held-out tag
/// ("family:NAME" lines, else "random 10 %").
struct PolicyTableColumn {
    std::string name;
    std::vector<double> values; ///< one per problem of the group that has this column
};
struct PolicyTableRow {
    std::string group;
    int problems = 0;
    std::vector<PolicyTableColumn> columns;
};
/// A pick slower than plain torch.compile's function by more than this factor is counted as a loss
/// (the goal is none more than 10 % slower).
inline constexpr double kSlowerThanPlainLimit = 1.10;

struct PolicyTable {
    TimingMethod method = TimingMethod::GraphWarm;
    SelectionPolicy policy;
    int skippedOtherSpace = 0; ///< lines of another search space
    std::vector<PolicyTableRow> rows;
    /// Per problem with plain torch.compile's function timed: the time of the policy's pick over
    /// that function's (below 1 the pick is faster), in record order; exactly 1 where the pick is
    /// plain's own kernel (the compiled function is then plain's).
    std::vector<double> pickOverPlain;
    int picksKeepingPlain = 0; ///< of pickOverPlain, those where the policy kept plain's kernel
    /// Each problem judged, in record order: its record's index, the decision's pick (nullopt: none)
    /// and why the model did not decide ("" when it did). What `diode eval --table --decisions` writes.
    struct Judged {
        size_t record = 0;
        std::optional<KernelConfig> pick;
        std::string notSelected;
    };
    std::vector<Judged> decisions;
};

/// The table over problem lines `records` with the candidates the feature schema describes, each
/// decided by `selector` (the plugin's decision on the package's GPU); only lines of `searchSpace`
/// (a line without one is DEFAULT), and only problems with a time of `method`. Throws InvalidInput
/// when no problem is left.
PolicyTable policyTable(Selector &selector, const ModelPackage &package,
                        const std::vector<ProblemRecord> &records, TimingMethod method,
                        const std::string &searchSpace);

/// The table in Markdown, "mean / P10" per cell, a cell's count in brackets when it covers fewer
/// problems than its row (max-autotune ran on a sample), then one line on the pick's time against
/// plain torch.compile's function: geometric mean, the worst, and how many are over 10 % slower.
std::string formatPolicyTable(const PolicyTable &table);

} // namespace diode
