#include "demo/breakdownchart.h"

#include "common/exportactions.h"
#include "common/plotmessage.h"
#include "common/plottitle.h"
#include "common/plotview.h"
#include "common/seriescolours.h"

BreakdownChart::BreakdownChart(QWidget *parent)
    : QCustomPlot(parent)
    , m_title(new PlotTitle(this)) {
    legendBelowAxes(this, 3);
    yAxis->setLabel(tr("µs a step"));
    xAxis->grid()->setVisible(false);
    applyPalette(this);
    PlotView::of(this)->setTips(&m_tips); // each bar its sentence, written as it is drawn
    PlotView::of(this)->zoomValuesOnly();
}

void BreakdownChart::setBreakdown(const QString &title, const QStringList &modes,
                                  const std::vector<std::vector<std::pair<std::string, double>>> &perMode,
                                  const QString &whyEmpty) {
    clearPlottables();
    m_tips.clear();
    m_segments = 0;
    // The kinds in the order the first mode with a breakdown lists them (kCategories').
    QStringList categories;
    QVector<double> totals(modes.size(), 0);
    for (size_t m = 0; m < perMode.size() && m < size_t(modes.size()); ++m)
        for (const auto &[category, us] : perMode[m]) {
            if (!categories.contains(QString::fromStdString(category)))
                categories << QString::fromStdString(category);
            totals[int(m)] += us;
        }
    if (categories.isEmpty()) {
        m_title->setText(QString());
        setPlotMessage(this, whyEmpty);
        replot();
        return;
    }
    setPlotMessage(this, QString());
    m_title->setText(title);
    QCPBars *below = nullptr;
    double top = 0;
    for (const QString &category : categories) {
        auto *bars = new QCPBars(xAxis, yAxis);
        bars->setName(category);
        bars->setWidth(0.6);
        const QColor c = categoryColour(category);
        bars->setPen(QPen(c.darker(130)));
        bars->setBrush(c);
        QStringList tips;
        for (size_t m = 0; m < perMode.size() && m < size_t(modes.size()); ++m)
            for (const auto &[cat, us] : perMode[m])
                if (QString::fromStdString(cat) == category && us > 0) {
                    bars->addData(double(m), us);
                    ++m_segments;
                    tips << tr("<b>%1</b><br>%2: %3 µs a step, %4 % of the step's %5 µs")
                                .arg(modes[int(m)].toHtmlEscaped(), category)
                                .arg(us, 0, 'f', 1)
                                .arg(100 * us / totals[int(m)], 0, 'f', 1)
                                .arg(totals[int(m)], 0, 'f', 1);
                }
        if (below)
            bars->moveAbove(below); // stacked: each kind on top of the ones before it
        below = bars;
        m_tips.insert(bars, tips);
    }
    for (double t : totals)
        top = std::max(top, t);
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    for (int m = 0; m < modes.size(); ++m)
        ticker->addTick(
            m, QString(modes[m]).replace(QLatin1Char(' '), QLatin1Char('\n'))); // "plain\ntorch.compile"
    xAxis->setTicker(ticker);
    xAxis->setRange(-0.6, modes.size() - 0.4);
    yAxis->setRange(0, top > 0 ? top * 1.1 : 1);
    replot();
}
