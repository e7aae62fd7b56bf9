// `diode sweep --shard i/n` and `diode merge`, through the real CLI on real SQLite files: shards
// are disjoint and cover the plan, their merge holds exactly one uninterrupted run's measurements,
// merging is idempotent, and bad shard lists are refused naming the shard and the cause.
#include "testutil.h"

#include <QFile>

#include <set>

namespace {

const QString kPlan = testutil::dataPath("plans/shard-small.json");

/// What a store measured, without times: one line per (problem, config, method, status).
QStringList measurementKeys(const QString &db) {
    return testutil::rows(
        db, "SELECT p.op || ' ' || p.dtype || ' ' || p.b || 'x' || p.m || 'x' || p.n || 'x' || p.k || ' ' "
            "|| p.a_transposed || p.b_transposed || ' | ' || c.config_key || ' | ' || m.method || ' | ' "
            "|| m.status FROM measurements m JOIN problems p ON p.id = m.problem_id "
            "JOIN kernel_configs c ON c.id = m.config_id");
}

/// The problems a store marked done, as labels.
std::set<QString> doneProblems(const QString &db) {
    std::set<QString> out;
    for (const auto &k : measurementKeys(db))
        out.insert(k.section(QStringLiteral(" | "), 0, 0));
    return out;
}

} // namespace

class TestShardMerge : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_whole;
    QStringList m_shards;

    QString path(const QString &name) const { return m_dir.filePath(name); }

    int sweep(const QString &db, const QStringList &extra, QString *err = nullptr) {
        return testutil::runCli(QStringList{"sweep", "--backend", "cpu", "--plan", kPlan, "--db", db} + extra,
                                nullptr, err);
    }
    int merge(const QStringList &args, QString *out = nullptr, QString *err = nullptr) {
        return testutil::runCli(QStringList{"merge"} + args, out, err);
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_whole = path("whole.db");
        QCOMPARE(sweep(m_whole, {}), 0);
        for (int i = 0; i < 4; ++i) {
            m_shards << path(QStringLiteral("shard-%1.db").arg(i));
            QString err;
            QCOMPARE(sweep(m_shards.back(), {"--shard", QStringLiteral("%1/4").arg(i)}, &err), 0);
            QVERIFY2(err.contains(QStringLiteral("shard %1/4").arg(i)), qPrintable(err));
        }
    }

    void shardsAreDisjointAndCoverThePlan() {
        const auto whole = doneProblems(m_whole);
        QCOMPARE(int(whole.size()), 10);
        std::set<QString> all;
        size_t sum = 0;
        for (int i = 0; i < 4; ++i) {
            const auto mine = doneProblems(m_shards[i]);
            // 10 problems over 4 shards by index modulo 4: 3, 3, 2, 2.
            QCOMPARE(int(mine.size()), i < 2 ? 3 : 2);
            QCOMPARE(testutil::scalar(m_shards[i], "SELECT problems_planned FROM runs"), i < 2 ? 3 : 2);
            sum += mine.size();
            all.insert(mine.begin(), mine.end());
        }
        QCOMPARE(sum, all.size()); // disjoint
        QCOMPARE(all, whole);      // and together the whole plan
    }

    void mergeHoldsExactlyTheWholeRun() {
        const QString out = path("merged.db");
        QString stdoutText;
        QCOMPARE(merge(QStringList{out} + m_shards, &stdoutText), 0);
        QVERIFY2(stdoutText.contains("shard 2/4 of plan 'shard-small'"), qPrintable(stdoutText));
        QCOMPARE(measurementKeys(out), measurementKeys(m_whole));
        QCOMPARE(measurementKeys(out).size(), 20);
        // Each shard keeps its run record, finished, with where it came from.
        QCOMPARE(
            testutil::scalar(out, "SELECT count(*) FROM runs WHERE status = 'finished' AND backend = 'cpu'"),
            4);
        QCOMPARE(testutil::scalar(out, "SELECT count(DISTINCT source) FROM runs"), 4);
        QCOMPARE(testutil::scalar(out, "SELECT count(*) FROM run_problems"), 10);

        // Idempotent: merging again, in another order, changes nothing.
        QCOMPARE(merge(QStringList{out, m_shards[3], m_shards[1], m_shards[0], m_shards[2]}, &stdoutText), 0);
        QVERIFY2(stdoutText.contains("merged before; nothing new"), qPrintable(stdoutText));
        QCOMPARE(measurementKeys(out), measurementKeys(m_whole));
        QCOMPARE(testutil::scalar(out, "SELECT count(*) FROM runs"), 4);
        QCOMPARE(testutil::integrityCheck(out), std::string("ok"));
    }

    void partialMergesAddUpToTheWhole() {
        const QString out = path("partial.db");
        QString err;
        QCOMPARE(merge({out, m_shards[0], m_shards[1]}, nullptr, &err), 2);
        QVERIFY2(err.contains("shards 2/4, 3/4 are in none of the stores given"), qPrintable(err));
        QVERIFY2(!QFile::exists(out), "a refused merge must create nothing");
        QCOMPARE(merge({out, m_shards[0], m_shards[1], "--partial"}), 0);
        QCOMPARE(testutil::scalar(out, "SELECT count(*) FROM run_problems"), 6);
        // The rest later: the shards already in the output count toward the plan's coverage.
        QCOMPARE(merge({out, m_shards[2], m_shards[3]}, nullptr, &err), 0);
        QCOMPARE(measurementKeys(out), measurementKeys(m_whole));
    }

    void overlappingShardsAreRefused() {
        // Shard 0/4 measured a second time into another store: a second run of the same problems.
        const QString again = path("shard-0-again.db");
        QCOMPARE(sweep(again, {"--shard", "0/4"}), 0);
        QString err;
        const QString out = path("overlap.db");
        QCOMPARE(merge(QStringList{out} + m_shards + QStringList{again}, nullptr, &err), 2);
        QVERIFY2(err.contains("overlap: both hold problem 0"), qPrintable(err));
        QVERIFY2(err.contains(again) && err.contains(m_shards[0]), qPrintable(err));
        QVERIFY(!QFile::exists(out));
        // Shards of another split overlap too (0/2 holds 0/4's problems).
        const QString half = path("half-0.db");
        QCOMPARE(sweep(half, {"--shard", "0/2"}), 0);
        QCOMPARE(merge({out, m_shards[0], half}, nullptr, &err), 2);
        QVERIFY2(err.contains("shard 0/2") && err.contains("overlap"), qPrintable(err));
        // Into an output that already holds the shard from the other store: refused, output untouched.
        const QString merged = path("merged.db");
        const auto before = measurementKeys(merged);
        QCOMPARE(merge({merged, again}, nullptr, &err), 2);
        QVERIFY2(err.contains("already merged") && err.contains("overlap"), qPrintable(err));
        QCOMPARE(measurementKeys(merged), before);
    }

    void anotherPlanOrGpuIsRefused() {
        // Another plan: the same file with one size changed.
        QFile f(kPlan);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QString text =
            QString::fromUtf8(f.readAll())
                .replace(QStringLiteral("[8, 16, 24, 40, 56]"), QStringLiteral("[8, 16, 24, 40, 64]"));
        const QString otherPlan = path("other-plan.json");
        QFile o(otherPlan);
        QVERIFY(o.open(QIODevice::WriteOnly));
        o.write(text.toUtf8());
        o.close();
        const QString other = path("other-3.db");
        QCOMPARE(testutil::runCli(
                     {"sweep", "--backend", "cpu", "--plan", otherPlan, "--db", other, "--shard", "3/4"}),
                 0);
        QString err;
        QCOMPARE(merge({path("mixed.db"), m_shards[0], m_shards[1], m_shards[2], other}, nullptr, &err), 2);
        QVERIFY2(err.contains("not shards of one plan") && err.contains(other), qPrintable(err));

        // Another GPU: a copy of shard 3 whose run says it ran elsewhere.
        const QString moved = path("shard-3-h100.db");
        QVERIFY(QFile::copy(m_shards[3], moved));
        sqlite3 *h = nullptr;
        sqlite3_open(moved.toStdString().c_str(), &h);
        QCOMPARE(sqlite3_exec(h, "UPDATE runs SET gpu_name = 'NVIDIA H100'", nullptr, nullptr, nullptr),
                 SQLITE_OK);
        sqlite3_close(h);
        QCOMPARE(merge({path("gpus.db"), m_shards[0], m_shards[1], m_shards[2], moved}, nullptr, &err), 2);
        QVERIFY2(err.contains("shard 3/4") && err.contains("NVIDIA H100") && err.contains("--allow-mixed"),
                 qPrintable(err));
        QVERIFY(!QFile::exists(path("gpus.db")));
        QCOMPARE(merge({path("gpus.db"), m_shards[0], m_shards[1], m_shards[2], moved, "--allow-mixed"}), 0);
        QCOMPARE(measurementKeys(path("gpus.db")), measurementKeys(m_whole));
    }

    void unfinishedShardIsRefusedUntilResumed() {
        // A shard stopped by its deadline after its first problem: stored cancelled, resumable.
        const QString late = path("late-1.db");
        QString err;
        QCOMPARE(sweep(late, {"--shard", "1/4", "--deadline", "0.000001"}, &err), 1);
        QVERIFY2(err.contains("deadline of"), qPrintable(err));
        QCOMPARE(testutil::scalar(late, "SELECT count(*) FROM runs WHERE status = 'cancelled'"), 1);
        const QString out = path("late-merged.db");
        QCOMPARE(merge({out, m_shards[0], late, m_shards[2], m_shards[3]}, nullptr, &err), 2);
        QVERIFY2(err.contains("shard 1/4") && err.contains("is cancelled with") && err.contains("--resume"),
                 qPrintable(err));
        QCOMPARE(merge({out, m_shards[0], late, m_shards[2], m_shards[3], "--partial"}), 0);
        // Resumed, the same run finishes; merged again, it adds only what it did since.
        QCOMPARE(sweep(late, {"--shard", "1/4", "--resume"}), 0);
        QString stdoutText;
        QCOMPARE(merge({out, m_shards[0], late, m_shards[2], m_shards[3]}, &stdoutText, &err), 0);
        QVERIFY2(stdoutText.contains("merged before;") && stdoutText.contains("added"),
                 qPrintable(stdoutText));
        QCOMPARE(measurementKeys(out), measurementKeys(m_whole));
        QCOMPARE(testutil::scalar(out, "SELECT count(*) FROM runs"), 4);
    }

    void resumeRefusesAnotherShard() {
        const QString db = path("resume-shard.db");
        QCOMPARE(sweep(db, {"--shard", "2/4", "--deadline", "0.000001"}), 1);
        QString err;
        QCOMPARE(sweep(db, {"--shard", "3/4", "--resume"}, &err), 2);
        QVERIFY2(err.contains("measures shard 2/4, not 3/4"), qPrintable(err));
        QCOMPARE(sweep(db, {"--shard", "4/4"}, &err), 2);
        QVERIFY2(err.contains("--shard '4/4': expected i/n with 0 <= i < n"), qPrintable(err));
        // Without --shard, the store's own shard is resumed.
        QCOMPARE(sweep(db, {"--resume"}, &err), 0);
        QVERIFY2(err.contains("resuming run 1"), qPrintable(err));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM run_problems"), 2);
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM runs WHERE status = 'finished'"), 1);
    }

    // What `diode sweep --slurm` refuses before it writes a script or calls sbatch (the real
    // cluster runs are CTest slurm_cluster's).
    void slurmRequestsAreCheckedFirst() {
        const QString cfg = path("slurm-typo.json");
        QFile f(cfg);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"partiton": "gpu"})");
        f.close();
        QString err;
        const QStringList submit{"sweep", "--slurm", "--backend", "cpu", "--plan", kPlan};
        QCOMPARE(testutil::runCli(
                     submit + QStringList{"--shards", "4", "--db", path("s.db"), "--slurm-config", cfg},
                     nullptr, &err),
                 2);
        QVERIFY2(err.contains("unknown field 'partiton'"), qPrintable(err));
        QCOMPARE(
            testutil::runCli(submit + QStringList{"--shards", "11", "--db", path("s.db")}, nullptr, &err), 2);
        QVERIFY2(err.contains("--shards 11: plan 'shard-small' has 10 problems"), qPrintable(err));
        QCOMPARE(testutil::runCli(submit + QStringList{"--shards", "2", "--db", path("with space.db")},
                                  nullptr, &err),
                 2);
        QVERIFY2(err.contains("may not hold white space"), qPrintable(err));
        QVERIFY(!QFile::exists(path("s.db.shards")));
        QCOMPARE(testutil::runCli({"sweep", "--status", "--db", path("s.db")}, nullptr, &err), 2);
        QVERIFY2(err.contains("was not swept on Slurm"), qPrintable(err));
    }

    void problemLinesAndMissingFiles() {
        // JSON lines (the standalone worker's output) merge beside stores, once.
        const QString lines = path("whole.jsonl");
        QCOMPARE(testutil::runCli({"export", "--db", m_whole, "--out", lines}), 0);
        const QString out = path("lines.db");
        QString stdoutText, err;
        QCOMPARE(merge({out, lines}, &stdoutText), 0);
        QCOMPARE(measurementKeys(out), measurementKeys(m_whole));
        QCOMPARE(merge({out, lines}, &stdoutText), 0);
        QVERIFY2(stdoutText.contains("imported before"), qPrintable(stdoutText));
        QCOMPARE(measurementKeys(out).size(), 20);
        // A shard whose store was never made (its task never started).
        QCOMPARE(merge({path("none.db"), m_shards[0], path("shard-9.db")}, nullptr, &err), 2);
        QVERIFY2(err.contains("shard-9.db' does not exist"), qPrintable(err));
        QCOMPARE(merge({m_shards[0], m_shards[0]}, nullptr, &err), 2);
        QVERIFY2(err.contains("is the output of the merge"), qPrintable(err));
    }
};

QTEST_GUILESS_MAIN(TestShardMerge)
#include "tst_shardmerge.moc"
