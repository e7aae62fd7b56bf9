#include "trainingcurves.h"

#include "exportactions.h"

TrainingCurves::TrainingCurves(QWidget *parent)
    : QCustomPlot(parent)
    , m_title(new QCPTextElement(this, QString(), QFont(font().family(), font().pointSize(), QFont::Bold)))
{
    plotLayout()->insertRow(0);
    plotLayout()->addElement(0, 0, m_title);
    yAxis2->setVisible(true);
    xAxis->setLabel(tr("epoch (ensemble networks one after another)"));
    yAxis->setLabel(tr("training loss"));
    yAxis->setScaleType(QCPAxis::stLogarithmic);
    yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    yAxis2->setLabel(tr("validation top-1 efficiency"));
    yAxis2->setRange(0, 1);
    m_loss = addGraph(xAxis, yAxis);
    m_loss->setName(tr("loss"));
    m_loss->setPen(QPen(QColor(31, 119, 180), 2));
    m_val = addGraph(xAxis, yAxis2);
    m_val->setName(tr("validation top-1"));
    m_val->setPen(QPen(QColor(255, 127, 14), 2));
    m_best = addGraph(xAxis, yAxis2);
    m_best->setName(tr("new best"));
    m_best->setLineStyle(QCPGraph::lsNone);
    m_best->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QColor(255, 127, 14), 5));
    legend->setVisible(true);
    axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignRight);
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    applyPalette(this);
    for (QCPAxis *a : {yAxis2}) {
        a->setTickLabelColor(palette().color(QPalette::WindowText));
        a->setLabelColor(palette().color(QPalette::WindowText));
    }
    m_title->setTextColor(palette().color(QPalette::WindowText));
    clearEpochs(tr("No training run yet"));
}

void TrainingCurves::clearEpochs(const QString &title)
{
    for (QCPGraph *g : {m_loss, m_val, m_best}) g->data()->clear();
    m_title->setText(title);
    xAxis->setRange(0, 10);
    replot();
}

int TrainingCurves::epochs() const { return m_loss->dataCount(); }

void TrainingCurves::addEpoch(const diode::EpochReport &e)
{
    // x is the running epoch over all networks of an ensemble; each network's curve starts afresh.
    m_loss->addData(e.step, e.loss);
    m_val->addData(e.step, e.valTop1);
    if (e.improved) m_best->addData(e.step, e.valTop1);
    xAxis->setRange(0, std::max(10, e.step + 1));
    bool found = false;
    const QCPRange r = m_loss->getValueRange(found);
    if (found) yAxis->setRange(r.lower / 1.3, r.upper * 1.3);
    replot(QCustomPlot::rpQueuedReplot); // many epochs per frame cost one repaint
}

void TrainingCurves::changeEvent(QEvent *event)
{
    QCustomPlot::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        applyPalette(this);
        m_title->setTextColor(palette().color(QPalette::WindowText));
        replot();
    }
}
