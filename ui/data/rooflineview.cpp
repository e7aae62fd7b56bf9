#include "data/rooflineview.h"

#include "common/exportactions.h"
#include "common/flopunit.h"
#include "common/plotmessage.h"
#include "common/plottitle.h"
#include "common/plotview.h"

#include <algorithm>
#include <cmath>

RooflineView::RooflineView(QWidget *parent)
    : LazyPlot(parent)
    , m_points(addGraph())
    , m_roof(addGraph())
    , m_ring(addRingGraph(this))
    , m_title(new PlotTitle(this, 1)) {
    for (QCPAxis *axis : {xAxis, yAxis})
        setLogScale(axis, QStringLiteral("eb"), 0);
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
    addPlotExport(this, QStringLiteral("roofline"));
    PlotView::of(this)->setTip([this](QCPAbstractPlottable *g, int i) -> QString {
        if (g != m_points || i < 0 || size_t(i) >= m_shown.size())
            return {};
        const auto &p = m_shown[size_t(i)];
        return tr("<b>%1</b><br>run %2: %3 FLOP/byte, %4 %5")
            .arg(QString::fromStdString(p.problem.label()).toHtmlEscaped())
            .arg(p.runId)
            .arg(p.intensity(), 0, 'g', 4)
            .arg(p.tflops() * m_scale, 0, 'g', 4)
            .arg(yAxis->label().section(QLatin1Char(' '), 1, 1));
    });
}

void RooflineView::setHighlight(const QString &label) {
    QVector<QCPGraphData> ring;
    for (const auto &p : m_shown)
        if (QString::fromStdString(p.problem.label()) == label)
            ring.append({p.intensity(), p.tflops() * m_scale});
    showRing(m_ring, ring, label);
    redraw();
}

int RooflineView::highlighted() const {
    return m_ring->dataCount();
}

namespace {

// Whole decades around [lo, hi], at least one: a log axis labelled at powers of ten only, never
// the same rounded label twice.
QCPRange decades(double lo, double hi) {
    const double a = std::floor(std::log10(lo)), b = std::max(std::ceil(std::log10(hi)), a + 1);
    return QCPRange(std::pow(10.0, a), std::pow(10.0, b));
}

} // namespace

void RooflineView::setPoints(const std::vector<diode::ProblemBest> &points, double peakTflops,
                             double bandwidthTBs, const QString &title) {
    m_ring->data()->clear();
    m_ring->removeFromLegend();
    m_shown.clear();
    if (points.empty()) {
        m_title->setText(QString());
        m_points->data()->clear();
        m_roof->data()->clear();
        setPlotMessage(
            this, tr("No successful measurements to place under a roof in this selection (%1).").arg(title));
        redraw();
        return;
    }
    setPlotMessage(this, QString());
    // In key order, kept: a tooltip's data index is an index into m_shown.
    m_shown = points;
    std::stable_sort(m_shown.begin(), m_shown.end(),
                     [](const diode::ProblemBest &a, const diode::ProblemBest &b) {
                         return a.intensity() < b.intensity();
                     });
    QVector<double> x, y;
    for (const auto &p : m_shown) {
        x << p.intensity();
        y << p.tflops();
    }
    double lo = *std::min_element(x.begin(), x.end()), hi = *std::max_element(x.begin(), x.end());
    const bool roof = peakTflops > 0 && bandwidthTBs > 0;
    const FlopUnit unit =
        FlopUnit::forLargest(std::max(*std::max_element(y.begin(), y.end()), roof ? peakTflops : 0.0));
    m_scale = unit.scale;
    for (double &v : y)
        v *= unit.scale;
    yAxis->setLabel(tr("achieved %1 (best kernel)").arg(unit.name));
    double bottom = *std::min_element(y.begin(), y.end()), top = *std::max_element(y.begin(), y.end());
    m_points->setData(x, y, true);
    // The roof: bandwidth-bound (TB/s × FLOP/byte = TFLOP/s, in the plot's unit) until the ridge,
    // compute-bound after.
    // Without both peaks there is no roof to draw, and the legend must not promise one.
    QVector<double> rx, ry;
    if (roof) {
        const double ridge = peakTflops / bandwidthTBs;
        lo = std::min(lo, ridge / 100);
        hi = std::max(hi, ridge * 4);
        const QCPRange xr = decades(std::max(lo / 2, 1e-3), hi * 2);
        const double peak = peakTflops * unit.scale, bandwidth = bandwidthTBs * unit.scale;
        rx << xr.lower << ridge << xr.upper;
        ry << bandwidth * xr.lower << peak << peak;
        bottom = std::min(bottom, bandwidth * xr.lower);
        top = std::max(top, peak);
        m_roof->setName(tr("roof: %1 %2, %3 TB/s (ridge %4 FLOP/B)")
                            .arg(peak, 0, 'f', 1)
                            .arg(unit.name)
                            .arg(bandwidthTBs, 0, 'f', 2)
                            .arg(ridge, 0, 'f', 0));
        m_roof->addToLegend();
        m_title->setText(title);
    } else {
        m_roof->removeFromLegend();
        m_title->setText(
            tr("%1 (no roof: no peak compute and bandwidth for this hardware; set them above)").arg(title));
    }
    m_roof->setData(rx, ry);
    xAxis->setRange(decades(std::max(lo / 2, 1e-3), hi * 2));
    yAxis->setRange(decades(std::max(bottom / 2, 1e-6), top * 2));
    redraw();
}
