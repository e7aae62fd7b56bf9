// Concurrent use and misbehaving workers, with real processes: two `diode sweep` on one new
// database, a sweep refused while another runs, two merges into one new store, and workers that
// never say hello, flood their output, break the protocol or are left behind by a signal.
//
// DIODE_RACE_TRIALS sets how often each race is run (default 10, for CI; the figure in the report
// that closes the work is of 100).
#include "testutil.h"

#include <QElapsedTimer>

#include <csignal>
#include <sys/stat.h>
#include <unistd.h>

namespace {

using testutil::writeFile;

int trials() {
    const int n = qEnvironmentVariableIntValue("DIODE_RACE_TRIALS");
    return n > 0 ? n : 10;
}

bool alive(pid_t pid) {
    return pid > 0 && ::kill(pid, 0) == 0;
}

// A stand-in for the Python interpreter the inductor backend runs (`PY -u -m torch_diode.tools.worker`):
// a shell script that writes its pid to PIDFILE and then does `body`.
QString fakePython(const QString &dir, const QString &name, const QString &body) {
    const QString path = dir + "/" + name;
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return {};
    f.write(("#!/bin/bash\necho $$ > \"" + path + ".pid\"\n" + body + "\n").toUtf8());
    f.close();
    ::chmod(path.toUtf8().constData(), 0755);
    return path;
}

pid_t pidOf(const QString &fake) {
    return pid_t(testutil::fileBytes(fake + ".pid").trimmed().toLongLong());
}

} // namespace

class TestHostileConcurrency : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_plan, m_workerPlan;

    QString path(const QString &name) const { return m_dir.filePath(name); }

    // The inductor backend on a fake interpreter: exit code and stderr.
    int inductorSweep(const QString &python, const QString &db, QString *err, const QStringList &env = {},
                      int timeoutMs = 120000) {
        return testutil::runProgram(
            QStringLiteral(DIODE_CLI),
            {"sweep", "--backend", "inductor", "--python", python, "--plan", m_workerPlan, "--db", db}, env,
            nullptr, err, timeoutMs);
    }

private slots:
    void initTestCase() {
        m_plan = path("race.json");
        // Long enough that two sweeps started together overlap (a few hundred milliseconds).
        writeFile(m_plan, R"({"name": "race", "repeats": 3, "timeout_s": 60,
          "cpu": {"block_m": [16, 32], "block_n": [64], "block_k": [32], "threads": [1]},
          "entries": [{"ops": ["mm"], "dtypes": ["fp32"], "M": [96, 128, 160], "N": [128], "K": [128]}]})");
        m_workerPlan = path("worker.json");
        writeFile(m_workerPlan, R"({"name": "worker", "timeout_s": 5,
          "entries": [{"ops": ["mm"], "dtypes": ["bf16"], "M": [8, 16], "N": [64], "K": [32]}]})");
    }

    // Two sweeps started at once on a new database both failed in 6-7 of 10 tries: the lock's
    // winner with "FOREIGN KEY constraint failed", its run row gone, a phantom `running` run left.
    // The set-up lock closed a descriptor of the database, which dropped the locks SQLite held on
    // it, so the other process deleted the WAL under it. Now one measures the plan and the other
    // is refused ("busy with run N") having created nothing, or, when they do not overlap, each
    // measures its own run in full; the file is whole after every try.
    void twoSweepsOnANewDatabase() {
        int refused = 0;
        const int n = trials();
        for (int trial = 0; trial < n; ++trial) {
            const QString db = path(QStringLiteral("race-%1.db").arg(trial));
            QProcess a, b;
            const QStringList args{"sweep", "--backend", "cpu", "--plan", m_plan, "--db", db};
            a.start(QStringLiteral(DIODE_CLI), args);
            b.start(QStringLiteral(DIODE_CLI), args);
            QVERIFY(a.waitForFinished(120000) && b.waitForFinished(120000));
            int finished = 0;
            for (QProcess *p : {&a, &b}) {
                const QByteArray err = p->readAllStandardError();
                QCOMPARE(p->exitStatus(), QProcess::NormalExit);
                if (p->exitCode() == 0) {
                    ++finished;
                    continue;
                }
                QVERIFY2(p->exitCode() == 1 && err.contains("is busy with") &&
                             err.contains("created and changed nothing"),
                         qPrintable(QStringLiteral("try %1: ").arg(trial) + err));
                ++refused;
            }
            QVERIFY2(finished >= 1, qPrintable(QStringLiteral("try %1: no sweep finished").arg(trial)));
            QVERIFY2(testutil::integrityCheck(db) == "ok", testutil::integrityCheck(db).c_str());
            // Every run the database holds is one that finished, each with the whole plan once.
            QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM runs"), int64_t(finished));
            QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM runs WHERE status != 'finished'"),
                     int64_t(0));
            QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM measurements"), int64_t(6 * finished));
            QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM (SELECT run_id, problem_id, config_id FROM "
                                          "measurements GROUP BY 1, 2, 3 HAVING count(*) > 1)"),
                     int64_t(0));
            QVERIFY(!QFileInfo::exists(db + ".sweep.lock"));
        }
        qInfo("%d tries, %d of them with one sweep refused", n, refused);
    }

    // Two merges of the same shards into one new store at once gave "database disk image is
    // malformed" (1 of 34): both land, the second adding nothing.
    void twoMergesIntoOneNewStore() {
        QStringList shards;
        for (int i = 0; i < 2; ++i) {
            shards << path(QStringLiteral("mshard-%1.db").arg(i));
            QCOMPARE(testutil::runCli({"sweep", "--backend", "cpu", "--plan", m_plan, "--shard",
                                       QStringLiteral("%1/2").arg(i), "--db", shards.last()}),
                     0);
        }
        for (int trial = 0; trial < trials(); ++trial) {
            const QString out = path(QStringLiteral("merged-%1.db").arg(trial));
            QProcess a, b;
            a.start(QStringLiteral(DIODE_CLI), QStringList{"merge", out} + shards);
            b.start(QStringLiteral(DIODE_CLI), QStringList{"merge", out} + shards);
            QVERIFY(a.waitForFinished(120000) && b.waitForFinished(120000));
            for (QProcess *p : {&a, &b})
                QVERIFY2(p->exitStatus() == QProcess::NormalExit && p->exitCode() == 0,
                         p->readAllStandardError().constData());
            QVERIFY2(testutil::integrityCheck(out) == "ok", testutil::integrityCheck(out).c_str());
            QCOMPARE(testutil::scalar(out, "SELECT count(*) FROM runs"), int64_t(2));
            QCOMPARE(testutil::scalar(out, "SELECT count(*) FROM measurements"), int64_t(6));
        }
    }

    // A second sweep refused while the first ran still created a run; `--resume` later picked
    // that one and measured the whole plan again (every problem and config twice).
    void refusedSweepCreatesNothing() {
        // Seconds a problem, so that the first is still measuring when the second comes.
        const QString plan = path("slow.json");
        writeFile(plan, R"({"name": "slow", "repeats": 2, "timeout_s": 600,
          "cpu": {"block_m": [32, 64], "block_n": [64], "block_k": [64], "threads": [1]},
          "entries": [{"ops": ["mm"], "dtypes": ["fp32"], "M": [640, 768, 896], "N": [768], "K": [768]}]})");
        const QString db = path("refused.db");
        QProcess first;
        first.start(QStringLiteral(DIODE_CLI), {"sweep", "--backend", "cpu", "--plan", plan, "--db", db});
        QVERIFY(first.waitForStarted());
        while (!first.waitForFinished(2))
            if (QFileInfo::exists(db) && testutil::scalar(db, "SELECT count(*) FROM measurements") >= 1)
                break;
        if (first.state() != QProcess::Running)
            QSKIP("the first sweep ended before a second could be started; make the plan larger");
        QString err;
        QCOMPARE(testutil::runCli({"sweep", "--backend", "cpu", "--plan", plan, "--db", db}, nullptr, &err),
                 1);
        QVERIFY2(err.contains("is busy with run 1"), qPrintable(err));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM runs"), int64_t(1));
        ::kill(pid_t(first.processId()), SIGKILL);
        QVERIFY(first.waitForFinished(10000));
        QCOMPARE(testutil::runCli({"sweep", "--resume", "--db", db}, nullptr, &err, 600000), 0);
        QVERIFY2(err.contains("resuming run 1"), qPrintable(err));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM runs"), int64_t(1));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM measurements"), int64_t(6));
    }

    // A worker that never said hello hung `diode sweep` without end; it times out now, naming the
    // worker and its log, and is stopped.
    void silentWorkerTimesOutWithItsName() {
        const QString fake = fakePython(m_dir.path(), "silent-python", "sleep 3600");
        const QString db = path("silent.db");
        QString err;
        QElapsedTimer t;
        t.start();
        QCOMPARE(inductorSweep(fake, db, &err, {"DIODE_WORKER_START_TIMEOUT_S=2"}, 60000), 3);
        QVERIFY2(t.elapsed() < 30000, qPrintable(QString::number(t.elapsed())));
        QVERIFY2(err.contains("the inductor worker (" + fake + " -m torch_diode.tools.worker; its log: " +
                              db + ".worker.log) did not say hello within 2 s"),
                 qPrintable(err));
        QTRY_VERIFY_WITH_TIMEOUT(!alive(pidOf(fake)), 5000);
        QVERIFY(!QFileInfo::exists(db) || testutil::scalar(db, "SELECT count(*) FROM runs") == 0);
    }

    // The first SIGINT or SIGTERM was ignored while a worker started; the second killed diode and
    // left the worker running. The first now ends both.
    void firstSignalEndsTheSweepAndItsWorker() {
        for (int sig : {SIGINT, SIGTERM}) {
            const QString fake =
                fakePython(m_dir.path(), QStringLiteral("slow-python-%1").arg(sig), "sleep 3600");
            const QString db = path(QStringLiteral("signal-%1.db").arg(sig));
            QProcess p;
            p.start(QStringLiteral(DIODE_CLI),
                    {"sweep", "--backend", "inductor", "--python", fake, "--plan", m_workerPlan, "--db", db});
            QVERIFY(p.waitForStarted());
            QTRY_VERIFY_WITH_TIMEOUT(alive(pidOf(fake)), 20000);
            const pid_t worker = pidOf(fake);
            QElapsedTimer t;
            t.start();
            ::kill(pid_t(p.processId()), sig);
            QVERIFY(p.waitForFinished(15000));
            QVERIFY2(t.elapsed() < 10000, qPrintable(QString::number(t.elapsed())));
            QCOMPARE(p.exitStatus(), QProcess::NormalExit);
            QCOMPARE(p.exitCode(), 1);
            QVERIFY2(p.readAllStandardError().contains("cancelled before the run started"),
                     "no word of the cancel");
            QTRY_VERIFY_WITH_TIMEOUT(!alive(worker), 5000);
        }
    }

    // A worker that wrote to its stdout without a line break grew diode without bound (270 MB
    // after 20 s); the line is bounded now, and the worker stopped.
    void floodingWorkerIsBounded() {
        const QString fake =
            fakePython(m_dir.path(), "flood-python", "yes xxxxxxxxxxxxxxxxxxxxxxxxxxxxx | tr -d '\\n'");
        QString err;
        QElapsedTimer t;
        t.start();
        QCOMPARE(inductorSweep(fake, path("flood.db"), &err, {}, 120000), 3);
        QVERIFY2(err.contains("sent more than 16777216 bytes without a line break"), qPrintable(err));
        QVERIFY2(t.elapsed() < 60000, qPrintable(QString::number(t.elapsed())));
    }

    // A hello that is not an object gave "type_error.306"; an answer that is not JSON was stored as
    // "no answer within the per-problem timeout".
    void brokenProtocolIsNamed() {
        QString err;
        const QString notObject = fakePython(m_dir.path(), "array-python", "echo '[1, 2]'; sleep 3600");
        QCOMPARE(inductorSweep(notObject, path("array.db"), &err, {}, 60000), 3);
        QVERIFY2(err.contains("began with [1, 2] instead of its hello object") && !err.contains("type_error"),
                 qPrintable(err));
        const QString garbled = fakePython(
            m_dir.path(), "garbled-python",
            R"(echo '{"event": "hello", "ok": true, "hardware": {"gpu": "Fake GPU"}, "torch": "x", "triton": "y"}'
while read -r line; do echo '{"id": 1, "ok": tru'; done)");
        const QString db = path("garbled.db");
        QCOMPARE(inductorSweep(garbled, db, &err, {}, 60000), 0);
        const QStringList errors = testutil::rows(db, "SELECT error FROM run_problems");
        QCOMPARE(errors.size(), 2);
        for (const auto &e : errors)
            QVERIFY2(e.contains("the worker broke the protocol") && !e.contains("no answer within"),
                     qPrintable(e));
    }
};

QTEST_GUILESS_MAIN(TestHostileConcurrency)
#include "tst_hostileconcurrency.moc"
