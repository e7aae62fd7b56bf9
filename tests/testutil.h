#pragma once

#include "diode/config.h"
#include "diode/store.h"

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
inline void freshSettings(const char *suite)
{
    QCoreApplication::setOrganizationName(QStringLiteral("diode-test"));
    QCoreApplication::setApplicationName(QString::fromLatin1(suite));
    QSettings().clear();
}

inline QString dataPath(const QString &rel) { return QStringLiteral(DIODE_TEST_DATA "/") + rel; }
inline QString sourcePath(const QString &rel) { return QStringLiteral(DIODE_SOURCE_DIR "/") + rel; }

/// Runs the real `diode` CLI; returns exit code, with stdout/stderr in the out-params.
inline int runCli(const QStringList &args, QString *out = nullptr, QString *err = nullptr, int timeoutMs = 120000)
{
    QProcess p;
    p.start(QStringLiteral(DIODE_CLI), args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        return -1;
    }
    if (out) *out = QString::fromUtf8(p.readAllStandardOutput());
    if (err) *err = QString::fromUtf8(p.readAllStandardError());
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

// Opened read-write, as the next diode process would: after a SIGKILL the WAL must be
// recovered, which a read-only connection cannot do.
inline std::string integrityCheck(const QString &path)
{
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
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) result += reinterpret_cast<const char *>(sqlite3_column_text(s, 0));
    if (rc != SQLITE_DONE) result += std::string(" (step failed: ") + sqlite3_errmsg(db) + ")";
    sqlite3_finalize(s);
    sqlite3_close(db);
    return result;
}

inline int64_t scalar(const QString &path, const char *sql)
{
    sqlite3 *db = nullptr;
    sqlite3_open_v2(path.toStdString().c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt *s = nullptr;
    sqlite3_prepare_v2(db, sql, -1, &s, nullptr);
    int64_t v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
    sqlite3_finalize(s);
    sqlite3_close(db);
    return v;
}

inline QByteArray fileBytes(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace testutil
