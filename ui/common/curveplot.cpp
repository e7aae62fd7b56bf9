#include "common/curveplot.h"

#include "common/exportactions.h"
#include "common/plotmessage.h"
#include "common/plottitle.h"
#include "common/seriescolours.h"

CurvePlot::CurvePlot(const QString &xLabel, const QString &yLabel, QWidget *parent)
    : QCustomPlot(parent)
    , m_title(new PlotTitle(this)) {
    xAxis->setLabel(xLabel);
    yAxis->setLabel(yLabel);
    // The legend below the axes in two columns, not inside them: there it hid the curves it named
    // (the Validate CDF's max-autotune and plain torch.compile lines).
    legendBelowAxes(this, 2);
    legend->setMargins(QMargins(6, 2, 6, 2));
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    applyPalette(this);
}

void CurvePlot::showMessage(const QString &sentence) {
    clearGraphs();
    m_title->setText(QString());
    setPlotMessage(this, sentence);
    replot();
}

void CurvePlot::setFixedYRange(double lo, double hi) {
    m_fixedY = QCPRange(lo, hi);
}

void CurvePlot::setFixedXRange(double lo, double hi) {
    m_fixedX = QCPRange(lo, hi);
}

void CurvePlot::setLogX() {
    setLogScale(xAxis, QStringLiteral("gb"), 3);
}

void CurvePlot::setCurves(const QString &title, const QVector<Curve> &curves, QCPGraph::LineStyle step) {
    if (curves.isEmpty())
        return showMessage(title);
    setPlotMessage(this, QString());
    clearGraphs();
    m_title->setText(title);
    for (int i = 0; i < curves.size(); ++i) {
        QCPGraph *g = addGraph();
        g->setName(curves[i].name);
        g->setLineStyle(step);
        const QColor c = curves[i].colour.isValid() ? curves[i].colour : paletteColour(i);
        g->setPen(QPen(c, 2, curves[i].style));
        g->setData(curves[i].x, curves[i].y, true);
    }
    rescaleAxes();
    if (m_fixedX.size() > 0)
        xAxis->setRange(m_fixedX);
    if (m_fixedY.size() > 0)
        yAxis->setRange(m_fixedY);
    else
        yAxis->setRangeLower(0);
    replot();
}

void CurvePlot::changeEvent(QEvent *event) {
    QCustomPlot::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        applyPalette(this);
        replot();
    }
}
