#include "common/metricsmodel.h"

namespace {
enum Column {
    Selector,
    Problems,
    Top1Mean,
    Top1P10,
    Top1Min,
    Top3Mean,
    Top5Mean,
    Hit1,
    Spearman,
    Mape,
    RmseLog,
    Count
};

diode::Distribution distribution(const nlohmann::json &j) {
    diode::Distribution d;
    d.mean = j.value("mean", 0.0);
    d.p10 = j.value("p10", 0.0);
    d.min = j.value("min", 0.0);
    return d;
}
} // namespace

MetricsRow MetricsRow::fromJson(const QString &selector, const nlohmann::json &j, bool predictsTimes) {
    MetricsRow r{selector, {}, predictsTimes};
    if (!j.is_object())
        return r;
    r.metrics.top1 = distribution(j.value("top1_efficiency", nlohmann::json::object()));
    r.metrics.top3 = distribution(j.value("top3_efficiency", nlohmann::json::object()));
    r.metrics.top5 = distribution(j.value("top5_efficiency", nlohmann::json::object()));
    r.metrics.hit1 = j.value("top1_hit", 0.0);
    r.metrics.hit3 = j.value("top3_hit", 0.0);
    r.metrics.hit5 = j.value("top5_hit", 0.0);
    r.metrics.spearman = j.value("spearman", 0.0);
    r.metrics.mape = j.value("mape", 0.0);
    r.metrics.rmseLog = j.value("rmse_log", 0.0);
    r.metrics.problems = j.value("problems", int64_t(0));
    return r;
}

void MetricsModel::setResults(const QVector<MetricsRow> &rows) {
    beginResetModel();
    m_rows = rows;
    endResetModel();
}

int MetricsModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int MetricsModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : Count;
}

QVariant MetricsModel::data(const QModelIndex &index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const MetricsRow &r = m_rows[index.row()];
    const auto &m = r.metrics;
    if (role == Qt::TextAlignmentRole)
        return index.column() == Selector ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                          : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && (index.column() == Mape || index.column() == RmseLog) && !r.predictsTimes)
        return tr("A baseline predicts no times: no error to measure");
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    auto f = [](double v, int digits = 4) { return QString::number(v, 'f', digits); };
    switch (index.column()) {
    case Selector:
        return r.selector;
    case Problems:
        return qlonglong(m.problems);
    case Top1Mean:
        return f(m.top1.mean);
    case Top1P10:
        return f(m.top1.p10);
    case Top1Min:
        return f(m.top1.min);
    case Top3Mean:
        return f(m.top3.mean);
    case Top5Mean:
        return f(m.top5.mean);
    case Hit1:
        return f(m.hit1, 3);
    case Spearman:
        return f(m.spearman, 3);
    case Mape:
        return r.predictsTimes ? QVariant(f(m.mape, 3)) : QVariant(tr("n/a"));
    case RmseLog:
        return r.predictsTimes ? QVariant(f(m.rmseLog, 3)) : QVariant(tr("n/a"));
    default:
        return {};
    }
}

QVariant MetricsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    static const char *names[] = {"selector",  "problem lines", "top-1 mean", "top-1 P10",
                                  "top-1 min", "top-3 mean",    "top-5 mean", "hit@1",
                                  "Spearman",  "MAPE",          "RMSE ln(t)"};
    return section >= 0 && section < Count ? QVariant(tr(names[section])) : QVariant();
}
