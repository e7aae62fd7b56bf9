#include "analysisloader.h"

#include <QFileInfo>
#include <QMetaObject>
#include <QPointer>
#include <QThread>

AnalysisLoader::AnalysisLoader(QObject *parent)
    : QObject(parent) {
    qRegisterMetaType<DataAnalysis>();
}

void AnalysisLoader::load(const QString &path, std::optional<qint64> runId) {
    const int job = ++m_job;
    QPointer<AnalysisLoader> self(this);
    QThread *thread = QThread::create([self, path, runId, job] {
        DataAnalysis a;
        a.path = path;
        QString error;
        try {
            if (!QFileInfo::exists(path))
                throw std::runtime_error("the file does not exist");
            diode::StoreQuery query(path.toStdString());
            a.runs = query.runs();
            a.best = query.bestPerProblem(runId ? std::optional<int64_t>(*runId) : std::nullopt);
        } catch (const std::exception &e) {
            error = QObject::tr("Cannot read %1: %2").arg(path, QString::fromStdString(e.what()));
        }
        if (!self)
            return;
        QMetaObject::invokeMethod(self, [self, a, error, job] {
            if (!self || job != self->m_job)
                return; // a newer load was asked for
            if (error.isEmpty())
                emit self->loaded(a);
            else
                emit self->failed(error);
        });
    });
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    thread->start();
}
