#pragma once

#include "common/asyncjobs.h"

#include "diode/infer/timingmethod.h"
#include "diode/train/trainoptions.h"

#include <QMetaType>
#include <QObject>
#include <QStringList>

#include <atomic>
#include <memory>
#include <optional>

/// What to train: the store, the filter, the knobs (their callbacks are set by the worker).
struct TrainRequest {
    QString database;
    QString out; ///< package to write
    QStringList ops, dtypes;
    std::optional<diode::TimingMethod> method; ///< the times to train on; nullopt: the data's default
    diode::TrainOptions options;
    bool storePredictions = false; ///< the database is writable and the user asked for it
};

/// One finished (or cancelled) training run, as plain values.
struct TrainOutcome {
    int job = 0;
    QString package;
    bool cancelled = false;
    int epochsRun = 0, members = 0;
    int problems = 0;     ///< problem lines trained, validated and tested on (a problem per run)
    int testProblems = 0; ///< problem lines of the test split
    qint64 modelId = 0;   ///< in the store, when predictions were stored
    double testTop1 = 0, atenTop1 = 0, testTop3 = 0;
    QString method;       ///< the times it trained on, and why: "graph_warm times (default: ...)"
    bool cpuData = false; ///< trained on cpu times: no ATen baseline (baselineTitle)
    double seconds = 0;
};
Q_DECLARE_METATYPE(diode::EpochReport)
Q_DECLARE_METATYPE(TrainOutcome)

/// Runs diode::runTrainingJob (LibTorch) on a worker thread; epochs come back through queued
/// signals. cancel() stops after the current epoch and the best network so far is written.
class TrainWorker : public QObject {
    Q_OBJECT
public:
    explicit TrainWorker(QObject *parent = nullptr);
    ~TrainWorker() override;

    void start(const TrainRequest &request);
    void cancel();
    bool isRunning() const { return m_running; }

signals:
    void progress(const diode::EpochReport &epoch);
    void status(const QString &text);
    void resultReady(const TrainOutcome &outcome);
    void finished();
    void failed(const QString &message);

private:
    std::shared_ptr<std::atomic<bool>> m_stop; ///< the running job's stop-after-this-epoch flag
    bool m_running = false;
    AsyncJobs m_jobs{this}; // last: destroyed (cancelled, then waited for: one epoch) first
};
