#pragma once

#include "diode/analysis/dataset.h"
#include "diode/analysis/metrics.h"
#include "diode/infer/modelpackage.h"
#include "diode/infer/selector.h"
#include "diode/store/store.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace diode {

/// Every candidate of every problem with its measured time, flat (structure of arrays) so a
/// million measurements stay a few tens of megabytes. Candidates of problem i are
/// [start[i], start[i+1]). Configs are stored once and referenced by index.
struct PredictionTable {
    std::vector<GemmProblem> problems;
    std::vector<uint32_t> start{0};
    std::vector<KernelConfig> configs;
    std::vector<int32_t> configOf;              ///< per candidate: index into configs
    std::vector<double> measuredMs;             ///< per candidate: NaN where it produced no timing
    std::vector<int64_t> problemIds, configIds; ///< store ids (empty for problems read from JSON lines)

    size_t candidates() const { return configOf.size(); }
    /// The candidates of problem `i` as the selectors see them.
    std::vector<KernelConfig> configsOf(size_t i) const;

    /// The candidates a model describes of every problem of the store with a `method` time, in
    /// the order loadDataset() gives them (by config id), with their `method` times; a problem
    /// measured in several runs keeps its first time. Reads the tables directly: config JSON is
    /// parsed once per config.
    static PredictionTable fromStore(Store &store, TimingMethod method, const DatasetFilter &filter = {});
    static PredictionTable fromProblems(const std::vector<TrainingProblem> &problems);
};

/// A model whose predictions a store holds (written by `diode eval` or the workbench).
struct StoredModel {
    int64_t id = 0;
    std::string name, path, createdAt;
    nlohmann::json manifest;
    int64_t predictions = 0;
};
std::vector<StoredModel> storedModels(Store &store);
/// The id of a stored model made from the same package (same name and creation time in the
/// manifest) that has predictions, or 0.
int64_t findStoredModel(Store &store, const nlohmann::json &manifest);

/// Predicted milliseconds per candidate of `table` (NaN where the store has none).
std::vector<double> storedPredictions(Store &store, int64_t modelId, const PredictionTable &table);
/// Predicted milliseconds per candidate, computed with the package's Eigen reader. Returns an
/// empty vector when `cancel` was set.
std::vector<double> computePredictions(const ModelPackage &pkg, const PredictionTable &table,
                                       const std::atomic<bool> *cancel = nullptr);

/// Records a package and its predictions for `problems` (one vector per problem, in order) in
/// one transaction; returns the model id. The Validate page reads them back.
int64_t storePredictions(Store &store, const std::string &packagePath, const nlohmann::json &manifest,
                         const std::vector<TrainingProblem> &problems,
                         const std::vector<std::vector<double>> &predictedMs);

/// Problems of `table` ranked by per-candidate scores (lower = predicted faster), for metrics.
/// `predictedMs` may be empty (baselines predict no times).
std::vector<RankedProblem> rankTable(const PredictionTable &table, const std::vector<double> &scores,
                                     bool scoresArePredictions);
/// `ranked` (rankTable()'s, from predictions) re-ranked so that each problem's first is the
/// selector's pick (Selector::decide on the package's GPU, with these predictions): what the plugin
/// runs, for the same metrics (top-1 is the decision's; predicted times are dropped, since the
/// order is no longer theirs).
std::vector<RankedProblem> rankByDecision(const PredictionTable &table, std::vector<RankedProblem> ranked,
                                          Selector &selector);
/// The baseline selectors ("aten", "first-config", "random") on the table's problems.
std::vector<RankedProblem> rankTableWithBaseline(const PredictionTable &table, const std::string &baseline);

} // namespace diode
