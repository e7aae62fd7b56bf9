#pragma once

#include "sweep/sweepworker.h"

#include "common/flopunit.h"
#include "common/lazyplot.h"

#include "diode/store/storequery.h"

#include <vector>

/// Achieved FLOP rate against problem size (GFLOP, log scale) as a sweep's problems finish,
/// one colour per dtype, in the unit FlopUnit chooses for the largest rate shown (a cpu sweep's
/// in GFLOP/s), over an earlier run of the database drawn as grey rings to compare with (a run's
/// overlay). Hovering a point names its problem. Only draws.
class ThroughputPlot : public LazyPlot {
    Q_OBJECT
public:
    explicit ThroughputPlot(QWidget *parent = nullptr);
    void addResult(const ProblemResult &result);
    /// No points of a run under way; `sentence` stands in for the plot while there is nothing at all.
    void clear(const QString &sentence);
    /// An earlier run's best time per problem under the live points, named `name`; none: empty.
    void setOverlay(const QString &name, const std::vector<diode::ProblemBest> &best);
    int points() const { return m_points; }
    int overlayPoints() const { return int(m_overlay.size()); }
    const FlopUnit &unit() const { return m_unit; }

private:
    struct Point {
        double gflop = 0, tflops = 0;
        QString label;
    };
    void rebuild();

    QCPGraph *m_graphs[3];
    QCPGraph *m_overlayGraph;
    std::vector<Point> m_live[3]; ///< per dtype, sorted by GFLOP: graph data index = vector index
    std::vector<Point> m_overlay; ///< sorted by GFLOP
    QString m_sentence;
    int m_points = 0;
    FlopUnit m_unit;
};
