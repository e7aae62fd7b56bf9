#include "train/trainingcurves.h"

#include "common/exportactions.h"
#include "common/plotmessage.h"
#include "common/plottitle.h"
#include "common/plotview.h"

#include <QMap>

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
    legendBelowAxes(this, 0);
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
    for (QCPGraph *g : m_overlay) // the overlaid run's losses stay in the axis
        if (g->valueAxis() == yAxis)
            for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it)
                if (it->value > 0) {
                    m_lossLo = m_lossLo > 0 ? std::min(m_lossLo, it->value) : it->value;
                    m_lossHi = std::max(m_lossHi, it->value);
                }
    m_lastEpoch = 0;
    m_replot->stop();
    m_title->setText(sentence);
    setPlotMessage(this, m_overlay.isEmpty() ? sentence : QString());
    xAxis->setRange(0, std::max(10, m_overlayLastEpoch + 1));
    yAxis->setRange(m_lossLo > 0 ? lossRange() : QCPRange(0.1, 10));
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
    fitEpochAxis();
    if (e.loss > 0) {
        m_lossLo = m_lossLo > 0 ? std::min(m_lossLo, e.loss) : e.loss;
        m_lossHi = std::max(m_lossHi, e.loss);
        PlotView::of(this)->showRange(yAxis, lossRange());
    }
    if (!m_replot->isActive())
        m_replot->start(); // many epochs per repaint
}

// Whole decades around the losses drawn: a log axis labelled 1, 10, 100, never 15 / 12.5 / 10.
QCPRange TrainingCurves::lossRange() const {
    const double lo = std::pow(10.0, std::floor(std::log10(m_lossLo)));
    const double hi = std::pow(10.0, std::max(std::ceil(std::log10(m_lossHi)), std::log10(lo) + 1));
    return QCPRange(lo, hi);
}

// Epochs arrive while the user may be zooming into some: the view follows them unless moved.
void TrainingCurves::fitEpochAxis() {
    PlotView::of(this)->showRange(xAxis,
                                  QCPRange(0, std::max({10, m_lastEpoch + 1, m_overlayLastEpoch + 1})));
}

void TrainingCurves::setOverlay(const QString &name, const QVector<diode::EpochReport> &epochs) {
    for (QCPGraph *g : m_overlay)
        removeGraph(g);
    m_overlay.clear();
    m_overlayLastEpoch = 0;
    QMap<int, QPair<QCPGraph *, QCPGraph *>> byMember;
    for (const auto &e : epochs) {
        auto &pair = byMember[e.member];
        if (!pair.first) {
            const bool first = byMember.size() == 1;
            pair.first = addGraph(xAxis, yAxis);
            pair.second = addGraph(xAxis, yAxis2);
            pair.first->setPen(QPen(kLoss.lighter(150), 1, Qt::DashLine));
            pair.second->setPen(QPen(kVal.lighter(140), 1, Qt::DashLine));
            pair.first->setName(tr("%1: loss (dashed)").arg(name));
            pair.second->setName(tr("%1: validation top-1 (dashed)").arg(name));
            if (!first) {
                pair.first->removeFromLegend();
                pair.second->removeFromLegend();
            }
            m_overlay << pair.first << pair.second;
        }
        pair.first->addData(e.epoch, e.loss);
        pair.second->addData(e.epoch, e.valTop1);
        m_overlayLastEpoch = std::max(m_overlayLastEpoch, e.epoch);
        if (e.loss > 0) {
            m_lossLo = m_lossLo > 0 ? std::min(m_lossLo, e.loss) : e.loss;
            m_lossHi = std::max(m_lossHi, e.loss);
        }
    }
    // Under the current run's lines, which stay on top.
    for (QCPGraph *g : m_overlay)
        g->setLayer(QStringLiteral("grid"));
    fitEpochAxis();
    if (m_lossLo > 0)
        PlotView::of(this)->showRange(yAxis, lossRange());
    if (!m_overlay.isEmpty())
        setPlotMessage(this, QString());
    else if (m_loss.isEmpty())
        setPlotMessage(this, m_title->text());
    replot();
}

void TrainingCurves::changeEvent(QEvent *event) {
    QCustomPlot::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        applyPalette(this);
        replot();
    }
}
