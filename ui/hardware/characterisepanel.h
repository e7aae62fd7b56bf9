#pragma once

#include "hardware/characteriseworker.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;

/// "Characterise this GPU" (from the Hardware page): `diode characterise` in the workbench. From
/// the package the plugin would load on this GPU (its own, else the nearest of a similar one,
/// said in one line), it chooses the pool problems the package is least sure of, sweeps them
/// under a deadline (progress, ETA, cancel; the same settings again resume the run), fine-tunes,
/// and shows the transferred and the new package, plain torch.compile and the best ATen kernel
/// side by side on held-out problems measured here, with one line on whether the new package is
/// better and by how much; a better one is kept (and installed for the plugin when asked).
class CharacterisePanel : public QWidget {
    Q_OBJECT
public:
    explicit CharacterisePanel(QWidget *parent = nullptr);

    /// The GPU to characterise (the Hardware page's first; empty: this machine has none), once the
    /// machine was read: names the default start package and files, and, with no GPU, makes the
    /// cpu backend the default and the inductor backend unavailable, with the reason.
    void setGpu(const QString &name, int smCount);
    /// A cpu model to start from on the cpu backend (the newest known), or empty.
    void setCpuModel(const QString &path);
    /// Whether Run can start now, and why not.
    bool canRun(QString *why = nullptr) const;
    /// The fewest problems to choose so that training gets its minimum after the held-out part.
    static int minimumCount();
    /// Fields, for tests and scripted use; empty keeps the default.
    void setBackend(const QString &backend);
    void setPaths(const QString &package, const QString &pool, const QString &database, const QString &out);
    void setBudget(int problems, double deadlineMinutes, int epochs);
    void run();
    void cancel();
    CharacteriseWorker *worker() const { return m_worker; }

signals:
    /// A characterisation ended (result shown, cancelled or failed).
    void ended();

private:
    void showOutcome(const CharacteriseOutcome &o);
    void fail(const QString &message);
    QString inPanelTerms(QString message) const;
    void setRunning(bool running);
    /// The backend's defaults for what the user has not typed (pool, package), then Run's state.
    void backendChanged();
    /// The kernel workers count only where the kernel sweep runs (inductor backend, box ticked).
    void updateKernelWorkers();
    void updateRun();

    CharacteriseWorker *m_worker;
    QString m_gpu;
    int m_smCount = 0;
    bool m_gpuKnown = false;
    bool m_backendChosen =
        false; ///< chosen by the user (or setBackend): the machine's default no longer applies
    QString m_cpuModel;
    QString m_lastBackend;
    QComboBox *m_backend;
    QLineEdit *m_package, *m_pool, *m_database, *m_out, *m_python;
    QLineEdit *m_heldout, *m_kernelLines; ///< empty: the job's defaults (CharacteriseRequest)
    QLineEdit *m_steps;                   ///< model steps for the step sweep; empty: none
    QSpinBox *m_count, *m_deadline, *m_workers, *m_kernelWorkers, *m_epochs;
    QCheckBox *m_kernelSweep; ///< inductor: the kernel sweep after the GEMM sweep
    QCheckBox *m_install, *m_retrain, *m_force;
    QPushButton *m_run, *m_cancel;
    QProgressBar *m_progress;
    QLabel *m_start, *m_status, *m_verdict, *m_error;
    QTableWidget *m_table;
};
