#pragma once

#include <qcustomplot.h>

#include <QHash>

#include <string>

class PlotTitle;

/// Bars of one quantity (compile time, step time, a speed-up) per case and mode, each labelled with
/// its speed-up against the reference mode, with the spread over processes as error bars where the
/// result has one. Times on a linear axis from zero (bars on a log axis make 155 µs and 140 µs look
/// the same); speed-ups as the caller asks. A mode without a bar is not in the legend. Hovering a bar
/// names its case, mode, value and spread. Only draws what it is handed.
class DemoChart : public QCustomPlot {
    Q_OBJECT
public:
    explicit DemoChart(QWidget *parent = nullptr);
    /// values[case][mode]: NaN where the mode has no number; labels likewise ("12.3×"); spreads
    /// likewise ([min, max], NaN where none).
    void setBars(const QString &title, const QString &yLabel, const QStringList &cases,
                 const QStringList &modes, const QVector<QVector<double>> &values,
                 const QVector<QVector<QString>> &labels, bool logScale = false,
                 const QVector<QVector<QPair<double, double>>> &spreads = {});
    /// The bars of `mode` (its title), or null where it has none.
    QCPBars *barsOf(const QString &mode);

protected:
    void changeEvent(QEvent *event) override;

private:
    PlotTitle *m_title;
    QHash<const QCPAbstractPlottable *, QStringList> m_tips; ///< per bar, in data order
};

/// The label of a bar of speed-ups or of times against a reference mode (DemoChart::setBars' labels):
/// " 1.05×" in core's digits (diode::speedupText: 0.012×, never 0.0×), " ref" on the reference's own
/// bar, "" where there is no number.
QString speedupBarLabel(double v, int decimals, const std::string &mode, const std::string &reference);
