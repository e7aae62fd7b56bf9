#include "demo/demochart.h"

#include "common/exportactions.h"
#include "common/plottitle.h"
#include "common/plotview.h"
#include "common/seriescolours.h"
#include "diode/analysis/wording.h"

#include <cmath>

DemoChart::DemoChart(QWidget *parent)
    : QCustomPlot(parent)
    , m_title(new PlotTitle(this)) {
    // Three modes a row: six in one row would make the chart 700 px wide at least.
    legendBelowAxes(this, 3);
    applyPalette(this);
    PlotView::of(this)->setTips(&m_tips); // each bar its sentence, written as it is drawn
    PlotView::of(this)->zoomValuesOnly();
}

QCPBars *DemoChart::barsOf(const QString &mode) {
    for (int i = 0; i < plottableCount(); ++i)
        if (auto *b = qobject_cast<QCPBars *>(plottable(i)); b && b->name() == mode)
            return b;
    return nullptr;
}

void DemoChart::setBars(const QString &title, const QString &yLabel, const QStringList &cases,
                        const QStringList &modes, const QVector<QVector<double>> &values,
                        const QVector<QVector<QString>> &labels, bool logScale,
                        const QVector<QVector<QPair<double, double>>> &spreads) {
    yAxis->setScaleType(logScale ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    if (logScale)
        yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
    else
        yAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    yAxis->setNumberFormat(logScale ? QStringLiteral("gb") : QStringLiteral("g"));
    clearPlottables();
    clearItems();
    m_tips.clear();
    m_title->setText(title);
    yAxis->setLabel(yLabel);
    // Only the modes with a bar take a slot and a legend entry (a mode run on other kinds of case
    // only, plugin-cold on the model blocks, has none here).
    QVector<int> shown;
    for (int m = 0; m < modes.size(); ++m)
        for (int k = 0; k < cases.size(); ++k)
            if (values.value(k).value(m, NAN) > 0) {
                shown << m;
                break;
            }
    const double width = 0.84 / std::max<qsizetype>(1, shown.size());
    double lo = INFINITY, hi = 0;
    const QColor fg = palette().color(QPalette::WindowText);
    for (int slot = 0; slot < shown.size(); ++slot) {
        const int m = shown[slot];
        auto *bars = new QCPBars(xAxis, yAxis);
        bars->setName(modes[m]);
        bars->setWidth(width * 0.95);
        const QColor c = selectorColour(modes[m]); // by name: the same in every view and file
        bars->setPen(QPen(c.darker(130)));
        bars->setBrush(c);
        QCPErrorBars *errors = nullptr;
        QStringList tips;
        for (int k = 0; k < cases.size(); ++k) {
            const double v = values.value(k).value(m, NAN);
            if (!(v > 0))
                continue;
            const double x = k + (slot - (shown.size() - 1) / 2.0) * width;
            bars->addData(x, v);
            const QPair<double, double> spread = spreads.value(k).value(m, {NAN, NAN});
            const bool hasSpread = !std::isnan(spread.first) && !std::isnan(spread.second);
            if (!spreads.isEmpty()) {
                if (!errors) {
                    errors = new QCPErrorBars(xAxis, yAxis);
                    errors->setDataPlottable(bars);
                    errors->setPen(QPen(fg, 1.2));
                    errors->removeFromLegend();
                    errors->setWhiskerWidth(8);
                }
                errors->addData(hasSpread ? v - spread.first : 0, hasSpread ? spread.second - v : 0);
            }
            lo = std::min(lo, hasSpread ? std::min(v, spread.first) : v);
            hi = std::max(hi, hasSpread ? std::max(v, spread.second) : v);
            const QString label = labels.value(k).value(m);
            QString tip =
                QStringLiteral("<b>%1</b><br>%2<br>%3: %4")
                    .arg(modes[m].toHtmlEscaped(), QString(cases[k]).replace('\n', ' ').toHtmlEscaped(),
                         yLabel.toHtmlEscaped())
                    .arg(v, 0, 'g', 4);
            if (hasSpread)
                tip += tr("<br>spread over processes: %1 – %2")
                           .arg(spread.first, 0, 'g', 4)
                           .arg(spread.second, 0, 'g', 4);
            if (!label.trimmed().isEmpty())
                tip += QStringLiteral("<br>%1").arg(label.trimmed().toHtmlEscaped());
            tips << tip;
            if (label.isEmpty())
                continue;
            auto *text = new QCPItemText(this);
            text->position->setCoords(x, hasSpread ? std::max(v, spread.second) : v);
            text->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
            text->setRotation(-90); // reads upwards from the top of its bar
            // Clear of the whisker's cap, which would otherwise read as a leading "1" ("10.073×").
            text->setPadding(QMargins(6, 0, 0, 0));
            text->setText(label);
            text->setColor(fg);
            text->setClipToAxisRect(true);
        }
        m_tips.insert(bars, tips);
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

QString speedupBarLabel(double v, int decimals, const std::string &mode, const std::string &reference) {
    if (mode == reference)
        return QObject::tr(" ref");
    return std::isnan(v)
               ? QString()
               : QStringLiteral(" %1×").arg(QString::fromStdString(diode::speedupText(v, decimals)));
}
