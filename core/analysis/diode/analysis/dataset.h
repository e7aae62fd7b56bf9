#pragma once

#include "diode/infer/features.h"
#include "diode/infer/measurement.h"
#include "diode/infer/problemjson.h"
#include "diode/store/store.h"

#include <map>
#include <optional>
#include <set>
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

/// A candidate whose output failed the worker's check against ATen's on a problem.
struct WrongResult {
    GemmProblem problem;
    KernelConfig config;
    std::string error;
};

/// A package manifest's `unsafe_candidates` (docs/PACKAGE.md): each candidate whose output failed
/// the worker's check, once per op, dtype and layout, with the shapes it failed on.
nlohmann::json unsafeCandidates(const std::vector<WrongResult> &wrong);

/// A dataset and the timing method its times are of (said wherever it is trained on or shown).
struct Dataset {
    std::vector<TrainingProblem> problems;
    MethodChoice method;
    /// Every wrong result of the data (of the problems the filter accepts), whatever the method:
    /// a package must never choose these (trainingManifest's unsafe_candidates).
    std::vector<WrongResult> wrongResults;
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

/// The problem records of a file of problem JSON lines or of a store (`diode export`'s records:
/// every run's, or run `runId`'s). A run asked of a file of lines, or one the store does not
/// hold, is refused (InvalidInput naming the file and the runs it has).
std::vector<ProblemRecord> readRecords(const std::string &path, std::optional<int64_t> runId = std::nullopt);
/// Successful times per method in `records`.
MethodCounts methodCounts(const std::vector<ProblemRecord> &records);

/// What a file of problem lines holds, summarised as `diode stats` does a database: distinct
/// problems (a problem in the DEFAULT and an EXHAUSTIVE line counts once), per GPU (from each
/// line's "hardware"), per held-out tag ("heldout": "family:NAME" / "random"), measurements per
/// timing method. The problems themselves are kept so a caller can check them against a
/// database's (held-out data must not be in the training store).
struct ProblemFileStats {
    int64_t lines = 0;
    int64_t failedProblems = 0;
    int64_t measurements = 0;
    int64_t failedMeasurements = 0;
    std::map<std::string, std::set<GemmProblem>> problemsByGpu;
    std::map<std::string, int64_t> linesByTag;
    std::map<std::string, int64_t> linesBySearchSpace;
    std::map<std::string, int64_t> measurementsByMethod; ///< failed ones included, as StoreStats
    std::map<std::string, int64_t> failedByMethod;
    /// The distinct problems of every GPU together.
    std::set<GemmProblem> problems() const;
    nlohmann::json toJson() const;
};
ProblemFileStats problemFileStats(const std::vector<ProblemRecord> &records);

/// A stable fingerprint of a dataset (FNV-1a over problems, configs and times), for manifests.
std::string fingerprint(const std::vector<TrainingProblem> &problems);

} // namespace diode
