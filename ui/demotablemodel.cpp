#include "demotablemodel.h"

#include <cmath>

namespace {
enum Column { Case, Kind, Mode, CompileS, KernelMs, CompileSpeedup, KernelSpeed, Error, Count };
const std::string kReference = "max-autotune";

const diode::DemoTiming *timing(const diode::DemoCase &c, const std::string &mode)
{
    const auto it = c.results.find(mode);
    return it == c.results.end() || !it->second.error.empty() ? nullptr : &it->second;
}
} // namespace

double DemoTableModel::compileSpeedup(const diode::DemoCase &c, const std::string &mode)
{
    const auto *t = timing(c, mode), *ref = timing(c, kReference);
    if (!t || !ref || !t->compileS || !ref->compileS || *t->compileS <= 0) return NAN;
    return *ref->compileS / *t->compileS;
}

double DemoTableModel::kernelSpeed(const diode::DemoCase &c, const std::string &mode)
{
    const auto *t = timing(c, mode), *ref = timing(c, kReference);
    if (!t || !ref || !t->kernelMs || !ref->kernelMs || *t->kernelMs <= 0) return NAN;
    return *ref->kernelMs / *t->kernelMs;
}

void DemoTableModel::setResults(const diode::DemoResult &result)
{
    beginResetModel();
    m_result = result;
    m_rows.clear();
    for (const auto &c : m_result.cases)
        for (const auto &m : m_result.modes)
            if (c.results.count(m)) m_rows.append({&c, m});
    endResetModel();
}

int DemoTableModel::rowCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }

int DemoTableModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : Count; }

QVariant DemoTableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole) return {};
    const Row &r = m_rows[index.row()];
    const diode::DemoTiming &t = r.c->results.at(r.mode);
    auto num = [](double v, int digits) { return std::isnan(v) ? QStringLiteral("–") : QString::number(v, 'f', digits); };
    switch (index.column()) {
    case Case: return QString::fromStdString(r.c->name);
    case Kind: return QString::fromStdString(r.c->kind);
    case Mode: return QString::fromStdString(r.mode);
    case CompileS: return num(t.compileS.value_or(NAN), 2);
    case KernelMs: return num(t.kernelMs.value_or(NAN), 4);
    case CompileSpeedup: return num(compileSpeedup(*r.c, r.mode), 1);
    case KernelSpeed: return num(kernelSpeed(*r.c, r.mode), 3);
    case Error: return QString::fromStdString(t.error);
    default: return {};
    }
}

QVariant DemoTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, orientation, role);
    static const char *names[] = {"case", "kind", "mode", "compile (s)", "kernel (ms)",
                                  "compile speed-up vs max-autotune", "kernel speed vs max-autotune", "error"};
    return section >= 0 && section < Count ? QVariant(tr(names[section])) : QVariant();
}
