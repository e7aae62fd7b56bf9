#include "demo/demotablemodel.h"

#include "diode/analysis/wording.h"

#include <cmath>

void DemoTableModel::setResults(const diode::DemoResult &result) {
    beginResetModel();
    m_result = result;
    m_rows.clear();
    const auto modes = m_result.modesBaselinesFirst();
    for (const auto &c : m_result.cases)
        for (const auto &m : modes)
            if (c.results.count(m))
                m_rows.append({&c, m});
    endResetModel();
}

int DemoTableModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int DemoTableModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : Count;
}

QVariant DemoTableModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole && role != Qt::TextAlignmentRole)
        return {};
    const Row &r = m_rows[index.row()];
    const diode::DemoTiming &t = r.c->results.at(r.mode);
    auto num = [](double v, int digits) {
        return std::isnan(v) ? tr("n/a") : QString::number(v, 'f', digits);
    };
    auto against = [&](double v, const char *reference) {
        if (r.mode == reference)
            return tr("1× (reference)");
        return !(v > 0)
                   ? tr("n/a")
                   : QStringLiteral("%1×").arg(QString::fromStdString(diode::speedupText(v, v < 10 ? 2 : 1)));
    };
    using R = diode::DemoResult;
    if (role == Qt::TextAlignmentRole)
        return index.column() >= CompileS && index.column() <= KernelVsMaxAutotune
                   ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                   : QVariant();
    switch (index.column()) {
    case Case:
        return QString::fromStdString(r.c->name);
    case Kind:
        return QString::fromStdString(r.c->kind);
    case Mode:
        return QString::fromStdString(r.mode);
    case CompileS:
        return num(t.compileS.value_or(NAN), 2);
    case KernelUs:
        return num(t.kernelMs.value_or(NAN) * 1000, 1);
    case CompileVsPlain:
        return against(R::compileSpeedup(*r.c, r.mode, R::kPlain), R::kPlain);
    case KernelVsPlain:
        return against(R::kernelSpeedup(*r.c, r.mode, R::kPlain), R::kPlain);
    case CompileVsMaxAutotune:
        return against(R::compileSpeedup(*r.c, r.mode, R::kReference), R::kReference);
    case KernelVsMaxAutotune:
        return against(R::kernelSpeedup(*r.c, r.mode, R::kReference), R::kReference);
    case Error:
        return QString::fromStdString(t.error);
    default:
        return {};
    }
}

QVariant DemoTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole && section >= CompileVsPlain &&
        section <= KernelVsMaxAutotune)
        return section <= KernelVsPlain
                   ? tr("Against plain torch.compile (mode \"default\"): its time over this mode's; higher "
                        "is better")
                   : tr("Against max-autotune: its time over this mode's; higher is better");
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    static const char *names[] = {"case",
                                  "kind",
                                  "mode",
                                  "compile (s)",
                                  "kernel (µs)",
                                  "compile × vs plain",
                                  "kernel × vs plain",
                                  "compile × vs max-autotune",
                                  "kernel × vs max-autotune",
                                  "error"};
    return section >= 0 && section < Count ? QVariant(tr(names[section])) : QVariant();
}
