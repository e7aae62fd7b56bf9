#pragma once

#include "features.h"
#include "measurement.h"
#include "store.h"

#include <optional>
#include <string>
#include <vector>

namespace diode {

/// One problem as the model sees it: the candidates Inductor offered and what each measured.
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

/// Every problem of the store that has at least one timed candidate, candidates the feature
/// schema knows (ATen, Triton). A problem measured in several runs appears once per run.
std::vector<TrainingProblem> loadDataset(Store &store, const DatasetFilter &filter = {});
/// The same from problem JSON lines (a held-out file); throws InvalidInput naming the line.
std::vector<TrainingProblem> loadDatasetJsonl(const std::string &path, const DatasetFilter &filter = {});

/// A stable fingerprint of a dataset (FNV-1a over problems, configs and times), for manifests.
std::string fingerprint(const std::vector<TrainingProblem> &problems);

} // namespace diode
