#include "bias/biasworker.h"

#include "diode/store/store.h"

#include <QElapsedTimer>
#include <QFileInfo>

BiasWorker::BiasWorker(QObject *parent)
    : QObject(parent) {
    qRegisterMetaType<BiasResult>();
}

void BiasWorker::cancel() {
    m_jobs.cancel(); // whatever is still on its way is stale now
    if (m_running) {
        m_running = false;
        emit finished();
    }
}

void BiasWorker::start(const QString &database, diode::TimingMethod method) {
    cancel();
    m_running = true;
    m_jobs.start([this, database, method](const AsyncJobs::Job &job) {
        // Runs on a pool thread: touches no QObject, posts back only while still current.
        auto post = [this, &job](auto fn) {
            job.post([this, fn] {
                m_running = false;
                fn();
                emit finished();
            });
        };
        try {
            QElapsedTimer clock;
            clock.start();
            if (!QFileInfo::exists(database))
                throw std::runtime_error(
                    QStringLiteral("Database %1 does not exist.").arg(database).toStdString());
            diode::Store store(database.toStdString(), diode::Store::Mode::ReadOnly);
            BiasResult res;
            res.job = job.id();
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
}
