#include "sweep/failedproblemsmodel.h"

void FailedProblemsModel::append(const QString &problem, const QString &error) {
    const int row = int(m_problems.size());
    beginInsertRows({}, row, row);
    m_problems << problem;
    m_errors << error;
    endInsertRows();
}

void FailedProblemsModel::clear() {
    beginResetModel();
    m_problems.clear();
    m_errors.clear();
    endResetModel();
}

int FailedProblemsModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_problems.size());
}

int FailedProblemsModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : 2;
}

QVariant FailedProblemsModel::data(const QModelIndex &index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || (role != Qt::DisplayRole && role != Qt::ToolTipRole))
        return {};
    return index.column() == 0 ? m_problems.at(index.row()) : m_errors.at(index.row());
}

QVariant FailedProblemsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (role != Qt::DisplayRole || orientation != Qt::Horizontal)
        return {};
    return section == 0 ? tr("Problem") : section == 1 ? tr("Error") : QVariant();
}
