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

private:
    QCPColorMap *m_map;
    QCPColorScale *m_scale;
    QCPTextElement *m_title;
};
