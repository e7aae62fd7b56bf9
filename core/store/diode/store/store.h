#pragma once

#include "diode/infer/measurement.h"
#include "diode/store/sqlstatement.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace diode {

/// One sweep or import: where and with what the measurements were taken.
struct RunInfo {
    int64_t id = 0;
    std::string createdAt;
    std::string finishedAt;
    std::string status = "running"; ///< running, finished, cancelled, failed
    std::string backend;            ///< inductor, cpu, import
    std::string planName;
    std::string planJson;
    std::string searchSpace;
    std::string host;
    std::string gpuName;
    int smCount = 0;
    int64_t gpuMemoryMb = 0;
    std::string driver;
    std::string torchVersion;
    std::string tritonVersion;
    std::string source; ///< file a run was imported from
    int64_t problemsPlanned = 0;

    /// Takes GPU identity from the worker's "hardware" object ({"gpu", "sm_count", "memory_mb",
    /// "driver"}) and torch/Triton from one holding "torch" and "triton" (docs/FORMATS.md). A field of
    /// the wrong type is refused (InvalidInput starting with `where`, naming the field).
    void setFromWorker(const nlohmann::json &hardware, const nlohmann::json &versions,
                       const std::string &where = "worker hello");
};

/// One telemetry sample taken while a run measured.
struct TelemetrySample {
    double tSeconds = 0;
    double smClockMhz = 0;
    double memClockMhz = 0;
    double powerW = 0;
    double temperatureC = 0;
    double utilizationPct = 0;
};

/// Whether the file starts with SQLite's header (a store, or another program's database), as
/// opposed to problem JSON lines.
bool isSqliteFile(const std::string &path);

struct StoreStats {
    int64_t runs = 0;
    int64_t problems = 0;     ///< distinct problems
    int64_t problemLines = 0; ///< a problem once per run that measured it (wording.h's "lines")
    int64_t measurements = 0;
    int64_t failedMeasurements = 0;
    int64_t failedProblems = 0;
    int64_t configs = 0;
    std::vector<std::string> gpus;
    std::vector<std::string> ops;
    std::vector<std::string> dtypes;
    std::vector<std::string> backends;
    std::map<std::string, int64_t> measurementsByMethod; ///< rows per timing method, failed ones included
    std::map<std::string, int64_t> failedByMethod;
    std::map<std::string, int64_t> problemsByGpu; ///< distinct problems measured per GPU name
    int64_t baselines = 0;                        ///< rows of problem_baselines
    /// Kernel and site lines (diode sweep-kernels, docs/FORMATS.md): cases, and those measured (not skipped).
    int64_t kernelCases = 0, kernelsMeasured = 0, siteCases = 0, sitesMeasured = 0;
    /// Candidates of a run whose warm time is implausibly above their cold one (warmColdGlitch).
    int64_t warmColdGlitches = 0;
    MethodChoice defaultMethod; ///< what train and eval read unless told otherwise
    nlohmann::json toJson() const;
    /// "N kernel cases (M measured), S site cases (T measured)": the kernel and site lines, for `diode stats`
    /// and the Summary page; empty when the store holds none.
    std::string caseLinesNote() const;
    /// One sentence on the warm-cold glitches, for `diode stats` and the Summary page; empty when none.
    std::string warmColdGlitchNote() const;
};

/// The SQLite measurement store (docs/FORMATS.md): WAL, foreign keys, a schema version with
/// migrations. A Store is one connection; use it from one thread at a time. Sweeps write
/// through StoreWriter, which owns its own Store on a thread.
class Store : public SqlConnection {
public:
    static constexpr int kSchemaVersion = 6;
    enum class Mode { ReadWrite, ReadOnly };
    /// A database that is neither empty nor diode's (another program's tables): Refuse leaves
    /// it untouched (no WAL, no tables) and throws StoreError naming what it holds; Adopt adds
    /// diode's tables beside the others (`--adopt-foreign-db`). Read-only opens always refuse.
    enum class Foreign { Refuse, Adopt };

    /// Opens (creating if needed, unless ReadOnly) and migrates. Throws StoreError. ReadOnly
    /// also reads a WAL database in a folder it cannot write (no -shm can be made there): as
    /// immutable, unless a -wal file holds changes that only a writable folder can replay.
    explicit Store(const std::string &path, Mode mode = Mode::ReadWrite, Foreign foreign = Foreign::Refuse);
    ~Store();
    Store(const Store &) = delete;
    Store &operator=(const Store &) = delete;

    int schemaVersion();

    /// RAII BEGIN IMMEDIATE .. COMMIT; rolls back if destroyed without commit().
    class Transaction {
    public:
        explicit Transaction(Store &store);
        ~Transaction();
        void commit();

    private:
        Store &m_store;
        bool m_done = false;
    };

    int64_t createRun(const RunInfo &run);
    void setRunStatus(int64_t runId, const std::string &status);
    RunInfo run(int64_t runId);
    std::vector<RunInfo> runs();
    std::optional<RunInfo> newestUnfinishedRun();
    /// The first import run whose file had this content fingerprint (diode import), if any.
    std::optional<RunInfo> importOfContent(const std::string &fingerprint);

    int64_t problemId(const GemmProblem &p);
    int64_t configId(const KernelConfig &c);
    void insertMeasurement(int64_t runId, int64_t problemId, const Measurement &m);
    /// A problem's whole-op baseline times (schema v3 table problem_baselines); a time already
    /// stored for the same run, problem, baseline and method is replaced.
    void insertBaselines(int64_t runId, int64_t problemId, const std::vector<BaselineTiming> &baselines);
    void markProblemDone(int64_t runId, int64_t problemId, const std::string &status,
                         const std::string &error, double seconds);
    void insertTelemetry(int64_t runId, const TelemetrySample &s);
    /// Writes a whole problem record (measurements and its done marker) for `runId`.
    void insertRecord(int64_t runId, const ProblemRecord &r, double seconds = 0);

    /// A model and its predictions, for the GUI (schema v2 tables).
    int64_t addModel(const std::string &name, const std::string &path, const nlohmann::json &manifest);
    void insertPrediction(int64_t modelId, const GemmProblem &p, const KernelConfig &c, double predictedMs);

    std::set<int64_t> doneProblems(int64_t runId);
    int64_t measurementCount(std::optional<int64_t> runId = std::nullopt);
    std::vector<TelemetrySample> telemetry(int64_t runId);
    StoreStats stats();
    /// Every distinct problem with a run_problems row (measured or failed), by the GPU name of
    /// its run ("" for none).
    std::map<std::string, std::set<GemmProblem>> storedProblemsByGpu();
    /// Successful measurements per timing method: what defaultTimingMethod() decides on.
    MethodCounts methodCounts();

    /// Every problem of the store (or of one run) with its candidates (every timing method) and
    /// baselines, for export and datasets.
    void forEachRecord(const std::function<void(const RunInfo &, const ProblemRecord &)> &fn,
                       std::optional<int64_t> runId = std::nullopt);

    void exec(const char *sql);

    /// How long a connection waits for another's lock before it says the database is busy.
    static constexpr int64_t kBusyTimeoutMs = 10000;

private:
    /// exec(), trying again while another connection's lock keeps SQLite from waiting for it.
    void execRetryingBusy(const char *sql);
    [[noreturn]] void fail(const std::string &what);
    void migrate();
    void checkOwnership(Mode mode, Foreign foreign);

    /// A read-only reader of a WAL database: SQLite creates its -wal and -shm for the reader and, the
    /// reader being read-only, leaves them behind; the destructor removes them when no one else
    /// has the database open and the -wal is empty.
    bool m_removeWalFiles = false;
    // Id caches keyed by cheap fingerprints: the ingest path must not build JSON per row.
    std::unordered_map<std::string, int64_t> m_configIds;
    struct ProblemHash {
        size_t operator()(const GemmProblem &p) const noexcept;
    };
    std::unordered_map<GemmProblem, int64_t, ProblemHash> m_problemIds;
};

std::string utcNow();

/// For a command that made the database `path` and then failed (a refused import or merge): removes it
/// when it holds no run and no kernel or site line and this process had the last connection to it (SQLite
/// removed its -wal as that one closed), so that a refusal leaves no empty database behind; another process
/// writing it keeps it. Never throws.
void removeEmptyDatabase(const std::string &path);

} // namespace diode

namespace diode {
/// Problems of a run with the config keys already measured for each; a problem with a done
/// marker in run_problems maps `done` to true.
struct RunProgressState {
    std::map<GemmProblem, std::set<std::string>> measured;
    std::set<GemmProblem> done;
};
RunProgressState runProgressState(Store &store, int64_t runId);
} // namespace diode
