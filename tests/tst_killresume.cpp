#include "testutil.h"

#include "diode/sweep/childprocess.h"

#include <csignal>
#include <stdexcept>

#include <sys/resource.h>
#include <unistd.h>

// SIGKILL a real `diode sweep` child process at several moments, check the database after each
// kill, resume, and compare with an uninterrupted run of the same plan.
class TestKillResume : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_plan;

    static QStringList entries(const QString &dir) {
        return QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot, QDir::Name);
    }

    static QString pairs(const QString &db) {
        // Every (problem, config) pair measured, as text, for an exact comparison.
        return testutil::rows(
                   db, "SELECT p.op||p.dtype||p.b||'x'||p.m||'x'||p.n||'x'||p.k||c.config_key||m.status "
                       "FROM measurements m JOIN problems p ON p.id=m.problem_id "
                       "JOIN kernel_configs c ON c.id=m.config_id")
            .join('\n');
    }

private slots:
    void initTestCase() {
        m_plan = m_dir.filePath("plan.json");
        QFile f(m_plan);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"name": "kill", "repeats": 8, "timeout_s": 60,
          "cpu": {"block_m": [16, 64], "block_n": [64], "block_k": [32, 128], "threads": [1]},
          "entries": [{"ops": ["mm", "addmm"], "dtypes": ["fp32"], "M": [96, 128, 192], "N": [128, 192], "K": [192]}]})");
    }

    void killedSweepResumesToTheSameMeasurements() {
        const QString reference = m_dir.filePath("reference.db");
        QCOMPARE(testutil::runCli({"sweep", "--backend", "cpu", "--plan", m_plan, "--db", reference}), 0);
        const QString expected = pairs(reference);
        QCOMPARE(expected.count('\n') + 1, 12 * 4);

        // Kill by progress, not by clock: each session is killed once the store holds at least
        // `after` committed measurements, so the test means the same on a fast or slow machine
        // (it once killed at 300-2,300 ms and could miss on a fast one).
        const QString db = m_dir.filePath("killed.db");
        int kills = 0;
        for (int64_t after : {4, 17, 30, 41}) {
            QProcess child;
            QStringList args{"sweep", "--backend", "cpu", "--db", db, "--resume", "--plan", m_plan};
            child.start(QStringLiteral(DIODE_CLI), args);
            QVERIFY(child.waitForStarted());
            bool finished = false;
            while (!(finished = child.waitForFinished(2))) {
                if (QFileInfo::exists(db) &&
                    testutil::scalar(db, "SELECT count(*) FROM measurements") >= after)
                    break;
            }
            if (finished)
                break; // the sweep ended before reaching this mark: nothing left to kill
            ::kill(pid_t(child.processId()), SIGKILL);
            QVERIFY(child.waitForFinished(10000));
            QCOMPARE(child.exitStatus(), QProcess::CrashExit);
            ++kills;
            QVERIFY2(testutil::integrityCheck(db) == "ok", testutil::integrityCheck(db).c_str());
            // Committed work survives the kill: at least the mark, never more than the plan.
            const auto committed = testutil::scalar(db, "SELECT count(*) FROM measurements");
            QVERIFY2(committed >= after && committed <= 48, qPrintable(QString::number(committed)));
        }
        QVERIFY2(kills >= 3,
                 "the sweep finished before it could be killed three times; make the plan larger");
        QString err;
        QCOMPARE(testutil::runCli({"sweep", "--resume", "--db", db}, nullptr, &err), 0);
        QVERIFY2(testutil::integrityCheck(db) == "ok", testutil::integrityCheck(db).c_str());
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM runs"), 1); // every session continued the one run
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM measurements"), int64_t(12 * 4));
        QCOMPARE(pairs(db), expected);
    }

    // SIGTERM (kill, a scheduler's timeout) left the run `running`: it is a clean cancel now,
    // like Ctrl-C, and the run resumes to the full plan.
    void sigtermCancelsCleanly() {
        const QString db = m_dir.filePath("term.db");
        QProcess child;
        child.start(QStringLiteral(DIODE_CLI), {"sweep", "--backend", "cpu", "--db", db, "--plan", m_plan});
        QVERIFY(child.waitForStarted());
        bool finished = false;
        while (!(finished = child.waitForFinished(2)))
            if (QFileInfo::exists(db) && testutil::scalar(db, "SELECT count(*) FROM measurements") >= 4)
                break;
        if (finished)
            QSKIP("the sweep finished before it could be terminated; make the plan larger");
        ::kill(pid_t(child.processId()), SIGTERM);
        QVERIFY(child.waitForFinished(30000));
        QCOMPARE(child.exitStatus(), QProcess::NormalExit);
        QCOMPARE(child.exitCode(), 1);
        QVERIFY2(QString::fromUtf8(child.readAllStandardError()).contains("diode sweep --resume"),
                 "no resume hint");
        QCOMPARE(testutil::rows(db, "SELECT status FROM runs"), QStringList{"cancelled"});
        QVERIFY2(testutil::integrityCheck(db) == "ok", testutil::integrityCheck(db).c_str());
        QCOMPARE(testutil::runCli({"sweep", "--backend", "cpu", "--db", db, "--resume", "--plan", m_plan}),
                 0);
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM measurements"), int64_t(48));
    }

    // Ctrl-C during a cpu sweep of large problems whose plan says timeout_s: 1 must not wait for the
    // multiply under way (a minute here) and the next repeat's. The GEMM stops between tiles: the run ends
    // cancelled within seconds, the measurement under way dropped, every stored row whole.
    void sigintDuringALargeGemmEndsWithinSeconds() {
        const QString plan = m_dir.filePath("large.json");
        {
            QFile f(plan);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(R"({"name": "large", "repeats": 3, "timeout_s": 1,
              "cpu": {"block_m": [32], "block_n": [32], "block_k": [32], "threads": [1, 2]},
              "entries": [{"ops": ["mm"], "dtypes": ["fp32"], "M": [3072, 4096], "N": [4096], "K": [4096]}]})");
        }
        const QString db = m_dir.filePath("sigint.db");
        QProcess child;
        child.start(QStringLiteral(DIODE_CLI), {"sweep", "--backend", "cpu", "--db", db, "--plan", plan});
        QVERIFY(child.waitForStarted());
        QByteArray err;
        while (!err.contains("run 1:") && child.state() == QProcess::Running) { // measuring has begun
            child.waitForReadyRead(100);
            err += child.readAllStandardError();
        }
        QVERIFY2(err.contains("run 1:"), err.constData());
        QTest::qWait(300); // inside the first problem: filling its operands or multiplying
        QElapsedTimer sinceSignal;
        sinceSignal.start();
        ::kill(pid_t(child.processId()), SIGINT);
        QVERIFY(child.waitForFinished(60000));
        const qint64 ms = sinceSignal.elapsed();
        QVERIFY2(ms < 10000, qPrintable(QStringLiteral("exited %1 ms after SIGINT").arg(ms)));
        QCOMPARE(child.exitStatus(), QProcess::NormalExit);
        QCOMPARE(child.exitCode(), 1);
        QCOMPARE(testutil::rows(db, "SELECT status FROM runs"), QStringList{"cancelled"});
        QVERIFY2(testutil::integrityCheck(db) == "ok", testutil::integrityCheck(db).c_str());
        // Nothing half-written: a time only where the status is ok, a timeout without one.
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM measurements WHERE (status = 'ok') != "
                                      "(time_ms IS NOT NULL AND time_ms > 0)"),
                 int64_t(0));
    }

    // One sweep writes a database at a time: a second `--resume` of the same run is refused with
    // the holder named (before, both measured everything that remained), and a holder killed
    // with SIGKILL leaves no stale lock behind.
    void secondSweepOfADatabaseIsRefused() {
        const QString db = m_dir.filePath("two.db");
        QProcess first;
        first.start(QStringLiteral(DIODE_CLI), {"sweep", "--backend", "cpu", "--plan", m_plan, "--db", db});
        QVERIFY(first.waitForStarted());
        while (!first.waitForFinished(2))
            if (QFileInfo::exists(db) && testutil::scalar(db, "SELECT count(*) FROM measurements") >= 4)
                break;
        QCOMPARE(first.state(), QProcess::Running);
        QString err;
        QCOMPARE(testutil::runCli({"sweep", "--resume", "--db", db}, nullptr, &err), 1);
        QVERIFY2(err.contains("is busy with run 1 (a sweep by pid " + QString::number(first.processId())),
                 qPrintable(err));
        ::kill(pid_t(first.processId()), SIGKILL);
        QVERIFY(first.waitForFinished(10000));
        QCOMPARE(testutil::runCli({"sweep", "--resume", "--db", db}, nullptr, &err), 0);
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM measurements"), int64_t(12 * 4));
    }

    // `diode sweep --resume --db typo.db` creates no empty typo.db: it says the database is not
    // there.
    void resumeOfAMissingDatabaseCreatesNothing() {
        QTemporaryDir dir;
        const QString db = dir.filePath("typo.db");
        QString err;
        QCOMPARE(testutil::runCli({"sweep", "--resume", "--db", db}, nullptr, &err), 2);
        QVERIFY2(err.contains("cannot resume: database '" + db + "' does not exist (nothing was created)"),
                 qPrintable(err));
        QCOMPARE(entries(dir.path()), QStringList());
    }

    // A finished run leaves no DB.sweep.lock, DB-wal, DB-shm or empty worker log beside the
    // database: what a finished run no longer needs goes; a worker log with something
    // in it stays.
    void finishedRunLeavesOnlyWhatIsNeeded() {
        QTemporaryDir dir;
        const QString db = dir.filePath("clean.db");
        QCOMPARE(testutil::runCli({"sweep", "--backend", "cpu", "--plan", m_plan, "--db", db}), 0);
        QCOMPARE(entries(dir.path()), QStringList{"clean.db"});
        QString err;
        QCOMPARE(testutil::runCli({"sweep", "--resume", "--db", db}, nullptr, &err), 0);
        QVERIFY2(err.contains("nothing to resume"), qPrintable(err));
        QCOMPARE(entries(dir.path()), QStringList{"clean.db"});

        // The inductor backend with the stand-in worker (tests/data/fakeworker), which writes to
        // its stderr only for M = 19 (out of memory).
        qputenv("DIODE_PLUGIN_PYTHON", testutil::dataPath("fakeworker").toUtf8());
        auto sweep = [&](const QString &name, const QString &ms) {
            const QString plan = m_dir.filePath(name + ".json");
            QFile f(plan);
            if (!f.open(QIODevice::WriteOnly))
                return -1;
            f.write(QString(R"({"name": "%1", "timeout_s": 30, "entries": [{"ops": ["mm"], "dtypes": ["bf16"],
                                "M": [%2], "N": [64], "K": [32]}]})")
                        .arg(name, ms)
                        .toUtf8());
            f.close();
            return testutil::runCli({"sweep", "--backend", "inductor", "--python", PYTHON3, "--plan", plan,
                                     "--db", dir.filePath(name + ".db")});
        };
        QCOMPARE(sweep("quiet", "8, 16"), 0);
        QCOMPARE(entries(dir.path()), (QStringList{"clean.db", "quiet.db"}));
        QCOMPARE(sweep("loud", "8, 19"), 0);
        qunsetenv("DIODE_PLUGIN_PYTHON");
        QCOMPARE(entries(dir.path()), (QStringList{"clean.db", "loud.db", "loud.db.worker.log", "quiet.db"}));
        QVERIFY(
            testutil::fileBytes(dir.filePath("loud.db.worker.log")).contains("CUDA out of memory at M=19"));
    }

    // Four imports of one file into one new database at once: the schema is created once and the
    // content lands once (the others are refused as already imported).
    void parallelImportsIntoANewFile() {
        const QString data = testutil::dataPath("bias-problems.jsonl");
        for (int trial = 0; trial < 8; ++trial) {
            const QString db = m_dir.filePath(QStringLiteral("parallel%1.db").arg(trial));
            std::vector<std::unique_ptr<QProcess>> ps;
            for (int i = 0; i < 4; ++i) {
                ps.push_back(std::make_unique<QProcess>());
                ps.back()->start(QStringLiteral(DIODE_CLI), {"import", data, "--db", db});
            }
            int landed = 0;
            for (auto &p : ps) {
                QVERIFY(p->waitForFinished(60000));
                const QByteArray err = p->readAllStandardError();
                if (p->exitCode() == 0)
                    ++landed;
                else
                    QVERIFY2(p->exitCode() == 2 && err.contains("imported already"), err.constData());
            }
            QCOMPARE(landed, 1);
            QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM runs"), int64_t(1));
            QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM problems"), int64_t(3));
            QVERIFY2(testutil::integrityCheck(db) == "ok", testutil::integrityCheck(db).c_str());
        }
    }

    void pipesAreNotLeakedWhenTheSecondCannotBeMade() {
        // Room for exactly one pipe: the two lowest free descriptors, the limit just above them.
        int probe[2];
        QCOMPARE(pipe(probe), 0);
        close(probe[0]);
        close(probe[1]);
        rlimit old{};
        QCOMPARE(getrlimit(RLIMIT_NOFILE, &old), 0);
        rlimit tight = old;
        tight.rlim_cur = rlim_t(std::max(probe[0], probe[1]) + 1);
        QCOMPARE(setrlimit(RLIMIT_NOFILE, &tight), 0);
        std::string error;
        try {
            int fds[4];
            diode::makePipes(fds, 2, "worker pipes");
        } catch (const std::runtime_error &e) {
            error = e.what();
        }
        QCOMPARE(setrlimit(RLIMIT_NOFILE, &old), 0);
        QVERIFY2(QString::fromStdString(error).startsWith("worker pipes: "), error.c_str());
        int again[2];
        QCOMPARE(pipe(again), 0); // the first pipe's two descriptors were given back
        QCOMPARE(std::min(again[0], again[1]), std::min(probe[0], probe[1]));
        QCOMPARE(std::max(again[0], again[1]), std::max(probe[0], probe[1]));
        close(again[0]);
        close(again[1]);
    }
};

QTEST_GUILESS_MAIN(TestKillResume)
#include "tst_killresume.moc"
