#pragma once

#include "diode/trainoptions.h"

#include <qcustomplot.h>

/// Training loss (left axis, log) and validation top-1 efficiency (right axis) per epoch,
/// appended live. Only draws.
class TrainingCurves : public QCustomPlot {
    Q_OBJECT
public:
    explicit TrainingCurves(QWidget *parent = nullptr);
    void clearEpochs(const QString &title);
    void addEpoch(const diode::EpochReport &epoch);
    int epochs() const;

protected:
    void changeEvent(QEvent *event) override;

private:
    QCPGraph *m_loss, *m_val;
    QCPGraph *m_best;
    QCPTextElement *m_title;
};
