#include "data/heatmapview.h"

#include "common/exportactions.h"
#include "common/flopunit.h"
#include "common/plotmessage.h"
#include "common/plottitle.h"
#include "common/plotview.h"

#include <algorithm>

HeatmapView::HeatmapView(QWidget *parent)
    : LazyPlot(parent)
    , m_map(new QCPColorMap(xAxis, yAxis))
    , m_scale(new QCPColorScale(this))
    , m_title(new PlotTitle(this, 1)) {
    plotLayout()->addElement(1, 1, m_scale);
    m_scale->setType(QCPAxis::atRight);
    m_scale->axis()->setLabel(tr("best TFLOP/s"));
    m_map->setColorScale(m_scale);
    // Viridis: dark to yellow, never near white, so the best cell cannot pass for an empty one;
    // empty bins are transparent and show the plot's background.
    QCPColorGradient gradient;
    gradient.clearColorStops();
    const QColor stops[] = {QColor(68, 1, 84), QColor(59, 82, 139), QColor(33, 145, 140), QColor(94, 201, 98),
                            QColor(253, 231, 37)};
    for (int i = 0; i < 5; ++i)
        gradient.setColorStopAt(i / 4.0, stops[i]);
    gradient.setColorInterpolation(QCPColorGradient::ciRGB);
    gradient.setNanHandling(QCPColorGradient::nhTransparent);
    m_map->setGradient(gradient);
    m_map->setInterpolate(false);
    auto *margins = new QCPMarginGroup(this);
    axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
    m_scale->setMarginGroup(QCP::msBottom | QCP::msTop, margins);
    xAxis->setLabel(tr("M (log2 bin: 2^k ≤ M < 2^(k+1))"));
    yAxis->setLabel(tr("N (log2 bin)"));
    for (QCPAxis *axis : {xAxis, yAxis}) {
        QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
        for (int k = 0; k <= 20; ++k)
            ticker->addTick(k, k < 10 ? QString::number(1 << k) : QStringLiteral("%1k").arg((1 << k) / 1024));
        axis->setTicker(ticker);
    }
    applyPalette(this);
    m_scale->axis()->setLabelColor(palette().color(QPalette::WindowText));
    m_scale->axis()->setTickLabelColor(palette().color(QPalette::WindowText));
    addPlotExport(this, QStringLiteral("heatmap"));
    PlotView::of(this)->setTip([this](QCPAbstractPlottable *, int index) -> QString {
        const int nx = m_map->data()->keySize();
        if (nx <= 0)
            return {};
        const int cx = index % nx, cy = index / nx;
        const double m = m_map->data()->keyRange().lower + cx, n = m_map->data()->valueRange().lower + cy;
        for (const auto &c : m_cells)
            if (c.log2M == int(m) && c.log2N == int(n))
                return tr("M %1–%2, N %3–%4<br>best %5 %6 over %7 problem lines")
                    .arg(1LL << c.log2M)
                    .arg((1LL << (c.log2M + 1)) - 1)
                    .arg(1LL << c.log2N)
                    .arg((1LL << (c.log2N + 1)) - 1)
                    .arg(c.tflops * m_unitScale, 0, 'g', 4)
                    .arg(m_unit)
                    .arg(c.problems);
        return {};
    });
}

void HeatmapView::setCells(const std::vector<diode::HeatCell> &cells, const QString &title) {
    m_cells = cells;
    if (cells.empty()) {
        m_title->setText(QString());
        m_map->data()->clear();
        m_map->setVisible(false);
        setPlotMessage(this, title);
        redraw();
        return;
    }
    setPlotMessage(this, QString());
    m_title->setText(title);
    int minM = cells[0].log2M, maxM = minM, minN = cells[0].log2N, maxN = minN;
    for (const auto &c : cells) {
        minM = std::min(minM, c.log2M);
        maxM = std::max(maxM, c.log2M);
        minN = std::min(minN, c.log2N);
        maxN = std::max(maxN, c.log2N);
    }
    // The axes show the cells there are; the map has at least two bins a side (an empty one
    // beyond), since QCustomPlot draws a one-bin side over a range of size 0: nothing (F8).
    // At least five bins a side in view: one bin alone filled the plot, a colour with no scale to it.
    auto span = [](int lo, int hi) {
        const double pad = std::max(0.5, (5 - (hi - lo + 1)) / 2.0 + 0.5);
        return QCPRange(lo - pad, hi + pad);
    };
    xAxis->setRange(span(minM, maxM));
    yAxis->setRange(span(minN, maxN));
    maxM = std::max(maxM, minM + 1);
    maxN = std::max(maxN, minN + 1);
    const int nx = maxM - minM + 1, ny = maxN - minN + 1;
    m_map->data()->setSize(nx, ny);
    m_map->data()->setRange(QCPRange(minM, maxM), QCPRange(minN, maxN));
    for (int x = 0; x < nx; ++x)
        for (int y = 0; y < ny; ++y)
            m_map->data()->setCell(x, y, qQNaN());
    double best = 0;
    for (const auto &c : cells)
        best = std::max(best, c.tflops);
    const FlopUnit unit = FlopUnit::forLargest(best);
    m_unit = unit.name;
    m_unitScale = unit.scale;
    m_scale->axis()->setLabel(tr("best %1").arg(unit.name));
    const double hi = best * unit.scale;
    for (const auto &c : cells)
        m_map->data()->setCell(c.log2M - minM, c.log2N - minN, c.tflops * unit.scale);
    m_map->setVisible(true);
    m_map->setDataRange(QCPRange(0, hi > 0 ? hi : 1));
    redraw();
}
