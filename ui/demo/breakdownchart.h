#pragma once

#include <qcustomplot.h>

#include <QHash>
#include <QStringList>

#include <utility>
#include <vector>

class PlotTitle;

/// "Where the time goes" of a model step, one stacked bar per mode: microseconds a step by kind of
/// kernel (gemm, attention, reduction, pointwise, copy, other), as Nsight Systems' kernel summary
/// groups them. Hovering a segment names its mode, kind, time and share of the step. Only draws.
class BreakdownChart : public QCustomPlot {
    Q_OBJECT
public:
    explicit BreakdownChart(QWidget *parent = nullptr);
    /// perMode[m]: (category, µs) in the order of diode::DemoResult::kCategories; empty where the
    /// mode has no breakdown. `whyEmpty` stands in for the plot when no mode has one.
    void setBreakdown(const QString &title, const QStringList &modes,
                      const std::vector<std::vector<std::pair<std::string, double>>> &perMode,
                      const QString &whyEmpty);
    /// Segments drawn (mode x category with time).
    int segments() const { return m_segments; }

private:
    PlotTitle *m_title;
    QHash<const QCPAbstractPlottable *, QStringList> m_tips;
    int m_segments = 0;
};
