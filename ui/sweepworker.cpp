#include "sweepworker.h"

#include "diode/cpubackend.h"
#include "diode/inductorbackend.h"
#include "diode/sweeprunner.h"

#include <QMetaObject>
#include <QThread>

#include <cmath>
#include <limits>
#include <map>
#include <mutex>

struct SweepWorker::Job {
    std::atomic<bool> cancel{false};
    std::atomic<bool> done{false}; ///< the thread posted its last signal and is exiting
    std::mutex mutex;
    diode::SweepRunner *runner = nullptr; ///< guarded by mutex; set while the run is in progress
};

namespace {

/// Passes every call to the real backend and reports each problem's outcome as it ends.
class ObservingBackend final : public diode::Backend {
public:
    using Done =
        std::function<void(const diode::GemmProblem &, const diode::ProblemOutcome &, double bestMs, int n)>;
    ObservingBackend(diode::Backend &inner, Done done)
        : m_inner(inner)
        , m_done(std::move(done)) {}
    std::string name() const override { return m_inner.name(); }
    void start() override { m_inner.start(); }
    void describe(diode::RunInfo &run) const override { m_inner.describe(run); }
    diode::ProblemOutcome measure(const diode::GemmProblem &p, const diode::SweepPlan &plan,
                                  const std::set<std::string> &skip, const diode::MeasurementSink &sink,
                                  const std::atomic<bool> &cancel) override {
        // The best time of one method, chosen as train and eval would (defaultTimingMethod):
        // mixing methods would put Inductor's slower numbers beside in-graph ones.
        diode::MethodCounts timed;
        std::map<diode::TimingMethod, double> best;
        int n = 0;
        auto outcome = m_inner.measure(
            p, plan, skip,
            [&](const diode::Measurement &m) {
                if (m.status == diode::MeasureStatus::Ok && m.timeMs) {
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
            const auto it = best.find(diode::defaultTimingMethod(timed).method);
            m_done(p, outcome, it == best.end() ? 0 : it->second, n);
        }
        return outcome;
    }

private:
    diode::Backend &m_inner;
    Done m_done;
};

SweepStatus statusOf(const diode::SweepProgress &p, qint64 runId) {
    return {runId,          p.done,         p.total,
            p.failed,       p.measurements, p.elapsedS,
            p.problemsPerS, p.etaS,         QString::fromStdString(p.current)};
}

} // namespace

SweepWorker::SweepWorker(QObject *parent)
    : QObject(parent) {
    qRegisterMetaType<SweepStatus>();
    qRegisterMetaType<ProblemResult>();
}

SweepWorker::~SweepWorker() {
    cancel();
    if (m_thread) {
        m_thread->wait();
        delete m_thread;
    }
}

bool SweepWorker::isRunning() const {
    return m_thread && m_thread->isRunning() && !(m_job && m_job->done);
}

void SweepWorker::cancel() {
    if (!m_job)
        return;
    m_job->cancel = true;
    std::lock_guard lock(m_job->mutex);
    if (m_job->runner)
        m_job->runner->cancel();
}

void SweepWorker::post(int job, std::function<void()> fn) {
    // The worker outlives its thread (the destructor waits), so `this` is valid here.
    QMetaObject::invokeMethod(
        this,
        [this, job, fn = std::move(fn)] {
            if (job == m_jobId)
                fn();
        },
        Qt::QueuedConnection);
}

bool SweepWorker::start(const SweepRequest &request) {
    if (isRunning())
        return false;
    if (m_thread) {
        m_thread->wait();
        delete m_thread;
    }
    const int jobId = ++m_jobId;
    auto job = std::make_shared<Job>();
    m_job = job;
    m_thread = QThread::create([this, request, job, jobId] {
        const std::string db = request.database.toStdString();
        qint64 runId = 0;
        std::function<void()> last; // the final signal, posted once the thread counts as done
        try {
            diode::SweepPlan plan;
            std::string backendName = request.backend.toStdString();
            if (request.resume) {
                auto resumable = diode::SweepRunner::resumable(db);
                if (!resumable)
                    throw std::runtime_error("there is no unfinished run in " + db + " to resume");
                runId = resumable->first.id;
                backendName = resumable->first.backend;
                plan = std::move(resumable->second);
            } else {
                plan = diode::SweepPlan::parse(request.planJson.toStdString(), request.planDir.toStdString());
            }
            std::unique_ptr<diode::Backend> backend;
            if (backendName == "cpu")
                backend = std::make_unique<diode::CpuBackend>();
            else if (backendName == "inductor")
                backend = std::make_unique<diode::InductorBackend>(request.python.toStdString(),
                                                                   db + ".worker.log");
            else
                throw std::runtime_error("unknown backend '" + backendName + "'");
            ObservingBackend observed(*backend, [&](const diode::GemmProblem &p,
                                                    const diode::ProblemOutcome &o, double best, int n) {
                ProblemResult r{
                    runId, p, best, n, o.status == diode::MeasureStatus::Ok, QString::fromStdString(o.error)};
                post(jobId, [this, r] { emit problemFinished(r); });
            });
            observed.start(); // throws BackendUnavailable with one sentence
            diode::SweepRunner runner(db, observed);
            if (!request.resume)
                runId = runner.createRun(plan);
            runner.setProgressCallback([&](const diode::SweepProgress &p) {
                const SweepStatus s = statusOf(p, runId);
                post(jobId, [this, s] { emit progress(s); });
            });
            {
                std::lock_guard lock(job->mutex);
                job->runner = &runner;
                if (job->cancel)
                    runner.cancel();
            }
            const qint64 total = qint64(plan.problems.size());
            const QString backendText = QString::fromStdString(backendName);
            post(jobId, [this, runId, total, backendText] { emit started(runId, total, backendText); });
            std::string status;
            try {
                status = runner.run(runId, plan);
            } catch (...) {
                std::lock_guard lock(job->mutex);
                job->runner = nullptr;
                throw;
            }
            {
                std::lock_guard lock(job->mutex);
                job->runner = nullptr;
            }
            const QString st = QString::fromStdString(status);
            last = [this, st, runId] { emit finished(st, runId); };
        } catch (const diode::BackendUnavailable &e) {
            const QString msg =
                tr("The %1 backend cannot run: %2").arg(request.backend, QString::fromStdString(e.what()));
            last = [this, msg] { emit failed(msg); };
        } catch (const std::exception &e) {
            const QString msg = tr("Sweep stopped: %1").arg(QString::fromStdString(e.what()));
            last = [this, msg] { emit failed(msg); };
        }
        job->done = true;
        post(jobId, std::move(last));
    });
    m_thread->setObjectName(QStringLiteral("sweep"));
    m_thread->start();
    return true;
}
