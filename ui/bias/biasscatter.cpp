#include "bias/biasscatter.h"

#include "common/exportactions.h"
#include "common/plottitle.h"

#include <algorithm>
#include <cmath>

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
    clearPoints();
}

void BiasScatter::clearPoints() {
    m_aten->data()->clear();
    m_triton->data()->clear();
    m_aten->setName(tr("ATen"));
    m_triton->setName(tr("Triton"));
    m_title->setText(QString());
    replot();
}

void BiasScatter::setPoints(const std::vector<diode::BiasPoint> &points, const QString &method,
                            std::optional<double> atenInflation, std::optional<double> tritonInflation) {
    QVector<QCPGraphData> aten, triton;
    double lo = INFINITY, hi = 0;
    for (const auto &p : points) {
        const double x = p.graphMs * 1000, y = p.inductorMs * 1000;
        (p.aten ? aten : triton).push_back({x, y});
        lo = std::min({lo, x, y});
        hi = std::max({hi, x, y});
    }
    auto byKey = [](const QCPGraphData &a, const QCPGraphData &b) { return a.key < b.key; };
    std::sort(aten.begin(), aten.end(), byKey);
    std::sort(triton.begin(), triton.end(), byKey);
    m_aten->data()->set(aten, true);
    m_triton->data()->set(triton, true);
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
