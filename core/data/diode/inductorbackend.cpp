#include "inductorbackend.h"

#include "diode/config.h"
#include "diode/hardware.h"
#include "diode/problemjson.h"
#include "diode/removetree.h"
#include "diode/torchversion.h"
#include "diode/vocabulary.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace diode {

namespace {
constexpr auto kHelloTimeout = std::chrono::seconds(180); // importing torch + CUDA init on a cold machine
}

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

std::string gpuLockPath(const std::string &gpu) {
    std::string id = gpu;
    if (id.empty()) { // the first GPU the environment gives
        const auto visible = visibleGpuIds();
        id = visible.empty() ? "0" : visible.front();
    }
    return (std::filesystem::temp_directory_path() / fmt::format("torch_diode-{}-gpu{}.lock", ::getuid(), id))
        .string();
}

InductorBackend::InductorBackend(std::string python, std::string logPath, WorkerSlot slot)
    : m_python(std::move(python))
    , m_logPath(std::move(logPath))
    , m_slot(std::move(slot)) {
    if (m_python.empty()) {
        const char *env = std::getenv("DIODE_PYTHON");
        m_python = env && *env ? env : "python3";
    }
}

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

void InductorBackend::spawn(std::chrono::seconds helloTimeout) {
    std::string pythonPath = pluginPythonDir();
    if (const char *pp = std::getenv("PYTHONPATH"); pp && *pp)
        pythonPath += std::string(":") + pp;
    // One cache folder a worker for its whole life, set before Inductor's compile pool starts,
    // with the FX-graph and autotune caches off (TORCH_DIODE_WORKER_CACHE): every compile is a
    // user's first, yet the pool's kernels are found where the main process looks. A fresh folder
    // a compile, or Inductor's force_disable_caches, compiles each Triton candidate a second time
    // inside the benchmark (docs/BENCHMARKS.md, "Sweep speed").
    if (m_cacheDir.empty())
        m_cacheDir = (std::filesystem::temp_directory_path() /
                      fmt::format("diode-sweep-{}-w{}", ::getpid(), m_slot.index))
                         .string();
    std::vector<std::string> env{"PYTHONPATH=" + pythonPath,
                                 "TORCH_DIODE_AUTOREGISTER=0", // the sweep measures Inductor alone
                                 "TORCH_DIODE_WORKER_CACHE=1",
                                 "TORCHINDUCTOR_CACHE_DIR=" + m_cacheDir,
                                 "TRITON_CACHE_DIR=" + m_cacheDir + "/triton",
                                 "TORCH_DIODE_GPU_LOCK=" + gpuLockPath(m_slot.gpu)};
    if (!m_slot.gpu.empty())
        env.push_back("CUDA_VISIBLE_DEVICES=" + m_slot.gpu);
    if (m_slot.compileThreads > 0)
        env.push_back(fmt::format("TORCHINDUCTOR_COMPILE_THREADS={}", m_slot.compileThreads));
    m_worker = std::make_unique<WorkerProcess>(
        std::vector<std::string>{m_python, "-u", "-m", "torch_diode.tools.worker"}, std::move(env),
        m_logPath);
    m_worker->start();
    std::string line;
    for (;;) {
        const auto st = m_worker->readLine(line, helloTimeout);
        if (st == WorkerProcess::ReadStatus::Timeout) {
            m_worker->kill();
            throw BackendUnavailable(
                fmt::format("the inductor worker ({} -m torch_diode.tools.worker) did not start within "
                            "{} s; its log: {}",
                            m_python, helloTimeout.count(), m_logPath));
        }
        if (st == WorkerProcess::ReadStatus::Closed) {
            const std::string why = m_worker->exitDescription();
            const std::string tail = m_worker->stderrTail(6);
            throw BackendUnavailable(
                fmt::format("the inductor worker ({} -m torch_diode.tools.worker) {}{}{}", m_python, why,
                            tail.empty() ? "" : ":\n", tail));
        }
        nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded() || j.value("event", "") != "hello")
            continue; // tolerate stray prints
        if (!j.value("ok", false)) {
            m_worker->kill();
            throw BackendUnavailable(
                fmt::format("the inductor backend cannot run: {}", j.value("error", "unknown reason")));
        }
        // The oldest torch the worker runs on is core's (torchversion.h); the worker reports its own.
        const std::string torch = j.value("torch", "");
        if (torchVersionSupported(torch) == false) {
            m_worker->kill();
            throw BackendUnavailable(
                fmt::format("the inductor backend cannot run: torch {} in {} is too old; the "
                            "inductor backend needs torch >= {}",
                            torch, m_python, minTorchVersion()));
        }
        m_hello = j;
        return;
    }
}

void InductorBackend::start() {
    spawn(kHelloTimeout);
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
        spawn(kHelloTimeout);
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
        const auto st = m_worker->readLine(line, std::chrono::milliseconds(200));
        if (st == WorkerProcess::ReadStatus::Timeout)
            continue;
        if (st == WorkerProcess::ReadStatus::Closed) {
            const std::string why = m_worker->exitDescription();
            const std::string tail = m_worker->stderrTail(3);
            m_worker->kill();
            return {MeasureStatus::Failed, fmt::format("worker crashed ({}) while measuring; restarted{}{}",
                                                       why, tail.empty() ? "" : ". Last log: ", tail)};
        }
        nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.contains("id") || j["id"] != id)
            continue;
        if (!j.value("ok", false))
            return {MeasureStatus::Failed, j.value("error", "worker reported a failure")};
        ProblemRecord rec;
        try {
            rec = parseProblemRecord(j.at("problem"), fmt::format("worker answer for {}", problem.label()));
        } catch (const std::exception &e) {
            return {MeasureStatus::Failed, fmt::format("worker answer unreadable: {}", e.what())};
        }
        // Every method the answer carries is stored (problem JSON version 2: graph_warm,
        // graph_cold, inductor_autotune; version 1: inductor_autotune alone).
        for (const auto &c : rec.candidates)
            if (!skip.count(c.config.key()))
                for (const auto &m : c.measurements())
                    sink(m);
        if (rec.candidates.empty())
            return {MeasureStatus::Failed, "Inductor benchmarked no choice for this problem"};
        ProblemOutcome done;
        done.baselines = std::move(rec.baselines);
        return done;
    }
}

} // namespace diode
