#pragma once

#include <qcustomplot.h>

#include <QPointer>

#include <vector>

class PlotTitle;

/// One colour group of the scatter: points sorted by measured time (the key), each with the
/// candidate it stands for.
struct ScatterGroup {
    QString name;
    QColor colour; ///< what the group is (seriescolours.h), the same whichever groups are shown
    QVector<QCPGraphData> points; ///< key: measured ms, value: predicted ms; sorted by key
    std::vector<uint32_t> candidates;
};

/// Predicted against measured time on log-log axes with the identity line. Only draws what it
/// is handed. With many points in view it draws an even sample of them (every k-th by measured
/// time, at most kDrawBudget), redrawn as the view moves, so a million points pan and zoom
/// fluidly; hover and click still find every point. Reports the candidate under the mouse and
/// the one clicked.
class PredictionScatter : public QCustomPlot {
    Q_OBJECT
public:
    static constexpr size_t kDrawBudget = 100000;

    explicit PredictionScatter(QWidget *parent = nullptr);
    void setGroups(const QString &title, std::vector<ScatterGroup> groups);
    void clearPoints(const QString &message);
    /// The candidate nearest to `pos` (widget pixels) within a few pixels, or -1.
    qint64 candidateAt(const QPointF &pos) const;
    /// Rings these points (the candidates of the problem selected), named `name` in the legend; none:
    /// no ring.
    void setHighlight(QVector<QCPGraphData> points, const QString &name);
    int highlighted() const;

signals:
    void pointHovered(qint64 candidate, const QPoint &globalPos);
    void pointClicked(qint64 candidate);

protected:
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void sampleVisible(); ///< hands the graphs the points in view, thinned to the draw budget

    std::vector<ScatterGroup> m_groups;
    QVector<QCPGraph *> m_groupGraphs; ///< one per group, in m_groups' order
    QPointer<QCPGraph> m_ring;         ///< the selected problem's candidates
    QString m_baseTitle;
    PlotTitle *m_title;
    QPoint m_pressPos;
};
