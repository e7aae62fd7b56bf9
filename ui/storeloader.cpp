#include "storeloader.h"

#include <QFileInfo>
#include <QMetaObject>
#include <QThread>

StoreLoader::StoreLoader(QObject *parent)
    : QObject(parent)
{
    qRegisterMetaType<DatasetSummary>();
}

void StoreLoader::load(const QString &path)
{
    const int job = ++m_job;
    QThread *thread = QThread::create([this, path, job] {
        DatasetSummary s;
        s.path = path;
        QString error;
        try {
            if (!QFileInfo::exists(path)) throw std::runtime_error("the file does not exist");
            diode::Store store(path.toStdString(), diode::Store::Mode::ReadOnly);
            s.stats = store.stats();
            s.runs = store.runs();
        } catch (const std::exception &e) {
            error = QStringLiteral("Cannot open %1: %2").arg(path, QString::fromStdString(e.what()));
        }
        QMetaObject::invokeMethod(this, [this, s, error, job] {
            if (job != m_job) return; // a newer load was asked for
            if (error.isEmpty()) emit loaded(s);
            else emit failed(error);
        });
    });
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    thread->start();
}
