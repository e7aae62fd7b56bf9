#pragma once

#include "bias/biasworker.h"

#include <QWidget>

class BiasGroupModel;
class BiasProblemModel;
class BiasScatter;
class MessageLabel;
class QLabel;
class QSplitter;
class QStackedWidget;
class QTabWidget;
class QTableView;
class TimingMethodBox;
class WorkbenchState;

/// Bias: where Inductor's own autotune benchmark misleads max-autotune, against in-graph truth.
/// A scatter of Inductor's time against the in-graph time per candidate, the group table of
/// `diode bias` and the problems by what max-autotune's pick loses. Follows the shared database
/// and the chosen in-graph method; a database without in-graph times gets one sentence.
class BiasPage : public QWidget {
    Q_OBJECT
public:
    explicit BiasPage(WorkbenchState *state, QWidget *parent = nullptr);
    ~BiasPage() override;

    /// Recomputes for the database and method the controls say (F5).
    void refresh();
    bool hasResult() const { return m_shown; }
    const BiasResult &result() const { return m_result; }
    TimingMethodBox *methodBox() const { return m_method; }
    BiasGroupModel *groupModel() const { return m_groups; }
    BiasProblemModel *problemModel() const { return m_problems; }
    /// The sentence shown instead of the plots, empty while results are on screen.
    QString emptyText() const;
    /// Selects the problem of this label (GemmProblem::label()) in the table and rings its points;
    /// false when the result does not hold it.
    bool selectProblem(const QString &label);
    const BiasScatter *scatter() const { return m_scatter; }

signals:
    /// A result (or the empty-state sentence, or an error) for the open database and the current
    /// controls is on screen; never while no database is open.
    void ready();

protected:
    void showEvent(QShowEvent *event) override;

private:
    void showResult(const BiasResult &result);
    void showEmpty(const QString &text);
    void markStale();

    WorkbenchState *m_state;
    BiasWorker *m_worker;
    BiasResult m_result;
    bool m_stale = true;
    bool m_shown = false;
    bool m_selecting = false; ///< selecting a row for another page: not announced back

    TimingMethodBox *m_method;
    MessageLabel *m_message;
    QStackedWidget *m_stack;
    QLabel *m_empty;
    QSplitter *m_split;
    QTabWidget *m_tables;
    BiasScatter *m_scatter;
    BiasGroupModel *m_groups;
    BiasProblemModel *m_problems;
    QTableView *m_groupView, *m_problemView;
};
