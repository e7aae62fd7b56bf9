#pragma once

#include "sweep/sweepworker.h"

#include <qcustomplot.h>

/// Achieved TFLOP/s against problem size (GFLOP, log scale) as a sweep's problems finish,
/// one colour per dtype. Only draws.
class ThroughputPlot : public QCustomPlot {
    Q_OBJECT
public:
    explicit ThroughputPlot(QWidget *parent = nullptr);
    void addResult(const ProblemResult &result);
    /// No points; `sentence` stands in for the plot until the first one arrives.
    void clear(const QString &sentence);
    int points() const { return m_points; }

protected:
    // Hidden pages' plots have no paint buffer yet: draw when shown, not before.
    void showEvent(QShowEvent *event) override {
        QCustomPlot::showEvent(event);
        replot(rpQueuedReplot);
    }

private:
    void redraw() {
        if (isVisible())
            replot(rpQueuedReplot);
    }
    QCPGraph *m_graphs[3];
    int m_points = 0;
    double m_top = 0;
};
