#include "demo/demokernelmodel.h"

void DemoKernelModel::setResults(const diode::DemoCase &step, const std::vector<std::string> &modes) {
    beginResetModel();
    m_rows.clear();
    for (const auto &mode : modes) {
        const auto it = step.results.find(mode);
        if (it == step.results.end() || !it->second.error.empty())
            continue;
        double total = 0;
        for (const auto &k : it->second.breakdown)
            total += k.us;
        const auto &kernels = it->second.breakdown; // largest first (DemoResult reads them so)
        for (size_t i = 0; i < kernels.size() && i < size_t(kPerMode); ++i)
            m_rows.append({QString::fromStdString(diode::DemoResult::modeTitle(mode)), kernels[i], total});
    }
    endResetModel();
}

int DemoKernelModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int DemoKernelModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : Count;
}

QVariant DemoKernelModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row &r = m_rows[index.row()];
    if (role == Qt::TextAlignmentRole)
        return index.column() >= Us ? QVariant(Qt::AlignRight | Qt::AlignVCenter) : QVariant();
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    switch (index.column()) {
    case Mode:
        return r.mode;
    case Kernel:
        return QString::fromStdString(r.kernel.name);
    case Category:
        return QString::fromStdString(r.kernel.category);
    case Us:
        return QString::number(r.kernel.us, 'f', 1);
    case Share:
        return r.stepUs > 0 ? QStringLiteral("%1 %").arg(100 * r.kernel.us / r.stepUs, 0, 'f', 1)
                            : QStringLiteral("n/a");
    default:
        return {};
    }
}

QVariant DemoKernelModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    static const char *names[] = {"mode", "kernel", "kind", "µs a step", "share of the step"};
    return section >= 0 && section < Count ? QVariant(tr(names[section])) : QVariant();
}
