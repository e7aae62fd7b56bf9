#pragma once

#include "common/asyncjobs.h"

#include "diode/analysis/decisionevaluation.h"

#include <QStringList>
#include <QWidget>

class MessageLabel;
class QLabel;
class QPushButton;
class QStandardItemModel;
class QTableView;

/// The Validate page's Decisions tab: how a package's decisions beside the GEMM kernel (each
/// pointwise or reduction kernel's launch configuration, and the form of a small-M GEMM or of
/// attention at one query token) did on kernels and sites of model families they were not built
/// from, as the package recorded it when it was trained, and, on demand, on measured kernel and
/// site lines the user opens, judged as `diode eval --decision-lines` judges them. With two
/// packages (models A and B), the rows of each, side by side.
class DecisionPanel : public QWidget {
    Q_OBJECT
public:
    explicit DecisionPanel(QWidget *parent = nullptr);

    /// Shows the held-out figures of the packages at `paths`, each row named by its package (the
    /// Validate page's model A and, where chosen, model B); none: an empty table and why.
    void setPackages(const QStringList &paths);
    /// The packages `paths` names, each once, none empty, in order: what setPackages shows.
    static QStringList distinctPackages(const QStringList &paths);
    /// Judges each package on the kernel and site lines of `paths` and adds their rows.
    void judgeLines(const QStringList &paths);
    const QStringList &packages() const { return m_packages; }
    QStandardItemModel *model() const { return m_model; }
    /// Waits for the reading or judging under way (tests).
    void waitForDone() { m_jobs.waitForDone(); }

signals:
    /// The table holds what was asked for, or the error under it says why not.
    void shown();

private:
    void chooseLines();

    QStringList m_packages;
    QStringList m_judgeable; ///< of m_packages, those shown with decision models
    QLabel *m_about;
    QPushButton *m_judge;
    MessageLabel *m_message;
    QStandardItemModel *m_model;
    QTableView *m_view;
    AsyncJobs m_jobs{this};
};
