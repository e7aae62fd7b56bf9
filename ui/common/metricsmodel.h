#pragma once

#include "diode/analysis/evaluation.h" // kBaselineOrder
#include "diode/analysis/metrics.h"
#include "diode/analysis/wording.h"

#include <QAbstractTableModel>
#include <QVector>

/// One selector's row: a model or a baseline.
struct MetricsRow {
    QString selector;
    diode::SelectorMetrics metrics;
    bool predictsTimes = false; ///< baselines predict no times: MAPE and RMSE are n/a, not 0

    /// A row from a package manifest's metrics (SelectorMetrics::toJson()).
    static MetricsRow fromJson(const QString &selector, const nlohmann::json &j, bool predictsTimes);
};

/// How every page names baseline selector `key`: diode::baselineName
/// (core/analysis/diode/analysis/wording.h), the words `diode eval` and `diode inspect` print too; on cpu
/// data "aten" is not shown (diode::baselineShown), since it picks the plan's first tile like "first-config".
inline QString baselineTitle(const std::string &key, bool cpuData = false) {
    return QString::fromStdString(diode::baselineName(key, cpuData));
}
using diode::baselineShown;

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
