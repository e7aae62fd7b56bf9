#pragma once

#include "diode/analysis/dataset.h"
#include "diode/train/trainer.h"
#include "diode/train/trainoptions.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <set>
#include <string>
#include <vector>

namespace diode {

/// What `diode train` (app/cli/modelcommands.cpp) and the workbench's Train page
/// (ui/train/trainworker.cpp) both run: load a store's problems, train, write the package with its
/// manifest, and (when asked, for a writable store) record the model and its predictions so the
/// Validate page can read them back. The faces only turn options into a job and print or draw.
struct TrainingJob {
    std::string db;                     ///< SQLite store with measurements
    std::string out;                    ///< package to write (.diode)
    DatasetFilter filter;               ///< ops and dtypes to train on
    std::optional<TimingMethod> method; ///< the times to train on; nullopt: the store's default
    TrainOptions options;
    bool storePredictions = false; ///< write the model and its predictions into `db`
    /// A package to fine-tune (`diode train --init`): its networks are the starting point, and
    /// its timing method must be the data's (train()).
    std::string initPackage;
    /// Problems (GemmProblem::label()) kept out of training: held out by the caller, who measures
    /// the package on them (`diode characterise`).
    std::set<std::string> exclude;
    /// Called once the problems are loaded, before training: how many, and whose times.
    std::function<void(size_t problems, const MethodChoice &method)> loaded;
};

struct TrainingJobResult {
    TrainResult train;
    nlohmann::json manifest; ///< as written into the package (without the tensor table)
    size_t problems = 0;
    MethodChoice method; ///< the times it trained on, and why
    int64_t modelId = 0; ///< in the store, when predictions were stored
};

/// The package manifest of a training run (docs/PACKAGE.md), without the parts the writer adds.
nlohmann::json trainingManifest(const Dataset &data, const TrainResult &result, const TrainOptions &options,
                                const std::string &name, const std::string &source);

/// Runs the whole job; throws InvalidInput, StoreError or PackageError with a message naming
/// the fault. An output that cannot be written is refused before anything is loaded or
/// trained. A cancelled run still writes the best network so far (`train.cancelled`).
TrainingJobResult runTrainingJob(const TrainingJob &job);

} // namespace diode
