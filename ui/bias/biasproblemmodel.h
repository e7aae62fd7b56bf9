#pragma once

#include "diode/analysis/bias.h"

#include <QAbstractTableModel>

#include <vector>

/// One row per problem of the bias report: the fastest candidate in graph, max-autotune's pick
/// and what it loses (1 - efficiency), and plain torch.compile's efficiency. Qt::UserRole holds
/// a number to sort by; a missing value reads "n/a" and sorts below every value.
class BiasProblemModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Problem,
        SizeClass,
        FastestUs,
        Fastest,
        PickUs,
        Pick,
        PickLoss,
        CompileEfficiency,
        ColumnCount
    };
    using QAbstractTableModel::QAbstractTableModel;
    void setResults(std::vector<diode::BiasProblem> problems);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<diode::BiasProblem> m_problems;
};
