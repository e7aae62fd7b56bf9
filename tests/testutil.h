#pragma once

#include "diode/config.h"
#include "diode/store/store.h"

#include <QDir>
#include <QProcess>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>

#include <sqlite3.h>

#include <string>

namespace testutil {

/// GUI suites keep their QSettings apart from the workbench's and from each other, and start
/// from none, so a setting left by an earlier run (a page's last backend, say) changes nothing.
inline void freshSettings(const char *suite) {
    QCoreApplication::setOrganizationName(QStringLiteral("diode-test"));
    QCoreApplication::setApplicationName(QString::fromLatin1(suite));
    QSettings().clear();
}

inline QString dataPath(const QString &rel) {
    return QStringLiteral(DIODE_TEST_DATA "/") + rel;
}
inline QString sourcePath(const QString &rel) {
    return QStringLiteral(DIODE_SOURCE_DIR "/") + rel;
}

/// Writes `bytes` to `path` (a test's input file), failing the test if it cannot.
inline void writeFile(const QString &path, const QByteArray &bytes) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

/// Runs `program` with `env` ("NAME=value") added to this process's environment; returns the exit
/// code, with stdout/stderr in the out-params; -1 when it crashed or ran past `timeoutMs` (then killed).
inline int runProgram(const QString &program, const QStringList &args, const QStringList &env = {},
                      QString *out = nullptr, QString *err = nullptr, int timeoutMs = 120000,
                      const QString &workingDir = {}) {
    QProcess p;
    if (!workingDir.isEmpty())
        p.setWorkingDirectory(workingDir);
    if (!env.isEmpty()) {
        auto e = QProcessEnvironment::systemEnvironment();
        for (const auto &kv : env)
            e.insert(kv.section('=', 0, 0), kv.section('=', 1));
        p.setProcessEnvironment(e);
    }
    p.start(program, args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        return -1;
    }
    if (out)
        *out = QString::fromUtf8(p.readAllStandardOutput());
    if (err)
        *err = QString::fromUtf8(p.readAllStandardError());
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

/// Runs the real `diode` CLI (in `workingDir`, else this process's), as runProgram.
inline int runCli(const QStringList &args, QString *out = nullptr, QString *err = nullptr,
                  int timeoutMs = 120000, const QString &workingDir = {}) {
    return runProgram(QStringLiteral(DIODE_CLI), args, {}, out, err, timeoutMs, workingDir);
}

// Opened read-write, as the next diode process would: after a SIGKILL the WAL must be
// recovered, which a read-only connection cannot do.
inline std::string integrityCheck(const QString &path) {
    sqlite3 *db = nullptr;
    sqlite3_open_v2(path.toStdString().c_str(), &db, SQLITE_OPEN_READWRITE, nullptr);
    sqlite3_stmt *s = nullptr;
    if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, nullptr) != SQLITE_OK) {
        std::string err = std::string("cannot check: ") + sqlite3_errmsg(db);
        sqlite3_close(db);
        return err;
    }
    std::string result;
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        result += reinterpret_cast<const char *>(sqlite3_column_text(s, 0));
    if (rc != SQLITE_DONE)
        result += std::string(" (step failed: ") + sqlite3_errmsg(db) + ")";
    sqlite3_finalize(s);
    sqlite3_close(db);
    return result;
}

/// Runs `sql` on the database `path` (creating it), as another program would: no diode connection.
inline void execSql(const QString &path, const QByteArray &sql) {
    sqlite3 *db = nullptr;
    QCOMPARE(sqlite3_open(path.toUtf8().constData(), &db), SQLITE_OK);
    char *err = nullptr;
    const int rc = sqlite3_exec(db, sql.constData(), nullptr, nullptr, &err);
    QVERIFY2(rc == SQLITE_OK, err);
    sqlite3_close(db);
}

/// The first column of the first row, or -1 when there is none (an error's reason on the test's log). Like
/// any reader of a store the application may still be writing, it waits for a writer's lock instead of
/// failing.
inline int64_t scalar(const QString &path, const char *sql) {
    sqlite3 *db = nullptr;
    sqlite3_open_v2(path.toStdString().c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_busy_timeout(db, 10000);
    sqlite3_stmt *s = nullptr;
    sqlite3_prepare_v2(db, sql, -1, &s, nullptr);
    const int rc = sqlite3_step(s);
    const int64_t v = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        qWarning("scalar(%s, %s): %s", qPrintable(path), sql, sqlite3_errmsg(db));
    sqlite3_finalize(s);
    sqlite3_close(db);
    return v;
}

/// Every row of a query, columns joined by '|' (NULL as empty), sorted: what two stores holding
/// the same data agree on whatever their ids.
inline QStringList rows(const QString &path, const char *sql) {
    sqlite3 *db = nullptr;
    sqlite3_open_v2(path.toStdString().c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_busy_timeout(db, 10000);
    sqlite3_stmt *s = nullptr;
    QStringList out;
    if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK) {
        out << QStringLiteral("cannot prepare: %1").arg(QString::fromUtf8(sqlite3_errmsg(db)));
        sqlite3_close(db);
        return out;
    }
    while (sqlite3_step(s) == SQLITE_ROW) {
        QStringList cells;
        for (int i = 0; i < sqlite3_column_count(s); ++i)
            cells << QString::fromUtf8(reinterpret_cast<const char *>(sqlite3_column_text(s, i)));
        out << cells.join('|');
    }
    sqlite3_finalize(s);
    sqlite3_close(db);
    out.sort();
    return out;
}

/// A problem JSON version 2 line as the GPU worker writes it (docs/FORMATS.md): an ATen and a
/// Triton candidate with all three GPU methods, one with a wrong result (Inductor's time only),
/// one that failed to compile, and both baselines. Times scale with `m`, so lines differ.
inline std::string v2Line(int m, const std::string &gpu = "NVIDIA H200") {
    const double s = m / 16.0;
    auto triton = [](int bm) {
        return nlohmann::json{{"kind", "triton"}, {"template", "mm"},   {"BLOCK_M", bm},   {"BLOCK_N", 128},
                              {"BLOCK_K", 64},    {"GROUP_M", 8},       {"num_stages", 5}, {"num_warps", 8},
                              {"EVEN_K", true},   {"ALLOW_TF32", false}};
    };
    nlohmann::json j{{"version", 2},
                     {"op", "mm"},
                     {"dtype", "bf16"},
                     {"B", 1},
                     {"M", m},
                     {"N", 4096},
                     {"K", 4096},
                     {"a_transposed", false},
                     {"b_transposed", true},
                     {"search_space", "DEFAULT"}};
    auto aten = nlohmann::json{{"kind", "aten"}, {"name", "extern_kernels.mm"}};
    aten["times"] = {
        {"graph_warm", 0.0123 * s}, {"graph_cold", 0.0150 * s}, {"inductor_autotune", 0.0201 * s}};
    auto good = triton(16);
    good["times"] = {{"graph_warm", 0.011 * s}, {"graph_cold", 0.013 * s}, {"inductor_autotune", 0.019 * s}};
    auto wrong = triton(128);
    wrong["times"] = {{"inductor_autotune", 0.05 * s}};
    wrong["error"] = "wrong result: max relative error 0.41 against ATen (tolerance 0.03)";
    auto broken = triton(256);
    broken["times"] = nlohmann::json::object();
    broken["error"] = "failed to compile: out of resource: shared memory";
    j["candidates"] = {aten, good, wrong, broken};
    j["baselines"] = {
        {"default", {{"graph_warm", 0.0121 * s}, {"graph_cold", 0.0149 * s}, {"compile_s", 0.9}}},
        {"max_autotune",
         {{"graph_warm", 0.0118 * s}, {"graph_cold", 0.0147 * s}, {"compile_s", 7.3}, {"pick", 1}}}};
    j["hardware"] = {{"gpu", gpu}, {"sm_count", 132}, {"memory_mb", 143166}, {"driver", "580.159.04"}};
    j["versions"] = {{"torch", "2.11.0+cu130"}, {"triton", "3.6.0"}};
    j["compile_s"] = 9.4;
    return j.dump();
}

inline QByteArray fileBytes(const QString &path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace testutil
