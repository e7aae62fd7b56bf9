#include "sweep/slurmjobs.h"

#include <QStandardPaths>

#include <QTimer>
#include <algorithm>

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
    const QString db = QString::fromStdString(request.db);
    submitThenFollow(db, [request = std::move(request)] { return diode::SlurmSweep::submit(request); });
}

void SlurmJobs::resubmit(const QString &db) {
    submitThenFollow(db, [db = db.toStdString()] { return diode::SlurmSweep::resubmit(db); });
}

void SlurmJobs::submitThenFollow(const QString &db, std::function<std::vector<std::string>()> submission) {
    stop();
    m_jobs.start([this, db, submission = std::move(submission)](const AsyncJobs::Job &job) {
        try {
            const QStringList lines = toQt(submission());
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
            // One row a shard, then the merge's (SlurmSweep::status).
            QStringList rows;
            for (const auto &s : shardStates)
                rows << QStringLiteral("%1 · %2 · %3")
                            .arg(QString::fromStdString(s.name), QString::fromStdString(s.store),
                                 QString::fromStdString(s.job));
            const int shards = int(shardStates.size()) - 1;
            const bool merged = shardStates.back().finished;
            const int finished = int(std::count_if(shardStates.begin(), shardStates.end() - 1,
                                                   [](const auto &s) { return s.finished; }));
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
