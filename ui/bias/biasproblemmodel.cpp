#include "bias/biasproblemmodel.h"

#include "common/configlabel.h"

#include <optional>

void BiasProblemModel::setResults(std::vector<diode::BiasProblem> problems) {
    beginResetModel();
    m_problems = std::move(problems);
    endResetModel();
}

int BiasProblemModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_problems.size());
}

int BiasProblemModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant BiasProblemModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const diode::BiasProblem &p = m_problems[size_t(index.row())];
    std::optional<double> loss;
    if (auto e = p.pickEfficiency())
        loss = 1.0 - *e;
    std::optional<double> pickUs;
    if (p.pickMs)
        pickUs = *p.pickMs * 1000;
    auto value = [&]() -> std::optional<double> {
        switch (index.column()) {
        case FastestUs:
            return p.fastestMs * 1000;
        case PickUs:
            return pickUs;
        case PickLoss:
            return loss;
        case CompileEfficiency:
            return p.defaultEfficiency();
        default:
            return std::nullopt;
        }
    };
    auto text = [&]() -> QString {
        switch (index.column()) {
        case Problem:
            return QString::fromStdString(p.problem.label());
        case SizeClass:
            return QString::fromStdString(p.sizeClass);
        case Fastest: // named as on the Validate page, not as raw JSON
            return configLabel(p.fastestConfig);
        case Pick:
            return p.pickConfig.empty() ? QStringLiteral("n/a") : configLabel(p.pickConfig);
        case PickLoss:
            return loss ? QStringLiteral("%1%").arg(*loss * 100, 0, 'f', 1) : QStringLiteral("n/a");
        case CompileEfficiency: {
            const auto e = value();
            return e ? QString::number(*e, 'f', 3) : QStringLiteral("n/a");
        }
        default: {
            const auto us = value();
            return us ? QString::number(*us, 'f', 2) : QStringLiteral("n/a");
        }
        }
    };
    switch (role) {
    case Qt::DisplayRole:
        return text();
    case Qt::UserRole:
        switch (index.column()) {
        case Problem:
        case SizeClass:
        case Fastest:
        case Pick:
            return text();
        default:
            return value().value_or(-1.0);
        }
    case Qt::TextAlignmentRole:
        return (index.column() == FastestUs || index.column() == PickUs || index.column() == PickLoss ||
                index.column() == CompileEfficiency)
                   ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                   : QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    case Qt::ToolTipRole:
        if (index.column() == Pick && p.pickIsFastest)
            return tr("max-autotune picked the fastest candidate");
        return {};
    default:
        return {};
    }
}

QVariant BiasProblemModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    static const char *const names[] = {"problem",           "size",         "fastest (µs)",
                                        "fastest candidate", "pick (µs)",    "max-autotune pick",
                                        "pick loss",         "torch.compile"};
    static const char *const tips[] = {
        nullptr,
        nullptr,
        "In-graph time of the fastest candidate",
        nullptr,
        "In-graph time of max-autotune's pick",
        "The candidate max-autotune picked from Inductor's own benchmark",
        "What max-autotune's pick loses against the fastest candidate: 1 - efficiency",
        "Efficiency of plain torch.compile: fastest in-graph time over its time (1 = fastest)"};
    if (role == Qt::DisplayRole)
        return tr(names[section]);
    if (role == Qt::ToolTipRole && tips[section])
        return tr(tips[section]);
    return {};
}
