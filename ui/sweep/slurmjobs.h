#pragma once

#include "common/asyncjobs.h"

#include "diode/sweep/slurmsweep.h"

#include <QObject>
#include <QStringList>

#include <functional>
#include <string>
#include <vector>

class QTimer;

/// The Sweep page's Slurm path, what `diode sweep --slurm` and `--status` do
/// (core/sweep/diode/sweep/slurmsweep.h): submits a plan as an array job, one task a shard, with the merge
/// job after it, then follows the shards' stores and squeue/sacct state until the merge has
/// finished. sbatch and squeue run off the GUI thread.
class SlurmJobs : public QObject {
    Q_OBJECT
public:
    explicit SlurmJobs(QObject *parent = nullptr);

    /// sbatch as the PATH finds it; empty where there is none (the page then offers no Slurm).
    static QString sbatch();

    /// Submits; emits submitted() (then follows the sweep) or failed() with Slurm's own words.
    void submit(diode::SlurmSweep::Request request);
    /// Submits again the unfinished shards of the Slurm sweep of `db` (`--slurm --resume`).
    void resubmit(const QString &db);
    /// Polls the sweep of `db` every `intervalMs` until its merge has finished or stop().
    void follow(const QString &db, int intervalMs = 3000);
    void stop();
    bool following() const;
    QString database() const { return m_db; }

signals:
    void submitted(const QStringList &lines);
    void failed(const QString &message);
    /// One line a shard and the merge ("shard 2/4 · finished, 3/3 problems · job 12_2 COMPLETED"),
    /// the notes of the status (no accounting, ...), how many shards have finished, and whether
    /// the merge has.
    void states(const QStringList &rows, const QStringList &notes, int shardsFinished, int shards,
                bool merged);

private:
    /// Runs `submission` off the GUI thread; its lines go to submitted(), then the sweep is followed.
    void submitThenFollow(const QString &db, std::function<std::vector<std::string>()> submission);
    void poll();

    QTimer *m_timer;
    QString m_db;
    AsyncJobs m_jobs{this};
};
