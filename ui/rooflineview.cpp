#include "rooflineview.h"

#include "exportactions.h"

#include <algorithm>

RooflineView::RooflineView(QWidget *parent)
    : QCustomPlot(parent)
    , m_points(addGraph())
    , m_roof(addGraph())
    , m_title(
          new QCPTextElement(this, QString(), QFont(font().family(), font().pointSize() + 1, QFont::Bold))) {
    plotLayout()->insertRow(0);
    plotLayout()->addElement(0, 0, m_title);
    QSharedPointer<QCPAxisTickerLog> logTicker(new QCPAxisTickerLog);
    for (QCPAxis *axis : {xAxis, yAxis}) {
        axis->setScaleType(QCPAxis::stLogarithmic);
        axis->setTicker(logTicker);
        axis->setNumberFormat(QStringLiteral("eb"));
        axis->setNumberPrecision(0);
    }
    xAxis->setLabel(tr("arithmetic intensity (FLOP/byte, operands read once)"));
    yAxis->setLabel(tr("achieved TFLOP/s (best kernel)"));
    m_points->setName(tr("problems"));
    m_points->setLineStyle(QCPGraph::lsNone);
    m_points->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(31, 119, 180, 170), 5));
    m_roof->setName(tr("roofline"));
    m_roof->setPen(QPen(QColor(214, 39, 40), 2));
    legend->setVisible(true);
    axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignRight);
    applyPalette(this);
    m_title->setTextColor(palette().color(QPalette::WindowText));
    addPlotExport(this, QStringLiteral("roofline"));
}

void RooflineView::setPoints(const std::vector<diode::ProblemBest> &points, double peakTflops,
                             double bandwidthTBs, const QString &title) {
    m_title->setText(title);
    QVector<double> x, y;
    double lo = 1, hi = 1000, top = std::max(peakTflops, 1e-3), bottom = top;
    for (const auto &p : points) {
        x << p.intensity();
        y << p.tflops();
    }
    if (!x.isEmpty()) {
        lo = *std::min_element(x.begin(), x.end());
        hi = *std::max_element(x.begin(), x.end());
        top = std::max(top, *std::max_element(y.begin(), y.end()));
        bottom = *std::min_element(y.begin(), y.end());
    }
    m_points->setData(x, y);
    lo = std::max(lo / 2, 1e-3);
    hi = hi * 2;
    // The roof: bandwidth-bound (TB/s × FLOP/byte = TFLOP/s) until the ridge, compute-bound after.
    QVector<double> rx, ry;
    if (peakTflops > 0 && bandwidthTBs > 0) {
        const double ridge = peakTflops / bandwidthTBs;
        lo = std::min(lo, ridge / 100);
        hi = std::max(hi, ridge * 4);
        rx << lo << ridge << hi;
        ry << bandwidthTBs * lo << peakTflops << peakTflops;
        bottom = std::min(bottom, bandwidthTBs * lo);
        m_roof->setName(tr("roof: %1 TFLOP/s, %2 TB/s (ridge %3 FLOP/B)")
                            .arg(peakTflops, 0, 'f', 1)
                            .arg(bandwidthTBs, 0, 'f', 2)
                            .arg(ridge, 0, 'f', 0));
    }
    m_roof->setData(rx, ry);
    xAxis->setRange(lo, hi);
    yAxis->setRange(std::max(bottom / 2, 1e-6), top * 2);
    redraw();
}
