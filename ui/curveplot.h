#pragma once

#include <qcustomplot.h>

/// One named curve of a CurvePlot.
struct Curve {
    QString name;
    QVector<double> x, y;
    Qt::PenStyle style = Qt::SolidLine;
};

/// Named step curves on linear axes: the residual histogram and the efficiency CDFs of the
/// Validate page. Only draws what it is handed.
class CurvePlot : public QCustomPlot {
    Q_OBJECT
public:
    explicit CurvePlot(const QString &xLabel, const QString &yLabel, QWidget *parent = nullptr);
    /// `step`: lsStepCenter for histograms, lsStepLeft for CDFs.
    void setCurves(const QString &title, const QVector<Curve> &curves, QCPGraph::LineStyle step);

protected:
    void changeEvent(QEvent *event) override;

private:
    QCPTextElement *m_title;
};
