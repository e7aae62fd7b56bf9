#pragma once

#include "diode/analysis/dataset.h"
#include "diode/analysis/metrics.h"
#include "diode/infer/modelpackage.h"
#include "diode/infer/selector.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace diode {

/// What the top-1 selection policy gives with one margin over some problems.
struct MarginTrial {
    double margin = 0;
    Distribution top1;     ///< efficiency of the pick (0 where the pick has no time)
    int pickedNonAten = 0; ///< problems where another kernel replaced ATen
    /// Share of the problems whose pick is more than 3 % slower than plain's kernel as measured
    /// (a pick without a time counts as slower); what the margin is chosen by.
    double over3PctSlowerThanPlain = 0;
    nlohmann::json toJson() const;
};

/// The margins tried: 0 (the arg-min) to 0.5.
inline constexpr double kCalibrationMargins[] = {0.0, 0.02, 0.05, 0.08, 0.10, 0.15, 0.20, 0.30, 0.50};
/// A pick within this share of the best top-1 mean is as good (the noise of two measurements).
inline constexpr double kCalibrationTolerance = 0.005;
/// The largest share of calibration picks that may be more than 3 % slower than plain's kernel.
inline constexpr double kCalibrationTarget = 0.05;

std::vector<MarginTrial> tryMargins(const ModelPackage &package, const std::vector<TrainingProblem> &problems,
                                    const std::vector<double> &margins);

/// The ATen guard's margin calibrated for a package on its own validation and test problems
/// (its training data with the split redrawn as the trainer drew it, never held-out problems):
/// among the margins whose top-1 mean is within kCalibrationTolerance of the best, the one with
/// the fewest picks more than 3 % slower than plain's kernel, then the smallest; never one over
/// kCalibrationTarget.
struct Calibration {
    Regime regime = Regime::Warm;
    double margin = 0;
    size_t problems = 0; ///< calibration problems (validation + test)
    /// The arg-min's top-1 mean on the redrawn test split, and what the trainer recorded: equal
    /// when the split is the trainer's.
    double testTop1Redrawn = 0, testTop1Trainer = 0;
    std::vector<MarginTrial> trials;
    /// The redrawn test split (for baselines the trainer could not compute, e.g. max-autotune's).
    std::vector<TrainingProblem> test;
    /// The manifest's selection_policy field (docs/PACKAGE.md).
    nlohmann::json toJson() const;
};

/// Throws InvalidInput when `data` is not the package's training data (its problem count or
/// fingerprint differ) or no margin meets the target.
Calibration calibrate(const ModelPackage &package, const Dataset &data);

} // namespace diode
