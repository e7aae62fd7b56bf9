#include "sweeprunner.h"

#include "diode/infer/datafile.h"
#include "diode/infer/problemjson.h"
#include "diode/store/storewriter.h"
#include "diode/sweep/hardware.h"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <ctime>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

namespace diode {

nlohmann::json frozenPlan(const SweepPlan &plan) {
    nlohmann::json j = plan.source.is_object() ? plan.source : nlohmann::json::object();
    j.erase("shuffle_seed");
    auto list = nlohmann::json::array();
    for (const auto &p : plan.problems)
        list.push_back(problemToJson(p));
    j["entries"] = nlohmann::json::array({{{"name", "frozen"}, {"problems", std::move(list)}}});
    j["search_space"] = plan.searchSpace;
    j["timeout_s"] = plan.timeoutS;
    j["repeats"] = plan.repeats;
    // The problems are the whole plan's, so shards of one plan share everything but this key.
    if (plan.shard.whole())
        j.erase("shard");
    else
        j["shard"] = plan.shard.str();
    return j;
}

PlanShard runShard(const nlohmann::json &frozenPlan) {
    const auto it = frozenPlan.find("shard");
    if (it == frozenPlan.end())
        return {};
    if (!it->is_string())
        throw InvalidInput(fmt::format("run plan: field 'shard' must be a string i/n, got {}", it->dump()));
    return PlanShard::parse(it->get<std::string>(), "run plan: field 'shard'");
}

namespace {
// To the millisecond: diode merge knows a run by its creation time (with host, backend and
// plan), and two runs of one shard may well start within one second.
std::string creationTime() {
    const auto now = std::chrono::system_clock::now();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    return fmt::format("{}.{:03}Z", buf, ms);
}
} // namespace

SweepRunner::SweepRunner(std::string dbPath, Backend &backend)
    : SweepRunner(std::move(dbPath), std::vector<Backend *>{&backend}) {}

SweepRunner::SweepRunner(std::string dbPath, std::vector<Backend *> backends)
    : m_dbPath(std::move(dbPath))
    , m_backends(std::move(backends)) {
    if (m_backends.empty())
        throw std::invalid_argument("SweepRunner needs at least one backend");
}

void SweepRunner::lock() {
    if (!m_lock)
        m_lock = std::make_unique<SweepLock>(m_dbPath);
}

int64_t SweepRunner::createRun(const SweepPlan &plan) {
    lock(); // a second sweep refused creates no run, which a later --resume would measure again
    Store store(m_dbPath);
    RunInfo run;
    run.createdAt = creationTime();
    run.backend = m_backends.front()->name();
    run.planName = plan.name;
    run.planJson = frozenPlan(plan).dump();
    run.searchSpace = plan.searchSpace;
    run.problemsPlanned = plan.shard.size(plan.problems.size());
    m_backends.front()->describe(run);
    const int64_t id = store.createRun(run);
    m_lock->setRun(id);
    return id;
}

std::optional<std::pair<RunInfo, SweepPlan>> SweepRunner::resumable(const std::string &dbPath) {
    Store store(dbPath);
    auto run = store.newestUnfinishedRun();
    if (!run)
        return std::nullopt;
    // The plan the run was started with, as stored: a damaged one is refused naming the run.
    const std::string what = fmt::format("database '{}': the plan of run {}", dbPath, run->id);
    try {
        const auto frozen = parseJsonBounded(run->planJson, what, kDocumentLimits);
        auto plan = SweepPlan::fromJson(frozen, ".");
        plan.shard = runShard(frozen);
        return std::make_pair(*run, std::move(plan));
    } catch (const InvalidInput &e) {
        throw InvalidInput(fmt::format(
            "{}; it cannot be resumed (start a new run with --plan, without --resume)", e.what()));
    }
}

std::string SweepRunner::run(int64_t runId, const SweepPlan &plan) {
    using Clock = std::chrono::steady_clock;
    RunProgressState state;
    lock(); // before reading what is done: a second sweep must not start from it
    m_lock->setRun(runId);
    struct Unlock {
        std::unique_ptr<SweepLock> &lock;
        ~Unlock() { lock.reset(); }
    } unlock{m_lock};
    {
        Store store(m_dbPath);
        state = runProgressState(store, runId);
        store.setRunStatus(runId, "running");
    }
    StoreWriter writer(m_dbPath);

    // Telemetry: one sample a second from the first GPU while the run measures.
    std::mutex telMutex;
    std::condition_variable telWake;
    bool telStop = false;
    const auto t0 = Clock::now();
    std::thread telemetry([&] {
        HardwareMonitor hw;
        std::unique_lock lock(telMutex);
        while (!telStop) {
            if (auto s = hw.sample(0)) {
                s->tSeconds = std::chrono::duration<double>(Clock::now() - t0).count();
                try {
                    writer.push(StoreWriter::Telemetry{runId, *s});
                } catch (...) {
                    // The measurement path reports store errors; telemetry just stops.
                    return;
                }
            } else {
                return; // no GPU library: nothing to sample
            }
            telWake.wait_for(lock, std::chrono::seconds(1), [&] { return telStop; });
        }
    });
    struct StopTelemetry {
        std::mutex &m;
        std::condition_variable &cv;
        bool &stop;
        std::thread &t;
        ~StopTelemetry() {
            {
                std::lock_guard l(m);
                stop = true;
            }
            cv.notify_all();
            t.join();
        }
    } stopTelemetry{telMutex, telWake, telStop, telemetry};

    // Problems go to the workers in plan order from one cursor: whichever is free takes the next
    // one not done, so any number of workers measures the set one would.
    std::mutex mutex; // the cursor, the progress and the callbacks
    SweepProgress prog;
    prog.total = plan.shard.size(plan.problems.size());
    prog.done = int64_t(state.done.size());
    int64_t doneThisSession = 0;
    size_t cursor = 0;
    std::exception_ptr failure; // the first store error of any worker: the others stop
    const std::set<std::string> none;
    m_deadlineReached = false;
    auto next = [&]() -> std::optional<size_t> {
        for (; cursor < plan.problems.size(); ++cursor) {
            if (m_cancel || failure)
                return std::nullopt;
            if (!plan.shard.holds(cursor) || state.done.count(plan.problems[cursor]))
                continue;
            if (m_deadlineS > 0 && std::chrono::duration<double>(Clock::now() - t0).count() > m_deadlineS) {
                m_deadlineReached = true; // resumable like a cancel; the caller says why it stopped
                return std::nullopt;
            }
            return cursor++;
        }
        return std::nullopt;
    };
    auto work = [&](Backend &backend) {
        try {
            for (;;) {
                size_t index;
                {
                    std::lock_guard lock(mutex);
                    const auto n = next();
                    if (!n)
                        return;
                    index = *n;
                    prog.current = plan.problems[index].label();
                    if (m_progress)
                        m_progress(prog);
                }
                const auto &p = plan.problems[index];
                const auto it = state.measured.find(p);
                const auto pt0 = Clock::now();
                auto outcome = backend.measure(
                    p, plan, it == state.measured.end() ? none : it->second,
                    [&](const Measurement &m) {
                        writer.push(StoreWriter::MeasurementRow{runId, p, m});
                        std::lock_guard lock(mutex);
                        ++prog.measurements;
                    },
                    m_cancel);
                if (outcome.cancelled)
                    return; // the problem stays unfinished; resume completes it
                const double seconds = std::chrono::duration<double>(Clock::now() - pt0).count();
                if (!outcome.baselines.empty())
                    writer.push(StoreWriter::Baselines{runId, p, std::move(outcome.baselines)});
                writer.push(StoreWriter::ProblemDone{runId, p, std::string(toString(outcome.status)),
                                                     outcome.error, seconds});
                std::lock_guard lock(mutex);
                ++prog.done;
                ++doneThisSession;
                if (outcome.status != MeasureStatus::Ok)
                    ++prog.failed;
                prog.elapsedS = std::chrono::duration<double>(Clock::now() - t0).count();
                prog.problemsPerS = prog.elapsedS > 0 ? doneThisSession / prog.elapsedS : 0;
                prog.etaS = prog.problemsPerS > 0 ? (prog.total - prog.done) / prog.problemsPerS : 0;
                prog.current.clear();
                if (m_progress)
                    m_progress(prog);
            }
        } catch (...) {
            std::lock_guard lock(mutex);
            if (!failure)
                failure = std::current_exception();
            m_cancel = true; // the other workers stop within a configuration
        }
    };
    if (m_backends.size() == 1) {
        work(*m_backends.front());
    } else {
        std::vector<std::thread> threads;
        for (Backend *b : m_backends)
            threads.emplace_back(work, std::ref(*b));
        for (auto &t : threads)
            t.join();
    }
    if (failure)
        std::rethrow_exception(failure); // the run stays "running" and resumable, as before
    const std::string status = m_cancel || m_deadlineReached ? "cancelled" : "finished";
    writer.push(StoreWriter::RunStatus{runId, status});
    writer.flush();
    return status;
}

} // namespace diode
