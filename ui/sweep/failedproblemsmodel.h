#pragma once

#include <QAbstractTableModel>
#include <QStringList>

/// Problems of a sweep that failed, with the error each ended with.
class FailedProblemsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    using QAbstractTableModel::QAbstractTableModel;
    void append(const QString &problem, const QString &error);
    void clear();

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QStringList m_problems;
    QStringList m_errors;
};
