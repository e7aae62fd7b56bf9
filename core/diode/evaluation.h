#pragma once

#include "dataset.h"
#include "metrics.h"
#include "modelpackage.h"

namespace diode {

/// Ranked problems for `evaluate`: the package's predictions, or a baseline's scores.
std::vector<RankedProblem> rankWith(const ModelPackage &pkg, const std::vector<TrainingProblem> &problems);
std::vector<RankedProblem> rankWithBaseline(const std::string &baseline,
                                            const std::vector<TrainingProblem> &problems);
/// The model's ranking (from rankWith) next to the "aten", "first-config" and "random"
/// baselines on the same problems, with the model's breakdowns. Used by train and eval alike.
nlohmann::json compareWithBaselines(const std::vector<RankedProblem> &model,
                                    const std::vector<TrainingProblem> &problems);

} // namespace diode
