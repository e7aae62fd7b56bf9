#include "sweep/sweepworker.h"

#include "diode/store/datamix.h"
#include "diode/sweep/hardware.h"
#include "diode/sweep/sweepsession.h"

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
    cancel(); // then m_jobs waits: the runner stops within one configuration
}

bool SweepWorker::isRunning() const {
    return m_job && !m_job->done;
}

void SweepWorker::cancel() {
    if (!m_job)
        return;
    m_job->cancel = true;
    std::lock_guard lock(m_job->mutex);
    if (m_job->session)
        m_job->session->cancel();
}

bool SweepWorker::start(const SweepRequest &request) {
    if (isRunning())
        return false;
    auto state = std::make_shared<Job>();
    m_job = state;
    m_jobs.start([this, request, state](const AsyncJobs::Job &aj) {
        qint64 runId = 0;
        std::function<void()> last; // the final signal, posted once the thread counts as done
        try {
            // The session `diode sweep` runs (core/sweep/diode/sweep/sweepsession.h); this face draws it.
            diode::SweepSession::Request req;
            req.db = request.database.toStdString();
            req.backend = request.resume ? std::string() : request.backend.toStdString();
            req.python = request.python.toStdString();
            req.resume = request.resume;
            req.allowMixedData = request.allowMixedData;
            req.workersPerGpu = request.workersPerGpu;
            if (!request.gpus.trimmed().isEmpty())
                req.gpus = diode::gpuList(request.gpus.trimmed().toStdString());
            if (!request.resume)
                req.plan =
                    diode::SweepPlan::parse(request.planJson.toStdString(), request.planDir.toStdString());
            diode::SweepSession session(req);
            if (!session.nothingToDo().empty())
                throw std::runtime_error(session.nothingToDo());
            runId = session.runId();
            session.setProblemCallback([&](const diode::ProblemReport &p) {
                ProblemResult r{runId,
                                p.problem,
                                p.bestMs,
                                p.measurements,
                                p.outcome.status == diode::MeasureStatus::Ok,
                                QString::fromStdString(p.outcome.error)};
                aj.post([this, r] { emit problemFinished(r); });
            });
            session.setProgressCallback([&](const diode::SweepProgress &p) {
                const SweepStatus s = statusOf(p, runId);
                aj.post([this, s] { emit progress(s); });
            });
            {
                std::lock_guard lock(state->mutex);
                state->session = &session;
                if (state->cancel)
                    session.cancel();
            }
            const qint64 total = qint64(session.plan().problems.size());
            const QString backendText = QString::fromStdString(session.backend());
            std::string status;
            try {
                status = session.run([&](int64_t id) {
                    runId = id;
                    aj.post([this, runId, total, backendText] { emit started(runId, total, backendText); });
                });
            } catch (...) {
                std::lock_guard lock(state->mutex);
                state->session = nullptr;
                throw;
            }
            {
                std::lock_guard lock(state->mutex);
                state->session = nullptr;
            }
            const QString st = QString::fromStdString(status);
            last = [this, st, runId] { emit finished(st, runId); };
        } catch (const diode::BackendUnavailable &e) {
            // The backend's reason names the backend already ("the inductor backend cannot run: ..."):
            // said once, not twice.
            QString msg = QString::fromStdString(e.what());
            if (!msg.isEmpty())
                msg[0] = msg[0].toUpper();
            last = [this, msg] { emit failed(msg); };
        } catch (const diode::DataMixRefused &e) {
            const QString msg = QString::fromStdString(e.what());
            last = [this, msg] { emit mixRefused(msg); };
        } catch (const std::exception &e) {
            const QString msg = tr("Sweep stopped: %1").arg(QString::fromStdString(e.what()));
            last = [this, msg] { emit failed(msg); };
        }
        state->done = true;
        aj.post(std::move(last));
    });
    return true;
}
