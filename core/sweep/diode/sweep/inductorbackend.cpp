#include "inductorbackend.h"

#include "diode/config.h"
#include "diode/infer/jsonlimits.h"
#include "diode/infer/printable.h"
#include "diode/infer/problemjson.h"
#include "diode/infer/removetree.h"
#include "diode/infer/torchversion.h"
#include "diode/infer/vocabulary.h"
#include "diode/sweep/hardware.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <unistd.h>

namespace diode {

namespace {

// Importing torch and starting CUDA on a cold machine; a slow shared file system may need more.
double helloTimeoutS() {
    if (const char *env = std::getenv("DIODE_WORKER_START_TIMEOUT_S"); env && *env) {
        char *end = nullptr;
        const double s = std::strtod(env, &end);
        if (end && *end == '\0' && std::isfinite(s) && s > 0 && s <= 86400)
            return s;
        throw InvalidInput(
            fmt::format("DIODE_WORKER_START_TIMEOUT_S=\"{}\": expected seconds, more than 0 and at "
                        "most 86400",
                        printable(env)));
    }
    return 180;
}

// The longest line the worker may send: a problem line's bound (kProblemJsonLimits), so that a
// worker flooding its stdout without a line break grows nothing without bound.
constexpr size_t kMaxWorkerLine = kProblemJsonLimits.maxBytes;

// The start of what the worker sent, for a message: one line, escaped, short.
std::string excerpt(const std::string &line) {
    return printable(line.size() > 120 ? line.substr(0, 120) + "..." : line);
}

} // namespace

std::string pluginPythonDir() {
    if (const char *env = std::getenv("DIODE_PLUGIN_PYTHON"); env && *env)
        return env;
    namespace fs = std::filesystem;
    for (const fs::path &p :
         {fs::path(DIODE_SOURCE_DIR) / "plugin/python", fs::path(DIODE_INSTALL_DATADIR) / "python"})
        if (fs::exists(p / "torch_diode/tools/worker.py"))
            return p.string();
    return (fs::path(DIODE_SOURCE_DIR) / "plugin/python").string();
}

std::string pluginPython(const std::string &python) {
    if (!python.empty())
        return python;
    const char *env = std::getenv("DIODE_PYTHON");
    return env && *env ? env : "python3";
}

std::vector<std::string> pluginToolEnv() {
    std::string path = pluginPythonDir();
    if (const char *pp = std::getenv("PYTHONPATH"); pp && *pp)
        path += std::string(":") + pp;
    return {"PYTHONPATH=" + path, "TORCH_DIODE_AUTOREGISTER=0"};
}

std::string gpuLockPath(const std::string &gpu) {
    std::string id = gpu;
    if (id.empty()) { // the first GPU the environment gives
        const auto visible = visibleGpuIds();
        id = visible.empty() ? "0" : visible.front();
    }
    return (std::filesystem::temp_directory_path() / fmt::format("torch_diode-{}-gpu{}.lock", ::getuid(), id))
        .string();
}

InductorBackend::InductorBackend(std::string python, std::string logPath, WorkerSlot slot, int workers)
    : m_python(pluginPython(python))
    , m_logPath(std::move(logPath))
    , m_slot(std::move(slot))
    , m_workers(workers) {}

InductorBackend::~InductorBackend() {
    if (m_worker && m_worker->running())
        m_worker->writeLine(R"({"cmd":"quit"})");
    m_worker.reset(); // ends the worker: nothing writes to its log after this
    if (!m_cacheDir.empty())
        removeTree(m_cacheDir);
    // A log the worker wrote nothing into says nothing; one with content is kept for diagnosis.
    std::error_code ec;
    if (!m_logPath.empty() && std::filesystem::is_regular_file(m_logPath, ec) &&
        std::filesystem::file_size(m_logPath, ec) == 0 && !ec)
        std::filesystem::remove(m_logPath, ec);
}

std::optional<nlohmann::json> readWorkerHello(const std::string &line, const std::string &worker) {
    nlohmann::json j;
    try {
        j = parseJsonBounded(line, "hello", kProblemJsonLimits);
    } catch (const InvalidInput &) {
        return std::nullopt; // what an interpreter prints before the worker runs (a banner)
    }
    if (!j.is_object() || !j.contains("event") || j["event"] != "hello")
        throw BackendUnavailable(fmt::format("{} began with {} instead of its hello object "
                                             "(docs/FORMATS.md, \"Worker protocol\"); it was stopped",
                                             worker, excerpt(line)));
    if (!j.contains("ok") || j["ok"] != true) {
        const auto error = j.find("error");
        throw BackendUnavailable(
            fmt::format("the inductor backend cannot run: {}", error != j.end() && error->is_string()
                                                                   ? printable(error->get<std::string>())
                                                                   : std::string("unknown reason")));
    }
    RunInfo check; // a hello whose fields are of the wrong type is refused now, not mid-run
    try {
        check.setFromWorker(j.value("hardware", nlohmann::json::object()), j, worker + "'s hello");
    } catch (const InvalidInput &e) {
        throw BackendUnavailable(printable(e.what()));
    }
    return j;
}

WorkerAnswer readWorkerAnswer(const std::string &line, int64_t id, const GemmProblem &problem) {
    // The worker's stdout carries its answers alone (docs/FORMATS.md, "Worker protocol"): anything else
    // means it is out of step, so it is stopped and the next problem gets a fresh one.
    auto broken = [](const std::string &what) {
        WorkerAnswer a;
        a.broken = true;
        a.outcome = {MeasureStatus::Failed,
                     fmt::format("the worker broke the protocol: {}; worker stopped and restarted", what)};
        return a;
    };
    nlohmann::json j;
    try {
        j = parseJsonBounded(line, "its answer", kProblemJsonLimits);
    } catch (const InvalidInput &e) {
        return broken(fmt::format("{} (it began: {})", e.what(), excerpt(line)));
    }
    if (!j.is_object() || !j.contains("id"))
        return broken(fmt::format("an answer without an id: {}", excerpt(line)));
    if (j["id"] != id)
        return broken(fmt::format("an answer to request {} while {} was asked", excerpt(j["id"].dump()), id));
    WorkerAnswer a;
    if (!j.contains("ok") || j["ok"] != true) {
        const auto error = j.find("error");
        a.outcome = {MeasureStatus::Failed, error != j.end() && error->is_string()
                                                ? printable(error->get<std::string>())
                                                : std::string("worker reported a failure")};
        return a;
    }
    try {
        if (!j.contains("problem"))
            throw InvalidInput("field 'problem' is missing");
        ProblemRecord rec =
            parseProblemRecord(j["problem"], fmt::format("worker answer for {}", problem.label()));
        if (!(rec.problem == problem))
            throw InvalidInput(fmt::format("it answers for {}", rec.problem.label()));
        a.record = std::move(rec);
    } catch (const std::exception &e) {
        a.outcome = {MeasureStatus::Failed, fmt::format("worker answer unreadable: {}", printable(e.what()))};
    }
    return a;
}

std::string InductorBackend::workerName() const {
    const std::string which = m_workers == 1
                                  ? std::string("the inductor worker")
                                  : fmt::format("inductor worker {} of {}", m_slot.index, m_workers);
    return fmt::format("{}{} ({} -m torch_diode.tools.worker; its log: {})", which,
                       m_slot.gpu.empty() ? std::string() : fmt::format(" on GPU {}", m_slot.gpu),
                       printable(m_python), m_logPath);
}

bool InductorBackend::spawn(const std::atomic<bool> &cancel) {
    const double timeoutS = helloTimeoutS();
    // One cache folder a worker for its whole life, set before Inductor's compile pool starts,
    // with the FX-graph and autotune caches off (TORCH_DIODE_WORKER_CACHE): every compile is a
    // user's first, yet the pool's kernels are found where the main process looks. A fresh folder
    // a compile, or Inductor's force_disable_caches, compiles each Triton candidate a second time
    // inside the benchmark (docs/BENCHMARKS.md, "Sweep speed").
    if (m_cacheDir.empty())
        m_cacheDir = (std::filesystem::temp_directory_path() /
                      fmt::format("diode-sweep-{}-w{}", ::getpid(), m_slot.index))
                         .string();
    std::vector<std::string> env = pluginToolEnv(); // the sweep measures Inductor alone
    env.insert(env.end(), {"TORCH_DIODE_WORKER_CACHE=1", "TORCHINDUCTOR_CACHE_DIR=" + m_cacheDir,
                           "TRITON_CACHE_DIR=" + m_cacheDir + "/triton",
                           "TORCH_DIODE_GPU_LOCK=" + gpuLockPath(m_slot.gpu)});
    if (!m_slot.gpu.empty())
        env.push_back("CUDA_VISIBLE_DEVICES=" + m_slot.gpu);
    if (m_slot.compileThreads > 0)
        env.push_back(fmt::format("TORCHINDUCTOR_COMPILE_THREADS={}", m_slot.compileThreads));
    m_worker = std::make_unique<WorkerProcess>(
        std::vector<std::string>{m_python, "-u", "-m", "torch_diode.tools.worker"}, std::move(env),
        m_logPath);
    m_worker->start();
    std::string line;
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::duration<double>(timeoutS);
    for (;;) {
        // In slices, so that Ctrl-C ends the wait (and the worker) at once.
        if (cancel) {
            m_worker->kill();
            return false;
        }
        if (Clock::now() > deadline) {
            m_worker->kill();
            throw BackendUnavailable(fmt::format(
                "{} did not say hello within {} s of starting (DIODE_WORKER_START_TIMEOUT_S sets how long it "
                "may take); it was stopped",
                workerName(), timeoutS));
        }
        const auto st = m_worker->readLine(line, std::chrono::milliseconds(200), kMaxWorkerLine);
        if (st == WorkerProcess::ReadStatus::Timeout)
            continue;
        if (st == WorkerProcess::ReadStatus::TooLong) {
            m_worker->kill();
            throw BackendUnavailable(fmt::format(
                "{} sent more than {} bytes without a line break before its hello; it was stopped",
                workerName(), kMaxWorkerLine));
        }
        if (st == WorkerProcess::ReadStatus::Closed) {
            const std::string why = m_worker->exitDescription();
            const std::string tail = m_worker->stderrTail(6);
            throw BackendUnavailable(
                fmt::format("{} {}{}{}", workerName(), why, tail.empty() ? "" : ":\n", printableLines(tail)));
        }
        std::optional<nlohmann::json> hello;
        try {
            hello = readWorkerHello(line, workerName());
        } catch (...) {
            m_worker->kill();
            throw;
        }
        if (!hello)
            continue;
        // The oldest torch the worker runs on is core's (torchversion.h); the worker reports its own.
        const std::string torch = hello->value("torch", "");
        if (torchVersionSupported(torch) == false) {
            m_worker->kill();
            throw BackendUnavailable(
                fmt::format("the inductor backend cannot run: torch {} in {} is too old; the "
                            "inductor backend needs torch >= {}",
                            torch, m_python, minTorchVersion()));
        }
        m_hello = std::move(*hello);
        return true;
    }
}

void InductorBackend::start(const std::atomic<bool> &cancel) {
    spawn(cancel);
}

void InductorBackend::describe(RunInfo &run) const {
    run.host = hostName();
    run.setFromWorker(m_hello.value("hardware", nlohmann::json::object()), m_hello);
}

ProblemOutcome InductorBackend::measure(const GemmProblem &problem, const SweepPlan &plan,
                                        const std::set<std::string> &skip, const MeasurementSink &sink,
                                        const std::atomic<bool> &cancel) {
    if (!m_worker || !m_worker->running()) {
        ++m_restarts;
        if (!spawn(cancel))
            return ProblemOutcome::interrupted();
    }
    const int64_t id = m_nextId++;
    nlohmann::json req{{"id", id},
                       {"problem", problemToJson(problem)},
                       {"search_space", plan.searchSpace},
                       {"inductor_benchmark", plan.inductorBenchmarkFor(problem)},
                       {"exhaustive_configs", plan.exhaustiveConfigs},
                       {"aten_only", plan.atenOnly},
                       // The seed of the EXHAUSTIVE configs drawn for the problem, and the names the
                       // worker shares with core (dtypes and their torch names): the worker restates none.
                       {"sample_seed", samplingHash(problem)},
                       {"vocabulary", vocabulary()}};
    if (!m_worker->writeLine(req.dump())) {
        const std::string why = m_worker->exitDescription();
        m_worker->kill();
        return {MeasureStatus::Failed, fmt::format("worker {} before the problem was sent; restarted", why)};
    }
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::duration<double>(plan.timeoutS);
    std::string line;
    for (;;) {
        if (cancel) {
            m_worker->kill();
            return ProblemOutcome::interrupted();
        }
        if (Clock::now() > deadline) {
            m_worker->kill();
            return {
                MeasureStatus::Timeout,
                fmt::format("no answer within the per-problem timeout of {} s; worker killed and restarted",
                            plan.timeoutS)};
        }
        const auto st = m_worker->readLine(line, std::chrono::milliseconds(200), kMaxWorkerLine);
        if (st == WorkerProcess::ReadStatus::Timeout)
            continue;
        if (st == WorkerProcess::ReadStatus::TooLong) {
            m_worker->kill();
            return {
                MeasureStatus::Failed,
                fmt::format("the worker broke the protocol: it sent more than {} bytes without a line break; "
                            "worker stopped and restarted",
                            kMaxWorkerLine)};
        }
        if (st == WorkerProcess::ReadStatus::Closed) {
            const std::string why = m_worker->exitDescription();
            const std::string tail = m_worker->stderrTail(3);
            m_worker->kill();
            return {MeasureStatus::Failed, fmt::format("worker crashed ({}) while measuring; restarted{}{}",
                                                       why, tail.empty() ? "" : ". Last log: ", tail)};
        }
        const WorkerAnswer answer = readWorkerAnswer(line, id, problem);
        if (answer.broken) {
            m_worker->kill();
            return {MeasureStatus::Failed, answer.outcome.error};
        }
        if (!answer.record)
            return answer.outcome;
        const ProblemRecord &rec = *answer.record;
        // Every method the answer carries is stored (problem JSON version 2: graph_warm,
        // graph_cold, inductor_autotune; version 1: inductor_autotune alone).
        for (const auto &c : rec.candidates)
            if (!skip.count(c.config.key()))
                for (const auto &m : c.measurements())
                    sink(m);
        if (rec.candidates.empty())
            return {MeasureStatus::Failed, "Inductor benchmarked no choice for this problem"};
        ProblemOutcome done;
        done.baselines = rec.baselines;
        return done;
    }
}

} // namespace diode
