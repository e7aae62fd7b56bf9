#pragma once

#include "diode/storequery.h"

#include <qcustomplot.h>

/// Best achieved TFLOP/s over (M, N) in log2 bins, one op and dtype at a time. Only draws.
class HeatmapView : public QCustomPlot {
    Q_OBJECT
public:
    explicit HeatmapView(QWidget *parent = nullptr);
    /// Draws `cells`; `title` names the op and dtype shown (or why nothing is).
    void setCells(const std::vector<diode::HeatCell> &cells, const QString &title);
    /// The colour of a cell at `share` of the scale (0: lowest, 1: the best cell).
    QColor colourAt(double share) const {
        return QColor::fromRgba(m_map->gradient().color(share, QCPRange(0, 1)));
    }

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
    QCPColorMap *m_map;
    QCPColorScale *m_scale;
    QCPTextElement *m_title;
};
