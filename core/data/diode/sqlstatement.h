#pragma once

#include "diode/gemmproblem.h"

#include <cstdint>
#include <string>
#include <string_view>

struct sqlite3_stmt;

namespace diode {

class Store;

/// The columns one reader turns into a GemmProblem, in this order; queries select them as
/// `kProblemColumns` (with a table alias where needed, e.g. "p.").
inline constexpr const char *kProblemColumnNames[] = {"op", "dtype",        "b",           "m", "n",
                                                      "k",  "a_transposed", "b_transposed"};
inline constexpr int kProblemColumnCount = 8;
/// "op, dtype, b, m, n, k, a_transposed, b_transposed" with each name prefixed by `alias`.
std::string problemColumns(std::string_view alias = {});

/// The one reader of a problem from an SQL row: the eight problem columns starting at `first`.
/// A value no build writes (an unknown op or dtype) is a StoreError naming it, never a guess.
GemmProblem problemFromRow(sqlite3_stmt *row, int first);

/// A prepared statement on a Store's connection that finalizes itself; every failure is a
/// StoreError naming the database. The one way code outside the Store reaches SQLite.
class SqlStatement {
public:
    SqlStatement(Store &store, std::string_view sql);
    ~SqlStatement();
    SqlStatement(const SqlStatement &) = delete;
    SqlStatement &operator=(const SqlStatement &) = delete;

    SqlStatement &bind(int i, int64_t v);
    SqlStatement &bind(int i, double v);
    SqlStatement &bind(int i, std::string_view v);
    SqlStatement &bindNull(int i);
    /// True while there is a row; false when done.
    bool step();

    bool isNull(int col) const;
    int type(int col) const; ///< SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB or SQLITE_NULL
    int64_t integer(int col) const;
    double real(int col) const;
    std::string text(int col) const;
    GemmProblem problem(int first) const { return problemFromRow(m_stmt, first); }

private:
    [[noreturn]] void fail(const char *what) const;
    Store &m_store;
    sqlite3_stmt *m_stmt = nullptr;
};

} // namespace diode
