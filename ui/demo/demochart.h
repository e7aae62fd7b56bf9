#pragma once

#include <qcustomplot.h>

class PlotTitle;

/// Bars of one quantity (compile time or kernel time) per case and mode, on a log axis, each
/// labelled with its speed-up against the reference mode (log axis for times, linear for ratios).
/// Only draws what it is handed.
class DemoChart : public QCustomPlot {
    Q_OBJECT
public:
    explicit DemoChart(QWidget *parent = nullptr);
    /// values[case][mode]: NaN where the mode has no number; labels likewise ("12.3×").
    void setBars(const QString &title, const QString &yLabel, const QStringList &cases,
                 const QStringList &modes, const QVector<QVector<double>> &values,
                 const QVector<QVector<QString>> &labels, bool logScale = true);

protected:
    void changeEvent(QEvent *event) override;

private:
    PlotTitle *m_title;
};
