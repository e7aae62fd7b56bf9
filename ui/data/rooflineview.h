#pragma once

#include "diode/gpupeaks.h"
#include "diode/storequery.h"

#include "common/lazyplot.h"

class PlotTitle;

/// Arithmetic intensity against achieved TFLOP/s, one point per problem, under the GPU's
/// compute and bandwidth roofs (log-log). Only draws.
class RooflineView : public LazyPlot {
    Q_OBJECT
public:
    explicit RooflineView(QWidget *parent = nullptr);
    /// Draws `points` (already filtered) under the roof of `peakTflops` and `bandwidthTBs`.
    void setPoints(const std::vector<diode::ProblemBest> &points, double peakTflops, double bandwidthTBs,
                   const QString &title);

private:
    QCPGraph *m_points;
    QCPGraph *m_roof;
    PlotTitle *m_title;
};
