#pragma once

#include "common/asyncjobs.h"

#include "diode/store/store.h"

#include <QObject>
#include <QString>

/// What the summary page shows of one database: plain values, copied across threads.
struct DatasetSummary {
    QString path;
    diode::StoreStats stats;
    std::vector<diode::RunInfo> runs;
};
Q_DECLARE_METATYPE(DatasetSummary)

/// Reads a database's summary on a worker thread and reports it with a signal; a newer
/// request makes older results stale (job id), so a slow load never overwrites a newer one.
class StoreLoader : public QObject {
    Q_OBJECT
public:
    explicit StoreLoader(QObject *parent = nullptr);
    void load(const QString &path);

signals:
    void loaded(const DatasetSummary &summary);
    /// `message` names the path and the reason.
    void failed(const QString &path, const QString &message);

private:
    AsyncJobs m_jobs{this}; // a newer load makes older results stale
};
