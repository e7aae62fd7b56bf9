#pragma once

#include "diode/metrics.h"

#include <QAbstractTableModel>
#include <QVector>

/// One selector's row: a model or a baseline.
struct MetricsRow {
    QString selector;
    diode::SelectorMetrics metrics;
    bool predictsTimes = false; ///< baselines have no MAPE
};

/// Selectors against the efficiency metrics of docs/MODELS.md, one row each.
class MetricsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    using QAbstractTableModel::QAbstractTableModel;
    void setResults(const QVector<MetricsRow> &rows);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVector<MetricsRow> m_rows;
};
