#pragma once

#include "diode/evaluation.h" // kBaselineOrder
#include "diode/metrics.h"

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

/// How every page names a baseline selector: "aten" (what plain torch.compile runs),
/// "max-autotune" (the pick of Inductor's own benchmark), "first-config", "random". On cpu data
/// (`cpuData`) there is no ATen kernel and no Inductor config: "aten" and "first-config" both pick
/// the plan's first tile, so pages show that baseline once, under that name, and leave out "aten"
/// (baselineShown) instead of two identical rows in GPU terms.
QString baselineTitle(const std::string &key, bool cpuData = false);
/// Whether pages show baseline `key` (see baselineTitle).
inline bool baselineShown(const std::string &key, bool cpuData) {
    return !(cpuData && key == "aten");
}

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
