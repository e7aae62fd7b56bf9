#pragma once

#include "diode/analysis/demoresult.h"

#include <QWidget>

class DemoChart;
class DemoRunner;
class ScenarioView;
class QTabWidget;
class DemoTableModel;
class QComboBox;
class MessageLabel;
class QLabel;
class QTableView;
class QPushButton;
class WorkbenchState;

/// Demo: compile time and kernel time of plain torch.compile ("default"), max-autotune and the
/// plugin's modes, in that order, from `diode demo` run on the local GPU or from a saved result
/// (the shipped H200 one, with its model steps, where there is no GPU), with the speed-up against
/// plain torch.compile printed on each bar (against max-autotune too in the table and summary).
/// Three tabs: the speed-ups by kind of case (or one case), the model steps one scenario at a time
/// with their spread and where their time goes, and every case and mode as a table.
class DemoPage : public QWidget {
    Q_OBJECT
public:
    explicit DemoPage(WorkbenchState *state, QWidget *parent = nullptr);

    /// Shows a saved `diode demo --json` result; false with a visible message if unreadable.
    Q_INVOKABLE bool openResult(const QString &path);
    void run();
    DemoTableModel *tableModel() const { return m_table; }
    const diode::DemoResult &result() const { return m_result; }
    DemoChart *kernelChart() const { return m_kernel; }
    DemoChart *compileChart() const { return m_compile; }
    ScenarioView *scenarioView() const { return m_scenarios; }
    DemoRunner *runner() const { return m_runner; }
    bool canRun() const;
    QString runReason() const;
    QString message() const;

    /// The saved H200 result shipped with the workbench, if there is one.
    static QString shippedResult();

    /// 0: every case summarised (median compile time, geomean kernel ratio); k: case k - 1.
    void showCase(int index);

signals:
    void resultShown(const QString &path);

private:
    void setMessage(const QString &text, bool error);
    void showSummary();

    WorkbenchState *m_state;
    DemoRunner *m_runner;
    DemoTableModel *m_table;
    DemoChart *m_compile, *m_kernel;
    ScenarioView *m_scenarios;
    QTabWidget *m_tabs;
    QComboBox *m_case;
    QTableView *m_view;
    diode::DemoResult m_result;
    QPushButton *m_run, *m_cancel;
    QLabel *m_header, *m_reason, *m_summary, *m_timerNote;
    MessageLabel *m_message;
    bool m_gpu = false;
};
