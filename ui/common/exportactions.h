#pragma once

#include <QString>
#include <QVector>

class QAbstractItemModel;
class QCPAxis;
class QCPGraph;
class QCPGraphData;
class QCustomPlot;
class QTableView;
class QWidget;

// Every plot exports to PNG and PDF and every table to CSV, the same way on every page.

/// Adds "Save plot as PNG…/PDF…" to the plot's context menu, and the interactions every plot has
/// (PlotView: wheel zoom, drag, "Reset view" on a double-click, tooltips).
void addPlotExport(QCustomPlot *plot, const QString &baseName);
/// Adds "Save table as CSV…" to the view's context menu.
void addTableExport(QTableView *view, const QString &baseName);
/// Writes every row of `model` (display role, with the horizontal header) as CSV. Returns an
/// empty string on success, otherwise the reason naming the file.
QString saveModelCsv(const QAbstractItemModel *model, const QString &path);
/// Says that a file was saved, and where (`what`, a sentence naming it): in the window's status
/// bar, or a message box for a widget shown without the main window. A save nobody sees happen
/// looks like nothing happened.
void reportSaved(QWidget *from, const QString &what);
/// Colours a plot (axes, legend, titles) from the widget's palette so light and dark system themes
/// both read well.
void applyPalette(QCustomPlot *plot);
/// The legend in a row of its own under the axes (`columns` entries a row; 0: one row), where it
/// never hides a curve or a bar.
void legendBelowAxes(QCustomPlot *plot, int columns);
/// A graph that rings points on top of the others (the problem selected on another page), not in
/// the legend until it has points; the caller sets its data and name.
QCPGraph *addRingGraph(QCustomPlot *plot);
/// Rings `points` (any order) on `ring`, named "`name` (ringed)" in the legend; none: no ring, no entry.
void showRing(QCPGraph *ring, QVector<QCPGraphData> points, const QString &name);
/// Makes `axis` logarithmic with ticks at whole decades; its tick labels in `format` with
/// `precision` digits (QCPAxis::setNumberFormat, setNumberPrecision) where given.
void setLogScale(QCPAxis *axis, const QString &format = {}, int precision = -1);
