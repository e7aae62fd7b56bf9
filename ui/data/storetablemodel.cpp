#include "data/storetablemodel.h"

#include "data/tablepageloader.h"

#include <QLocale>
#include <QMetaObject>

#include <algorithm>
#include <cmath>
#include <optional>

namespace {

// How a column reads (its SQL lives in core/store/diode/store/storequery.cpp). Times are shown in µs with
// one decimal everywhere, so a 5 µs kernel and a 2 s cpu GEMM compare at a glance.
enum class Shown { Plain, TimeMs, Tflops, Seconds };

bool endsInMs(const std::string &header) {
    return header.size() > 3 && header.ends_with(" ms");
}

Shown shownAs(const std::string &header) {
    if (endsInMs(header))
        return Shown::TimeMs;
    if (header == "TFLOP/s" || header == "Best TFLOP/s")
        return Shown::Tflops;
    if (header == "Seconds")
        return Shown::Seconds;
    return Shown::Plain;
}

QString headerText(const std::string &header, const FlopUnit &unit) {
    if (header == "TFLOP/s")
        return unit.name;
    if (header == "Best TFLOP/s")
        return QObject::tr("Best %1").arg(unit.name);
    if (header == "Time ms")
        return QObject::tr("Time (µs)");
    if (header == "Best ms")
        return QObject::tr("Best (µs, one method)");
    if (header == "Seconds")
        return QObject::tr("Seconds (sweep)");
    if (endsInMs(header)) // the kernel and site lines' times
        return QObject::tr("%1 (µs)").arg(QString::fromStdString(header.substr(0, header.size() - 3)));
    // A cpu run's "GPU" is its CPU and its "SMs" that CPU's cores: cpu data in its own terms.
    if (header == "GPU")
        return QObject::tr("Hardware");
    if (header == "SMs")
        return QObject::tr("SMs / cores");
    return QString::fromStdString(header);
}

// Four significant digits without exponents: 1234, 123.4, 1.234, 0.001234.
QString fourDigits(double v) {
    if (v == 0)
        return QStringLiteral("0");
    const int decimals = std::clamp(3 - int(std::floor(std::log10(std::abs(v)))), 0, 9);
    return QLocale().toString(v, 'f', decimals);
}

} // namespace

StoreTableModel::StoreTableModel(diode::DataTable table, QObject *parent)
    : QAbstractTableModel(parent)
    , m_table(table)
    , m_loader(new TablePageLoader(m_job)) {
    m_thread.setObjectName(QStringLiteral("storeTableQuery"));
    m_loader->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_loader, &QObject::deleteLater);
    connect(m_loader, &TablePageLoader::loaded, this, &StoreTableModel::receive, Qt::QueuedConnection);
    connect(m_loader, &TablePageLoader::exported, this, &StoreTableModel::exported, Qt::QueuedConnection);
    m_thread.start();
}

StoreTableModel::~StoreTableModel() {
    ++*m_job; // queued requests are skipped
    m_thread.quit();
    m_thread.wait();
}

void StoreTableModel::setDatabase(const QString &path) {
    m_path = path;
    reload();
}

void StoreTableModel::setFilter(const diode::DataFilter &filter) {
    m_filter = filter;
    reload();
}

void StoreTableModel::reload() {
    ++*m_job;
    beginResetModel();
    m_rows.clear();
    m_total = 0;
    m_pending = false;
    endResetModel();
    if (!m_path.isEmpty())
        request(0);
}

TablePageRequest StoreTableModel::currentRequest() const {
    TablePageRequest r;
    r.job = m_job->load();
    r.path = m_path;
    r.table = m_table;
    r.filter = m_filter;
    r.sort = m_sort;
    return r;
}

void StoreTableModel::request(qint64 offset) {
    TablePageRequest r = currentRequest();
    r.offset = offset;
    r.limit = kPageSize;
    m_pending = true;
    QMetaObject::invokeMethod(
        m_loader, [loader = m_loader, r] { loader->load(r); }, Qt::QueuedConnection);
}

void StoreTableModel::exportCsv(const QString &path) {
    const TablePageRequest r = currentRequest();
    QMetaObject::invokeMethod(
        m_loader, [loader = m_loader, r, path] { loader->exportCsv(r, path); }, Qt::QueuedConnection);
}

void StoreTableModel::receive(const TablePageResult &result) {
    if (result.job != m_job->load())
        return; // stale: the filter, sort or database changed since
    if (!result.error.isEmpty()) {
        m_pending = false;
        emit failed(result.error);
        return;
    }
    m_total = result.page.total;
    if (!result.page.rows.empty() && result.page.offset == qint64(m_rows.size())) {
        // Still pending while the rows go in: a view (or QAbstractItemModelTester) that asks
        // for more from its rowsAboutToBeInserted/rowsInserted handlers must not request this
        // same page again.
        const int first = int(m_rows.size());
        beginInsertRows({}, first, first + int(result.page.rows.size()) - 1);
        m_rows.insert(m_rows.end(), result.page.rows.begin(), result.page.rows.end());
        endInsertRows();
    }
    m_pending = false;
    emit pageLoaded(qint64(m_rows.size()), m_total);
}

int StoreTableModel::rowCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int StoreTableModel::columnCount(const QModelIndex &parent) const {
    return parent.isValid() ? 0 : int(diode::columns(m_table).size());
}

QVariant StoreTableModel::data(const QModelIndex &index, int role) const {
    if (!index.isValid() || index.row() >= int(m_rows.size()) || index.column() >= columnCount())
        return {};
    const diode::Cell &cell = m_rows[size_t(index.row())][size_t(index.column())];
    if (role == Qt::TextAlignmentRole)
        return std::holds_alternative<std::string>(cell) ? QVariant()
                                                         : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole && role != Qt::EditRole)
        return {};
    const Shown shown = shownAs(diode::columns(m_table)[size_t(index.column())]);
    if (role == Qt::DisplayRole && shown != Shown::Plain) {
        const double *d = std::get_if<double>(&cell);
        const int64_t *i = std::get_if<int64_t>(&cell);
        const std::optional<double> v = d ? std::optional(*d) : i ? std::optional(double(*i)) : std::nullopt;
        // Unknown is n/a, never 0: imported runs carry no seconds, failed kernels no time.
        if (!v || (shown == Shown::Seconds && *v <= 0))
            return tr("n/a");
        switch (shown) {
        case Shown::TimeMs:
            return QLocale().toString(*v * 1000, 'f', 1);
        case Shown::Tflops:
            return fourDigits(*v * m_unit.scale);
        case Shown::Seconds:
            return QLocale().toString(*v, 'f', 1);
        case Shown::Plain:
            break;
        }
    }
    if (role == Qt::ToolTipRole && shown == Shown::Seconds && std::holds_alternative<std::monostate>(cell))
        return tr("Not recorded: imported problems carry no sweep time");
    if (auto *i = std::get_if<int64_t>(&cell))
        return QVariant::fromValue(qlonglong(*i));
    if (auto *d = std::get_if<double>(&cell))
        return role == Qt::DisplayRole ? QVariant(QString::number(*d, 'g', 5)) : QVariant(*d);
    if (auto *s = std::get_if<std::string>(&cell))
        return QString::fromStdString(*s);
    return {};
}

QVariant StoreTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    const auto &names = diode::columns(m_table);
    if (role == Qt::ToolTipRole && orientation == Qt::Horizontal && section >= 0 &&
        section < int(names.size()) && names[size_t(section)].starts_with("Best"))
        // Which times "best" is of: one method per problem, the rule train and eval use.
        return QObject::tr("The fastest successful time of one timing method per problem: graph_warm where "
                           "the problem has it, else cpu, else inductor_autotune (never a minimum over "
                           "methods)");
    if (role != Qt::DisplayRole)
        return {};
    if (orientation == Qt::Vertical)
        return section + 1;
    const auto &cols = diode::columns(m_table);
    return section >= 0 && section < int(cols.size()) ? QVariant(headerText(cols[size_t(section)], m_unit))
                                                      : QVariant();
}

void StoreTableModel::setFlopUnit(const FlopUnit &unit) {
    if (unit.scale == m_unit.scale)
        return;
    m_unit = unit;
    const int columns = columnCount();
    if (columns == 0)
        return;
    emit headerDataChanged(Qt::Horizontal, 0, columns - 1);
    if (!m_rows.empty())
        emit dataChanged(index(0, 0), index(rowCount() - 1, columns - 1), {Qt::DisplayRole});
}

bool StoreTableModel::canFetchMore(const QModelIndex &parent) const {
    return !parent.isValid() && !m_pending && qint64(m_rows.size()) < m_total;
}

void StoreTableModel::fetchMore(const QModelIndex &parent) {
    if (canFetchMore(parent))
        request(qint64(m_rows.size()));
}

void StoreTableModel::sort(int column, Qt::SortOrder order) {
    const diode::DataSort next{column, order == Qt::AscendingOrder};
    if (next.column == m_sort.column && next.ascending == m_sort.ascending)
        return;
    m_sort = next;
    reload();
}
