#include "testutil.h"

#include "diode/analysis/predictiontable.h"
#include "diode/infer/problemjson.h"
#include "diode/infer/timingagreement.h"
#include "diode/store/sqlstatement.h"
#include "diode/store/storequery.h"
#include "diode/store/storewriter.h"

#include <map>
#include <memory>

using namespace diode;

namespace {

ProblemRecord sampleRecord(int64_t m, int candidates) {
    ProblemRecord r;
    r.problem = GemmProblem{GemmOp::Mm, DType::BF16, 1, m, 256, 512, false, true};
    for (int i = 0; i < candidates; ++i) {
        Candidate x;
        x.config.kind = "triton";
        x.config.name = "mm";
        x.config.blockM = 16 << (i % 4);
        x.config.blockN = 32 << (i / 4 % 4);
        x.config.numStages = 2 + i / 16;
        x.timings.push_back({TimingMethod::InductorAutotune, 0.01 * (i + 1), MeasureStatus::Ok, {}});
        r.candidates.push_back(x);
    }
    return r;
}

// (M, config key, method, time, status, error) of every measurement of a store.
QStringList measurementRows(const QString &path) {
    return testutil::rows(
        path, "SELECT p.m, c.config_key, m.method, m.time_ms, m.status, m.error FROM measurements m "
              "JOIN kernel_configs c ON c.id = m.config_id JOIN problems p ON p.id = m.problem_id");
}

using testutil::execSql;

} // namespace

class TestStore : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString db(const char *name) { return m_dir.filePath(name); }

private slots:
    void createsSchemaWithWalAndForeignKeys() {
        Store s(db("a.db").toStdString());
        QCOMPARE(s.schemaVersion(), Store::kSchemaVersion);
        QCOMPARE(testutil::scalar(db("a.db"),
                                  "SELECT count(*) FROM sqlite_master WHERE name='measurements_by_config'"),
                 1);
        {
            SqlStatement st(s, "PRAGMA journal_mode");
            QVERIFY(st.step());
            QCOMPARE(st.text(0), std::string("wal"));
        }
        // Foreign keys are enforced: a measurement of a run that does not exist is refused.
        QVERIFY_THROWS_EXCEPTION(StoreError,
                                 s.insertMeasurement(999, s.problemId(sampleRecord(1, 1).problem),
                                                     sampleRecord(1, 1).candidates[0].measurements()[0]));
    }

    // A warm time far above the cold one of the same kernel, run and problem is a timing glitch
    // (a flushed L2 only slows a kernel); stats counts them, with the agreement's 0.3 us floor
    // for kernels of a few microseconds, and never pairs times of two runs.
    void statsCountWarmColdGlitches() {
        Store s(db("glitch.db").toStdString());
        RunInfo run;
        run.backend = "inductor";
        run.gpuName = "NVIDIA H100 80GB HBM3";
        const int64_t first = s.createRun(run), second = s.createRun(run);
        auto rec = sampleRecord(64, 4);
        auto times = [&](int i, double warm, double cold) {
            rec.candidates[size_t(i)].timings = {{TimingMethod::GraphWarm, warm, MeasureStatus::Ok, {}},
                                                 {TimingMethod::GraphCold, cold, MeasureStatus::Ok, {}}};
        };
        times(0, 0.010, 0.012);   // warm below cold: L2 at work
        times(1, 0.030, 0.015);   // 2x: a glitch
        times(2, 0.0004, 0.0002); // 2x, but 0.2 us apart: within the agreement floor
        times(3, 0.016, 0.010);   // 1.6x and 6 us: a glitch
        auto other = sampleRecord(64, 4);
        other.candidates[0].timings = {{TimingMethod::GraphCold, 0.001, MeasureStatus::Ok, {}}};
        {
            Store::Transaction tx(s);
            s.insertRecord(first, rec);
            s.insertRecord(second, other); // its cold time of candidate 0 is not run 1's
            tx.commit();
        }
        QCOMPARE(s.stats().warmColdGlitches, 2);
        QCOMPARE(s.stats().toJson()["warm_cold_glitches"].get<int64_t>(), 2);
        QVERIFY2(s.stats().warmColdGlitchNote().starts_with("2 candidates have a warm time over 1.5x"),
                 s.stats().warmColdGlitchNote().c_str());
        QVERIFY(StoreStats{}.warmColdGlitchNote().empty());
        QVERIFY(warmColdGlitch(0.030, 0.015) && !warmColdGlitch(0.0004, 0.0002) &&
                !warmColdGlitch(0.014, 0.010));
    }

    void roundTrip() {
        Store s(db("rt.db").toStdString());
        RunInfo run;
        run.backend = "inductor";
        run.gpuName = "NVIDIA H200";
        const int64_t id = s.createRun(run);
        auto rec = sampleRecord(64, 20);
        rec.candidates[3].timings[0] = {TimingMethod::InductorAutotune, std::nullopt, MeasureStatus::Failed,
                                        "out of resource: shared memory"};
        // One kernel timed by three methods is one candidate with three rows.
        rec.candidates[5].timings.push_back({TimingMethod::GraphWarm, 0.004, MeasureStatus::Ok, {}});
        rec.candidates[5].timings.push_back({TimingMethod::GraphCold, 0.005, MeasureStatus::Ok, {}});
        rec.baselines.push_back(
            {"max_autotune", TimingMethod::GraphWarm, 0.0042, 7.5, rec.candidates[5].config});
        rec.baselines.push_back({"default", TimingMethod::GraphWarm, 0.0061, std::nullopt, std::nullopt});
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
            for (TimingMethod m : kTimingMethods)
                QCOMPARE(back[0].candidates[i].timeMs(m), rec.candidates[i].timeMs(m));
        }
        QCOMPARE(back[0].candidates[3].error(), rec.candidates[3].error());
        QCOMPARE(back[0].candidates[5].timings.size(), size_t(3));
        QCOMPARE(*back[0].candidates[5].timeMs(TimingMethod::GraphCold), 0.005);
        QCOMPARE(back[0].baselines.size(), size_t(2));
        const auto &picked = back[0].baselines[1]; // ordered by baseline name
        QCOMPARE(picked.baseline, std::string("max_autotune"));
        QCOMPARE(*picked.compileS, 7.5);
        QCOMPARE(picked.pick->key(), rec.candidates[5].config.key());
        QVERIFY(!back[0].baselines[0].compileS); // unknown stays unknown, never 0
        QVERIFY(!back[0].baselines[0].pick);
        const auto st = s.stats();
        QCOMPARE(st.problems, 1);
        QCOMPARE(st.measurements, 22);
        QCOMPARE(st.failedMeasurements, 1);
        QCOMPARE(st.gpus, std::vector<std::string>{"NVIDIA H200"});
        QCOMPARE(st.measurementsByMethod.at("inductor_autotune"), 20);
        QCOMPARE(st.measurementsByMethod.at("graph_warm"), 1);
        QCOMPARE(st.failedByMethod.at("inductor_autotune"), 1);
        QCOMPARE(st.problemsByGpu.at("NVIDIA H200"), 1);
        QCOMPARE(st.baselines, 2);
        QVERIFY(st.defaultMethod.method == TimingMethod::GraphWarm); // the data has in-graph times
    }

    // Every reader takes a problem from a row the same way (sqlstatement.h): a value no build
    // writes is refused naming it, by the export, the Validate table and the Data page alike.
    void problemRowsAreReadOneWay() {
        const QString path = db("rows.db");
        {
            Store s(path.toStdString());
            RunInfo run;
            run.backend = "cpu";
            const int64_t id = s.createRun(run);
            Store::Transaction tx(s);
            s.insertRecord(id, sampleRecord(64, 3), 0.5);
            tx.commit();
            SqlStatement q(s, "SELECT " + problemColumns() + " FROM problems");
            QVERIFY(q.step());
            QVERIFY(q.problem(0) == sampleRecord(64, 3).problem);
            // Written by another program: diode's own CHECK constraint would refuse it.
            SqlStatement(s, "PRAGMA ignore_check_constraints = ON").step();
            SqlStatement(s, "UPDATE problems SET op = 'gemv'").step();
        }
        Store s(path.toStdString(), Store::Mode::ReadOnly);
        auto refused = [](const std::function<void()> &read) {
            try {
                read();
            } catch (const StoreError &e) {
                return std::string(e.what());
            }
            return std::string("(read without complaint)");
        };
        const std::string expected = "a stored problem has op 'gemv'";
        QVERIFY(refused([&] {
                    s.forEachRecord([](const RunInfo &, const ProblemRecord &) {});
                }).find(expected) == 0);
        QVERIFY(refused([&] { PredictionTable::fromStore(s, TimingMethod::Cpu); }).find(expected) == 0);
        QVERIFY(refused([&] { StoreQuery(path.toStdString()).bestPerProblem(); }).find(expected) == 0);
    }

    void migratesSchemaV1KeepingData() {
        const QString path = db("v1.db");
        execSql(path, testutil::fileBytes(testutil::dataPath("schema-v1.sql")));
        QCOMPARE(testutil::scalar(path, "PRAGMA user_version"), 1);
        {
            // Read-only: the v2 and v3 tables it lacks read as empty, its times as Inductor's.
            Store ro(path.toStdString(), Store::Mode::ReadOnly);
            QCOMPARE(ro.stats().measurementsByMethod.at("inductor_autotune"), 1);
            QVERIFY(ro.telemetry(1).empty());
        }
        QCOMPARE(testutil::scalar(path, "PRAGMA user_version"), 1);
        {
            Store s(path.toStdString());
            QCOMPARE(s.schemaVersion(), Store::kSchemaVersion);
            QCOMPARE(s.measurementCount(), 1);
            QCOMPARE(s.run(1).planName, std::string("old-plan"));
            TelemetrySample t;
            t.smClockMhz = 1980;
            s.insertTelemetry(1, t); // a v2 table, usable after the migration
            QCOMPARE(s.telemetry(1).size(), size_t(1));
        }
        QVERIFY2(testutil::integrityCheck(path) == "ok", testutil::integrityCheck(path).c_str());
    }

    // Schema 4 allows the op baddbmm. SQLite cannot alter a CHECK, so the problems table is
    // rebuilt: every row of every table stays, ids and the references to them included. A
    // read-only open (the shipped datasets are schema 3) reads the file as it is and writes nothing.
    void migratesSchemaV3KeepingEveryRowForBaddbmm() {
        const QString path = db("v3.db");
        execSql(path, testutil::fileBytes(testutil::dataPath("schema-v3.sql")));
        QCOMPARE(testutil::scalar(path, "PRAGMA user_version"), 3);
        const char *tables[] = {"runs",      "problems", "kernel_configs", "measurements",     "run_problems",
                                "telemetry", "models",   "predictions",    "problem_baselines"};
        std::map<std::string, QStringList> before;
        for (const char *t : tables)
            before[t] = testutil::rows(path, QString("SELECT * FROM %1").arg(t).toUtf8().constData());
        QCOMPARE(before["problems"].size(), 3);
        QCOMPARE(before["measurements"].size(), 7);
        QCOMPARE(before["problem_baselines"].size(), 1);
        const char *baddbmm = "INSERT INTO problems(op, dtype, b, m, n, k, a_transposed, b_transposed) "
                              "VALUES ('baddbmm', 'bf16', 16, 1, 512, 64, 0, 1)";
        const QByteArray file = testutil::fileBytes(path);
        {
            Store ro(path.toStdString(), Store::Mode::ReadOnly);
            QCOMPARE(ro.schemaVersion(), 3);
            QCOMPARE(ro.measurementCount(), 7);
            QCOMPARE(ro.stats().baselines, 1);
        }
        QCOMPARE(testutil::fileBytes(path), file); // not a byte written
        {
            sqlite3 *raw = nullptr;
            QCOMPARE(sqlite3_open(path.toUtf8().constData(), &raw), SQLITE_OK);
            QCOMPARE(sqlite3_exec(raw, baddbmm, nullptr, nullptr, nullptr), SQLITE_CONSTRAINT);
            sqlite3_close(raw);
        }
        {
            Store s(path.toStdString());
            QCOMPARE(s.schemaVersion(), Store::kSchemaVersion);
            QCOMPARE(s.measurementCount(), 7);
        }
        for (const char *t : tables)
            QCOMPARE(testutil::rows(path, QString("SELECT * FROM %1").arg(t).toUtf8().constData()),
                     before[t]);
        QCOMPARE(testutil::scalar(path, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
        QCOMPARE(testutil::scalar(path, "SELECT count(*) FROM sqlite_master WHERE name = 'problems_v4'"), 0);
        execSql(path, baddbmm);
        QCOMPARE(testutil::scalar(path, "SELECT count(*) FROM problems WHERE op = 'baddbmm'"), 1);
        {
            Store s(path.toStdString()); // opened again: nothing left to migrate
            QCOMPARE(s.schemaVersion(), Store::kSchemaVersion);
        }
    }

    void migratesSchemaV2FilingTimesUnderTheirMethods() {
        const QString path = db("v2.db");
        execSql(path, testutil::fileBytes(testutil::dataPath("schema-v2.sql")));
        QCOMPARE(testutil::scalar(path, "PRAGMA user_version"), 2);
        const QStringList before = {
            "128|{\"BLOCK_K\":64,\"BLOCK_M\":16,\"BLOCK_N\":64,\"kind\":\"cpu\",\"name\":\"tiled\","
            "\"threads\":2}|cpu|0.75|ok|",
            "128|{\"BLOCK_K\":64,\"BLOCK_M\":64,\"BLOCK_N\":64,\"kind\":\"cpu\",\"name\":\"tiled\","
            "\"threads\":1}|cpu||timeout|"
            "per-problem timeout of 60 s reached before this config ran",
            "64|{\"BLOCK_K\":64,\"BLOCK_M\":64,\"BLOCK_N\":128,\"GROUP_M\":8,\"kind\":\"triton\",\"num_"
            "stages\":3,\"num_warps\":4,"
            "\"template\":\"mm\"}|inductor_autotune|0.021|ok|",
            "64|{\"BLOCK_K\":64,\"BLOCK_M\":64,\"BLOCK_N\":128,\"GROUP_M\":8,\"kind\":\"triton\",\"num_"
            "stages\":3,\"num_warps\":4,"
            "\"template\":\"mm\"}|inductor_autotune||failed|out of resource: shared memory",
            "64|{\"kind\":\"aten\",\"name\":\"extern_kernels.mm\"}|inductor_autotune|0.0123|ok|",
        };
        {
            // Read-only (the shipped dataset is opened so): not migrated, but read as schema 3.
            Store ro(path.toStdString(), Store::Mode::ReadOnly);
            QCOMPARE(ro.schemaVersion(), 2);
            const auto st = ro.stats();
            QCOMPARE(st.measurementsByMethod.at("cpu"), 2);
            QCOMPARE(st.measurementsByMethod.at("inductor_autotune"), 3);
            QCOMPARE(st.problemsByGpu.at("NVIDIA H100"), 1);
            QCOMPARE(st.baselines, 0);
            QVERIFY(st.defaultMethod.method == TimingMethod::Cpu); // no in-graph times; cpu ones
            QCOMPARE(ro.methodCounts().at(TimingMethod::InductorAutotune), 2);
            int candidates = 0;
            ro.forEachRecord([&](const RunInfo &run, const ProblemRecord &r) {
                for (const auto &c : r.candidates) {
                    ++candidates;
                    QCOMPARE(c.timings.size(), size_t(1));
                    QVERIFY(c.timings[0].method ==
                            (run.backend == "cpu" ? TimingMethod::Cpu : TimingMethod::InductorAutotune));
                }
            });
            QCOMPARE(candidates, 5);
        }
        QCOMPARE(testutil::scalar(path, "PRAGMA user_version"), 2); // the read-only open changed nothing
        {
            Store s(path.toStdString());
            QCOMPARE(s.schemaVersion(), Store::kSchemaVersion);
            QCOMPARE(s.measurementCount(), 5);
            QCOMPARE(s.telemetry(1).size(), size_t(1)); // v2 tables keep their rows
        }
        QCOMPARE(measurementRows(path), before);
        QCOMPARE(testutil::scalar(path, "SELECT count(*) FROM predictions"), 1);
        // The method is part of the key: the same kernel, problem and run takes a second method.
        {
            Store s(path.toStdString());
            Measurement m;
            m.config = KernelConfig::fromJson(
                nlohmann::json::parse(R"({"kind":"aten","name":"extern_kernels.mm"})"), "x");
            m.method = TimingMethod::GraphWarm;
            m.timeMs = 0.0101;
            s.insertMeasurement(1, 1, m);
            QCOMPARE(s.measurementCount(1), 3);
            QVERIFY_THROWS_EXCEPTION(StoreError,
                                     s.exec("INSERT INTO measurements(run_id, problem_id, config_id, method, "
                                            "status) VALUES(1, 1, 1, 'graph_hot', 'ok')"));
        }
        QVERIFY2(testutil::integrityCheck(path) == "ok", testutil::integrityCheck(path).c_str());
        QCOMPARE(testutil::scalar(path, "PRAGMA foreign_key_check"), -1); // no violations
    }

    void refusesNewerSchema() {
        const QString path = db("future.db");
        { Store s(path.toStdString()); }
        execSql(path, "PRAGMA user_version=7");
        const QByteArray before = testutil::fileBytes(path);
        try {
            Store s(path.toStdString());
            QFAIL("opened a database of a newer schema");
        } catch (const StoreError &e) {
            QVERIFY2(QString(e.what()).contains("written by schema 7; this build reads up to 6"), e.what());
        }
        QCOMPARE(testutil::fileBytes(path), before);
    }

    void refusesNegativeSchemaVersion_data() {
        QTest::addColumn<int>("version");
        QTest::newRow("-1") << -1;
        QTest::newRow("-1000") << -1000;
        QTest::newRow("INT_MIN") << std::numeric_limits<int>::min();
    }

    // A negative user_version once indexed the migration table out of bounds (SIGSEGV, or
    // garbage SQL run against the file).
    void refusesNegativeSchemaVersion() {
        QFETCH(int, version);
        const QString path = db("negative.db");
        QFile::remove(path);
        { Store s(path.toStdString()); }
        execSql(path, QByteArray("PRAGMA user_version=") + QByteArray::number(version));
        const QByteArray before = testutil::fileBytes(path);
        for (auto mode : {Store::Mode::ReadWrite, Store::Mode::ReadOnly}) {
            try {
                Store s(path.toStdString(), mode);
                QFAIL("opened a database of a negative schema version");
            } catch (const StoreError &e) {
                const QString want =
                    QStringLiteral("has schema version %1, which no diode wrote").arg(version);
                QVERIFY2(QString(e.what()).contains(want), e.what());
            }
        }
        QCOMPARE(testutil::fileBytes(path), before);
        QString err;
        QCOMPARE(testutil::runCli({"import", testutil::dataPath("bias-problems.jsonl"), "--db", path},
                                  nullptr, &err),
                 1);
        QVERIFY2(err.contains("which no diode wrote"), qPrintable(err));
    }

    void refusesForeignFile() {
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

    void readOnlyStoreRefusesWritesClearly() {
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

    // A reader leaves the folder as it found it: a read-only connection never deletes the -wal and
    // -shm SQLite makes for it (`diode stats` would leave both beside a finished sweep's database);
    // files a writer still holds open stay, with its data.
    void readerLeavesNoWalFiles() {
        const QString path = db("reader.db");
        { Store s(path.toStdString()); } // a WAL database, closed: no -wal, no -shm
        auto sideFiles = [&] { return QFile::exists(path + "-wal") || QFile::exists(path + "-shm"); };
        QVERIFY(!sideFiles());
        {
            Store ro(path.toStdString(), Store::Mode::ReadOnly);
            QCOMPARE(ro.runs().size(), size_t(0));
            QVERIFY(sideFiles()); // SQLite's, while the reader reads
        }
        QVERIFY(!sideFiles());
        // Readers that overlap (the workbench's pages): the files stay while one is open, and the
        // last to close removes them.
        {
            auto first = std::make_unique<Store>(path.toStdString(), Store::Mode::ReadOnly);
            Store second(path.toStdString(), Store::Mode::ReadOnly);
            QCOMPARE(first->runs().size(), size_t(0));
            QCOMPARE(second.runs().size(), size_t(0));
            first.reset();
            QVERIFY(sideFiles());
            QCOMPARE(second.runs().size(), size_t(0)); // still reads
        }
        QVERIFY(!sideFiles());
        Store writer(path.toStdString());
        RunInfo run;
        run.backend = "cpu";
        writer.createRun(run);
        {
            Store ro(path.toStdString(), Store::Mode::ReadOnly);
            QCOMPARE(ro.runs().size(), size_t(1));
        }
        QVERIFY(QFile::exists(path + "-wal") && QFile::exists(path + "-shm")); // the writer's
        QCOMPARE(Store(path.toStdString(), Store::Mode::ReadOnly).runs().size(), size_t(1));
    }

    void fullDiskLeavesNoPartialRows() {
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
            for (int m = 1; m <= 500; ++m)
                s.insertRecord(id, sampleRecord(m, 40));
            tx.commit();
            QFAIL("500 problems fit in 3 pages");
        } catch (const StoreError &e) {
            QVERIFY2(QString(e.what()).contains("full"), e.what());
        }
        QCOMPARE(s.measurementCount(), 0);
        QCOMPARE(testutil::scalar(path, "SELECT count(*) FROM run_problems"), 0);
    }

    void writerThreadCommitsEverythingInOrder() {
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
                for (const auto &x : rec.candidates)
                    w.push(StoreWriter::MeasurementRow{id, rec.problem, x.measurements()[0]});
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
