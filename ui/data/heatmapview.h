#pragma once

#include "diode/store/storequery.h"

#include "common/lazyplot.h"

class PlotTitle;

/// Best achieved TFLOP/s over (M, N) in log2 bins, one op and dtype at a time; hovering a cell says
/// its bins, best rate and how many problems it holds. Only draws.
class HeatmapView : public LazyPlot {
    Q_OBJECT
public:
    explicit HeatmapView(QWidget *parent = nullptr);
    /// Draws `cells`; `title` names the op and dtype shown (or why nothing is).
    void setCells(const std::vector<diode::HeatCell> &cells, const QString &title);
    /// The colour of a cell at `share` of the scale (0: lowest, 1: the best cell).
    QColor colourAt(double share) const {
        return QColor::fromRgba(m_map->gradient().color(share, QCPRange(0, 1)));
    }

private:
    std::vector<diode::HeatCell> m_cells;
    QString m_unit;
    double m_unitScale = 1;
    QCPColorMap *m_map;
    QCPColorScale *m_scale;
    PlotTitle *m_title;
};
