#include "testutil.h"

#include "diode/infer/shippeddata.h"
#include "diode/store/datamix.h"

#include <QCryptographicHash>

using namespace diode;

// The shipped databases must never be written to (`diode eval --store-predictions` would store a
// cpu model's 12,190 predictions into the git-tracked H200 dataset; a workbench sweep would add a
// cpu run to it). Shipped files are read-only however opened, and a sweep or stored
// predictions that would mix backends, GPUs or timing methods in one database are refused unless
// confirmed.
class TestShippedData : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    const QString m_shipped = testutil::sourcePath("trained_models/h200/h200-dataset.db");
    const QString m_package = testutil::sourcePath("trained_models/h200/h200-gemm-mlp-v2.diode");
    /// An output file that would land in the shipped folder (never made).
    const QString m_shippedOut = testutil::sourcePath("trained_models/h200/tst-shipped-output");
    QString m_plan;

    static QByteArray digest(const QString &path) {
        return QCryptographicHash::hash(testutil::fileBytes(path), QCryptographicHash::Sha256).toHex();
    }
    // The shipped file as it was: same bytes, no WAL or journal files beside it.
    void verifyUntouched(const QByteArray &before) {
        QCOMPARE(digest(m_shipped), before);
        for (const char *suffix : {"-wal", "-shm", "-journal", ".sweep.lock"})
            QVERIFY2(!QFileInfo::exists(m_shipped + suffix), suffix);
    }
    QString copyOfShipped(const QString &name) {
        const QString path = m_dir.filePath(name);
        QFile::remove(path);
        if (!QFile::copy(m_shipped, path))
            return {};
        QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner);
        return path;
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        QVERIFY(QFileInfo::exists(m_shipped));
        m_plan = m_dir.filePath("tiny.json");
        QFile f(m_plan);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"name": "tiny", "repeats": 1,
          "cpu": {"block_m": [16], "block_n": [16], "block_k": [16], "threads": [1]},
          "entries": [{"ops": ["mm"], "dtypes": ["fp32"], "M": [16, 32], "N": [16], "K": [16]}]})");
    }

    // One definition: under the source tree's (or installed) trained_models/, links resolved;
    // a copy elsewhere is the user's own.
    void shippedMeansInsideTrainedModels() {
        QVERIFY(shipped::isShippedPath(m_shipped.toStdString()));
        QVERIFY(shipped::isShippedPath(
            testutil::sourcePath("trained_models/h200/not-there-yet.db").toStdString()));
        QVERIFY(shipped::isShippedPath(
            testutil::sourcePath("trained_models/h200/../h200/h200-dataset.db").toStdString()));
        const QString link = m_dir.filePath("link.db");
        QVERIFY(QFile::link(m_shipped, link));
        QVERIFY(shipped::isShippedPath(link.toStdString()));
        QVERIFY(!shipped::isShippedPath(copyOfShipped("copy.db").toStdString()));
        QVERIFY(!shipped::isShippedPath(testutil::sourcePath("trained_models_elsewhere/x.db").toStdString()));
        QVERIFY(!shipped::isShippedPath(":memory:"));
    }

    void storeRefusesToOpenShippedDataForWriting() {
        const QByteArray before = digest(m_shipped);
        try {
            Store store(m_shipped.toStdString());
            QFAIL("a shipped database was opened for writing");
        } catch (const InvalidInput &e) {
            const QString msg = QString::fromUtf8(e.what());
            QVERIFY2(msg.contains("is shipped data") && msg.contains("cp '"), e.what());
        }
        const QString fresh = testutil::sourcePath("trained_models/h200/tst-shipped-new.db");
        QVERIFY_THROWS_EXCEPTION(InvalidInput, Store(fresh.toStdString()));
        QVERIFY(!QFileInfo::exists(fresh));
        Store reader(m_shipped.toStdString(), Store::Mode::ReadOnly); // reading is fine
        QVERIFY(reader.stats().problems > 0);
        verifyUntouched(before);
        Store mine(copyOfShipped("mine.db").toStdString()); // a copy may be written
        QCOMPARE(mine.schemaVersion(), Store::kSchemaVersion);
    }

    // Every CLI command that writes, on the shipped file: exit 2, the reason, nothing written.
    void cliCommandsThatWriteRefuseShippedData() {
        const QByteArray before = digest(m_shipped), packageBefore = digest(m_package);
        const QString lines = m_dir.filePath("one.jsonl");
        {
            QFile f(lines);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray::fromStdString(testutil::v2Line(64) + "\n"));
        }
        const QList<QStringList> commands{
            {"eval", "--package", m_package, "--db", m_shipped, "--store-predictions"},
            {"sweep", "--backend", "cpu", "--plan", m_plan, "--db", m_shipped},
            {"sweep", "--backend", "cpu", "--plan", m_plan, "--db", m_shipped, "--allow-mixed-data"},
            {"import", lines, "--db", m_shipped},
            {"train", "--db", m_shipped, "--out",
             testutil::sourcePath("trained_models/h200/h200-gemm-mlp-v2.diode"), "--epochs", "1"},
            // Output files of commands that only read their input, into the shipped folder.
            {"export", "--db", copyOfShipped("export.db"), "--out", m_shippedOut + ".jsonl"},
            {"plan", m_plan, "--expand", "--out", m_shippedOut + ".plan.jsonl"},
        };
        for (const auto &args : commands) {
            QString err;
            const int rc = testutil::runCli(args, nullptr, &err);
            if (args.first() == "train" && rc == 3)
                continue; // a build without LibTorch
            QVERIFY2(rc == 2, qPrintable(args.join(' ') + ": " + QString::number(rc) + " " + err));
            QVERIFY2(err.contains("shipped data") && err.contains("only reads"), qPrintable(err));
        }
        verifyUntouched(before);
        QCOMPARE(digest(m_package), packageBefore);
        QVERIFY(!QFileInfo::exists(m_package + ".partial"));
        for (const QString &out : {m_shippedOut + ".jsonl", m_shippedOut + ".plan.jsonl"})
            QVERIFY2(!QFileInfo::exists(out) && !QFileInfo::exists(out + ".partial"), qPrintable(out));
    }

    // Plain eval of shipped data no longer suggests storing predictions in it.
    void evalHintOnShippedDataSaysCopyFirst() {
        const QByteArray before = digest(m_shipped);
        QString err;
        QCOMPARE(testutil::runCli({"eval", "--package", m_package, "--db", m_shipped}, nullptr, &err), 0);
        QVERIFY2(err.contains("is shipped data, only read"), qPrintable(err));
        QVERIFY2(!err.contains("--store-predictions keeps them"), qPrintable(err));
        verifyUntouched(before);
    }

    // A cpu sweep into (a copy of) the H200 data is refused, naming what would mix, unless
    // confirmed; a run of the same kind is not.
    void sweepThatWouldMixDataIsRefusedUnlessConfirmed() {
        const QString h200 = copyOfShipped("h200.db");
        const QByteArray before = digest(h200);
        QString err;
        QCOMPARE(
            testutil::runCli({"sweep", "--backend", "cpu", "--plan", m_plan, "--db", h200}, nullptr, &err),
            2);
        QVERIFY2(err.contains("would mix data") && err.contains("GPU CPU: ") &&
                     err.contains("with NVIDIA H200") &&
                     err.contains("timing method cpu with inductor_autotune") &&
                     err.contains("--allow-mixed-data"),
                 qPrintable(err));
        QCOMPARE(digest(h200), before); // refused before anything was written
        QCOMPARE(testutil::runCli(
                     {"sweep", "--backend", "cpu", "--plan", m_plan, "--db", h200, "--allow-mixed-data"}),
                 0);
        QCOMPARE(testutil::scalar(h200, "SELECT count(*) FROM runs WHERE backend = 'cpu'"), int64_t(1));

        const QString cpu = m_dir.filePath("cpu.db");
        QCOMPARE(testutil::runCli({"sweep", "--backend", "cpu", "--plan", m_plan, "--db", cpu}), 0);
        QCOMPARE(
            testutil::runCli({"sweep", "--backend", "cpu", "--plan", m_plan, "--db", cpu}, nullptr, &err), 0);
        QCOMPARE(testutil::scalar(cpu, "SELECT count(*) FROM runs"), int64_t(2));
    }

    // The H200 model's predictions go into H200 data of its timing method; into cpu data they
    // are refused, naming the GPU and method, unless confirmed.
    void storedPredictionsThatWouldMixAreRefusedUnlessConfirmed() {
        const QString cpu = m_dir.filePath("cpu-for-eval.db");
        QCOMPARE(testutil::runCli({"sweep", "--backend", "cpu", "--plan", m_plan, "--db", cpu}), 0);
        QString err;
        QCOMPARE(
            testutil::runCli({"eval", "--package", m_package, "--db", cpu, "--all", "--store-predictions"},
                             nullptr, &err),
            2);
        QVERIFY2(err.contains("would mix data") && err.contains("GPU NVIDIA H200 with CPU: ") &&
                     err.contains("timing method inductor_autotune with cpu"),
                 qPrintable(err));
        QCOMPARE(testutil::scalar(cpu, "SELECT count(*) FROM models"), int64_t(0));

        const QString h200 = copyOfShipped("h200-eval.db");
        QCOMPARE(testutil::runCli({"eval", "--package", m_package, "--db", h200, "--store-predictions"},
                                  nullptr, &err),
                 0);
        QCOMPARE(testutil::scalar(h200, "SELECT count(*) FROM models"), int64_t(1));
    }

    void describeMixNamesEachFact() {
        DataOrigin h200{{}, {"NVIDIA H200"}, {TimingMethod::GraphWarm, TimingMethod::GraphCold}};
        QCOMPARE(describeMix({}, h200), std::string()); // a new database mixes nothing
        QCOMPARE(describeMix(h200, DataOrigin{{}, {"NVIDIA H200"}, {TimingMethod::GraphWarm}}),
                 std::string());
        QCOMPARE(describeMix(DataOrigin{{"inductor"}, {"NVIDIA H200"}, {TimingMethod::GraphWarm}},
                             DataOrigin{{"cpu"}, {"CPU: x"}, {TimingMethod::Cpu}}),
                 std::string("backend cpu with inductor; GPU CPU: x with NVIDIA H200; timing method cpu with "
                             "graph_warm"));
    }
};

QTEST_GUILESS_MAIN(TestShippedData)
#include "tst_shippeddata.moc"
