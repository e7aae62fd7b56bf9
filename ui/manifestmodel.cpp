#include "manifestmodel.h"

namespace {

void flatten(const nlohmann::json &j, const QString &path, QVector<QPair<QString, QString>> &out)
{
    if (j.is_object()) {
        for (const auto &[k, v] : j.items()) flatten(v, path.isEmpty() ? QString::fromStdString(k) : path + '.' + QString::fromStdString(k), out);
        return;
    }
    if (j.is_array() && (j.size() > 8 || (!j.empty() && j.front().is_structured()))) {
        out.append({path, QStringLiteral("[%1 entries]").arg(j.size())});
        return;
    }
    if (j.is_string()) out.append({path, QString::fromStdString(j.get<std::string>())});
    else if (j.is_number_float()) out.append({path, QString::number(j.get<double>(), 'g', 6)});
    else out.append({path, QString::fromStdString(j.dump())});
}

} // namespace

void ManifestModel::setResults(const nlohmann::json &manifest)
{
    beginResetModel();
    m_rows.clear();
    flatten(manifest, QString(), m_rows);
    endResetModel();
}

int ManifestModel::rowCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }

int ManifestModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : 2; }

QVariant ManifestModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
    const auto &row = m_rows[index.row()];
    return index.column() == 0 ? row.first : row.second;
}

QVariant ManifestModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, orientation, role);
    return section == 0 ? tr("key") : section == 1 ? tr("value") : QVariant();
}
