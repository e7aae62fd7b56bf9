#pragma once

#include "diode/store/store.h"
#include "diode/sweep/backend.h"
#include "diode/sweep/sweeplock.h"
#include "diode/sweep/sweepplan.h"

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace diode {

struct SweepProgress {
    int64_t done = 0; ///< problems finished, in this and earlier sessions of the run
    int64_t total = 0;
    int64_t failed = 0;
    int64_t measurements = 0; ///< taken in this session
    double elapsedS = 0;
    double problemsPerS = 0;
    double etaS = 0;
    std::string current; ///< label of the problem being measured (with several workers: started last)
};

/// Runs a plan through one or more backends into the store: each backend (a worker) measures
/// problems taken in plan order from one queue, so N workers measure exactly the problems one
/// would; one writer thread; progress through a callback; cancel from any thread; resume of an
/// interrupted run that never measures a (problem, config) twice; telemetry sampled while it runs.
class SweepRunner {
public:
    SweepRunner(std::string dbPath, Backend &backend);
    /// One thread a backend; `backends` must be non-empty and outlive the runner. The first one
    /// describes the run.
    SweepRunner(std::string dbPath, std::vector<Backend *> backends);

    void setProgressCallback(std::function<void(const SweepProgress &)> fn) { m_progress = std::move(fn); }
    /// Takes the database's sweep lock (SweepLock) unless held: SweepBusy, naming the run another
    /// process sweeps, with nothing created or changed. createRun() and run() take it too; run()
    /// lets it go as it returns.
    void lock();
    /// Creates the run row (plan frozen into it, backend's hardware recorded); returns its id.
    int64_t createRun(const SweepPlan &plan);
    /// Measures every problem of `plan` not yet done in `runId`. Returns "finished" or "cancelled".
    /// Store errors (disk full, read-only) propagate as StoreError; the run stays resumable.
    std::string run(int64_t runId, const SweepPlan &plan);
    void cancel() { m_cancel = true; }
    /// Set by cancel(): what the backends' start() and measure() watch.
    const std::atomic<bool> &cancelFlag() const { return m_cancel; }
    /// Stop starting problems `seconds` after run() began (0: never). A run stopped so is
    /// stored `cancelled` (resumable) and deadlineReached() says why.
    void setDeadline(double seconds) { m_deadlineS = seconds; }
    bool deadlineReached() const { return m_deadlineReached; }
    /// The progress and problem callbacks come from the workers' threads, one at a time.

    /// The newest unfinished run of the store and its frozen plan; nullopt if none.
    static std::optional<std::pair<RunInfo, SweepPlan>> resumable(const std::string &dbPath);

private:
    std::string m_dbPath;
    std::vector<Backend *> m_backends;
    std::function<void(const SweepProgress &)> m_progress;
    std::atomic<bool> m_cancel{false};
    double m_deadlineS = 0;
    std::atomic<bool> m_deadlineReached{false};
    std::unique_ptr<SweepLock> m_lock;
};

/// The plan with its problems expanded into one explicit list: what a run stores, so resuming
/// needs neither the plan file nor its shape sets.
nlohmann::json frozenPlan(const SweepPlan &plan);
/// The shard a run's frozen plan records ("shard": "i/n"; the whole plan without it).
PlanShard runShard(const nlohmann::json &frozenPlan);

} // namespace diode
