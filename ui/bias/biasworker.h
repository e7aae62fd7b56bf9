#pragma once

#include "common/asyncjobs.h"

#include "diode/analysis/bias.h"
#include "diode/infer/timingmethod.h"
#include <QMetaType>
#include <QObject>
#include <QString>

/// The bias report of one database for one in-graph method, as plain values. `database` and
/// `method` say what it was computed for, so a page can refuse a result its controls no longer
/// say.
struct BiasResult {
    int job = 0;
    QString database;
    diode::TimingMethod method = diode::TimingMethod::GraphWarm;
    diode::BiasReport report;
    diode::MethodCounts held; ///< successful measurements per method in the database
    double seconds = 0;

    bool hasInGraphTimes() const {
        auto n = [this](diode::TimingMethod m) { return held.count(m) ? held.at(m) : 0; };
        return n(diode::TimingMethod::GraphWarm) + n(diode::TimingMethod::GraphCold) > 0;
    }
};
Q_DECLARE_METATYPE(BiasResult)

/// Computes diode::computeBias over a database on a worker thread. A new start() or cancel()
/// makes the running computation stale: its result is dropped, never delivered.
class BiasWorker : public QObject {
    Q_OBJECT
public:
    explicit BiasWorker(QObject *parent = nullptr);

    void start(const QString &database, diode::TimingMethod method);
    void cancel();
    bool isRunning() const { return m_running; }

signals:
    void resultReady(const BiasResult &result);
    void finished();
    void failed(const QString &message);

private:
    bool m_running = false;
    AsyncJobs m_jobs{this}; // last: destroyed (cancelled and waited for) first
};
