#pragma once

#include "diode/analysis/bias.h"

#include <QAbstractTableModel>

#include <vector>

/// The bias report's groups (overall, by op, by op x dtype x size class), one row each: the
/// efficiency of plain torch.compile, max-autotune's pick and the best ATen kernel, and how far
/// Inductor's own times sit above the in-graph ones. A missing value reads "n/a", never 0.
/// Qt::UserRole holds a number to sort by.
class BiasGroupModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Op,
        Dtype,
        SizeClass,
        Problems,
        CompileMean, ///< the baselines in every face's order: plain torch.compile first,
        CompileP10,
        MaxAutotuneMean, ///< max-autotune's pick second
        MaxAutotuneP10,
        AtenMean,
        AtenP10,
        PickIsFastest,
        AtenInflation,
        TritonInflation,
        ColumnCount
    };
    using QAbstractTableModel::QAbstractTableModel;
    void setResults(std::vector<diode::BiasGroup> groups);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<diode::BiasGroup> m_groups;
};
