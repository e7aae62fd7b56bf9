#pragma once

#include <QHash>
#include <QMap>
#include <QObject>
#include <QPointF>
#include <QString>
#include <QStringList>

#include <functional>

class QCPAbstractPlottable;
class QCPAxis;
class QCPRange;
class QCustomPlot;
class QTimer;

/// What every plot of the workbench does with the mouse, as Nsight's and TensorBoard's plots do:
/// the wheel zooms, a drag pans, a double-click or "Reset view" (its context menu) goes back to
/// the view the data was drawn at, and the point, bar or cell under the mouse is named in a
/// tooltip. Made for a plot by addPlotExport (exportactions.h), so no plot is without it.
///
/// The view the data was drawn at ("home") is what the plot showed before the user zoomed or
/// panned; a plot that sets its ranges for new data makes those the home again. A plot that grows
/// live (a sweep's points, a training run's epochs) hands its ranges to showRange(), which keeps
/// the user's zoom while data arrives.
class PlotView : public QObject {
    Q_OBJECT
public:
    /// The tooltip of data point `index` of `plottable` (the index into its data container, as
    /// QCustomPlot's selection gives it; for a colour map, cell (x, y) as y * keySize + x); empty:
    /// the default text.
    using Tip = std::function<QString(QCPAbstractPlottable *plottable, int index)>;

    /// The PlotView of `plot`, made on first use.
    static PlotView *of(QCustomPlot *plot);

    /// The data's view for `axis` is `range`: applied unless the user moved the view; Reset goes
    /// back to it.
    void showRange(QCPAxis *axis, const QCPRange &range);
    /// Whether the user zoomed or panned since the data's view was last set.
    bool moved() const { return m_moved; }
    /// Back to the data's view.
    void reset();
    /// A richer tooltip than the default ("series: x label = …, y label = …").
    void setTip(Tip tip) { m_tip = std::move(tip); }
    /// Tooltips written ahead: `(*tips)[plottable][index]` (bar charts, whose bars carry a sentence
    /// each); `tips` outlives the plot's use of it (the plot's own member).
    void setTips(const QHash<const QCPAbstractPlottable *, QStringList> *tips);
    /// Zoom and drag the value axis only (a bar chart's categories stay put).
    void zoomValuesOnly();
    /// No tooltips (a plot that shows its own).
    void disableTips() { m_tipsOn = false; }
    /// The tooltip for the mouse at `pos` (plot pixels): the nearest point within a few pixels, the
    /// bar or the cell under it; empty where there is none.
    QString tipAt(const QPointF &pos) const;

private:
    explicit PlotView(QCustomPlot *plot);
    QMap<QCPAxis *, QPair<double, double>> ranges() const;
    void afterReplot();
    void showTip();

    QCustomPlot *m_plot;
    QMap<QCPAxis *, QPair<double, double>> m_home, m_userView;
    bool m_moved = false;     ///< the view is the user's, not the data's
    bool m_userEvent = false; ///< a wheel or drag changed the view since the last replot
    bool m_tipsOn = true;
    Tip m_tip;
    QTimer *m_tipDelay;
    QPointF m_tipPos;
};
