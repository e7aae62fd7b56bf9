#pragma once

#include "diode/analysis/demoresult.h"

#include <QAbstractTableModel>

/// One row per case and mode of a demo result, plain torch.compile's row first and
/// max-autotune's second: compile seconds, kernel µs, speed-ups against plain torch.compile and
/// against max-autotune (the reference's time over the mode's: higher is better, as everywhere
/// the demo is shown), errors.
class DemoTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Case,
        Kind,
        Mode,
        CompileS,
        KernelUs,
        CompileVsPlain,
        KernelVsPlain,
        CompileVsMaxAutotune,
        KernelVsMaxAutotune,
        Error,
        Count
    };
    using QAbstractTableModel::QAbstractTableModel;
    void setResults(const diode::DemoResult &result);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Row {
        const diode::DemoCase *c;
        std::string mode;
    };
    diode::DemoResult m_result;
    QVector<Row> m_rows;
};
