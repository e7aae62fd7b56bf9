#pragma once

#include "sweep/sweepworker.h"

#include "common/flopunit.h"
#include "common/lazyplot.h"

/// Achieved FLOP rate against problem size (GFLOP, log scale) as a sweep's problems finish,
/// one colour per dtype, in the unit FlopUnit chooses for the largest rate so far (a cpu sweep's
/// in GFLOP/s). Only draws.
class ThroughputPlot : public LazyPlot {
    Q_OBJECT
public:
    explicit ThroughputPlot(QWidget *parent = nullptr);
    void addResult(const ProblemResult &result);
    /// No points; `sentence` stands in for the plot until the first one arrives.
    void clear(const QString &sentence);
    int points() const { return m_points; }
    const FlopUnit &unit() const { return m_unit; }

private:
    QCPGraph *m_graphs[3];
    int m_points = 0;
    double m_top = 0; ///< TFLOP/s
    FlopUnit m_unit;
};
