#pragma once

#include "common/asyncjobs.h"

#include <QByteArray>
#include <QObject>
#include <QString>

/// A plan's problem count and expected duration, or why the plan is invalid.
struct PlanEstimate {
    qint64 problems = 0;
    qint64 choicesPerProblem = 0;
    double seconds = 0;
    QString basis;
    QString error; ///< names the entry and field of an invalid plan
};
Q_DECLARE_METATYPE(PlanEstimate)

/// Expands and validates a plan off the GUI thread (a grid can hold millions of problems);
/// only the newest request's answer is delivered.
class PlanEstimator : public QObject {
    Q_OBJECT
public:
    explicit PlanEstimator(QObject *parent = nullptr);
    void estimate(const QByteArray &planJson, const QString &planDir, const QString &backend);
    /// Drops the estimate under way: the plan it counts is no longer the one shown.
    void cancel() { m_jobs.cancel(); }

signals:
    void estimated(const PlanEstimate &estimate);

private:
    AsyncJobs m_jobs{this}; // a newer load makes older results stale
};
