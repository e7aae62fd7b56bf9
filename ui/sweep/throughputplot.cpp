#include "sweep/throughputplot.h"

#include "common/exportactions.h"
#include "common/plotmessage.h"
#include "common/seriescolours.h"

ThroughputPlot::ThroughputPlot(QWidget *parent)
    : LazyPlot(parent) {
    for (int i = 0; i < 3; ++i) {
        const auto dtype = diode::DType(i);
        m_graphs[i] = addGraph();
        m_graphs[i]->setName(QString::fromUtf8(diode::toString(dtype).data()));
        m_graphs[i]->setLineStyle(QCPGraph::lsNone);
        m_graphs[i]->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, dtypeColour(dtype), 6));
    }
    setLogScale(xAxis, QStringLiteral("gb"));
    xAxis->setLabel(tr("problem size (GFLOP = 2·B·M·N·K / 1e9)"));
    legend->setVisible(true);
    axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
    clear(tr("No sweep has run yet."));
    applyPalette(this);
    addPlotExport(this, QStringLiteral("sweep-throughput"));
}

void ThroughputPlot::addResult(const ProblemResult &r) {
    if (!r.ok || r.bestMs <= 0)
        return;
    const double gflop = r.problem.flops() / 1e9;
    m_top = std::max(m_top, r.tflops());
    // The unit follows the largest rate so far; the points already drawn are rewritten in it.
    const FlopUnit unit = FlopUnit::forLargest(m_top);
    if (unit.scale != m_unit.scale) {
        for (QCPGraph *g : m_graphs)
            for (auto it = g->data()->begin(); it != g->data()->end(); ++it)
                it->value *= unit.scale / m_unit.scale;
        m_unit = unit;
        yAxis->setLabel(tr("achieved %1 (best config)").arg(m_unit.name));
    }
    m_graphs[int(r.problem.dtype)]->addData(gflop, r.tflops() * m_unit.scale);
    if (m_points++ == 0)
        setPlotMessage(this, QString());
    bool found = false;
    QCPRange x;
    for (QCPGraph *g : m_graphs) {
        bool ok = false;
        const QCPRange gx = g->getKeyRange(ok);
        if (!ok)
            continue;
        x = found ? QCPRange(std::min(x.lower, gx.lower), std::max(x.upper, gx.upper)) : gx;
        found = true;
    }
    xAxis->setRange(x.lower / 2, x.upper * 2);
    yAxis->setRange(0, m_top * m_unit.scale * 1.15);
    redraw(); // coalesced: a burst of results costs one repaint
}

void ThroughputPlot::clear(const QString &sentence) {
    setPlotMessage(this, sentence);
    for (QCPGraph *g : m_graphs)
        g->data()->clear();
    m_points = 0;
    m_top = 0;
    m_unit = FlopUnit();
    yAxis->setLabel(tr("achieved %1 (best config)").arg(m_unit.name));
    xAxis->setRange(1e-3, 1e3);
    yAxis->setRange(0, 1);
    redraw();
}
