#pragma once

#include "common/asyncjobs.h"

#include <QMetaType>
#include <QObject>
#include <QString>
#include <QVector>

#include <memory>

namespace diode {
struct CharacteriseRequest;
class CharacteriseJob;
} // namespace diode

/// One held-out row of a finished characterisation, as plain values.
struct CharacteriseRow {
    QString selector, note;
    qint64 problems = 0;
    double mean = -1, p10 = -1; ///< -1: n/a
};

/// A finished (or cancelled) characterisation: the one-line verdict and the held-out table.
struct CharacteriseOutcome {
    bool cancelled = false;
    QString startWhy, sweepStatus, kernelSweepStatus, stepSweepStatus, decisions, heldOutSource, verdict,
        kept, installed;
    int trainingProblems = 0;
    QVector<CharacteriseRow> table;
};
Q_DECLARE_METATYPE(CharacteriseOutcome)

/// Runs diode::CharacteriseJob (core/train/characterisejob.h, what `diode characterise` runs) on a
/// worker thread: choose, sweep under a deadline, fine-tune, compare on held-out problems, keep or
/// drop. Its callbacks come back as queued signals; cancel() stops the sweep within one
/// configuration (the run stays resumable: the same request again continues it) or training after
/// its epoch, and nothing is kept.
class CharacteriseWorker : public QObject {
    Q_OBJECT
public:
    explicit CharacteriseWorker(QObject *parent = nullptr);
    ~CharacteriseWorker() override;

    void start(const diode::CharacteriseRequest &request);
    void cancel();
    bool isRunning() const { return m_running; }

signals:
    void status(const QString &text);
    void selected(int chosen, int pool, int heldOut, const QString &startWhy);
    void sweepProgress(qint64 done, qint64 total, double etaS);
    void epoch(int member, int members, int epoch, double validationTop1);
    void resultReady(const CharacteriseOutcome &outcome);
    void failed(const QString &message);
    void finished();

private:
    std::shared_ptr<diode::CharacteriseJob> m_job; ///< the running one, for cancel()
    bool m_running = false;
    AsyncJobs m_jobs{this}; // last: destroyed (the job cancelled, then waited for) first
};
