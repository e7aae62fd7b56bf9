#pragma once

#include "diode/infer/gemmproblem.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

struct sqlite3;
struct sqlite3_stmt;

namespace diode {

/// A store failure a user can act on: the path, what was attempted and SQLite's reason.
class StoreError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The file given as a database cannot be read as one: it does not exist (opened to read), is not
/// an SQLite database, or is corrupt. Bad input, unlike a full disk: the CLI exits 2.
class StoreUnreadable : public StoreError {
public:
    using StoreError::StoreError;
};

/// Opened to read, the database holds nothing yet: no table, no schema version (a file another
/// process is setting up, or one a failed command left). Bad input to a reader.
class EmptyDatabase : public InvalidInput {
public:
    using InvalidInput::InvalidInput;
};

/// Throws StoreUnreadable with `message` when SQLite's `code` (an extended result code) says the file
/// is not a database or is corrupt; StoreError otherwise.
[[noreturn]] void throwStoreError(int code, const std::string &message);

/// One SQLite connection and the statements kept on it: what a Store is built on, and all that
/// SqlStatement needs of it (the statement layer sits below the store, not beside it).
class SqlConnection {
public:
    const std::string &path() const { return m_path; }
    /// SQLite's message for the connection's latest failure, with a hint where the disk may be full.
    std::string lastError() const;

protected:
    explicit SqlConnection(std::string path)
        : m_path(std::move(path)) {}
    ~SqlConnection() = default;
    /// What to check after a write failed for want of space: SQLite says "disk I/O error" when the
    /// file size limit is hit and "database or disk is full" on ENOSPC.
    static std::string diskHint(sqlite3 *db);

    friend class SqlStatement;
    std::string m_path;
    sqlite3 *m_db = nullptr;
    // SqlStatement's cached statements, keyed by the SQL text's address (a literal or a
    // function-static string).
    std::unordered_map<const void *, sqlite3_stmt *> m_stmts;
};

/// The columns one reader turns into a GemmProblem, in this order; queries select them as
/// `kProblemColumns` (with a table alias where needed, e.g. "p.").
inline constexpr const char *kProblemColumnNames[] = {"op", "dtype",        "b",           "m", "n",
                                                      "k",  "a_transposed", "b_transposed"};
inline constexpr int kProblemColumnCount = 8;
/// "op, dtype, b, m, n, k, a_transposed, b_transposed" with each name prefixed by `alias`.
std::string problemColumns(std::string_view alias = {});

/// A prepared statement on a connection (a Store): the one way code, the Store's own included,
/// reaches SQLite's statements. Every failure is a StoreError naming the database.
class SqlStatement {
public:
    /// Prepared for this use and finalized at the end of its scope.
    SqlStatement(SqlConnection &connection, std::string_view sql);
    /// The connection's persistent statement for `sql`, prepared on first use and kept until the
    /// Store closes (the ingest path runs one statement per measurement); reset, its bindings
    /// cleared, at the end of this scope. Keyed by the text's address: pass a literal or a
    /// function-static string.
    struct Cached {};
    SqlStatement(SqlConnection &connection, const char *sql, Cached);
    ~SqlStatement();
    SqlStatement(const SqlStatement &) = delete;
    SqlStatement &operator=(const SqlStatement &) = delete;

    SqlStatement &bind(int i, int64_t v);
    SqlStatement &bind(int i, int v) { return bind(i, int64_t(v)); }
    SqlStatement &bind(int i, double v);
    SqlStatement &bind(int i, std::string_view v);
    SqlStatement &bind(int i, const std::string &v) { return bind(i, std::string_view(v)); }
    SqlStatement &bind(int i, const char *v) { return bind(i, std::string_view(v)); }
    SqlStatement &bindNull(int i);
    /// True while there is a row; false when done. A failure is a StoreError "database 'PATH':
    /// WHAT: SQLite's message" (with a hint where the disk may be full).
    bool step(std::string_view what = "query failed");
    /// step() for a statement that must give a row (a count, RETURNING): StoreError `what` if none.
    void stepRow(std::string_view what);
    /// step() for a statement that returns no row (INSERT, UPDATE).
    void run(std::string_view what) { step(what); }
    /// The rowid of the connection's latest INSERT.
    int64_t lastInsertId() const;

    bool isNull(int col) const;
    int type(int col) const; ///< SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT, SQLITE_BLOB or SQLITE_NULL
    int64_t integer(int col) const;
    double real(int col) const;
    std::string text(int col) const;
    /// The one reader of a problem from a row: the eight problem columns starting at `first`. A
    /// value no build writes (an unknown op or dtype) is a StoreError naming it, never a guess.
    GemmProblem problem(int first) const;

private:
    [[noreturn]] void fail(std::string_view what) const;
    SqlConnection &m_store;
    sqlite3_stmt *m_stmt = nullptr;
    bool m_cached = false;
};

} // namespace diode
