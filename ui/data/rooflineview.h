#pragma once

#include "diode/gpupeaks.h"
#include "diode/storequery.h"

#include <qcustomplot.h>

/// Arithmetic intensity against achieved TFLOP/s, one point per problem, under the GPU's
/// compute and bandwidth roofs (log-log). Only draws.
class RooflineView : public QCustomPlot {
    Q_OBJECT
public:
    explicit RooflineView(QWidget *parent = nullptr);
    /// Draws `points` (already filtered) under the roof of `peakTflops` and `bandwidthTBs`.
    void setPoints(const std::vector<diode::ProblemBest> &points, double peakTflops, double bandwidthTBs,
                   const QString &title);

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
    QCPGraph *m_points;
    QCPGraph *m_roof;
    QCPTextElement *m_title;
};
