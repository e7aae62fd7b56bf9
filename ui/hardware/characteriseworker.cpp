#include "hardware/characteriseworker.h"

#include "common/trainingavailable.h"

#include "diode/config.h"
#if DIODE_HAVE_TORCH
#include "diode/train/characterisejob.h"
#endif

CharacteriseWorker::CharacteriseWorker(QObject *parent)
    : QObject(parent) {
    qRegisterMetaType<CharacteriseOutcome>();
}

CharacteriseWorker::~CharacteriseWorker() {
#if DIODE_HAVE_TORCH
    if (m_job)
        m_job->cancel(); // then m_jobs waits: one configuration or one epoch at most
#endif
}

void CharacteriseWorker::cancel() {
#if DIODE_HAVE_TORCH
    if (!m_running || !m_job)
        return;
    m_job->cancel();
    emit status(tr("Cancelling: the sweep stops within one configuration and stays resumable…"));
#endif
}

void CharacteriseWorker::start(const diode::CharacteriseRequest &request) {
    QString why;
    if (!trainingAvailable(&why) || m_running) { // characterising trains a package
        emit failed(m_running ? tr("A characterisation is already running.") : why);
        emit finished();
        return;
    }
#if DIODE_HAVE_TORCH
    m_job = std::make_shared<diode::CharacteriseJob>(request);
    m_running = true;
    auto job = m_job;
    m_jobs.start([this, job](const AsyncJobs::Job &async) {
        auto post = [&async](auto fn) { async.post(fn); };
        job->status = [post, this](const std::string &s) {
            post([this, text = QString::fromStdString(s)] { emit status(text); });
        };
        job->selected = [post, this](const diode::CharacteriseResult &r) {
            post([this, chosen = int(r.chosen.size()), pool = int(r.pool.problems.size()),
                  held = int(r.heldOutLabels.size()),
                  why = QString::fromStdString(r.startWhy)] { emit selected(chosen, pool, held, why); });
        };
        job->sweepProgress = [post, this](const diode::SweepProgress &p) {
            post([this, p] { emit sweepProgress(p.done, p.total, p.etaS); });
        };
        job->epoch = [post, this](const diode::EpochReport &e) {
            post([this, e] { emit epoch(e.member, e.members, e.epoch, e.valTop1); });
        };
        try {
            const diode::CharacteriseResult r = job->run();
            CharacteriseOutcome out;
            out.cancelled = r.cancelled;
            out.startWhy = QString::fromStdString(r.startWhy);
            out.sweepStatus = QString::fromStdString(r.sweepStatus);
            out.kernelSweepStatus = QString::fromStdString(r.kernelSweepStatus);
            out.stepSweepStatus = QString::fromStdString(r.stepSweepStatus);
            out.decisions = QString::fromStdString(r.decisions);
            out.heldOutSource = QString::fromStdString(r.heldOutSource);
            out.verdict = QString::fromStdString(r.verdict);
            out.kept = QString::fromStdString(r.kept);
            out.installed = QString::fromStdString(r.installed);
            out.trainingProblems = r.trainingProblems;
            for (const auto &row : r.table)
                out.table.push_back({QString::fromStdString(row.selector), QString::fromStdString(row.note),
                                     row.problems, row.mean.value_or(-1), row.p10.value_or(-1)});
            post([this, out] {
                m_running = false;
                emit resultReady(out);
                emit finished();
            });
        } catch (const std::exception &e) {
            post([this, msg = QString::fromUtf8(e.what())] {
                m_running = false;
                emit failed(msg);
                emit finished();
            });
        }
    });
#else
    (void)request;
#endif
}
