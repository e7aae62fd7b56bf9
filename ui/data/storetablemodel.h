#pragma once

#include "common/flopunit.h"
#include "diode/store/storequery.h"

#include <QAbstractTableModel>
#include <QThread>

#include <atomic>
#include <memory>

class TablePageLoader;
struct TablePageResult;
struct TablePageRequest;

/// One table of the store (runs, problems, measurements, kernel or site lines) paged in as the view scrolls:
/// rows arrive in pages from a query thread with its own read-only connection, sorted and filtered in SQL, so
/// a million rows never load at once and the GUI thread never waits on SQLite.
class StoreTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    static constexpr int kPageSize = 1000;

    explicit StoreTableModel(diode::DataTable table, QObject *parent = nullptr);
    ~StoreTableModel() override;

    /// Shows `path` (empty: nothing); reloads from the first page.
    void setDatabase(const QString &path);
    void setFilter(const diode::DataFilter &filter);
    /// Drops what is loaded and asks for the first page again (the database changed).
    void reload();

    /// The unit the rate columns are written in (stored in TFLOP/s): the one the Data page's plots
    /// choose for the data's largest rate, so cpu data does not read "0.004 TFLOP/s".
    void setFlopUnit(const FlopUnit &unit);
    const FlopUnit &flopUnit() const { return m_unit; }

    /// Writes every matching row (not only those loaded) to `path` on the query thread.
    void exportCsv(const QString &path);

    qint64 totalRows() const { return m_total; }
    bool isLoading() const { return m_pending; }
    diode::DataTable table() const { return m_table; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    bool canFetchMore(const QModelIndex &parent) const override;
    void fetchMore(const QModelIndex &parent) override;
    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;

signals:
    /// A page arrived (rows appended); `total` counts every matching row.
    void pageLoaded(qint64 loaded, qint64 total);
    void failed(const QString &message);
    void exported(const QString &path, qint64 rows, const QString &error);

private:
    /// The table, filter and sort on show now, as a request for the loader thread.
    TablePageRequest currentRequest() const;
    void request(qint64 offset);
    void receive(const TablePageResult &result);

    diode::DataTable m_table;
    QString m_path;
    diode::DataFilter m_filter;
    diode::DataSort m_sort;
    FlopUnit m_unit;
    std::vector<std::vector<diode::Cell>> m_rows;
    qint64 m_total = 0;
    bool m_pending = false;
    // Shared with the query thread so it can skip requests made stale by a newer one.
    std::shared_ptr<std::atomic<int>> m_job = std::make_shared<std::atomic<int>>(0);
    QThread m_thread;
    TablePageLoader *m_loader;
};
