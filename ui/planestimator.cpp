#include "planestimator.h"

#include "diode/sweepestimate.h"

#include <QMetaObject>
#include <QPointer>
#include <QThread>

PlanEstimator::PlanEstimator(QObject *parent)
    : QObject(parent) {
    qRegisterMetaType<PlanEstimate>();
}

void PlanEstimator::estimate(const QByteArray &planJson, const QString &planDir, const QString &backend) {
    const int job = ++m_job;
    QPointer<PlanEstimator> self(this);
    QThread *thread = QThread::create([self, planJson, planDir, backend, job] {
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
            e.error = QObject::tr("Plan: %1").arg(QString::fromStdString(ex.what()));
        }
        if (!self)
            return;
        QMetaObject::invokeMethod(self, [self, e, job] {
            if (self && job == self->m_job)
                emit self->estimated(e);
        });
    });
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    thread->start();
}
