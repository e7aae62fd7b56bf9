#include "validate/predictionscatter.h"

#include "common/exportactions.h"
#include "common/plottitle.h"
#include "common/plotview.h"

#include <algorithm>
#include <cmath>

namespace {

constexpr double kPickPixels = 6;

} // namespace

PredictionScatter::PredictionScatter(QWidget *parent)
    : QCustomPlot(parent)
    , m_title(new PlotTitle(this)) {
    for (QCPAxis *axis : {xAxis, yAxis})
        setLogScale(axis, QStringLiteral("eb"), 0);
    xAxis->setLabel(tr("measured (ms)"));
    yAxis->setLabel(tr("predicted (ms)"));
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    legend->setVisible(true);
    axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    auto *identity = new QCPItemStraightLine(this);
    identity->point1->setCoords(1e-3, 1e-3);
    identity->point2->setCoords(1, 1);
    identity->setPen(QPen(palette().color(QPalette::WindowText), 1, Qt::DashLine));
    setNoAntialiasingOnDrag(true);
    connect(xAxis, qOverload<const QCPRange &>(&QCPAxis::rangeChanged), this,
            &PredictionScatter::sampleVisible);
    setMouseTracking(true);
    applyPalette(this);
    PlotView::of(this)->disableTips(); // its own: the problem and config of the candidate (pointHovered)
}

void PredictionScatter::clearPoints(const QString &message) {
    clearGraphs();
    m_groupGraphs.clear();
    m_groups.clear();
    m_title->setText(message);
    replot();
}

void PredictionScatter::setGroups(const QString &title, std::vector<ScatterGroup> groups) {
    clearGraphs();
    m_groupGraphs.clear();
    m_groups = std::move(groups);
    m_baseTitle = title;
    m_title->setText(title);
    double lo = INFINITY, hi = 0;
    for (size_t g = 0; g < m_groups.size(); ++g) {
        QCPGraph *graph = addGraph();
        m_groupGraphs << graph;
        graph->setName(m_groups[g].name);
        graph->setLineStyle(QCPGraph::lsNone);
        QColor c = m_groups[g].colour;
        c.setAlpha(m_groups[g].points.size() > 20000 ? 90 : 170);
        // A pre-drawn disc blitted per point: QPainter::drawEllipse per point cost ~2 us.
        QPixmap disc(5, 5);
        disc.fill(Qt::transparent);
        {
            QPainter p(&disc);
            p.setRenderHint(QPainter::Antialiasing);
            p.setPen(Qt::NoPen);
            p.setBrush(c);
            p.drawEllipse(QRectF(0.5, 0.5, 4, 4));
        }
        graph->setScatterStyle(QCPScatterStyle(disc));
        graph->setAdaptiveSampling(false); // sampleVisible() bounds what is drawn
        graph->setAntialiasedScatters(false);
        for (const auto &p : m_groups[g].points) { // already sorted: only the ends matter for x
            lo = std::min({lo, p.key, p.value});
            hi = std::max({hi, p.key, p.value});
        }
    }
    if (hi > 0) {
        yAxis->setRange(lo / 1.5, hi * 1.5);
        xAxis->setRange(lo / 1.5, hi * 1.5); // samples what is in view
    }
    sampleVisible();
    replot();
}

void PredictionScatter::sampleVisible() {
    if (m_groupGraphs.size() != qsizetype(m_groups.size()))
        return;
    const QCPRange r = xAxis->range();
    auto cmp = [](const QCPGraphData &d, double k) { return d.key < k; };
    std::vector<std::pair<qsizetype, qsizetype>> spans;
    size_t inView = 0;
    for (const auto &g : m_groups) {
        const auto first = std::lower_bound(g.points.cbegin(), g.points.cend(), r.lower, cmp);
        const auto last = std::lower_bound(first, g.points.cend(), r.upper, cmp);
        spans.emplace_back(first - g.points.cbegin(), last - g.points.cbegin());
        inView += size_t(last - first);
    }
    const qsizetype stride = qsizetype((inView + kDrawBudget - 1) / kDrawBudget);
    for (size_t g = 0; g < m_groups.size(); ++g) {
        QVector<QCPGraphData> shown;
        const auto [first, last] = spans[g];
        if (stride <= 1) {
            shown = m_groups[g].points.mid(first, last - first);
        } else {
            shown.reserve((last - first) / stride + 1);
            for (qsizetype i = first; i < last; i += stride)
                shown.push_back(m_groups[g].points[i]);
        }
        m_groupGraphs[qsizetype(g)]->data()->set(shown, true);
    }
    m_title->setText(
        stride > 1
            ? tr("%1 (drawing 1 in %2 of the %L3 points in view)").arg(m_baseTitle).arg(stride).arg(inView)
            : m_baseTitle);
}

qint64 PredictionScatter::candidateAt(const QPointF &pos) const {
    double best = kPickPixels * kPickPixels;
    qint64 found = -1;
    const double kLo = xAxis->pixelToCoord(pos.x() - kPickPixels),
                 kHi = xAxis->pixelToCoord(pos.x() + kPickPixels);
    for (const auto &g : m_groups) {
        auto cmp = [](const QCPGraphData &d, double k) { return d.key < k; };
        auto it = std::lower_bound(g.points.cbegin(), g.points.cend(), std::min(kLo, kHi), cmp);
        for (; it != g.points.cend() && it->key <= std::max(kLo, kHi); ++it) {
            const double dx = xAxis->coordToPixel(it->key) - pos.x(),
                         dy = yAxis->coordToPixel(it->value) - pos.y();
            if (dx * dx + dy * dy < best) {
                best = dx * dx + dy * dy;
                found = g.candidates[size_t(it - g.points.cbegin())];
            }
        }
    }
    return found;
}

void PredictionScatter::mouseMoveEvent(QMouseEvent *event) {
    QCustomPlot::mouseMoveEvent(event);
    if (event->buttons() != Qt::NoButton)
        return; // dragging
    const qint64 c = candidateAt(event->position());
    if (c >= 0)
        emit pointHovered(c, event->globalPosition().toPoint());
}

void PredictionScatter::mousePressEvent(QMouseEvent *event) {
    m_pressPos = event->pos();
    QCustomPlot::mousePressEvent(event);
}

void PredictionScatter::mouseReleaseEvent(QMouseEvent *event) {
    QCustomPlot::mouseReleaseEvent(event);
    if (event->button() != Qt::LeftButton || (event->pos() - m_pressPos).manhattanLength() > 3)
        return; // a drag
    const qint64 c = candidateAt(event->position());
    if (c >= 0)
        emit pointClicked(c);
}

void PredictionScatter::setHighlight(QVector<QCPGraphData> points, const QString &name) {
    if (!m_ring) // made again after clearGraphs() deleted it
        m_ring = addRingGraph(this);
    showRing(m_ring, std::move(points), name);
    replot();
}

int PredictionScatter::highlighted() const {
    return m_ring ? m_ring->dataCount() : 0;
}

void PredictionScatter::changeEvent(QEvent *event) {
    QCustomPlot::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) { // the system switched light/dark
        applyPalette(this);
        replot();
    }
}
