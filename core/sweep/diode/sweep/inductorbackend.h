#pragma once

#include "diode/sweep/backend.h"
#include "diode/sweep/workerprocess.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>

namespace diode {

/// Where one of a sweep's workers runs. Workers of one GPU compile in parallel and take turns
/// timing (a lock file a GPU, held while a worker times or Inductor benchmarks), so the GPU times
/// while the others compile.
struct WorkerSlot {
    std::string gpu;        ///< as CUDA_VISIBLE_DEVICES names it; "" = whatever the environment gives
    int index = 0;          ///< this worker's number among the sweep's (names its cache folder)
    int compileThreads = 0; ///< TORCHINDUCTOR_COMPILE_THREADS; 0: Inductor's default
};

/// Measures with PyTorch Inductor's max-autotune through `PY -m torch_diode.tools.worker`, a
/// long-lived process speaking JSON lines (plugin/python/torch_diode/tools/worker.py). A worker that
/// crashes or exceeds the per-problem timeout is killed, its problem stored as failed with the
/// reason, and a fresh worker started for the next problem.
class InductorBackend final : public Backend {
public:
    /// `python`: the interpreter ("" = $DIODE_PYTHON or python3); `logPath`: the worker's stderr.
    InductorBackend(std::string python, std::string logPath, WorkerSlot slot = {}, int workers = 1);
    ~InductorBackend() override;

    std::string name() const override { return "inductor"; }
    using Backend::start;
    /// Starts the worker and waits for its hello: at most $DIODE_WORKER_START_TIMEOUT_S seconds
    /// (default 180: importing torch and starting CUDA on a cold machine), then BackendUnavailable
    /// naming the worker and its log.
    void start(const std::atomic<bool> &cancel) override;
    void describe(RunInfo &run) const override;
    /// In a CUDA graph, warm and cold L2, and Inductor's own autotune number beside them.
    std::set<TimingMethod> timingMethods() const override {
        return {TimingMethod::GraphWarm, TimingMethod::GraphCold, TimingMethod::InductorAutotune};
    }
    ProblemOutcome measure(const GemmProblem &problem, const SweepPlan &plan,
                           const std::set<std::string> &skip, const MeasurementSink &sink,
                           const std::atomic<bool> &cancel) override;

    int restarts() const { return m_restarts; }
    const nlohmann::json &hello() const { return m_hello; }

    /// "the inductor worker" (one), "inductor worker 2 (GPU 1)"; with its command and log.
    std::string workerName() const;

private:
    /// Starts a worker and waits for its hello; false when `cancel` stopped the wait.
    bool spawn(const std::atomic<bool> &cancel);

    std::string m_python;
    std::string m_logPath;
    WorkerSlot m_slot;
    int m_workers = 1;      ///< of the sweep, for the worker's name
    std::string m_cacheDir; ///< Inductor's and Triton's caches of this worker, removed at the end
    std::unique_ptr<WorkerProcess> m_worker;
    nlohmann::json m_hello;
    int64_t m_nextId = 1;
    int m_restarts = 0;
};

/// The worker's hello, read from one line of its stdout (docs/FORMATS.md, "Worker protocol"): the
/// hello object; nullopt for a line that is not JSON (what an interpreter may print before the worker
/// runs); BackendUnavailable naming `worker` for JSON that is not a hello, a hello saying it cannot
/// run, or one whose fields are of the wrong type.
std::optional<nlohmann::json> readWorkerHello(const std::string &line, const std::string &worker);

/// What one line of the worker's stdout says of request `id` for `problem`.
struct WorkerAnswer {
    ProblemOutcome outcome;              ///< a failure's status and error; Ok with `record`
    std::optional<ProblemRecord> record; ///< the measured problem
    /// The line is no answer to this request (not JSON, no id, another id): the worker is out of step
    /// and is stopped; `outcome` says why.
    bool broken = false;
};
WorkerAnswer readWorkerAnswer(const std::string &line, int64_t id, const GemmProblem &problem);

/// The lock file the workers timing on `gpu` (as CUDA_VISIBLE_DEVICES names it) share; one a
/// user, so that nobody's file blocks another user's sweep.
std::string gpuLockPath(const std::string &gpu);

/// The folder holding the torch_diode package: $DIODE_PLUGIN_PYTHON, the source tree's
/// plugin/python, or the installed copy.
std::string pluginPythonDir();

/// The interpreter the plugin's Python tools run in (the worker, the demo, the kernel sweep):
/// `python`, else $DIODE_PYTHON, else python3.
std::string pluginPython(const std::string &python);

/// What a plugin tool's process gets beside our environment: PYTHONPATH led by pluginPythonDir(),
/// and TORCH_DIODE_AUTOREGISTER=0 (a tool installs the selector itself where it means to).
std::vector<std::string> pluginToolEnv();

} // namespace diode
