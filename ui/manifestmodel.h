#pragma once

#include <nlohmann/json.hpp>

#include <QAbstractTableModel>
#include <QVector>

/// A package manifest flattened to (key path, value) rows for the Export page's preview.
/// Long arrays (feature names, the tensor table) are summarised rather than listed.
class ManifestModel : public QAbstractTableModel {
    Q_OBJECT
public:
    using QAbstractTableModel::QAbstractTableModel;
    void setResults(const nlohmann::json &manifest);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVector<QPair<QString, QString>> m_rows;
};
