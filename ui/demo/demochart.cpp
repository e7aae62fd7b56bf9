#include "demo/demochart.h"

#include "common/exportactions.h"
#include "common/plottitle.h"
#include "common/seriescolours.h"

#include <cmath>

DemoChart::DemoChart(QWidget *parent)
    : QCustomPlot(parent)
    , m_title(new PlotTitle(this)) {
    // The legend sits in its own row under the axes, so it never hides a bar.
    legend->setVisible(true);
    legend->setFillOrder(QCPLegend::foColumnsFirst);
    legend->setWrap(3); // three modes a row: six in one row would make the chart 700 px wide at least
    axisRect()->insetLayout()->take(legend);
    plotLayout()->addElement(2, 0, legend);
    plotLayout()->setRowStretchFactor(2, 0.001);
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    axisRect()->setRangeDrag(Qt::Vertical);
    axisRect()->setRangeZoom(Qt::Vertical);
    applyPalette(this);
}

void DemoChart::setBars(const QString &title, const QString &yLabel, const QStringList &cases,
                        const QStringList &modes, const QVector<QVector<double>> &values,
                        const QVector<QVector<QString>> &labels, bool logScale) {
    yAxis->setScaleType(logScale ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    if (logScale)
        yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    else
        yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    yAxis->setNumberFormat(logScale ? QStringLiteral("gb") : QStringLiteral("g"));
    clearPlottables();
    clearItems();
    m_title->setText(title);
    yAxis->setLabel(yLabel);
    const double width = 0.84 / std::max<qsizetype>(1, modes.size());
    double lo = INFINITY, hi = 0;
    const QColor fg = palette().color(QPalette::WindowText);
    for (int m = 0; m < modes.size(); ++m) {
        auto *bars = new QCPBars(xAxis, yAxis);
        bars->setName(modes[m]);
        bars->setWidth(width * 0.95);
        const QColor c = selectorColour(modes[m]); // by name: the same in every view and file
        bars->setPen(QPen(c.darker(130)));
        bars->setBrush(c);
        for (int k = 0; k < cases.size(); ++k) {
            const double v = values.value(k).value(m, NAN);
            if (!(v > 0))
                continue;
            const double x = k + (m - (modes.size() - 1) / 2.0) * width;
            bars->addData(x, v);
            lo = std::min(lo, v);
            hi = std::max(hi, v);
            const QString label = labels.value(k).value(m);
            if (label.isEmpty())
                continue;
            auto *text = new QCPItemText(this);
            text->position->setCoords(x, v);
            text->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
            text->setRotation(-90); // reads upwards from the top of its bar
            text->setText(label);
            text->setColor(fg);
            text->setClipToAxisRect(true);
        }
    }
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (int k = 0; k < cases.size(); ++k) { // "mm bf16 M=1024 N=4096 K=4096" -> "mm bf16\n1024×4096×4096"
        QString label = cases[k];
        label.replace(QStringLiteral(" M="), QStringLiteral("\n"))
            .replace(QStringLiteral(" N="), QStringLiteral("×"));
        label.replace(QStringLiteral(" K="), QStringLiteral("×"));
        if (!label.contains('\n') && label.size() > 14)
            label.replace(label.lastIndexOf(' '), 1, QStringLiteral("\n"));
        ticker->addTick(k, label);
    }
    xAxis->setTicker(ticker);
    xAxis->setRange(-0.6, cases.size() - 0.4);
    xAxis->grid()->setVisible(false);
    if (hi > 0 && logScale)
        yAxis->setRange(lo / 2, hi * 8); // headroom for the labels above the bars
    else if (hi > 0)
        yAxis->setRange(0, hi * 1.35);
    replot();
}

void DemoChart::changeEvent(QEvent *event) {
    QCustomPlot::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        applyPalette(this);
        replot();
    }
}
