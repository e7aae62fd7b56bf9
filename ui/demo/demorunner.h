#pragma once

#include "common/asyncjobs.h"

#include <QObject>
#include <QProcess>
#include <QStringList>

/// Runs `diode demo --json OUT` as a child process (the GPU work happens in Python there), so
/// nothing blocks the GUI thread; each output line becomes a status, and the result file is
/// announced when the process succeeds. Also finds out, off the GUI thread, whether a GPU is
/// there to run on.
class DemoRunner : public QObject {
    Q_OBJECT
public:
    explicit DemoRunner(QObject *parent = nullptr);
    ~DemoRunner() override;

    /// Looks for GPUs on a worker thread; answers with gpuChecked().
    void checkGpu();
    void start(const QStringList &demoArgs, const QString &jsonOut);
    void cancel();
    bool isRunning() const { return m_process.state() != QProcess::NotRunning; }

signals:
    void gpuChecked(bool available, const QString &reason);
    void status(const QString &line);
    void resultReady(const QString &jsonPath);
    void finished();
    void failed(const QString &message);

private:
    QProcess m_process;
    QString m_json;
    QStringList m_tail; ///< the last lines, for the error message
    bool m_cancelled = false;
    AsyncJobs m_gpuCheck{this}; // last: destroyed (waited for) first
};
