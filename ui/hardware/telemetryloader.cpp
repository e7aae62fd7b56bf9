#include "hardware/telemetryloader.h"

#include "diode/store/storequery.h"

#include <QFileInfo>

TelemetryLoader::TelemetryLoader(QObject *parent)
    : QObject(parent) {
    qRegisterMetaType<StoredTelemetry>();
}

void TelemetryLoader::load(const QString &path) {
    m_jobs.start([this, path](const AsyncJobs::Job &job) {
        StoredTelemetry t;
        t.path = path;
        QString error;
        try {
            if (!QFileInfo::exists(path))
                throw std::runtime_error("the file does not exist");
            diode::StoreQuery query(path.toStdString());
            t.runs = query.runs();
            for (const auto &r : t.runs)
                t.samples.push_back(query.telemetry(r.id));
        } catch (const std::exception &e) {
            error = tr("Cannot read telemetry of %1: %2").arg(path, QString::fromStdString(e.what()));
        }
        job.post([this, t, error] {
            if (error.isEmpty())
                emit loaded(t);
            else
                emit failed(error);
        });
    });
}
