#pragma once

#include <qcustomplot.h>

class PlotTitle;

/// One named curve of a CurvePlot.
struct Curve {
    QString name;
    QVector<double> x, y;
    Qt::PenStyle style = Qt::SolidLine;
    QColor colour; ///< what the curve is (seriescolours.h); invalid: the plot's k-th palette colour
};

/// Named step curves on linear axes: the residual histogram and the efficiency CDFs of the
/// Validate page. Only draws what it is handed.
class CurvePlot : public QCustomPlot {
    Q_OBJECT
public:
    explicit CurvePlot(const QString &xLabel, const QString &yLabel, QWidget *parent = nullptr);
    /// `step`: lsStepCenter for histograms, lsStepLeft for CDFs.
    void setCurves(const QString &title, const QVector<Curve> &curves, QCPGraph::LineStyle step);
    /// No curves: `sentence` says why instead of empty axes.
    void showMessage(const QString &sentence);
    /// Keeps the y axis at [lo, hi] (a share: 0 to 1) instead of fitting it to the curves.
    void setFixedYRange(double lo, double hi);
    /// Keeps the x axis at [lo, hi] instead of fitting it to the curves (a histogram with clamped
    /// end bins: margin beyond them, so they do not sit on the border).
    void setFixedXRange(double lo, double hi);
    /// A logarithmic x axis, for values that span decades.
    void setLogX();

protected:
    void changeEvent(QEvent *event) override;

private:
    PlotTitle *m_title;
    QCPRange m_fixedY{0, 0}, m_fixedX{0, 0};
};
