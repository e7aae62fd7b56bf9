#pragma once

#include "common/asyncjobs.h"

#include "diode/infer/gemmproblem.h"
#include "diode/sweep/sweepsession.h"

#include <QByteArray>
#include <QObject>
#include <QString>

#include <atomic>
#include <memory>

/// What to sweep and where to write it; plain values, copied to the sweep thread.
struct SweepRequest {
    QString database; ///< must be writable
    QString backend;  ///< "cpu" or "inductor"; a resumed run keeps its own
    QString python;   ///< inductor: the interpreter ("" = $DIODE_PYTHON or python3)
    QByteArray planJson;
    QString planDir;             ///< where relative shape-set paths of the plan start
    bool resume = false;         ///< continue the newest unfinished run of `database` instead
    bool allowMixedData = false; ///< the user confirmed a run of another backend, GPU or method there
    int workersPerGpu = diode::SweepSession::kAutoWorkers; ///< SweepSession::Request::workersPerGpu
    QString gpus; ///< as `diode sweep --gpus` takes it: "", "all" or "0,1,3"
};

struct SweepStatus {
    qint64 runId = 0;
    qint64 done = 0;
    qint64 total = 0;
    qint64 failed = 0;
    qint64 measurements = 0;
    double elapsedS = 0;
    double problemsPerS = 0;
    double etaS = 0;
    QString current;
};

/// One problem as it finished: its best time in this session, or why it failed.
struct ProblemResult {
    qint64 runId = 0;
    diode::GemmProblem problem;
    double bestMs = 0; ///< 0: no successful measurement
    int measured = 0;
    bool ok = true;
    QString error;
    double tflops() const { return bestMs > 0 ? problem.flops() / (bestMs * 1e9) : 0; }
};
Q_DECLARE_METATYPE(SweepStatus)
Q_DECLARE_METATYPE(ProblemResult)

/// Runs a SweepRunner on its own thread and reports progress, each finished problem, and the
/// end, through queued signals. cancel() stops it within one configuration; the run stays
/// resumable. A newer start() makes signals of an older job stale.
class SweepWorker : public QObject {
    Q_OBJECT
public:
    explicit SweepWorker(QObject *parent = nullptr);
    ~SweepWorker() override; ///< cancels and waits for the sweep thread

    bool start(const SweepRequest &request);
    void cancel();
    bool isRunning() const;

signals:
    void started(qint64 runId, qint64 total, const QString &backend);
    void progress(const SweepStatus &status);
    void problemFinished(const ProblemResult &result);
    /// The run ended: "finished" or "cancelled".
    void finished(const QString &status, qint64 runId);
    /// The sweep could not run or stopped on an error; the message names the cause.
    void failed(const QString &message);
    /// Nothing was written: the run would mix backends, GPUs or timing methods in the database
    /// (the message names them); start again with allowMixedData to add it anyway.
    void mixRefused(const QString &message);

private:
    struct Job;

    std::shared_ptr<Job> m_job;
    AsyncJobs m_jobs{this}; // last: destroyed (waited for) first
};
