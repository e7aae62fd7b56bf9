#include "biasworker.h"

#include "diode/store.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QMetaObject>
#include <QThread>

BiasWorker::BiasWorker(QObject *parent)
    : QObject(parent) {
    qRegisterMetaType<BiasResult>();
}

BiasWorker::~BiasWorker() {
    cancel();
    for (const QPointer<QThread> &t : std::as_const(m_threads))
        if (t)
            t->wait();
}

void BiasWorker::cancel() {
    ++m_job; // whatever is still on its way is stale now
    if (m_running) {
        m_running = false;
        emit finished();
    }
}

void BiasWorker::start(const QString &database, diode::TimingMethod method) {
    cancel();
    const int job = ++m_job;
    m_running = true;
    QThread *thread = QThread::create([this, database, method, job] {
        // Runs on the worker thread: touches no QObject, posts back only while still current.
        auto post = [this, job](auto fn) {
            QMetaObject::invokeMethod(
                this,
                [this, job, fn] {
                    if (job != m_job)
                        return;
                    m_running = false;
                    fn();
                    emit finished();
                },
                Qt::QueuedConnection);
        };
        try {
            QElapsedTimer clock;
            clock.start();
            if (!QFileInfo::exists(database))
                throw std::runtime_error(
                    QStringLiteral("Database %1 does not exist.").arg(database).toStdString());
            diode::Store store(database.toStdString(), diode::Store::Mode::ReadOnly);
            BiasResult res;
            res.job = job;
            res.database = database;
            res.method = method;
            res.held = store.methodCounts();
            if (res.hasInGraphTimes())
                res.report = diode::computeBias(store, method);
            res.seconds = clock.elapsed() / 1000.0;
            post([this, res] { emit resultReady(res); });
        } catch (const std::exception &e) {
            const QString msg = QString::fromUtf8(e.what());
            post([this, msg] { emit failed(msg); });
        }
    });
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    m_threads.removeAll(nullptr);
    m_threads.append(thread);
    thread->start();
}
