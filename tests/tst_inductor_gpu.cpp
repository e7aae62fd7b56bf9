#include "testutil.h"

// The real inductor worker on a real GPU: skipped, with the reason, where torch or a GPU is missing.
class TestInductorGpu : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void sweepsTheWorkerCheckPlan() {
        const QByteArray python =
            qgetenv("DIODE_PYTHON").isEmpty() ? QByteArray(PYTHON3) : qgetenv("DIODE_PYTHON");
        QProcess check;
        check.setWorkingDirectory(testutil::sourcePath("plugin/python"));
        check.start(QString::fromUtf8(python), {"-m", "torch_diode.worker", "--check"});
        QVERIFY(check.waitForFinished(120000));
        const QString why = QString::fromUtf8(check.readAllStandardOutput()).trimmed();
        if (why != "ok")
            QSKIP(qPrintable("inductor backend unavailable here: " + why));
        const QString db = m_dir.filePath("gpu.db");
        QString err;
        QCOMPARE(testutil::runCli({"sweep", "--backend", "inductor", "--plan",
                                   testutil::sourcePath("resources/plans/worker-check.json"), "--db", db,
                                   "--python", QString::fromUtf8(python)},
                                  nullptr, &err, 600000),
                 0);
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM run_problems WHERE status='ok'"), 4);
        QVERIFY(testutil::scalar(db, "SELECT count(*) FROM kernel_configs WHERE kind='triton'") >= 10);
        QVERIFY(testutil::scalar(db, "SELECT count(*) FROM kernel_configs WHERE kind='aten'") >= 2);
        QVERIFY(testutil::scalar(db, "SELECT count(*) FROM telemetry") >= 1);
        // Problem JSON version 2 from the worker: in-graph times beside Inductor's, and both baselines
        // of every problem.
        QVERIFY(testutil::scalar(
                    db, "SELECT count(*) FROM measurements WHERE method='graph_warm' AND status='ok'") >= 10);
        QVERIFY(testutil::scalar(
                    db, "SELECT count(*) FROM measurements WHERE method='graph_cold' AND status='ok'") >= 10);
        QVERIFY(testutil::scalar(db, "SELECT count(*) FROM measurements WHERE method='inductor_autotune'") >=
                10);
        QCOMPARE(testutil::scalar(
                     db, "SELECT count(DISTINCT problem_id) FROM problem_baselines WHERE baseline='default' "
                         "AND method='graph_warm'"),
                 4);
        QCOMPARE(testutil::scalar(db, "SELECT count(DISTINCT problem_id) FROM problem_baselines WHERE "
                                      "baseline='max_autotune' AND method='graph_warm'"),
                 4);
        QString stats;
        QCOMPARE(testutil::runCli({"stats", "--db", db}, &stats), 0);
        QVERIFY2(stats.contains("default method graph_warm times (default: the data has in-graph times)"),
                 qPrintable(stats));
    }
};

QTEST_GUILESS_MAIN(TestInductorGpu)
#include "tst_inductor_gpu.moc"
