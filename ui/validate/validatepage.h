#pragma once

#include "validate/validationworker.h"

#include <QWidget>

#include <memory>

class CandidateModel;
class DecisionPanel;
class CurvePlot;
class MetricsModel;
class ModelList;
class PredictionScatter;
class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QSplitter;
class QTabWidget;
class QTableView;
class TimingMethodBox;
class WorkbenchState;

namespace Ui {
class ValidatePage;
}

/// Validate: predicted against measured for every candidate (log-log, coloured by op or dtype,
/// hover names the problem and config, a click opens the problem with its candidates ranked by
/// model and by measurement), the residual histogram, per-problem top-1 efficiency CDFs of the
/// model against ATen alone and Inductor's default order, and two models side by side.
class ValidatePage : public QWidget {
    Q_OBJECT
public:
    explicit ValidatePage(WorkbenchState *state, QWidget *parent = nullptr);
    ~ValidatePage() override;

    /// Starts a validation with the current choices (F5).
    void validate();
    void cancel();
    bool hasResult() const { return m_result.complete; }
    /// Whether a model is chosen, so a validation will run once the page is shown; without one
    /// (data no model fits) the page's sentence is all it shows, and a screenshot takes it at once.
    Q_INVOKABLE bool willValidate() const;
    const ValidationResult &result() const { return m_result; }
    ValidationWorker *worker() const { return m_worker; }
    /// Opens problem `index` of the current result in the candidates table and rings its points;
    /// `announce`: the other pages select it too (WorkbenchState::selectProblem).
    void openProblem(size_t index, bool announce = true);
    CandidateModel *candidateModel() const { return m_candidates; }
    DecisionPanel *decisionPanel() const { return m_decisions; }
    MetricsModel *metricsModel() const { return m_metrics; }
    TimingMethodBox *methodBox() const { return m_method; }
    /// What the shown numbers are measured on, and whether that includes training problems.
    QString scopeText() const;

    /// Values of the problem-source box for the open database.
    static inline const QString kHeldOutSource = QStringLiteral("db:held-out");
    static inline const QString kAllSource = QStringLiteral("db:all");

signals:
    /// A complete validation is on screen.
    void ready();
    /// The scatter of a new result was drawn, `seconds` after validate() was called.
    void scatterShown(double seconds);

protected:
    void showEvent(QShowEvent *event) override;

private:
    void showResult(const ValidationResult &result);
    /// A model, the problems or the times changed: what is on screen no longer matches the
    /// controls. Clears it and validates again when the page is shown (now, if it is).
    void inputsChanged();
    void clearViews(const QString &sentence);
    void showScope();
    QString shownCount() const;
    void drawScatters();
    void drawCurves();
    void showHover(qint64 candidate, const QPoint &globalPos);
    void openCandidate(qint64 candidate);
    void chooseProblemsFile();
    void addPackage();
    /// Adds a package to the list (a visible error if unreadable) and makes it model A.
    void selectPackage(const QString &path);
    void fail(const QString &message);
    QString packageAt(QComboBox *combo) const;
    bool fitsOpenData(const QString &path) const;
    void rebuildModels();
    /// Opens the problem of this label in the candidates table and rings its points (linked
    /// selection); false when the result does not hold it.
    bool showProblem(const QString &label);
    /// One model on top and the curves beside it; two models side by side on top and the curves in
    /// the tabs below, so that neither is squeezed at 1280 px.
    void placeCurves(bool below);
    QString nextStep() const;

    WorkbenchState *m_state;
    ModelList *m_models;
    ValidationWorker *m_worker;
    std::unique_ptr<Ui::ValidatePage> m_ui; ///< the page's widgets (validatepage.ui)
    ValidationResult m_result;
    std::vector<uint32_t> m_problemOf; ///< candidate -> problem of m_result
    bool m_stale = true;
    qint64 m_startedMs = 0;

    QComboBox *m_modelA, *m_modelB, *m_problems, *m_colourBy;
    TimingMethodBox *m_method;
    QPushButton *m_run, *m_cancel;
    QProgressBar *m_progress;
    QLabel *m_status, *m_error, *m_problemTitle, *m_scope;
    bool m_rebuildingSources = false;
    QString m_sourcesDatabase; ///< the database the problem sources were made for
    QSplitter *m_split, *m_topSplit;
    PredictionScatter *m_scatterA, *m_scatterB;
    CurvePlot *m_histogram, *m_cdf;
    QTabWidget *m_bottomTabs, *m_curveTabs;
    MetricsModel *m_metrics;
    CandidateModel *m_candidates;
    QTableView *m_metricsView, *m_candidateView;
    DecisionPanel *m_decisions =
        nullptr; ///< the Decisions tab: model A's and model B's decisions beside the GEMM kernel
};
