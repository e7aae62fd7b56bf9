#include "common/analysisloader.h"

#include "diode/store/store.h"

#include <QFileInfo>

AnalysisLoader::AnalysisLoader(QObject *parent)
    : QObject(parent) {
    qRegisterMetaType<DataAnalysis>();
}

void AnalysisLoader::load(const QString &path, std::optional<qint64> runId) {
    m_jobs.start([this, path, runId](const AsyncJobs::Job &job) {
        DataAnalysis a;
        a.path = path;
        QString error;
        try {
            if (!QFileInfo::exists(path))
                throw std::runtime_error("the file does not exist");
            diode::StoreQuery query(path.toStdString());
            a.runs = query.runs();
            a.best = query.bestPerProblem(runId ? std::optional<int64_t>(*runId) : std::nullopt);
            a.method = diode::defaultTimingMethod(
                diode::Store(path.toStdString(), diode::Store::Mode::ReadOnly).methodCounts());
        } catch (const std::exception &e) {
            error = tr("Cannot read %1: %2").arg(path, QString::fromStdString(e.what()));
        }
        job.post([this, a, error] { // dropped when a newer load was asked for
            if (error.isEmpty())
                emit loaded(a);
            else
                emit failed(error);
        });
    });
}
