#pragma once

#include "sweep/sweepworker.h"

#include "common/lazyplot.h"

/// Achieved TFLOP/s against problem size (GFLOP, log scale) as a sweep's problems finish,
/// one colour per dtype. Only draws.
class ThroughputPlot : public LazyPlot {
    Q_OBJECT
public:
    explicit ThroughputPlot(QWidget *parent = nullptr);
    void addResult(const ProblemResult &result);
    /// No points; `sentence` stands in for the plot until the first one arrives.
    void clear(const QString &sentence);
    int points() const { return m_points; }

private:
    QCPGraph *m_graphs[3];
    int m_points = 0;
    double m_top = 0;
};
