#pragma once

#include "common/asyncjobs.h"

#include "diode/store/storequery.h"

#include <QObject>
#include <QString>

#include <optional>

/// What the Data page's plots and run list are drawn from: plain values, copied across threads.
struct DataAnalysis {
    QString path;
    std::vector<diode::RunInfo> runs;
    std::vector<diode::ProblemBest> best; ///< per (run, problem): the fastest successful time
    diode::MethodChoice method;           ///< the data's truth: what train, eval and Validate read
};
Q_DECLARE_METATYPE(DataAnalysis)

/// Reads runs and per-problem best times on a worker thread; a newer request makes older
/// results stale (job id), so a slow load never overwrites a newer one.
class AnalysisLoader : public QObject {
    Q_OBJECT
public:
    explicit AnalysisLoader(QObject *parent = nullptr);
    void load(const QString &path, std::optional<qint64> runId);

signals:
    void loaded(const DataAnalysis &analysis);
    void failed(const QString &message);

private:
    AsyncJobs m_jobs{this}; // a newer load makes older results stale
};
