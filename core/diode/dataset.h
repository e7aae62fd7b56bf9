#pragma once

#include "features.h"
#include "measurement.h"
#include "store.h"

#include <optional>
#include <string>
#include <vector>

namespace diode {

/// One problem as the model sees it: the candidates Inductor offered and what each measured, by
/// one timing method.
struct TrainingProblem {
    GemmProblem problem;
    std::vector<KernelConfig> configs;
    std::vector<std::optional<double>> timesMs;
    std::string gpu;
    int smCount = 0;
    bool hasTiming() const;
};

struct DatasetFilter {
    std::vector<std::string> ops;    ///< empty: all
    std::vector<std::string> dtypes; ///< empty: all
    bool accepts(const GemmProblem &p) const;
};

/// A dataset and the timing method its times are of (said wherever it is trained on or shown).
struct Dataset {
    std::vector<TrainingProblem> problems;
    MethodChoice method;
};

/// Every problem of the store with at least one candidate timed by the method, candidates the
/// feature schema describes (FeatureSchema::describes), each with that method's time or none.
/// `asked` nullopt takes the default for the store (defaultTimingMethod); an asked method the
/// store has no times of is refused (InvalidInput). A problem measured in several runs appears
/// once per run.
Dataset loadDataset(Store &store, std::optional<TimingMethod> asked, const DatasetFilter &filter = {});
/// The same from problem JSON lines (a held-out file); throws InvalidInput naming the line.
Dataset loadDatasetJsonl(const std::string &path, std::optional<TimingMethod> asked,
                         const DatasetFilter &filter = {});

/// Problem JSON lines of a file, blank lines skipped; throws InvalidInput naming the line.
std::vector<ProblemRecord> readProblemFile(const std::string &path);
/// Successful times per method in `records`.
MethodCounts methodCounts(const std::vector<ProblemRecord> &records);

/// A stable fingerprint of a dataset (FNV-1a over problems, configs and times), for manifests.
std::string fingerprint(const std::vector<TrainingProblem> &problems);

} // namespace diode
