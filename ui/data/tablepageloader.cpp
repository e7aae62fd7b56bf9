#include "data/tablepageloader.h"

#include <fstream>

TablePageLoader::TablePageLoader(std::shared_ptr<std::atomic<int>> currentJob)
    : m_currentJob(std::move(currentJob)) {
    qRegisterMetaType<TablePageRequest>();
    qRegisterMetaType<TablePageResult>();
}

TablePageLoader::~TablePageLoader() = default;

void TablePageLoader::load(const TablePageRequest &request) {
    if (request.job != m_currentJob->load())
        return; // a newer request replaced this one
    TablePageResult result;
    result.job = request.job;
    try {
        result.page = query(request.path)
                          .page(request.table, request.filter, request.sort, request.offset, request.limit);
    } catch (const std::exception &e) {
        m_query.reset(); // reopen next time: the file may have been replaced
        result.error = QString::fromStdString(e.what());
    }
    emit loaded(result);
}

diode::StoreQuery &TablePageLoader::query(const QString &path) {
    if (!m_query || path != m_path) {
        m_query.reset();
        m_path = path;
        m_query = std::make_unique<diode::StoreQuery>(path.toStdString());
    }
    return *m_query;
}

void TablePageLoader::exportCsv(const TablePageRequest &request, const QString &path) {
    qint64 rows = 0;
    QString error;
    try {
        std::ofstream out(path.toStdString(), std::ios::binary | std::ios::trunc);
        if (!out)
            throw std::runtime_error("cannot open the file for writing");
        rows = diode::writeCsv(query(request.path), request.table, request.filter, request.sort, out);
        out.flush();
        if (!out)
            throw std::runtime_error("writing failed (disk full?)");
    } catch (const std::exception &e) {
        m_query.reset();
        error = tr("Could not write %1: %2").arg(path, QString::fromStdString(e.what()));
    }
    emit exported(path, rows, error);
}
