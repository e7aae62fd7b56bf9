#pragma once

#include "diode/sweep/backend.h"
#include "diode/sweep/inductorbackend.h"
#include "diode/sweep/sweepplan.h"
#include "diode/sweep/sweeprunner.h"

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace diode {

/// One problem as it ended in a session: its best time of one timing method (the one train and
/// eval would choose), or why it failed.
struct ProblemReport {
    GemmProblem problem;
    ProblemOutcome outcome;
    double bestMs = 0; ///< 0: no successful measurement
    int measurements = 0;
};

/// The problems `path` holds measured: a store's problems with a record that has candidates and
/// no problem-level error, or such lines of problem JSON (.jsonl). A problem that failed as a
/// whole is not in it, so a sweep that skips these tries it again. InvalidInput names a file that
/// is neither.
std::set<GemmProblem> measuredProblems(const std::string &path);
/// Removes from `plan` the problems measured in `paths` (measuredProblems); returns how many went.
/// A plan so reduced is frozen with its run, so resuming it needs neither the files nor the plan.
size_t removeMeasured(SweepPlan &plan, const std::vector<std::string> &paths);

/// A sweep as `diode sweep` (app/cli/main.cpp) and the workbench's Sweep page
/// (ui/sweep/sweepworker.cpp) both run it: the backend chosen by name, the resume checks (same plan,
/// same backend, nothing left to do), the run created or continued, measured, cancellable. The
/// faces only turn options into a request and print or draw progress.
class SweepSession {
public:
    static constexpr int kMaxWorkersPerGpu = 32;
    static constexpr int kAutoWorkers = 0; ///< Request::workersPerGpu: autoWorkersPerGpu()

    struct Request {
        std::string db;
        std::string backend;           ///< "cpu" or "inductor"; "" on resume: the run's own
        std::optional<SweepPlan> plan; ///< on resume: checked against the run's frozen plan when given
        std::string python;            ///< inductor: the interpreter ("" = $DIODE_PYTHON or python3)
        bool resume = false;           ///< continue the newest unfinished run of `db`
        /// The part of the plan to measure (`--shard i/n`); on resume, checked against the run's.
        PlanShard shard;
        double deadlineS = 0; ///< stop starting problems after this many seconds (0: never)
        /// Add a run whose backend, GPU or timing method the database does not hold yet; without
        /// it run() refuses with DataMixRefused (datamix.h). A resumed run was confirmed at its start.
        bool allowMixedData = false;
        /// Workers on each GPU (inductor: they compile in parallel and take turns timing; cpu:
        /// they take turns on the CPU). From 1 to kMaxWorkersPerGpu, or kAutoWorkers: as many as
        /// the cores feed, chosen the same way on a resumed run as when it started.
        int workersPerGpu = kAutoWorkers;
        /// The GPUs to sweep on, as CUDA_VISIBLE_DEVICES names them (visibleGpuIds() for all of
        /// them); empty: one GPU, whichever the environment gives. Every GPU must be the same model.
        std::vector<std::string> gpus;
        /// Stores or problem JSON lines whose measured problems a new run leaves out (measuredProblems):
        /// what another machine, shard or earlier sweep already did. Not with `resume`.
        std::vector<std::string> skipMeasured;
    };

    /// Workers a GPU when none are asked for. Inductor: a worker per two of the GPU's share of the
    /// cores, less two, from 1 to 6: 6 on a 16-core host with one GPU, which fed an H100 or H200 best
    /// (docs/BENCHMARKS.md, "Sweep speed"), 2 with 8 cores, 1 with 6 or fewer. cpu: 1, since the
    /// workers would time on the CPU they share.
    static int autoWorkersPerGpu(std::string_view backend, int cores, int gpus);

    /// Resolves the request (refusing a resume with another plan or backend, a sweep with no
    /// plan or backend) with InvalidInput; starts nothing.
    explicit SweepSession(const Request &request);
    ~SweepSession();
    SweepSession(const SweepSession &) = delete;
    SweepSession &operator=(const SweepSession &) = delete;

    /// Non-empty when there is nothing to run: a resume whose newest run already ended.
    const std::string &nothingToDo() const { return m_nothingToDo; }
    bool resumed() const { return m_resumed; }
    int64_t runId() const { return m_runId; } ///< 0 until run() created it, unless resumed
    const SweepPlan &plan() const { return m_plan; }
    const std::string &backend() const { return m_backendName; }

    void setProgressCallback(std::function<void(const SweepProgress &)> fn);
    void setProblemCallback(std::function<void(const ProblemReport &)> fn) { m_problemDone = std::move(fn); }

    /// Starts the backend (BackendUnavailable with one sentence when it cannot run here),
    /// Starts the backend (BackendUnavailable with one sentence when it cannot run here),
    /// refuses a new run that would mix data (DataMixRefused, naming what would mix; nothing is
    /// written), creates the run unless resuming, calls `started` with its id, and measures.
    /// Returns "finished", "cancelled" or "deadline" (stopped by Request::deadlineS; stored as
    /// cancelled, resumable); store errors propagate and leave the run resumable.
    std::string run(const std::function<void(int64_t runId)> &started = {});
    /// From any thread, or a signal handler: the run stops within one configuration.
    void cancel();

    /// The backend of that name ("cpu", "inductor") for worker `slot` of `workers`; InvalidInput for
    /// another name.
    static std::unique_ptr<Backend> makeBackend(const std::string &name, const std::string &python,
                                                const std::string &db, const WorkerSlot &slot = {},
                                                int workers = 1);
    /// The number of workers the session runs.
    size_t workers() const { return m_backends.size(); }
    /// "6 workers a GPU (auto: 16 cores, 1 GPU), 2 compile threads each".
    const std::string &workerLayout() const { return m_workerLayout; }
    /// The run's first line, as `diode sweep` and `diode characterise` print it: "run 3: 40 problems,
    /// backend inductor, database x.db; 6 workers a GPU (…)", the shard named when there is one.
    std::string runLine(int64_t runId) const;

private:
    class Observer;
    void refuseMixing();
    void startWorkers();
    std::string m_db;
    std::string m_backendName;
    SweepPlan m_plan;
    int64_t m_runId = 0;
    bool m_resumed = false;
    bool m_allowMixedData = false;
    std::string m_nothingToDo;
    std::string m_workerLayout;
    std::function<void(const ProblemReport &)> m_problemDone;
    std::mutex m_problemDoneMutex; ///< the workers report one at a time
    std::vector<std::unique_ptr<Backend>> m_backends;
    std::vector<std::unique_ptr<Observer>> m_observers; ///< one a backend, in their order
    std::unique_ptr<SweepRunner> m_runner;
};

} // namespace diode
