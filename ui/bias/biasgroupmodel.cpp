#include "bias/biasgroupmodel.h"

#include <QFont>

#include <optional>

namespace {

QString na() {
    return QStringLiteral("n/a");
}

QString number(std::optional<double> v, int precision, const QString &suffix = {}) {
    return v ? QString::number(*v, 'f', precision) + suffix : na();
}

QVariant sortKey(std::optional<double> v) {
    return v ? *v : -1.0;
} // n/a sorts below every value

} // namespace

void BiasGroupModel::setResults(std::vector<diode::BiasGroup> groups) {
    beginResetModel();
    m_groups = std::move(groups);
    endResetModel();
}

int BiasGroupModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_groups.size());
}

int BiasGroupModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant BiasGroupModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const diode::BiasGroup &g = m_groups[size_t(index.row())];
    const std::optional<double> pickShare = g.pickShare();
    auto value = [&]() -> std::optional<double> {
        switch (index.column()) {
        case Problems:
            return g.problems;
        case MaxAutotuneMean:
            return g.maxAutotune.mean;
        case MaxAutotuneP10:
            return g.maxAutotune.p10;
        case CompileMean:
            return g.plainCompile.mean;
        case CompileP10:
            return g.plainCompile.p10;
        case AtenMean:
            return g.bestAten.mean;
        case AtenP10:
            return g.bestAten.p10;
        case PickIsFastest:
            return pickShare;
        case AtenInflation:
            return g.atenInflation;
        case TritonInflation:
            return g.tritonInflation;
        default:
            return std::nullopt;
        }
    };
    auto text = [&](int column) -> QString {
        switch (column) {
        case Op:
            return QString::fromStdString(g.op);
        case Dtype:
            return QString::fromStdString(g.dtype);
        case SizeClass:
            return QString::fromStdString(g.sizeClass);
        case Problems:
            return QString::number(g.problems);
        case PickIsFastest:
            return number(pickShare, 0, QStringLiteral("%"));
        case AtenInflation:
        case TritonInflation:
            return number(value(), 2, QStringLiteral("×"));
        default:
            return number(value(), 3);
        }
    };
    // Max-autotune's pick exists only where the sweep ran Inductor's own benchmark (a sample of
    // the problems): its columns say over how many when fewer than the row's.
    const bool pickColumn = index.column() == MaxAutotuneMean || index.column() == MaxAutotuneP10 ||
                            index.column() == PickIsFastest;
    const bool sampled = pickColumn && g.maxAutotune.count > 0 && g.maxAutotune.count < g.problems;
    switch (role) {
    case Qt::DisplayRole:
        return sampled ? tr("%1 (%L2)").arg(text(index.column())).arg(g.maxAutotune.count)
                       : text(index.column());
    case Qt::ToolTipRole:
        if (sampled)
            return tr("Over the %L1 of %L2 problems where Inductor's own benchmark ran (max-autotune's pick)")
                .arg(g.maxAutotune.count)
                .arg(g.problems);
        return {};
    case Qt::UserRole:
        if (index.column() <= SizeClass) {
            // The overall row, then the per-op rows, stay on top when sorted by name.
            return QStringLiteral("%1%2")
                .arg(g.op == "all"      ? 0
                     : g.dtype == "all" ? 1
                                        : 2)
                .arg(text(index.column()));
        }
        return sortKey(value());
    case Qt::TextAlignmentRole:
        return index.column() <= SizeClass ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                           : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::FontRole:
        if (g.op == "all") {
            QFont bold;
            bold.setBold(true);
            return bold;
        }
        return {};
    default:
        return {};
    }
}

QVariant BiasGroupModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    static const char *const names[] = {"op",
                                        "dtype",
                                        "size",
                                        "problem lines",
                                        "torch.compile",
                                        "torch.compile P10",
                                        "max-autotune",
                                        "max-autotune P10",
                                        "best ATen",
                                        "best ATen P10",
                                        "pick fastest",
                                        "Inductor/ATen",
                                        "Inductor/Triton"};
    static const char *const tips[] = {
        nullptr,
        nullptr,
        nullptr,
        "Problem lines with in-graph times in this group (a problem once per run that measured it)",
        "Mean efficiency of plain torch.compile (no max-autotune): fastest in-graph time over its (1 = "
        "fastest)",
        "10th percentile of plain torch.compile's efficiency: the bad tail",
        "Mean efficiency of max-autotune's pick: fastest in-graph time over the pick's (1 = fastest)",
        "10th percentile of max-autotune's efficiency",
        "Mean efficiency of the best ATen kernel",
        "10th percentile of the best ATen kernel's efficiency",
        "Share of problems where max-autotune picked the fastest candidate in graph",
        "Geometric mean of Inductor's autotune time over the in-graph time, ATen candidates",
        "Geometric mean of Inductor's autotune time over the in-graph time, Triton candidates"};
    if (role == Qt::DisplayRole)
        return tr(names[section]);
    if (role == Qt::ToolTipRole && tips[section])
        return tr(tips[section]);
    return {};
}
