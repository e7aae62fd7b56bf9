#pragma once

#include "diode/bias.h"

#include <qcustomplot.h>

#include <optional>
#include <vector>

class PlotTitle;

/// Inductor's autotune time against the in-graph time of every candidate (log-log, µs), ATen
/// and Triton apart, with the identity line: points above it are candidates Inductor's own
/// benchmark times slower than they run in a graph. Draws what it is handed, nothing more.
class BiasScatter : public QCustomPlot {
    Q_OBJECT
public:
    explicit BiasScatter(QWidget *parent = nullptr);

    /// `atenInflation` and `tritonInflation` (geomeans of Inductor over graph) name the legend.
    void setPoints(const std::vector<diode::BiasPoint> &points, const QString &method,
                   std::optional<double> atenInflation, std::optional<double> tritonInflation);
    void clearPoints();

private:
    PlotTitle *m_title;
    QCPGraph *m_aten, *m_triton;
    QCPItemStraightLine *m_identity;
};
