#include "sweep/slurmjobs.h"

#include <QStandardPaths>
#include <QTimer>

SlurmJobs::SlurmJobs(QObject *parent)
    : QObject(parent)
    , m_timer(new QTimer(this)) {
    connect(m_timer, &QTimer::timeout, this, &SlurmJobs::poll);
}

QString SlurmJobs::sbatch() {
    return QStandardPaths::findExecutable(QStringLiteral("sbatch"));
}

namespace {

QStringList toQt(const std::vector<std::string> &lines) {
    QStringList out;
    for (const auto &l : lines)
        out << QString::fromStdString(l);
    return out;
}

} // namespace

void SlurmJobs::submit(diode::SlurmSweep::Request request) {
    stop();
    const QString db = QString::fromStdString(request.db);
    m_jobs.start([this, db, request = std::move(request)](const AsyncJobs::Job &job) {
        try {
            const QStringList lines = toQt(diode::SlurmSweep::submit(request));
            job.post([this, db, lines] {
                emit submitted(lines);
                follow(db);
            });
        } catch (const std::exception &e) {
            job.post([this, message = QString::fromUtf8(e.what())] { emit failed(message); });
        }
    });
}

void SlurmJobs::resubmit(const QString &db) {
    stop();
    m_jobs.start([this, db](const AsyncJobs::Job &job) {
        try {
            const QStringList lines = toQt(diode::SlurmSweep::resubmit(db.toStdString()));
            job.post([this, db, lines] {
                emit submitted(lines);
                follow(db);
            });
        } catch (const std::exception &e) {
            job.post([this, message = QString::fromUtf8(e.what())] { emit failed(message); });
        }
    });
}

void SlurmJobs::follow(const QString &db, int intervalMs) {
    m_db = db;
    m_timer->start(intervalMs);
    poll();
}

void SlurmJobs::stop() {
    m_timer->stop();
    m_jobs.cancel();
}

bool SlurmJobs::following() const {
    return m_timer->isActive();
}

void SlurmJobs::poll() {
    const QString db = m_db;
    m_jobs.start([this, db](const AsyncJobs::Job &job) {
        try {
            std::vector<std::string> notes;
            const auto shardStates = diode::SlurmSweep::status(db.toStdString(), &notes);
            QStringList rows;
            int finished = 0, shards = 0;
            bool merged = false;
            for (const auto &s : shardStates) {
                rows << QStringLiteral("%1 · %2 · %3")
                            .arg(QString::fromStdString(s.name), QString::fromStdString(s.store),
                                 QString::fromStdString(s.job));
                if (s.name == "merge") {
                    merged = s.finished;
                } else {
                    ++shards;
                    finished += s.finished;
                }
            }
            job.post([this, rows, notes = toQt(notes), finished, shards, merged] {
                if (merged)
                    m_timer->stop();
                emit states(rows, notes, finished, shards, merged);
            });
        } catch (const std::exception &e) {
            job.post([this, message = QString::fromUtf8(e.what())] {
                m_timer->stop();
                emit failed(message);
            });
        }
    });
}
