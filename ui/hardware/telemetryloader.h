#pragma once

#include "common/asyncjobs.h"

#include "diode/store/store.h"

#include <QObject>
#include <QString>

/// The telemetry stored with each run of a database; runs without samples are listed too.
struct StoredTelemetry {
    QString path;
    std::vector<diode::RunInfo> runs;
    std::vector<std::vector<diode::TelemetrySample>> samples; ///< per run, same order
};
Q_DECLARE_METATYPE(StoredTelemetry)

/// Reads a database's telemetry on a worker thread; only the newest request's answer arrives.
class TelemetryLoader : public QObject {
    Q_OBJECT
public:
    explicit TelemetryLoader(QObject *parent = nullptr);
    void load(const QString &path);

signals:
    void loaded(const StoredTelemetry &telemetry);
    void failed(const QString &message);

private:
    AsyncJobs m_jobs{this}; // a newer load makes older results stale
};
