#pragma once

#include "diode/analysis/dataset.h"
#include "diode/analysis/datasplit.h"
#include "diode/analysis/evaluation.h"
#include "diode/analysis/metrics.h"
#include "diode/infer/modelpackage.h"
#include "diode/train/trainoptions.h"

#include <functional>

namespace diode {

struct TrainResult {
    std::vector<MlpWeights> members; ///< the ensemble: one network per member
    nlohmann::json hardware;         ///< {"gpu", "sm_count"} of the training data, for the manifest
    DataSplit split;
    int epochsRun = 0;           ///< over all members
    std::vector<int> bestEpochs; ///< per member
    bool cancelled = false;      ///< stopped through TrainOptions::cancel before the epochs ran out
    nlohmann::json testMetrics;  ///< model and baselines on the test problems
    std::vector<std::vector<float>> testFeatures; ///< rows of the test problems, for parity checks
    std::vector<float> testTorchOutput;           ///< LibTorch's output on those rows
};

/// The fewest problems with timings that training accepts (each split needs several).
constexpr int kMinTrainingProblems = 20;

/// Trains the runtime MLP ensemble with LibTorch: MSE on log time plus pairwise and listwise
/// ranking terms among the candidates of the same problem, early stopping on validation top-1
/// efficiency, seeded. The test problems are the same for every member; each member draws its
/// own validation problems from the rest and its own initial weights, so members differ.
/// Throws InvalidInput when there are too few problems.
/// With `start` (fine-tuning, `diode train --init`): member m starts from `start[m % n]` instead
/// of random weights, keeps its input normalisation except for features it saw constant (the
/// hardware of the GPU it was trained on), which take the new data's, and its validation top-1
/// before the first epoch counts as a result: fine-tuning never returns a network worse on
/// validation than the one it started from. Throws InvalidInput when the layers differ from
/// the feature schema's width.
TrainResult train(const std::vector<TrainingProblem> &problems, const TrainOptions &options,
                  const std::vector<MlpWeights> *start = nullptr);

/// The networks of a package as the trainer writes them (normalisation and layers unfolded), for
/// fine-tuning; the package is checked by ModelPackage::load first. Throws PackageError.
std::vector<MlpWeights> packageWeights(const std::string &path);

} // namespace diode
