#include "hardware/telemetryplot.h"

#include "common/exportactions.h"
#include "common/plotmessage.h"
#include "common/plottitle.h"
#include "common/plotview.h"

TelemetryPlot::TelemetryPlot(QWidget *parent)
    : LazyPlot(parent)
    , m_title(new PlotTitle(this, 1)) {
    yAxis2->setVisible(true);
    xAxis->setLabel(tr("time (s)"));
    yAxis->setLabel(tr("clock (MHz)"));
    yAxis2->setLabel(tr("power (W) / temperature (°C)"));
    const struct {
        const char *name;
        QColor colour;
        bool right;
    } series[4] = {{"SM clock (MHz)", QColor(31, 119, 180), false},
                   {"memory clock (MHz)", QColor(44, 160, 44), false},
                   {"power (W)", QColor(214, 39, 40), true},
                   {"temperature (°C)", QColor(255, 127, 14), true}};
    for (int i = 0; i < 4; ++i) {
        m_graphs[i] = addGraph(xAxis, series[i].right ? yAxis2 : yAxis);
        m_graphs[i]->setName(tr(series[i].name));
        m_graphs[i]->setPen(QPen(series[i].colour, 2));
    }
    legend->setVisible(true);
    axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignRight);
    applyPalette(this);
    for (QCPAxis *a : {yAxis2}) {
        a->setBasePen(QPen(palette().color(QPalette::WindowText)));
        a->setTickLabelColor(palette().color(QPalette::WindowText));
        a->setLabelColor(palette().color(QPalette::WindowText));
    }
    addPlotExport(this, QStringLiteral("telemetry"));
}

void TelemetryPlot::setSamples(const std::vector<diode::TelemetrySample> &samples, const QString &title,
                               const QString &whyEmpty) {
    m_title->setText(title);
    setPlotMessage(this, samples.empty() ? whyEmpty : QString());
    for (QCPGraph *g : m_graphs)
        g->data()->clear();
    for (const auto &s : samples) {
        m_graphs[0]->addData(s.tSeconds, s.smClockMhz);
        m_graphs[1]->addData(s.tSeconds, s.memClockMhz);
        m_graphs[2]->addData(s.tSeconds, s.powerW);
        m_graphs[3]->addData(s.tSeconds, s.temperatureC);
    }
    rescale();
}

void TelemetryPlot::addSample(const diode::TelemetrySample &s) {
    setPlotMessage(this, QString());
    m_graphs[0]->addData(s.tSeconds, s.smClockMhz);
    m_graphs[1]->addData(s.tSeconds, s.memClockMhz);
    m_graphs[2]->addData(s.tSeconds, s.powerW);
    m_graphs[3]->addData(s.tSeconds, s.temperatureC);
    for (QCPGraph *g : m_graphs)
        g->data()->removeBefore(s.tSeconds - 600);
    rescale();
}

// Samples arrive once a second while the user may be zooming into some: the data's view is
// worked out on the axes, then handed to PlotView, which keeps a view the user moved.
void TelemetryPlot::rescale() {
    QCPAxis *axes[] = {xAxis, yAxis, yAxis2};
    QCPRange user[3];
    for (int i = 0; i < 3; ++i)
        user[i] = axes[i]->range();
    rescaleAxes();
    yAxis->setRangeLower(0);
    yAxis2->setRangeLower(0);
    yAxis->scaleRange(1.1, yAxis->range().lower);
    yAxis2->scaleRange(1.1, yAxis2->range().lower);
    auto *view = PlotView::of(this);
    for (int i = 0; i < 3; ++i) {
        const QCPRange data = axes[i]->range();
        if (view->moved())
            axes[i]->setRange(user[i]);
        view->showRange(axes[i], data);
    }
    redraw();
}
