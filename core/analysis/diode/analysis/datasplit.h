#pragma once

#include "diode/analysis/dataset.h"
#include "diode/store/store.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace diode {

/// Which problems went where: the split is by problem, never by row. Drawn once here, by the
/// trainer and by whoever needs a package's held-out problems back.
struct DataSplit {
    std::vector<size_t> train, validation, test;
    static DataSplit byProblem(size_t problems, double validationFraction, double testFraction,
                               uint64_t seed);
    /// The same draw with the counts given, as a package manifest records them.
    static DataSplit byCounts(size_t problems, size_t validation, size_t test, uint64_t seed);
};

/// The problems of some data that a package never trained on.
struct HeldOutProblems {
    /// The data is the package's training data and its split was redrawn: `labels` is exact.
    bool known = false;
    /// GemmProblem::label() of the package's test problems, less any also in train or validation.
    std::set<std::string> labels;
    /// Problems of the data the package trained on (train + validation), when known.
    size_t trainedOn = 0;
    /// When not known: why, for a label ("the database is not this model's training data").
    std::string why;
};

/// Redraws the split a package's manifest records (training_data: fingerprint, split counts;
/// training.seed; timing_method, ops, dtypes) on `store`. Known only when the store still holds
/// exactly the data the package was trained on (same fingerprint); never throws for data that
/// does not match, it says why.
HeldOutProblems heldOutProblems(Store &store, const nlohmann::json &manifest);

/// The ops and dtypes a package's manifest says its training data held: filtering on them gives
/// that data back whether or not the run was filtered.
DatasetFilter packageFilter(const nlohmann::json &manifest);

} // namespace diode
