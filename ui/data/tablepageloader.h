#pragma once

#include "diode/store/storequery.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <memory>

/// A request for rows [offset, offset + limit) of one table; plain values, copied across threads.
struct TablePageRequest {
    int job = 0;
    QString path;
    diode::DataTable table = diode::DataTable::Runs;
    diode::DataFilter filter;
    diode::DataSort sort;
    qint64 offset = 0;
    qint64 limit = 0;
};

struct TablePageResult {
    int job = 0;
    diode::TablePage page;
    QString error; ///< set when the query failed; names the database
};
Q_DECLARE_METATYPE(TablePageRequest)
Q_DECLARE_METATYPE(TablePageResult)

/// Lives on a query thread and keeps one read-only connection per database there.
class TablePageLoader : public QObject {
    Q_OBJECT
public:
    explicit TablePageLoader(std::shared_ptr<std::atomic<int>> currentJob);
    ~TablePageLoader() override;

    /// Runs on the loader's thread (queued call); a request older than the current job is skipped.
    void load(const TablePageRequest &request);
    /// Writes every row matching `request` (ignoring its page bounds) to `path` as CSV.
    void exportCsv(const TablePageRequest &request, const QString &path);

signals:
    void loaded(const TablePageResult &result);
    void exported(const QString &path, qint64 rows, const QString &error);

private:
    diode::StoreQuery &query(const QString &path);

    std::shared_ptr<std::atomic<int>> m_currentJob;
    std::unique_ptr<diode::StoreQuery> m_query;
    QString m_path;
};
