#include "train/trainingcurves.h"

#include "common/exportactions.h"
#include "common/plotmessage.h"
#include "common/plottitle.h"

#include <cmath>

namespace {
const QColor kLoss(31, 119, 180), kVal(255, 127, 14);

// Network k of n a little lighter than network k-1, so the lines stay apart but read as one kind.
QColor shade(const QColor &base, int k, int n) {
    return n <= 1 ? base : base.lighter(100 + 60 * k / std::max(1, n - 1));
}
} // namespace

TrainingCurves::TrainingCurves(QWidget *parent)
    : QCustomPlot(parent)
    , m_title(new PlotTitle(this))
    , m_replot(new QTimer(this)) {
    // A small network finishes an epoch every few milliseconds; repainting after each kept the GUI
    // thread busy enough to slow LibTorch's threads on a small machine twentyfold.
    m_replot->setSingleShot(true);
    m_replot->setInterval(200);
    connect(m_replot, &QTimer::timeout, this, [this] { replot(); });
    yAxis2->setVisible(true);
    xAxis->setLabel(tr("epoch (every network of the ensemble from its first epoch)"));
    yAxis->setLabel(tr("training loss"));
    setLogScale(yAxis, QStringLiteral("gb"));
    qSharedPointerCast<QCPAxisTickerLog>(yAxis->ticker())
        ->setSubTickCount(8); // 2, 3, ... 9 between the decades
    yAxis2->setLabel(tr("validation top-1 efficiency"));
    yAxis2->setRange(0, 1.02);
    m_best = addGraph(xAxis, yAxis2);
    m_best->setName(tr("a network's new best"));
    m_best->setLineStyle(QCPGraph::lsNone);
    m_best->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, kVal, 5));
    // The legend sits in its own row under the axes, so it never covers a curve.
    legend->setVisible(true);
    legend->setFillOrder(QCPLegend::foColumnsFirst);
    axisRect()->insetLayout()->take(legend);
    plotLayout()->addElement(2, 0, legend);
    plotLayout()->setRowStretchFactor(2, 0.001);
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    applyPalette(this);
    for (QCPAxis *a : {yAxis2}) {
        a->setTickLabelColor(palette().color(QPalette::WindowText));
        a->setLabelColor(palette().color(QPalette::WindowText));
    }
    clearEpochs(tr("No training run yet: Train (Ctrl+Return) draws its loss and validation top-1 here, epoch "
                   "by epoch."));
}

void TrainingCurves::clearEpochs(const QString &sentence) {
    for (QCPGraph *g : m_loss + m_val)
        removeGraph(g);
    m_loss.clear();
    m_val.clear();
    m_best->data()->clear();
    m_lossLo = m_lossHi = 0;
    m_lastEpoch = 0;
    m_replot->stop();
    m_title->setText(sentence);
    setPlotMessage(this, sentence);
    xAxis->setRange(0, 10);
    yAxis->setRange(0.1, 10);
    replot();
}

int TrainingCurves::epochs() const {
    int n = 0;
    for (const QCPGraph *g : m_loss)
        n += g->dataCount();
    return n;
}

void TrainingCurves::addNetwork(int members) {
    const int k = int(m_loss.size());
    QCPGraph *loss = addGraph(xAxis, yAxis), *val = addGraph(xAxis, yAxis2);
    loss->setPen(QPen(shade(kLoss, k, members), 1.5));
    val->setPen(QPen(shade(kVal, k, members), 1.5));
    loss->setName(members > 1 ? tr("loss (one line per network)") : tr("loss"));
    val->setName(members > 1 ? tr("validation top-1 (one line per network)") : tr("validation top-1"));
    if (k > 0) { // one legend entry per kind of line
        loss->removeFromLegend();
        val->removeFromLegend();
    }
    m_loss << loss;
    m_val << val;
}

void TrainingCurves::addEpoch(const diode::EpochReport &e) {
    if (m_loss.isEmpty())
        setPlotMessage(this, QString());
    while (m_loss.size() <= e.member)
        addNetwork(e.members);
    m_loss[e.member]->addData(e.epoch, e.loss);
    m_val[e.member]->addData(e.epoch, e.valTop1);
    if (e.improved)
        m_best->addData(e.epoch, e.valTop1);
    m_lastEpoch = std::max(m_lastEpoch, e.epoch);
    xAxis->setRange(0, std::max(10, m_lastEpoch + 1));
    if (e.loss > 0) {
        m_lossLo = m_lossLo > 0 ? std::min(m_lossLo, e.loss) : e.loss;
        m_lossHi = std::max(m_lossHi, e.loss);
        // Whole decades: a log axis labelled 1, 10, 100, never 15 / 12.5 / 10 / 7.5.
        const double lo = std::pow(10.0, std::floor(std::log10(m_lossLo)));
        const double hi = std::pow(10.0, std::max(std::ceil(std::log10(m_lossHi)), std::log10(lo) + 1));
        yAxis->setRange(lo, hi);
    }
    if (!m_replot->isActive())
        m_replot->start(); // many epochs per repaint
}

void TrainingCurves::changeEvent(QEvent *event) {
    QCustomPlot::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        applyPalette(this);
        replot();
    }
}
