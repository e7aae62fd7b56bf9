#pragma once

#include "common/analysisloader.h"
#include "diode/analysis/gpupeaks.h"

#include <QWidget>

#include <array>

class HeatmapView;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QTabWidget;
class QTableView;
class QTimer;
class RooflineView;
class StoreTableModel;
class WorkbenchState;

/// Runs, problems and measurements of the open database, and its kernel and site lines, in paged
/// tables (sorted and filtered in SQL), a heatmap of the best FLOP rate over (M, N) and a roofline. Queries
/// run off the GUI thread.
class DataPage : public QWidget {
    Q_OBJECT
public:
    explicit DataPage(WorkbenchState *state, QWidget *parent = nullptr);
    ~DataPage() override;

    StoreTableModel *runsModel() const { return m_runs; }
    StoreTableModel *problemsModel() const { return m_problems; }
    StoreTableModel *measurementsModel() const { return m_measurements; }
    StoreTableModel *kernelsModel() const { return m_kernels; }
    StoreTableModel *sitesModel() const { return m_sites; }
    const DataAnalysis &analysis() const { return m_analysis; }

signals:
    /// The plots were redrawn from a fresh analysis of the database.
    void analysisShown();
    /// The open database's plots and the first page of every table are on screen (or its error
    /// is); a --screenshot waits for it. Never while no database is open.
    void ready();
    /// A table was written to CSV.
    void exported(const QString &path, qint64 rows);

public:
    /// The problem the tables are filtered to (linked selection), if any.
    std::optional<diode::GemmProblem> problemFilter() const { return m_problem; }
    RooflineView *roofline() const { return m_roofline; }

private:
    void emitReadyWhenLoaded();
    /// `emptyHint`: said beside "0 rows", where the rows of that table come from.
    QWidget *tablePage(StoreTableModel *model, const QString &name, QTableView **viewOut,
                       const QString &emptyHint = {});
    QWidget *heatmapPage();
    QWidget *rooflinePage();
    void openDatabase(const QString &path);
    void refresh();
    void applyFilter();
    void showAnalysis(const DataAnalysis &analysis);
    void drawHeatmap();
    void drawRoofline();
    void peaksForGpu();
    void showError(const QString &message);
    std::optional<qint64> selectedRun() const;
    /// The op and dtype with the most problems in the data, for the heatmap unless the user chose.
    void chooseHeatmapDefault();
    /// Another page selected this problem: the tables show its lines only, and the roofline rings it.
    void showSelectedProblem(const QString &label);
    /// A row of the problems or measurements table was chosen: the other pages select its problem.
    void announceRow(StoreTableModel *model, int row);
    void ringOnRoofline(const diode::GemmProblem &problem);

    WorkbenchState *m_state;
    StoreTableModel *m_runs;
    StoreTableModel *m_problems;
    StoreTableModel *m_measurements;
    StoreTableModel *m_kernels;
    StoreTableModel *m_sites;
    std::array<StoreTableModel *, 5> tables() const {
        return {m_runs, m_problems, m_measurements, m_kernels, m_sites};
    }
    AnalysisLoader *m_loader;
    DataAnalysis m_analysis;
    diode::GpuPeaks m_peaks;
    QString m_peaksGpu;

    QLabel *m_error;
    QComboBox *m_run;
    QComboBox *m_op;
    QComboBox *m_dtype;
    QComboBox *m_status;
    QComboBox *m_method;         ///< measurements of one timing method (the data's truth by default), or all
    bool m_methodChosen = false; ///< the user chose the method filter for the open database
    bool m_analysisLoaded = false; ///< the analysis of the open database has arrived
    QLineEdit *m_text;
    std::optional<diode::GemmProblem> m_problem; ///< the tables' problem filter (linked selection)
    QWidget *m_problemChip;
    QLabel *m_problemLabel;
    bool m_heatChosen = false; ///< the user chose the heatmap's op or dtype
    QTimer *m_textDelay;
    QTabWidget *m_tabs;
    HeatmapView *m_heatmap;
    QComboBox *m_heatOp;
    QComboBox *m_heatDtype;
    RooflineView *m_roofline;
    QComboBox *m_roofDtype;
    QDoubleSpinBox *m_peakTflops;
    QDoubleSpinBox *m_peakBandwidth;
    QLabel *m_peakSource;
};
