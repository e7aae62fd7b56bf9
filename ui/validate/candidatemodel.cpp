#include "validate/candidatemodel.h"

#include <cmath>

namespace {
constexpr int kFixedColumns = 4; // config, measured, measured rank, efficiency
}

void CandidateModel::setResults(const QStringList &modelNames, const QVector<CandidateRow> &rows) {
    beginResetModel();
    m_models = modelNames;
    m_rows = rows;
    endResetModel();
}

int CandidateModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int CandidateModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : kFixedColumns + 2 * int(m_models.size());
}

QVariant CandidateModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const CandidateRow &r = m_rows[index.row()];
    const int col = index.column();
    // Sorting goes through the edit role: numbers sort as numbers, missing timings last.
    if (role == Qt::EditRole || role == Qt::UserRole) {
        if (col == 0)
            return r.config;
        if (col == 1)
            return std::isnan(r.measuredMs) ? 1e300 : r.measuredMs;
        if (col == 2)
            return r.measuredRank ? r.measuredRank : 1 << 30;
        if (col == 3)
            return r.efficiency;
        const int m = (col - kFixedColumns) / 2;
        return (col - kFixedColumns) % 2 == 0 ? QVariant(r.predictedMs.value(m))
                                              : QVariant(r.modelRank.value(m));
    }
    if (role == Qt::TextAlignmentRole)
        return col == 0 ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                        : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole)
        return {};
    switch (col) {
    case 0:
        return r.config;
    case 1:
        return std::isnan(r.measuredMs) ? QStringLiteral("no timing") : QString::number(r.measuredMs, 'g', 4);
    case 2:
        return r.measuredRank ? QVariant(r.measuredRank) : QVariant(QStringLiteral("–"));
    case 3:
        return QString::number(r.efficiency, 'f', 3);
    default:
        break;
    }
    const int m = (col - kFixedColumns) / 2;
    if ((col - kFixedColumns) % 2 == 0) {
        const double p = r.predictedMs.value(m, NAN);
        return std::isnan(p) ? QStringLiteral("–") : QString::number(p, 'g', 4);
    }
    return r.modelRank.value(m);
}

QVariant CandidateModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    static const char *fixed[] = {"config", "measured (ms)", "measured rank", "efficiency"};
    if (section < 0 || section >= columnCount())
        return {};
    if (section < kFixedColumns)
        return tr(fixed[section]);
    const QString model = m_models.value((section - kFixedColumns) / 2);
    return (section - kFixedColumns) % 2 == 0 ? tr("%1 predicted (ms)").arg(model) : tr("%1 rank").arg(model);
}
