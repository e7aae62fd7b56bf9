#pragma once

#include "diode/analysis/datasplit.h"
#include "diode/analysis/metrics.h"
#include "diode/analysis/predictiontable.h"
#include "diode/infer/selector.h"
#include "diode/infer/timingmethod.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace diode {

struct EvaluationResult;

/// What `diode eval` (app/cli/modelcommands.cpp) and the workbench's Validate page
/// (ui/validate/validationworker.cpp) both run: one or more packages against the problems of a store or
/// of a problem JSON-lines file, next to the ATen, first-config and random baselines. The faces
/// only turn options into a job and print or draw the result.
struct EvaluationJob {
    std::string db;                     ///< SQLite store to read
    std::string problemsFile;           ///< problem JSON lines with timings, read instead of `db` when set
    std::vector<std::string> packages;  ///< the first decides the held-out cut
    std::optional<TimingMethod> method; ///< the measured times to compare with; nullopt: the data's default
    /// The ATen guard's margin of the decision judged beside the arg-min; nullopt: each package's
    /// own for the regime of its timing method (Selector, packageMargin).
    std::optional<double> margin;
    /// Of a store: only the problems the first package never trained on (its test split), when
    /// the store is its training data. Every model's result says how many of the problems shown
    /// it trained on either way.
    bool heldOutOnly = true;
    /// Write the first package's predictions for every problem of `db` into it. Only when asked
    /// (`diode eval --store-predictions`): the shipped data is never written behind a user's back.
    bool storePredictions = false;
    /// Store them even where the package's GPU or timing method is not the database's; without it
    /// that is refused (DataMixRefused, datamix.h) before anything is computed.
    bool allowMixedData = false;
    const std::atomic<bool> *cancel = nullptr;
    std::function<void(const std::string &)> status;
    std::function<void(int done, int total)> progress;
    /// Called once the predictions are there, before the metrics, so a view can draw early.
    std::function<void(const EvaluationResult &)> predicted;
};

/// One package's predictions on the shared table, and what they give.
struct ModelEvaluation {
    std::string name, packagePath;
    std::string source;                                      ///< where the predictions came from
    TimingMethod trainedOn = TimingMethod::InductorAutotune; ///< the times the package learnt
    std::vector<double> predictedMs;                         ///< per candidate of the table (NaN where none)
    std::vector<double> top1; ///< per problem: top-1 efficiency, sorted ascending (a CDF)
    SelectorMetrics metrics;  ///< of the arg-min (the candidate predicted fastest)
    /// The plugin's decision (Selector::decide with the package's margin for its regime, or the
    /// job's): what a compile with the package runs; its top-1 efficiency over the same problems.
    /// The policy it decided with (its margin is shown).
    SelectionPolicy policy;
    /// Its pick ranked first, the rest by prediction: top-1 is the policy's, top-k its pick and the
    /// k-1 predicted fastest of the others. predictsTimes is false (the arg-min's row has MAPE).
    SelectorMetrics policyMetrics;
    std::vector<double> policyTop1; ///< per problem, sorted ascending
    nlohmann::json breakdown;       ///< evaluateWithBreakdown(): overall and by op, dtype, size
    /// Speed-up × of this package's picks (higher is better): the geometric mean over problems of
    /// the baseline pick's time over this pick's, against plain torch.compile (ATen's kernel) on
    /// every problem and against max-autotune's pick where its benchmark ran; NaN without any.
    double speedupVsPlain = std::numeric_limits<double>::quiet_NaN();
    double speedupVsMaxAutotune = std::numeric_limits<double>::quiet_NaN();
    /// Problems of the table this package trained on; -1 where that cannot be told (`unknownWhy`).
    int trainedOnShown = -1;
    std::string unknownWhy;
};

struct EvaluationResult {
    bool complete = false; ///< false for the early (predictions only) delivery and when cancelled
    bool cancelled = false;
    std::shared_ptr<const PredictionTable> table;
    std::vector<uint32_t> byMeasured; ///< candidate indices with a timing, sorted by measured time
    std::vector<ModelEvaluation> models;
    std::vector<double> atenTop1, defaultTop1; ///< per problem, sorted ascending
    MethodChoice method;                       ///< whose measured times the table holds, and why
    /// ATen alone is what plain torch.compile runs; first-config is Inductor's first Triton config.
    SelectorMetrics aten, firstConfig, random;
    /// max-autotune's pick (the candidate Inductor's own benchmark timed fastest), judged by the
    /// table's times, over the problems where that benchmark ran (maxAutotune.problems of them;
    /// 0: none, not shown).
    SelectorMetrics maxAutotune;
    std::vector<double> maxAutotuneTop1; ///< per such problem, sorted ascending
    HeldOutProblems heldOut;             ///< of the first package on `db` (known == false for a file)
    bool heldOutOnly = false;            ///< the table was cut to the first package's test split
    size_t problemsBeforeCut = 0;        ///< problems of the source before that cut
    int64_t storedModelId = 0;           ///< when predictions were stored
    double seconds = 0;
};

/// Runs the whole evaluation; throws InvalidInput (bad input, nothing to measure),
/// PackageError or StoreError with a message naming the fault. A cancelled job returns early
/// with `cancelled` set.
EvaluationResult runEvaluationJob(const EvaluationJob &job);

} // namespace diode
