#include "telemetryloader.h"

#include "diode/storequery.h"

#include <QFileInfo>
#include <QMetaObject>
#include <QPointer>
#include <QThread>

TelemetryLoader::TelemetryLoader(QObject *parent)
    : QObject(parent) {
    qRegisterMetaType<StoredTelemetry>();
}

void TelemetryLoader::load(const QString &path) {
    const int job = ++m_job;
    QPointer<TelemetryLoader> self(this);
    QThread *thread = QThread::create([self, path, job] {
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
            error =
                QObject::tr("Cannot read telemetry of %1: %2").arg(path, QString::fromStdString(e.what()));
        }
        if (!self)
            return;
        QMetaObject::invokeMethod(self, [self, t, error, job] {
            if (!self || job != self->m_job)
                return;
            if (error.isEmpty())
                emit self->loaded(t);
            else
                emit self->failed(error);
        });
    });
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    thread->start();
}
