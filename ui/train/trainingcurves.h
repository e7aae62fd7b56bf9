#pragma once

#include "diode/train/trainoptions.h"

#include <qcustomplot.h>

class PlotTitle;

/// Training loss (left axis, log, in decades) and validation top-1 efficiency (right axis) per
/// epoch, appended live: one line per network of the ensemble, all over the same epoch axis.
/// Only draws.
class TrainingCurves : public QCustomPlot {
    Q_OBJECT
public:
    explicit TrainingCurves(QWidget *parent = nullptr);
    /// No curves; `sentence` stands in for the plot until the first epoch arrives.
    void clearEpochs(const QString &sentence);
    void addEpoch(const diode::EpochReport &epoch);
    /// Epochs drawn, over all networks.
    int epochs() const;
    /// Networks with a curve.
    int networks() const { return int(m_loss.size()); }
    /// The loss line of network `member` (for tests: one series per network).
    const QCPGraph *lossOf(int member) const { return m_loss.value(member); }
    /// An earlier run drawn under this one, dashed and lighter, to compare with (TensorBoard's
    /// overlay of runs); `name` says which. No epochs: none.
    void setOverlay(const QString &name, const QVector<diode::EpochReport> &epochs);
    /// The overlaid run's lines (loss and validation top-1, one pair per network).
    int overlayGraphs() const { return int(m_overlay.size()); }

protected:
    void changeEvent(QEvent *event) override;

private:
    void addNetwork(int members);

    void fitEpochAxis();
    QCPRange lossRange() const;

    QVector<QCPGraph *> m_loss, m_val;
    QVector<QCPGraph *> m_overlay;
    int m_overlayLastEpoch = 0;
    QCPGraph *m_best;
    PlotTitle *m_title;
    QTimer *m_replot; ///< at most a few repaints a second, however fast epochs arrive
    double m_lossLo = 0, m_lossHi = 0;
    int m_lastEpoch = 0;
};
