#include "bias/biasscatter.h"

#include "common/configlabel.h"
#include "common/exportactions.h"
#include "common/plottitle.h"
#include "common/plotview.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace {

const QColor kAten(214, 39, 40);    // red: the group Inductor over-reports most
const QColor kTriton(31, 119, 180); // blue

QCPScatterStyle disc(QColor c) {
    c.setAlpha(170);
    return QCPScatterStyle(QCPScatterStyle::ssDisc, c, c, 6);
}

QString legendName(const QString &kind, int n, std::optional<double> inflation) {
    const QString over =
        inflation ? QObject::tr(", Inductor/graph %1× (geomean)").arg(*inflation, 0, 'f', 2) : QString();
    return QObject::tr("%1 (%L2)%3").arg(kind).arg(n).arg(over);
}

} // namespace

BiasScatter::BiasScatter(QWidget *parent)
    : QCustomPlot(parent)
    , m_title(new PlotTitle(this))
    , m_aten(addGraph())
    , m_triton(addGraph())
    , m_ring(addRingGraph(this))
    , m_identity(new QCPItemStraightLine(this)) {
    for (QCPAxis *axis : {xAxis, yAxis})
        setLogScale(axis);
    xAxis->setLabel(tr("in-graph time (µs)"));
    yAxis->setLabel(tr("Inductor's autotune time (µs)"));
    for (QCPGraph *g : {m_aten, m_triton})
        g->setLineStyle(QCPGraph::lsNone);
    m_aten->setScatterStyle(disc(kAten));
    m_triton->setScatterStyle(disc(kTriton));
    m_identity->point1->setCoords(1, 1);
    m_identity->point2->setCoords(10, 10);
    m_identity->setPen(QPen(palette().color(QPalette::WindowText), 1, Qt::DashLine));
    legend->setVisible(true);
    axisRect()->insetLayout()->setInsetAlignment(
        0, Qt::AlignBottom | Qt::AlignRight); // below the identity line: where few points sit
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    applyPalette(this);
    addPlotExport(this, QStringLiteral("inductor-vs-graph"));
    PlotView::of(this)->setTip([this](QCPAbstractPlottable *g, int i) -> QString {
        const diode::BiasPoint *p = pointAt(g, i);
        if (!p)
            return {};
        return tr("<b>%1</b><br>%2 (%3)<br>in graph %4 µs, Inductor's benchmark %5 µs (%6×)")
            .arg(size_t(p->problem) < m_problemLabels.size()
                     ? m_problemLabels[size_t(p->problem)].toHtmlEscaped()
                     : QString())
            .arg(configLabel(p->config).toHtmlEscaped(), p->aten ? tr("ATen") : tr("Triton"))
            .arg(p->graphMs * 1000, 0, 'g', 4)
            .arg(p->inductorMs * 1000, 0, 'g', 4)
            .arg(p->inductorMs / p->graphMs, 0, 'f', 2);
    });
    clearPoints();
}

const diode::BiasPoint *BiasScatter::pointAt(const QCPAbstractPlottable *g, int i) const {
    const std::vector<size_t> *order = g == m_aten ? &m_atenOrder : g == m_triton ? &m_tritonOrder : nullptr;
    if (!order || i < 0 || size_t(i) >= order->size())
        return nullptr;
    return &m_points[(*order)[size_t(i)]];
}

void BiasScatter::setHighlight(int problem) {
    QVector<QCPGraphData> ring;
    for (const auto &p : m_points)
        if (p.problem == problem)
            ring.append({p.graphMs * 1000, p.inductorMs * 1000});
    showRing(m_ring, ring,
             size_t(problem) < m_problemLabels.size() ? m_problemLabels[size_t(problem)] : QString());
    replot();
}

int BiasScatter::highlighted() const {
    return m_ring->dataCount();
}

void BiasScatter::mousePressEvent(QMouseEvent *event) {
    m_pressPos = event->pos();
    QCustomPlot::mousePressEvent(event);
}

void BiasScatter::mouseReleaseEvent(QMouseEvent *event) {
    QCustomPlot::mouseReleaseEvent(event);
    if (event->button() != Qt::LeftButton || (event->pos() - m_pressPos).manhattanLength() > 3)
        return; // a drag
    for (QCPGraph *g : {m_aten, m_triton}) {
        QVariant details;
        const double d = g->selectTest(event->position(), false, &details);
        if (d < 0 || d > selectionTolerance())
            continue;
        if (const auto *p = pointAt(g, details.value<QCPDataSelection>().dataRange().begin())) {
            emit problemClicked(p->problem);
            return;
        }
    }
}

void BiasScatter::clearPoints() {
    m_points.clear();
    m_atenOrder.clear();
    m_tritonOrder.clear();
    m_aten->data()->clear();
    m_triton->data()->clear();
    m_ring->data()->clear();
    m_ring->removeFromLegend();
    m_aten->setName(tr("ATen"));
    m_triton->setName(tr("Triton"));
    m_title->setText(QString());
    replot();
}

void BiasScatter::setPoints(const std::vector<diode::BiasPoint> &points, const QString &method,
                            std::optional<double> atenInflation, std::optional<double> tritonInflation,
                            std::vector<QString> labels) {
    m_points = points;
    m_problemLabels = std::move(labels);
    m_atenOrder.clear();
    m_tritonOrder.clear();
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < m_points.size(); ++i) {
        const auto &p = m_points[i];
        (p.aten ? m_atenOrder : m_tritonOrder).push_back(i);
        lo = std::min({lo, p.graphMs * 1000, p.inductorMs * 1000});
        hi = std::max({hi, p.graphMs * 1000, p.inductorMs * 1000});
    }
    // Each graph's points in key order, and the order kept: a tooltip's data index finds its point.
    auto byKey = [this](size_t a, size_t b) { return m_points[a].graphMs < m_points[b].graphMs; };
    std::stable_sort(m_atenOrder.begin(), m_atenOrder.end(), byKey);
    std::stable_sort(m_tritonOrder.begin(), m_tritonOrder.end(), byKey);
    auto data = [this](const std::vector<size_t> &order) {
        QVector<QCPGraphData> out;
        out.reserve(qsizetype(order.size()));
        for (size_t i : order)
            out.push_back({m_points[i].graphMs * 1000, m_points[i].inductorMs * 1000});
        return out;
    };
    const auto aten = data(m_atenOrder), triton = data(m_tritonOrder);
    m_aten->data()->set(aten, true);
    m_triton->data()->set(triton, true);
    m_ring->data()->clear();
    m_ring->removeFromLegend();
    m_aten->setName(legendName(tr("ATen"), int(aten.size()), atenInflation));
    m_triton->setName(legendName(tr("Triton"), int(triton.size()), tritonInflation));
    m_title->setText(
        tr("Inductor's benchmark against %1 time: above the dashed line, Inductor over-reports").arg(method));
    if (hi > 0) {
        xAxis->setRange(lo / 1.5, hi * 1.5);
        yAxis->setRange(lo / 1.5, hi * 1.5);
    }
    replot();
}
