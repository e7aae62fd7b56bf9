#pragma once

#include <qcustomplot.h>

#include <vector>

/// One colour group of the scatter: points sorted by measured time (the key), each with the
/// candidate it stands for.
struct ScatterGroup {
    QString name;
    QVector<QCPGraphData> points; ///< key: measured ms, value: predicted ms; sorted by key
    std::vector<uint32_t> candidates;
};

/// Predicted against measured time on log-log axes with the identity line. Only draws what it
/// is handed; QCustomPlot's adaptive sampling keeps a million points fluid when panning and
/// zooming. Reports the candidate under the mouse and the one clicked.
class PredictionScatter : public QCustomPlot {
    Q_OBJECT
public:
    explicit PredictionScatter(QWidget *parent = nullptr);
    void setGroups(const QString &title, std::vector<ScatterGroup> groups);
    void clearPoints(const QString &message);
    /// The candidate nearest to `pos` (widget pixels) within a few pixels, or -1.
    qint64 candidateAt(const QPointF &pos) const;

signals:
    void pointHovered(qint64 candidate, const QPoint &globalPos);
    void pointClicked(qint64 candidate);

protected:
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    std::vector<ScatterGroup> m_groups;
    QCPTextElement *m_title;
    QPoint m_pressPos;
};
