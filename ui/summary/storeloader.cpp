#include "summary/storeloader.h"

#include <QFileInfo>

StoreLoader::StoreLoader(QObject *parent)
    : QObject(parent) {
    qRegisterMetaType<DatasetSummary>();
}

void StoreLoader::load(const QString &path) {
    m_jobs.start([this, path](const AsyncJobs::Job &job) {
        DatasetSummary s;
        s.path = path;
        QString error;
        try {
            if (!QFileInfo::exists(path))
                throw std::runtime_error("the file does not exist");
            diode::Store store(path.toStdString(), diode::Store::Mode::ReadOnly);
            s.stats = store.stats();
            s.runs = store.runs();
        } catch (const std::exception &e) {
            error = QStringLiteral("Cannot open %1: %2").arg(path, QString::fromStdString(e.what()));
        }
        job.post([this, s, error] {
            if (error.isEmpty())
                emit loaded(s);
            else
                emit failed(s.path, error);
        });
    });
}
