#include "demo/demorunner.h"

#include "common/shippedfile.h"

#include "diode/sweep/hardware.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QTimer>

DemoRunner::DemoRunner(QObject *parent)
    : QObject(parent) {
    m_process.setProcessChannelMode(QProcess::MergedChannels);
    connect(&m_process, &QProcess::readyReadStandardOutput, this, [this] {
        while (m_process.canReadLine()) {
            const QString line = QString::fromUtf8(m_process.readLine()).trimmed();
            if (line.isEmpty())
                continue;
            m_tail << line;
            if (m_tail.size() > 6)
                m_tail.removeFirst();
            emit status(line);
        }
    });
    connect(&m_process, &QProcess::finished, this, [this](int code, QProcess::ExitStatus st) {
        if (m_cancelled)
            emit status(tr("Demo cancelled."));
        else if (st == QProcess::NormalExit && code == 0 && QFileInfo::exists(m_json))
            emit resultReady(m_json);
        else if (code == 3)
            emit failed(tr("The demo cannot run on this machine: %1").arg(m_tail.join(' ')));
        else
            emit failed(tr("diode demo exited with code %1: %2").arg(code).arg(m_tail.join('\n')));
        emit finished();
    });
    connect(&m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e != QProcess::FailedToStart)
            return;
        emit failed(tr("Cannot start %1: %2").arg(m_process.program(), m_process.errorString()));
        emit finished();
    });
}

DemoRunner::~DemoRunner() {
    if (isRunning()) {
        m_process.kill();
        m_process.waitForFinished(3000);
    }
}

void DemoRunner::checkGpu() {
    m_gpuCheck.start([this](const AsyncJobs::Job &job) {
        const auto report = diode::HardwareMonitor().report(); // loads NVML; may take a moment
        const bool ok = !report.gpus.empty();
        QStringList notes;
        for (const auto &n : report.notes)
            notes << QString::fromStdString(n);
        const QString reason =
            ok ? QString()
               : (notes.isEmpty() ? tr("no GPU found") : tr("no GPU found (%1)").arg(notes.join("; ")));
        job.post([this, ok, reason] { emit gpuChecked(ok, reason); });
    });
}

void DemoRunner::start(const QStringList &demoArgs, const QString &jsonOut) {
    if (isRunning())
        return;
    const QString bin = diodeBinary();
    if (bin.isEmpty()) {
        emit failed(tr("The diode command line is not next to the workbench (%1).")
                        .arg(QCoreApplication::applicationDirPath()));
        emit finished();
        return;
    }
    m_json = jsonOut;
    m_tail.clear();
    m_cancelled = false;
    m_process.start(bin, QStringList{QStringLiteral("demo")} + demoArgs +
                             QStringList{QStringLiteral("--json"), jsonOut});
    emit status(tr("Running %1 demo …").arg(bin));
}

void DemoRunner::cancel() {
    if (!isRunning())
        return;
    m_cancelled = true;
    m_process.terminate(); // the Python side saves finished cases; kill if it lingers
    QTimer::singleShot(5000, this, [this] {
        if (isRunning())
            m_process.kill();
    });
}
