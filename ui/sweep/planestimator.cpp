#include "sweep/planestimator.h"

#include "diode/sweep/sweepestimate.h"

#include <QThread>

PlanEstimator::PlanEstimator(QObject *parent)
    : QObject(parent) {
    qRegisterMetaType<PlanEstimate>();
}

void PlanEstimator::estimate(const QByteArray &planJson, const QString &planDir, const QString &backend) {
    m_jobs.start([this, planJson, planDir, backend](const AsyncJobs::Job &job) {
        PlanEstimate e;
        try {
            const auto plan = diode::SweepPlan::parse(planJson.toStdString(), planDir.toStdString());
            const auto est =
                diode::estimateDuration(plan, backend.toStdString(), QThread::idealThreadCount());
            e.problems = est.problems;
            e.choicesPerProblem = est.choicesPerProblem;
            e.seconds = est.seconds;
            e.basis = QString::fromStdString(est.basis);
        } catch (const std::exception &ex) {
            e.error = tr("Plan: %1").arg(QString::fromStdString(ex.what()));
        }
        job.post([this, e] { emit estimated(e); });
    });
}
