#pragma once

#include "common/analysisloader.h"
#include "sweep/planestimator.h"
#include "sweep/sweepworker.h"

#include <QWidget>

#include <memory>

class FailedProblemsModel;
class PlanForm;
class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QSpinBox;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTabWidget;
class QTimer;
class ThroughputPlot;
class WorkbenchState;

namespace Ui {
class SweepRunPanel;
}

/// Designs, runs, cancels and resumes sweeps: a plan form and the plan's JSON, the problem
/// count and estimated duration, then progress, rate, ETA, a live TFLOP/s plot and the failed
/// problems. The sweep runs on a SweepWorker thread and writes to a writable database.
class SlurmJobs;

class SweepPage : public QWidget {
    Q_OBJECT
public:
    explicit SweepPage(WorkbenchState *state, QWidget *parent = nullptr);
    ~SweepPage() override;

    /// The database sweeps write to; when empty (or the open one is read-only) Run asks for one.
    void setTargetDatabase(const QString &path);
    QString targetDatabase() const { return m_database; }
    void setPlanText(const QString &json, const QString &planDir);
    bool openPlan(const QString &path);
    void setBackend(const QString &backend);
    /// Workers a GPU and the GPUs ("", "all" or "0,1"), as `diode sweep` takes them.
    void setWorkers(int perGpu, const QString &gpus);
    /// Submit Run and Resume to Slurm (where sbatch is on the PATH) as `shards` array tasks.
    void setSlurm(bool on, int shards = 4, const QString &partition = {}, const QString &timeLimit = {});
    SlurmJobs *slurmJobs() const { return m_slurmJobs; }

    void run();
    void resume();
    void cancel();
    SweepWorker *worker() const { return m_worker; }
    FailedProblemsModel *failedModel() const { return m_failed; }
    ThroughputPlot *plot() const { return m_plot; }

signals:
    /// The plan was expanded: its problem count and estimate are shown (or its error).
    void estimateShown(const PlanEstimate &estimate);
    /// The open database's runs are listed and the one to compare with is drawn (what a
    /// --screenshot of the page waits for: it starts no sweep).
    void ready();

private:
    QWidget *planEditor();
    QWidget *runPanel();
    void addEntry();
    void newPlan();
    void settingsToPlan();
    void scheduleEstimate();
    void showEstimate(const PlanEstimate &estimate);
    bool ensureDatabase();
    void choosePlanToOpen();
    bool savePlan(bool askForPath);
    void start(bool resume, bool allowMixedData = false);
    bool onSlurm() const;
    void startOnSlurm(bool resume);
    void showSlurmStates(const QStringList &rows, const QStringList &notes, int finished, int shards,
                         bool merged);
    void confirmMixing(const QString &message);
    void showStatus(const SweepStatus &s);
    void showError(const QString &message);
    void sweepEnded(const QString &text);
    void clearResult(const QString &openDatabase);
    /// The runs of the open database, to compare with (read off the GUI thread).
    void loadRuns();
    void showRuns(const DataAnalysis &analysis);
    void drawOverlay();
    /// The inductor backend offered only where there is a GPU (WorkbenchState::localGpus).
    void followGpus();
    void resetProgress();

    WorkbenchState *m_state;
    SweepWorker *m_worker;
    PlanEstimator *m_estimator;
    FailedProblemsModel *m_failed;
    PlanForm *m_form;
    std::unique_ptr<Ui::SweepRunPanel> m_runUi; ///< the run panel's widgets (sweeprunpanel.ui)
    QPlainTextEdit *m_plan;
    QString m_planPath;
    QString m_planDir;
    QString m_database;
    QString m_resultDatabase; ///< the database of the run whose progress, plot and failures are shown
    QTimer *m_estimateDelay;
    QLabel *m_planFile;
    QLabel *m_estimate;
    QLabel *m_error;
    QComboBox *m_backend;
    QLineEdit *m_python;
    QSpinBox *m_workers;
    QLineEdit *m_gpus;
    SlurmJobs *m_slurmJobs;
    QCheckBox *m_onSlurm;
    QSpinBox *m_shards;
    QLineEdit *m_partition;
    QLineEdit *m_timeLimit;
    QPlainTextEdit *m_slurmState;
    QLabel *m_databaseLabel;
    QPushButton *m_run;
    QPushButton *m_resume;
    QPushButton *m_cancel;
    QProgressBar *m_progress;
    QLabel *m_status;
    QTabWidget *m_results;
    ThroughputPlot *m_plot;
    QComboBox *m_compare;
    AnalysisLoader *m_runsLoader;
    DataAnalysis m_runs;
    qint64 m_planProblems = 0;
    qint64 m_plotRunId = 0; ///< the run this page swept (its points are the live ones)
    bool m_planValid = false;
};
