#include "sweep/throughputplot.h"

#include "common/exportactions.h"
#include "common/plotmessage.h"
#include "common/plotview.h"
#include "common/seriescolours.h"

#include <algorithm>

namespace {

template <typename P> void insertSorted(std::vector<P> &points, P point) {
    const auto at = std::upper_bound(points.begin(), points.end(), point,
                                     [](const auto &a, const auto &b) { return a.gflop < b.gflop; });
    points.insert(at, std::move(point));
}

} // namespace

ThroughputPlot::ThroughputPlot(QWidget *parent)
    : LazyPlot(parent) {
    for (int i = 0; i < 3; ++i) {
        const auto dtype = diode::DType(i);
        m_graphs[i] = addGraph();
        m_graphs[i]->setName(QString::fromUtf8(diode::toString(dtype).data()));
        m_graphs[i]->setLineStyle(QCPGraph::lsNone);
        m_graphs[i]->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, dtypeColour(dtype), 6));
    }
    // The run compared with: grey rings, after the dtypes (graph(0) is bf16's), drawn under them.
    m_overlayGraph = addGraph();
    m_overlayGraph->setLineStyle(QCPGraph::lsNone);
    m_overlayGraph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QColor(140, 140, 140), 6));
    m_overlayGraph->removeFromLegend();
    m_overlayGraph->setLayer(QStringLiteral("grid")); // under the run under way
    setLogScale(xAxis, QStringLiteral("gb"));
    xAxis->setLabel(tr("problem size (GFLOP = 2·B·M·N·K / 1e9)"));
    legend->setVisible(true);
    axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    applyPalette(this);
    addPlotExport(this, QStringLiteral("sweep-throughput"));
    PlotView::of(this)->setTip([this](QCPAbstractPlottable *p, int i) -> QString {
        const std::vector<Point> *points = p == m_overlayGraph ? &m_overlay : nullptr;
        for (int d = 0; d < 3; ++d)
            if (p == m_graphs[d])
                points = &m_live[d];
        if (!points || i < 0 || size_t(i) >= points->size())
            return {};
        const Point &pt = (*points)[size_t(i)];
        return tr("<b>%1</b><br>%2<br>%3 GFLOP, best %4 %5")
            .arg(pt.label.toHtmlEscaped(), p->name().toHtmlEscaped())
            .arg(pt.gflop, 0, 'g', 4)
            .arg(pt.tflops * m_unit.scale, 0, 'g', 4)
            .arg(m_unit.name);
    });
    clear(tr("No sweep has run yet."));
}

void ThroughputPlot::addResult(const ProblemResult &r) {
    if (!r.ok || r.bestMs <= 0)
        return;
    insertSorted(m_live[int(r.problem.dtype)],
                 Point{r.problem.flops() / 1e9, r.tflops(), QString::fromStdString(r.problem.label())});
    ++m_points;
    rebuild();
}

void ThroughputPlot::clear(const QString &sentence) {
    for (auto &points : m_live)
        points.clear();
    m_points = 0;
    m_sentence = sentence;
    rebuild();
}

void ThroughputPlot::setOverlay(const QString &name, const std::vector<diode::ProblemBest> &best) {
    m_overlay.clear();
    for (const auto &b : best)
        insertSorted(m_overlay,
                     Point{b.problem.flops() / 1e9, b.tflops(), QString::fromStdString(b.problem.label())});
    m_overlayGraph->setName(name);
    if (m_overlay.empty())
        m_overlayGraph->removeFromLegend();
    else
        m_overlayGraph->addToLegend();
    rebuild();
}

// Every point again, in the unit of the largest rate shown: the points already drawn are rewritten
// when a faster one changes it (a cpu run's GFLOP/s beside a GPU run's TFLOP/s).
void ThroughputPlot::rebuild() {
    double top = 0;
    bool any = false;
    QCPRange x;
    auto extend = [&](const std::vector<Point> &points) {
        for (const Point &p : points) {
            top = std::max(top, p.tflops);
            x = any ? QCPRange(std::min(x.lower, p.gflop), std::max(x.upper, p.gflop))
                    : QCPRange(p.gflop, p.gflop);
            any = true;
        }
    };
    for (const auto &points : m_live)
        extend(points);
    extend(m_overlay);
    m_unit = FlopUnit::forLargest(top);
    yAxis->setLabel(tr("achieved %1 (best config)").arg(m_unit.name));
    auto fill = [this](QCPGraph *g, const std::vector<Point> &points) {
        QVector<QCPGraphData> data;
        data.reserve(qsizetype(points.size()));
        for (const Point &p : points)
            data.append({p.gflop, p.tflops * m_unit.scale});
        g->data()->set(data, true); // sorted: the tooltip's index is the vector's
    };
    for (int d = 0; d < 3; ++d)
        fill(m_graphs[d], m_live[d]);
    fill(m_overlayGraph, m_overlay);
    setPlotMessage(this, any ? QString() : m_sentence);
    // Points arrive while the user may be zooming into some: the view follows them unless moved.
    auto *view = PlotView::of(this);
    view->showRange(xAxis, any ? QCPRange(x.lower / 2, x.upper * 2) : QCPRange(1e-3, 1e3));
    view->showRange(yAxis, QCPRange(0, top > 0 ? top * m_unit.scale * 1.15 : 1));
    redraw(); // coalesced: a burst of results costs one repaint
}
