#pragma once

#include "diode/analysis/gpupeaks.h"
#include "diode/store/storequery.h"

#include "common/lazyplot.h"

class PlotTitle;

/// Arithmetic intensity against achieved TFLOP/s, one point per problem, under the GPU's
/// compute and bandwidth roofs (log-log); hovering a point names its problem. Only draws.
class RooflineView : public LazyPlot {
    Q_OBJECT
public:
    explicit RooflineView(QWidget *parent = nullptr);
    /// Draws `points` (already filtered) under the roof of `peakTflops` and `bandwidthTBs`.
    void setPoints(const std::vector<diode::ProblemBest> &points, double peakTflops, double bandwidthTBs,
                   const QString &title);
    /// Rings the points of the problem of this label (GemmProblem::label(); linked selection).
    void setHighlight(const QString &label);
    int highlighted() const;

private:
    QCPGraph *m_points;
    QCPGraph *m_roof;
    QCPGraph *m_ring;
    PlotTitle *m_title;
    std::vector<diode::ProblemBest> m_shown; ///< in m_points' key order: a tooltip's index finds its problem
    double m_scale = 1;
};
