#include "testutil.h"

#include "diode/problemjson.h"
#include "diode/storewriter.h"

using namespace diode;

namespace {

ProblemRecord sampleRecord(int64_t m, int candidates)
{
    ProblemRecord r;
    r.problem = GemmProblem{GemmOp::Mm, DType::BF16, 1, m, 256, 512, false, true};
    for (int i = 0; i < candidates; ++i) {
        Measurement x;
        x.config.kind = "triton";
        x.config.name = "mm";
        x.config.blockM = 16 << (i % 4);
        x.config.blockN = 32 << (i / 4 % 4);
        x.config.numStages = 2 + i / 16;
        x.timeMs = 0.01 * (i + 1);
        r.candidates.push_back(x);
    }
    return r;
}

void execSql(const QString &path, const QByteArray &sql)
{
    sqlite3 *db = nullptr;
    QCOMPARE(sqlite3_open(path.toUtf8().constData(), &db), SQLITE_OK);
    char *err = nullptr;
    const int rc = sqlite3_exec(db, sql.constData(), nullptr, nullptr, &err);
    QVERIFY2(rc == SQLITE_OK, err);
    sqlite3_close(db);
}

} // namespace

class TestStore : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString db(const char *name) { return m_dir.filePath(name); }

private slots:
    void createsSchemaWithWalAndForeignKeys()
    {
        Store s(db("a.db").toStdString());
        QCOMPARE(s.schemaVersion(), Store::kSchemaVersion);
        QCOMPARE(testutil::scalar(db("a.db"), "SELECT count(*) FROM sqlite_master WHERE name='measurements_by_config'"), 1);
        sqlite3_stmt *st = nullptr;
        sqlite3_prepare_v2(s.handle(), "PRAGMA journal_mode", -1, &st, nullptr);
        sqlite3_step(st);
        QCOMPARE(QString(reinterpret_cast<const char *>(sqlite3_column_text(st, 0))), QString("wal"));
        sqlite3_finalize(st);
        // Foreign keys are enforced: a measurement of a run that does not exist is refused.
        QVERIFY_THROWS_EXCEPTION(StoreError, s.insertMeasurement(999, s.problemId(sampleRecord(1, 1).problem),
                                                                 sampleRecord(1, 1).candidates[0]));
    }

    void roundTrip()
    {
        Store s(db("rt.db").toStdString());
        RunInfo run;
        run.backend = "inductor";
        run.gpuName = "NVIDIA H200";
        const int64_t id = s.createRun(run);
        auto rec = sampleRecord(64, 20);
        rec.candidates[3].status = MeasureStatus::Failed;
        rec.candidates[3].timeMs.reset();
        rec.candidates[3].error = "out of resource: shared memory";
        {
            Store::Transaction tx(s);
            s.insertRecord(id, rec, 1.5);
            tx.commit();
        }
        std::vector<ProblemRecord> back;
        s.forEachRecord([&](const RunInfo &r, const ProblemRecord &p) {
            QCOMPARE(r.gpuName, std::string("NVIDIA H200"));
            back.push_back(p);
        });
        QCOMPARE(back.size(), size_t(1));
        QCOMPARE(back[0].problem, rec.problem);
        QCOMPARE(back[0].candidates.size(), size_t(20));
        for (size_t i = 0; i < 20; ++i) {
            QCOMPARE(back[0].candidates[i].config.key(), rec.candidates[i].config.key());
            QCOMPARE(back[0].candidates[i].timeMs, rec.candidates[i].timeMs);
        }
        QCOMPARE(back[0].candidates[3].error, rec.candidates[3].error);
        const auto st = s.stats();
        QCOMPARE(st.problems, 1);
        QCOMPARE(st.measurements, 20);
        QCOMPARE(st.failedMeasurements, 1);
        QCOMPARE(st.gpus, std::vector<std::string>{"NVIDIA H200"});
    }

    void migratesSchemaV1KeepingData()
    {
        const QString path = db("v1.db");
        execSql(path, testutil::fileBytes(testutil::dataPath("schema-v1.sql")));
        QCOMPARE(testutil::scalar(path, "PRAGMA user_version"), 1);
        {
            Store s(path.toStdString());
            QCOMPARE(s.schemaVersion(), 2);
            QCOMPARE(s.measurementCount(), 1);
            QCOMPARE(s.run(1).planName, std::string("old-plan"));
            TelemetrySample t;
            t.smClockMhz = 1980;
            s.insertTelemetry(1, t); // a v2 table, usable after the migration
            QCOMPARE(s.telemetry(1).size(), size_t(1));
        }
        QVERIFY2(testutil::integrityCheck(path) == "ok", testutil::integrityCheck(path).c_str());
    }

    void refusesNewerSchema()
    {
        const QString path = db("future.db");
        { Store s(path.toStdString()); }
        execSql(path, "PRAGMA user_version=7");
        const QByteArray before = testutil::fileBytes(path);
        try {
            Store s(path.toStdString());
            QFAIL("opened a database of a newer schema");
        } catch (const StoreError &e) {
            QVERIFY2(QString(e.what()).contains("written by schema 7; this build reads up to 2"), e.what());
        }
        QCOMPARE(testutil::fileBytes(path), before);
    }

    void refusesForeignFile()
    {
        const QString path = db("notadb.db");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QByteArray(4096, 'x'));
        f.close();
        try {
            Store s(path.toStdString());
            QFAIL("opened a file that is not a database");
        } catch (const StoreError &e) {
            QVERIFY2(QString(e.what()).contains("not a SQLite database"), e.what());
        }
        QCOMPARE(testutil::fileBytes(path), QByteArray(4096, 'x'));
    }

    void readOnlyStoreRefusesWritesClearly()
    {
        const QString path = db("ro.db");
        { Store s(path.toStdString()); }
        Store ro(path.toStdString(), Store::Mode::ReadOnly);
        RunInfo run;
        run.backend = "cpu";
        try {
            ro.createRun(run);
            QFAIL("wrote through a read-only connection");
        } catch (const StoreError &e) {
            QVERIFY2(QString(e.what()).contains("readonly"), e.what());
        }
        QCOMPARE(testutil::scalar(path, "SELECT count(*) FROM runs"), 0);
    }

    void fullDiskLeavesNoPartialRows()
    {
        // SQLite's page limit produces the same SQLITE_FULL a full disk does.
        const QString path = db("full.db");
        Store s(path.toStdString());
        RunInfo run;
        run.backend = "cpu";
        const int64_t id = s.createRun(run);
        const int64_t pages = testutil::scalar(path, "PRAGMA page_count");
        s.exec(QString("PRAGMA max_page_count=%1").arg(pages + 3).toUtf8().constData());
        try {
            Store::Transaction tx(s);
            for (int m = 1; m <= 500; ++m) s.insertRecord(id, sampleRecord(m, 40));
            tx.commit();
            QFAIL("500 problems fit in 3 pages");
        } catch (const StoreError &e) {
            QVERIFY2(QString(e.what()).contains("full"), e.what());
        }
        QCOMPARE(s.measurementCount(), 0);
        QCOMPARE(testutil::scalar(path, "SELECT count(*) FROM run_problems"), 0);
    }

    void writerThreadCommitsEverythingInOrder()
    {
        const QString path = db("writer.db");
        int64_t id;
        {
            Store s(path.toStdString());
            RunInfo run;
            run.backend = "cpu";
            id = s.createRun(run);
        }
        {
            StoreWriter w(path.toStdString());
            for (int m = 1; m <= 50; ++m) {
                const auto rec = sampleRecord(m, 10);
                for (const auto &x : rec.candidates) w.push(StoreWriter::MeasurementRow{id, rec.problem, x});
                w.push(StoreWriter::ProblemDone{id, rec.problem, "ok", "", 0.1});
            }
            w.flush();
            QCOMPARE(w.committedItems(), 50 * 11);
        }
        Store s(path.toStdString());
        QCOMPARE(s.measurementCount(id), 500);
        QCOMPARE(s.doneProblems(id).size(), size_t(50));
        auto state = runProgressState(s, id);
        QCOMPARE(state.done.size(), size_t(50));
        QCOMPARE(state.measured.begin()->second.size(), size_t(10));
    }
};

QTEST_GUILESS_MAIN(TestStore)
#include "tst_store.moc"
