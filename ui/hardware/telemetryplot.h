#pragma once

#include "diode/store/store.h"

#include "common/lazyplot.h"

class PlotTitle;

/// SM and memory clocks (MHz, left axis), power (W) and temperature (°C, right axis) over
/// time. Only draws.
class TelemetryPlot : public LazyPlot {
    Q_OBJECT
public:
    explicit TelemetryPlot(QWidget *parent = nullptr);
    /// Draws `samples`; with none, `whyEmpty` stands in for the plot.
    void setSamples(const std::vector<diode::TelemetrySample> &samples, const QString &title,
                    const QString &whyEmpty);
    /// Appends one live sample; keeps the last 10 minutes in view.
    void addSample(const diode::TelemetrySample &sample);
    int sampleCount() const { return m_graphs[0]->dataCount(); }

private:
    void rescale();

    QCPGraph *m_graphs[4];
    PlotTitle *m_title;
};
