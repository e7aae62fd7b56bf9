#include "sweepsession.h"

#include "diode/infer/problemjson.h"
#include "diode/infer/shippeddata.h"
#include "diode/store/datamix.h"
#include "diode/store/store.h"
#include "diode/sweep/cpubackend.h"
#include "diode/sweep/hardware.h"
#include "diode/sweep/inductorbackend.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

namespace diode {

/// Passes every call to the real backend and reports each problem's outcome as it ends.
class SweepSession::Observer final : public Backend {
public:
    Observer(Backend &inner, const std::function<void(const ProblemReport &)> &done, std::mutex &doneMutex)
        : m_inner(inner)
        , m_done(done)
        , m_doneMutex(doneMutex) {}
    std::string name() const override { return m_inner.name(); }
    using Backend::start;
    void start(const std::atomic<bool> &cancel) override { m_inner.start(cancel); }
    void describe(RunInfo &run) const override { m_inner.describe(run); }
    std::set<TimingMethod> timingMethods() const override { return m_inner.timingMethods(); }
    ProblemOutcome measure(const GemmProblem &p, const SweepPlan &plan, const std::set<std::string> &skip,
                           const MeasurementSink &sink, const std::atomic<bool> &cancel) override {
        if (!m_done)
            return m_inner.measure(p, plan, skip, sink, cancel);
        // The best time of one method, chosen as train and eval would (defaultTimingMethod):
        // mixing methods would put Inductor's slower numbers beside in-graph ones.
        MethodCounts timed;
        std::map<TimingMethod, double> best;
        int n = 0;
        auto outcome = m_inner.measure(
            p, plan, skip,
            [&](const Measurement &m) {
                if (m.status == MeasureStatus::Ok && m.timeMs) {
                    ++timed[m.method];
                    auto [it, added] = best.emplace(m.method, *m.timeMs);
                    if (!added)
                        it->second = std::min(it->second, *m.timeMs);
                }
                ++n;
                sink(m);
            },
            cancel);
        if (!outcome.cancelled) {
            const auto it = best.find(defaultTimingMethod(timed).method);
            const std::lock_guard lock(m_doneMutex);
            m_done({p, outcome, it == best.end() ? 0 : it->second, n});
        }
        return outcome;
    }

private:
    Backend &m_inner;
    const std::function<void(const ProblemReport &)> &m_done;
    std::mutex &m_doneMutex;
};

std::unique_ptr<Backend> SweepSession::makeBackend(const std::string &name, const std::string &python,
                                                   const std::string &db, const WorkerSlot &slot,
                                                   int workers) {
    if (name == "cpu")
        return std::make_unique<CpuBackend>();
    if (name == "inductor")
        return std::make_unique<InductorBackend>(
            python, workers == 1 ? db + ".worker.log" : fmt::format("{}.worker-{}.log", db, slot.index), slot,
            workers);
    throw InvalidInput(fmt::format("unknown backend '{}': expected inductor or cpu", name));
}

std::set<GemmProblem> measuredProblems(const std::string &path) {
    if (!std::filesystem::is_regular_file(path))
        throw InvalidInput(
            fmt::format("'{}' is not a file of measured problems (a store or problem JSON lines)", path));
    std::set<GemmProblem> out;
    auto add = [&](const ProblemRecord &r) {
        if (r.error.empty() && !r.candidates.empty())
            out.insert(r.problem);
    };
    if (isProblemLinesName(path)) {
        for (const auto &r : readProblemFile(path))
            add(r);
    } else {
        Store store(path, Store::Mode::ReadOnly);
        store.forEachRecord([&](const RunInfo &, const ProblemRecord &r) { add(r); });
    }
    return out;
}

size_t removeMeasured(SweepPlan &plan, const std::vector<std::string> &paths) {
    std::set<GemmProblem> done;
    for (const auto &path : paths)
        done.merge(measuredProblems(path));
    return std::erase_if(plan.problems, [&](const GemmProblem &p) { return done.count(p) > 0; });
}

SweepSession::SweepSession(const Request &r)
    : m_db(r.db)
    , m_backendName(r.backend)
    , m_allowMixedData(r.allowMixedData) {
    shipped::refuseWritingShipped(r.db, "database"); // before a resume or a backend reads it
    std::optional<SweepPlan> plan = r.plan;
    if (plan)
        plan->shard = r.shard;
    // Without a plan a resume can only continue a run, and a database that does not exist holds
    // none: refuse before opening it, which would create an empty one under a mistyped name.
    if (r.resume && !plan && !std::filesystem::exists(r.db))
        throw InvalidInput(
            fmt::format("cannot resume: database '{}' does not exist (nothing was created); check "
                        "the path, or start a new run with --plan and --backend",
                        r.db));
    if (r.resume) {
        if (auto found = SweepRunner::resumable(r.db)) {
            auto &[run, frozen] = *found;
            if (!r.shard.whole() && r.shard != frozen.shard)
                throw InvalidInput(
                    fmt::format("the newest unfinished run ({}) of {} measures shard {}, not {}; "
                                "each shard needs its own database",
                                run.id, r.db, frozen.shard.str(), r.shard.str()));
            if (plan && r.shard.whole())
                plan->shard = frozen.shard; // a shard's store resumes its shard unless told another
            if (plan && frozenPlan(*plan) != frozenPlan(frozen))
                throw InvalidInput(
                    fmt::format("the newest unfinished run ({}) of {} was started with another plan; "
                                "run without --resume to start a new run",
                                run.id, r.db));
            if (!m_backendName.empty() && m_backendName != run.backend)
                throw InvalidInput(
                    fmt::format("run {} used backend '{}', not '{}'", run.id, run.backend, m_backendName));
            m_backendName = run.backend;
            m_runId = run.id;
            m_resumed = true;
            plan = std::move(frozen);
        } else {
            // Nothing interrupted: a finished run of the same plan means there is nothing to do.
            Store store(r.db);
            const auto runs = store.runs();
            const RunInfo *last = nullptr;
            for (const auto &x : runs)
                if (x.backend != "import")
                    last = &x;
            const bool samePlan = last && plan && last->planJson == frozenPlan(*plan).dump();
            if (last && (!plan || samePlan)) {
                m_nothingToDo = fmt::format("nothing to resume: the newest run ({}) of {} is {}", last->id,
                                            r.db, last->status);
                return;
            }
            if (!plan)
                throw InvalidInput(fmt::format("{} has no run to resume", r.db));
        }
    }
    if (!plan)
        throw InvalidInput("sweep needs --plan FILE (or --resume with an unfinished run in --db)");
    if (!r.skipMeasured.empty()) {
        if (m_resumed)
            throw InvalidInput(
                fmt::format("run {} is resumed with the problems it was started with; skipping "
                            "measured problems is for a new run (drop --resume or --skip-measured)",
                            m_runId));
        const size_t before = plan->problems.size();
        removeMeasured(*plan, r.skipMeasured);
        if (plan->problems.empty()) {
            m_nothingToDo = fmt::format("nothing to measure: all {} problems of plan '{}' are measured in {}",
                                        before, plan->name, fmt::join(r.skipMeasured, ", "));
            return;
        }
    }
    if (m_backendName.empty())
        throw InvalidInput("sweep needs --backend inductor|cpu");
    m_plan = std::move(*plan);
    if (r.workersPerGpu != kAutoWorkers && (r.workersPerGpu < 1 || r.workersPerGpu > kMaxWorkersPerGpu))
        throw InvalidInput(
            fmt::format("workers a GPU must be from 1 to {}, got {}", kMaxWorkersPerGpu, r.workersPerGpu));
    std::set<std::string> seenGpus;
    for (const auto &g : r.gpus)
        if (g.empty() || !seenGpus.insert(g).second)
            throw InvalidInput(fmt::format(
                "GPU list {}: {}; name each GPU once, as CUDA_VISIBLE_DEVICES does", fmt::join(r.gpus, ","),
                g.empty() ? "an entry is empty" : "'" + g + "' is named twice"));
    // Compile threads a worker: the cores less two a GPU, kept for the worker that times (its
    // Python and driver calls are on the timing's critical path).
    const std::vector<std::string> gpus = r.gpus.empty() ? std::vector<std::string>{""} : r.gpus;
    const int cores = availableCores();
    const bool autoWorkers = r.workersPerGpu == kAutoWorkers;
    const int perGpu =
        autoWorkers ? autoWorkersPerGpu(m_backendName, cores, int(gpus.size())) : r.workersPerGpu;
    const int workers = int(gpus.size()) * perGpu;
    const int threads = workers == 1 ? 0 : std::max(1, (cores - 2 * int(gpus.size())) / workers);
    const bool onGpus = m_backendName == "inductor";
    m_workerLayout = fmt::format("{} worker{}{}", perGpu, perGpu == 1 ? "" : "s", onGpus ? " a GPU" : "");
    if (autoWorkers)
        m_workerLayout += onGpus ? fmt::format(" (auto: {} cores, {} GPU{})", cores, gpus.size(),
                                               gpus.size() == 1 ? "" : "s")
                                 : std::string(" (auto)");
    if (threads > 0)
        m_workerLayout += fmt::format(", {} compile threads each", threads);
    for (int w = 0; w < perGpu; ++w)
        for (const auto &g : gpus) {
            WorkerSlot slot{g, int(m_backends.size()), threads};
            m_backends.push_back(makeBackend(m_backendName, r.python, r.db, slot, workers));
            m_observers.push_back(
                std::make_unique<Observer>(*m_backends.back(), m_problemDone, m_problemDoneMutex));
        }
    std::vector<Backend *> observed;
    for (auto &o : m_observers)
        observed.push_back(o.get());
    // Made here, not in run(): cancel() may come from a signal handler at any moment after.
    m_runner = std::make_unique<SweepRunner>(r.db, std::move(observed));
    m_runner->setDeadline(r.deadlineS);
}

SweepSession::~SweepSession() = default;

int SweepSession::autoWorkersPerGpu(std::string_view backend, int cores, int gpus) {
    if (backend != "inductor")
        return 1;
    return std::clamp(cores / std::max(1, gpus) / 2 - 2, 1, 6);
}

void SweepSession::setProgressCallback(std::function<void(const SweepProgress &)> fn) {
    if (m_runner)
        m_runner->setProgressCallback(std::move(fn));
}

std::string SweepSession::runLine(int64_t runId) const {
    const size_t n = m_plan.problems.size();
    if (m_plan.shard.whole())
        return fmt::format("run {}: {} problems, backend {}, database {}; {}", runId, n, m_backendName, m_db,
                           m_workerLayout);
    return fmt::format("run {}: shard {}, {} of the plan's {} problems, backend {}, database {}; {}", runId,
                       m_plan.shard.str(), m_plan.shard.size(n), n, m_backendName, m_db, m_workerLayout);
}

void SweepSession::cancel() {
    if (m_runner)
        m_runner->cancel();
}

void SweepSession::refuseMixing() {
    std::error_code ec;
    if (std::filesystem::file_size(m_db, ec) == 0 || ec)
        return; // a new database: nothing to mix with
    RunInfo run;
    m_observers.front()->describe(run);
    DataOrigin added;
    added.backends = {m_backendName};
    if (!run.gpuName.empty())
        added.gpus = {run.gpuName};
    added.methods = m_observers.front()->timingMethods();
    DataOrigin existing;
    {
        Store store(m_db, Store::Mode::ReadOnly); // a refusal writes nothing, not even a migration
        existing = dataOrigin(store);
    }
    const std::string mix = describeMix(existing, added);
    if (!mix.empty())
        throw DataMixRefused(fmt::format("this sweep would mix data in {}: {}", m_db, mix));
}

void SweepSession::startWorkers() {
    const auto &cancel = m_runner->cancelFlag();
    if (m_observers.size() == 1) {
        m_observers.front()->start(cancel);
        return;
    }
    // In parallel: each inductor worker spends most of a minute importing torch.
    std::vector<std::exception_ptr> errors(m_observers.size());
    {
        std::vector<std::thread> threads;
        for (size_t i = 0; i < m_observers.size(); ++i)
            threads.emplace_back([&, i] {
                try {
                    m_observers[i]->start(cancel);
                } catch (...) {
                    errors[i] = std::current_exception();
                }
            });
        for (auto &t : threads)
            t.join();
    }
    for (const auto &e : errors)
        if (e)
            std::rethrow_exception(e);
    if (cancel)
        return;
    // One run holds one GPU model: workers on different ones would mix their times.
    RunInfo first;
    m_observers.front()->describe(first);
    for (size_t i = 1; i < m_observers.size(); ++i) {
        RunInfo other;
        m_observers[i]->describe(other);
        if (other.gpuName != first.gpuName)
            throw BackendUnavailable(fmt::format(
                "the GPUs of this sweep are not one model: worker 0 runs on '{}', worker {} on '{}'; sweep "
                "each model into its own database (--gpus)",
                first.gpuName, i, other.gpuName));
    }
}

std::string SweepSession::run(const std::function<void(int64_t)> &started) {
    if (!m_nothingToDo.empty())
        return "finished";
    // Before a worker starts or anything is written: a database another sweep writes is refused
    // with nothing created (SweepBusy names the run it sweeps).
    m_runner->lock();
    startWorkers(); // throws BackendUnavailable with one sentence
    if (m_runner->cancelFlag())
        return "cancelled"; // while the workers started: no run created, none changed
    if (!m_resumed) {
        // The GPU is known once the backend runs (the inductor worker reports it).
        if (!m_allowMixedData)
            refuseMixing();
        m_runId = m_runner->createRun(m_plan);
    }
    if (started)
        started(m_runId);
    const auto status = m_runner->run(m_runId, m_plan);
    return m_runner->deadlineReached() ? "deadline" : status;
}

} // namespace diode
