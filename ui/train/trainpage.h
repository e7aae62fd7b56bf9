#pragma once

#include "train/trainworker.h"

#include <QWidget>

class ModelList;
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableView;
class TimingMethodBox;
class TrainingCurves;
class WorkbenchState;

/// Train: pick the data (ops, dtypes of the open database) and the hyper-parameters, watch the
/// training loss and validation efficiency per epoch with the time left, compare with an earlier
/// run's curves, cancel; the package lands in the model list and becomes the workbench's current
/// model.
class TrainPage : public QWidget {
    Q_OBJECT
public:
    explicit TrainPage(WorkbenchState *state, QWidget *parent = nullptr);
    ~TrainPage() override;

    /// The request the form describes now.
    TrainRequest request() const;
    void setEpochs(int epochs);
    void train();
    void cancel();
    TrainWorker *worker() const { return m_worker; }
    ModelList *models() const { return m_models; }
    const TrainOutcome &lastOutcome() const { return m_last; }
    /// Finished runs of this session, to overlay on the curves ("Compare with"); the newest last.
    QStringList earlierRuns() const;
    /// Draws earlier run `index` (of earlierRuns()) under the current curves; -1: none.
    void compareWith(int index);

signals:
    /// A training run finished and its package is in the model list.
    void trained();

private:
    /// A finished run's curves, kept to compare the next runs with.
    struct Run {
        QString name;
        QVector<diode::EpochReport> epochs;
    };

    void showOutcome(const TrainOutcome &outcome);
    void fail(const QString &message);
    void updateDatabase();
    void showProgress(const diode::EpochReport &epoch);
    QString defaultOutput() const;

    WorkbenchState *m_state;
    ModelList *m_models;
    TrainWorker *m_worker;
    TrainOutcome m_last;
    QLabel *m_database, *m_status, *m_error;
    QList<QCheckBox *> m_ops, m_dtypes;
    QSpinBox *m_epochs, *m_patience, *m_seed, *m_hidden, *m_members, *m_batch;
    QDoubleSpinBox *m_lr, *m_rankWeight, *m_weightDecay, *m_valFraction, *m_testFraction, *m_listWeight;
    QLineEdit *m_out;
    QCheckBox *m_store;
    TimingMethodBox *m_method;
    QPushButton *m_train, *m_cancel;
    QProgressBar *m_progress;
    QComboBox *m_compare;
    QVector<Run> m_runs;
    QVector<diode::EpochReport> m_epochLog; ///< of the run under way
    qint64 m_startedMs = 0;
    int m_stepsPlanned = 0;
    TrainingCurves *m_curves;
    QTableView *m_modelView;
};
