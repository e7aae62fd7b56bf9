#pragma once

#include "diode/analysis/bias.h"

#include <qcustomplot.h>

#include <optional>
#include <vector>

class PlotTitle;

/// Inductor's autotune time against the in-graph time of every candidate (log-log, µs), ATen
/// and Triton apart, with the identity line: points above it are candidates Inductor's own
/// benchmark times slower than they run in a graph. Hovering a point names its problem and config;
/// clicking one selects its problem. Draws what it is handed, nothing more.
class BiasScatter : public QCustomPlot {
    Q_OBJECT
public:
    explicit BiasScatter(QWidget *parent = nullptr);

    /// `atenInflation` and `tritonInflation` (geomeans of Inductor over graph) name the legend.
    /// `labels`: the report's problems' labels, which the tooltip names.
    void setPoints(const std::vector<diode::BiasPoint> &points, const QString &method,
                   std::optional<double> atenInflation, std::optional<double> tritonInflation,
                   std::vector<QString> labels = {});
    void clearPoints();
    /// Rings the candidates of problem `problem` (an index into the report's problems); -1: none.
    void setHighlight(int problem);
    int highlighted() const;

signals:
    /// A point was clicked: the problem (index into the report's problems) it belongs to.
    void problemClicked(int problem);

protected:
    void mouseReleaseEvent(QMouseEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;

private:
    /// The point of graph `g`'s data index `i` (graphs hold points sorted by key, as here).
    const diode::BiasPoint *pointAt(const QCPAbstractPlottable *g, int i) const;

    PlotTitle *m_title;
    QCPGraph *m_aten, *m_triton, *m_ring;
    QCPItemStraightLine *m_identity;
    std::vector<diode::BiasPoint> m_points;
    std::vector<size_t> m_atenOrder, m_tritonOrder; ///< m_points indices in each graph's key order
    std::vector<QString> m_problemLabels;
    QPoint m_pressPos;
};
