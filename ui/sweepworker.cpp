#include "sweepworker.h"

#include "diode/sweepsession.h"

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
    diode::SweepSession *session = nullptr; ///< guarded by mutex; set while the run is in progress
};

namespace {

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
    if (m_job->session)
        m_job->session->cancel();
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
        qint64 runId = 0;
        std::function<void()> last; // the final signal, posted once the thread counts as done
        try {
            // The session `diode sweep` runs (core/diode/sweepsession.h); this face draws it.
            diode::SweepSession::Request req;
            req.db = request.database.toStdString();
            req.backend = request.resume ? std::string() : request.backend.toStdString();
            req.python = request.python.toStdString();
            req.resume = request.resume;
            if (!request.resume)
                req.plan = diode::SweepPlan::parse(request.planJson.toStdString(), request.planDir.toStdString());
            diode::SweepSession session(req);
            if (!session.nothingToDo().empty())
                throw std::runtime_error(session.nothingToDo());
            runId = session.runId();
            session.setProblemCallback([&](const diode::ProblemReport &p) {
                ProblemResult r{runId,         p.problem,
                                p.bestMs,      p.measurements,
                                p.outcome.status == diode::MeasureStatus::Ok, QString::fromStdString(p.outcome.error)};
                post(jobId, [this, r] { emit problemFinished(r); });
            });
            session.setProgressCallback([&](const diode::SweepProgress &p) {
                const SweepStatus s = statusOf(p, runId);
                post(jobId, [this, s] { emit progress(s); });
            });
            {
                std::lock_guard lock(job->mutex);
                job->session = &session;
                if (job->cancel)
                    session.cancel();
            }
            const qint64 total = qint64(session.plan().problems.size());
            const QString backendText = QString::fromStdString(session.backend());
            std::string status;
            try {
                status = session.run([&](int64_t id) {
                    runId = id;
                    post(jobId, [this, runId, total, backendText] { emit started(runId, total, backendText); });
                });
            } catch (...) {
                std::lock_guard lock(job->mutex);
                job->session = nullptr;
                throw;
            }
            {
                std::lock_guard lock(job->mutex);
                job->session = nullptr;
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
