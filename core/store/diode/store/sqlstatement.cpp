#include "sqlstatement.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sqlite3.h>

namespace diode {

namespace {

std::string columnText(sqlite3_stmt *s, int col) {
    auto *p = sqlite3_column_text(s, col);
    return p ? std::string(reinterpret_cast<const char *>(p)) : std::string();
}

} // namespace

std::string SqlConnection::diskHint(sqlite3 *db) {
    const int code = sqlite3_errcode(db) & 0xff; // extended codes are on: SQLITE_IOERR_WRITE and kin
    return code == SQLITE_FULL || code == SQLITE_IOERR ? " (is its disk full, or the file size limited?)"
                                                       : "";
}

std::string SqlConnection::lastError() const {
    return sqlite3_errmsg(m_db) + diskHint(m_db);
}

std::string problemColumns(std::string_view alias) {
    std::string out;
    for (const char *c : kProblemColumnNames) {
        if (!out.empty())
            out += ", ";
        out += alias;
        out += c;
    }
    return out;
}

GemmProblem SqlStatement::problem(int c0) const {
    sqlite3_stmt *s = m_stmt;
    GemmProblem p;
    const std::string op = columnText(s, c0), dtype = columnText(s, c0 + 1);
    const auto o = parseOp(op);
    if (!o)
        throw StoreError(fmt::format("a stored problem has op '{}'; this build knows {}", op, opNames()));
    const auto d = parseDType(dtype);
    if (!d)
        throw StoreError(fmt::format("a stored problem has dtype '{}'; this build knows {}", dtype,
                                     fmt::join(dtypeNameList(), ", ")));
    p.op = *o;
    p.dtype = *d;
    p.batch = sqlite3_column_int64(s, c0 + 2);
    p.m = sqlite3_column_int64(s, c0 + 3);
    p.n = sqlite3_column_int64(s, c0 + 4);
    p.k = sqlite3_column_int64(s, c0 + 5);
    p.aTransposed = sqlite3_column_int(s, c0 + 6) != 0;
    p.bTransposed = sqlite3_column_int(s, c0 + 7) != 0;
    // The schema checks sizes >= 1 only: a row written by another program reaches here too.
    try {
        validate(p, "a stored problem");
    } catch (const InvalidInput &e) {
        throw StoreError(e.what());
    }
    return p;
}

SqlStatement::SqlStatement(SqlConnection &store, std::string_view sql)
    : m_store(store) {
    if (sqlite3_prepare_v2(store.m_db, sql.data(), int(sql.size()), &m_stmt, nullptr) != SQLITE_OK)
        fail("cannot prepare query");
}

SqlStatement::SqlStatement(SqlConnection &store, const char *sql, Cached)
    : m_store(store)
    , m_cached(true) {
    auto &slot = store.m_stmts[static_cast<const void *>(sql)];
    if (!slot &&
        sqlite3_prepare_v3(store.m_db, sql, -1, SQLITE_PREPARE_PERSISTENT, &slot, nullptr) != SQLITE_OK) {
        store.m_stmts.erase(static_cast<const void *>(sql));
        fail("cannot prepare statement");
    }
    m_stmt = slot;
}

SqlStatement::~SqlStatement() {
    if (m_cached) {
        sqlite3_reset(m_stmt);
        sqlite3_clear_bindings(m_stmt);
    } else {
        sqlite3_finalize(m_stmt);
    }
}

SqlStatement &SqlStatement::bind(int i, int64_t v) {
    sqlite3_bind_int64(m_stmt, i, v);
    return *this;
}
SqlStatement &SqlStatement::bind(int i, double v) {
    sqlite3_bind_double(m_stmt, i, v);
    return *this;
}
SqlStatement &SqlStatement::bind(int i, std::string_view v) {
    sqlite3_bind_text(m_stmt, i, v.data(), int(v.size()), SQLITE_TRANSIENT);
    return *this;
}
SqlStatement &SqlStatement::bindNull(int i) {
    sqlite3_bind_null(m_stmt, i);
    return *this;
}

bool SqlStatement::step(std::string_view what) {
    const int rc = sqlite3_step(m_stmt);
    if (rc == SQLITE_ROW)
        return true;
    if (rc != SQLITE_DONE)
        fail(what);
    return false;
}

void SqlStatement::stepRow(std::string_view what) {
    if (!step(what))
        throw StoreError(fmt::format("database '{}': {}: no row", m_store.path(), what));
}

int64_t SqlStatement::lastInsertId() const {
    return sqlite3_last_insert_rowid(m_store.m_db);
}

bool SqlStatement::isNull(int col) const {
    return sqlite3_column_type(m_stmt, col) == SQLITE_NULL;
}
int SqlStatement::type(int col) const {
    return sqlite3_column_type(m_stmt, col);
}
int64_t SqlStatement::integer(int col) const {
    return sqlite3_column_int64(m_stmt, col);
}
double SqlStatement::real(int col) const {
    return sqlite3_column_double(m_stmt, col);
}
std::string SqlStatement::text(int col) const {
    return columnText(m_stmt, col);
}

void SqlStatement::fail(std::string_view what) const {
    throwStoreError(sqlite3_extended_errcode(m_store.m_db),
                    fmt::format("database '{}': {}: {}", m_store.path(), what, m_store.lastError()));
}

} // namespace diode
