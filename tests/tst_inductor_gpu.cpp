#include "testutil.h"

// The real inductor worker on a real GPU: skipped, with the reason, where torch or a GPU is missing.
class TestInductorGpu : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void sweepsTheWorkerCheckPlan()
    {
        const QByteArray python = qgetenv("DIODE_PYTHON").isEmpty() ? QByteArray(PYTHON3) : qgetenv("DIODE_PYTHON");
        QProcess check;
        check.setWorkingDirectory(testutil::sourcePath("plugin/python"));
        check.start(QString::fromUtf8(python), {"-m", "torch_diode.worker", "--check"});
        QVERIFY(check.waitForFinished(120000));
        const QString why = QString::fromUtf8(check.readAllStandardOutput()).trimmed();
        if (why != "ok") QSKIP(qPrintable("inductor backend unavailable here: " + why));
        const QString db = m_dir.filePath("gpu.db");
        QString err;
        QCOMPARE(testutil::runCli({"sweep", "--backend", "inductor", "--plan",
                                   testutil::sourcePath("resources/plans/worker-check.json"), "--db", db, "--python",
                                   QString::fromUtf8(python)},
                                  nullptr, &err, 600000),
                 0);
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM run_problems WHERE status='ok'"), 4);
        QVERIFY(testutil::scalar(db, "SELECT count(*) FROM kernel_configs WHERE kind='triton'") >= 10);
        QVERIFY(testutil::scalar(db, "SELECT count(*) FROM kernel_configs WHERE kind='aten'") >= 2);
        QVERIFY(testutil::scalar(db, "SELECT count(*) FROM telemetry") >= 1);
    }
};

QTEST_GUILESS_MAIN(TestInductorGpu)
#include "tst_inductor_gpu.moc"
