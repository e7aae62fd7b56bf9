#pragma once

#include "diode/analysis/dataset.h"
#include "diode/analysis/metrics.h"
#include "diode/infer/modelpackage.h"

#include <map>
#include <string>
#include <utility>

namespace diode {

class Store;

/// The baselines a package's test-split metrics record (compareWithBaselines, then
/// addMaxAutotuneBaseline), in the order every page and `diode inspect` list them: plain
/// torch.compile's kernel (ATen) first, max-autotune's pick second.
inline constexpr const char *kBaselineOrder[] = {"aten", "max-autotune", "first-config", "random"};

/// Ranked problems for `evaluate`: the package's predictions, or a baseline's scores.
std::vector<RankedProblem> rankWith(const ModelPackage &pkg, const std::vector<TrainingProblem> &problems);
std::vector<RankedProblem> rankWithBaseline(const std::string &baseline,
                                            const std::vector<TrainingProblem> &problems);
/// The model's ranking (from rankWith) next to the "aten", "first-config" and "random"
/// baselines on the same problems, with the model's breakdowns. Used by train and eval alike.
nlohmann::json compareWithBaselines(const std::vector<RankedProblem> &model,
                                    const std::vector<TrainingProblem> &problems);

/// The times Inductor's own benchmark gave the candidates of `store`'s problems (what
/// max-autotune picks by), for the problems `filter` accepts; no problems where it never ran.
Dataset inductorBenchmarkData(Store &store, const DatasetFilter &filter);
/// Each timed candidate's first time in `data` (a problem measured in several runs keeps its first
/// run's), keyed by problem label and candidate key: what max-autotune's pick is read from.
std::map<std::pair<std::string, std::string>, double> firstTimes(const Dataset &data);
/// max-autotune's pick on those of `problems` where Inductor's benchmark timed candidates
/// (`benchmarked`, from inductorBenchmarkData): the candidate it timed fastest, judged by the
/// problems' own times. Empty where the benchmark never ran on any of them.
std::vector<RankedProblem> rankByInductorBenchmark(const std::vector<TrainingProblem> &problems,
                                                   const Dataset &benchmarked);
/// Adds max-autotune's pick as `metrics`' baseline "max-autotune" (compareWithBaselines' form,
/// its "problems" the count it covers) where the benchmark ran on any of `problems`.
void addMaxAutotuneBaseline(nlohmann::json &metrics, const std::vector<TrainingProblem> &problems,
                            const Dataset &benchmarked);

} // namespace diode
