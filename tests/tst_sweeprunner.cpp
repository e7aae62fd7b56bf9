#include "testutil.h"

#include "diode/cpubackend.h"
#include "diode/inductorbackend.h"
#include "diode/sweeprunner.h"

using namespace diode;
using json = nlohmann::json;

namespace {

SweepPlan planOf(std::vector<int64_t> ms, double timeoutS = 30) {
    json problems = json::array();
    for (auto m : ms)
        problems.push_back({{"op", "mm"}, {"dtype", "bf16"}, {"M", m}, {"N", 64}, {"K", 32}});
    json j{{"name", "t"},
           {"timeout_s", timeoutS},
           {"repeats", 1},
           {"cpu", {{"block_m", {16}}, {"block_n", {32, 64}}, {"block_k", {32}}, {"threads", {1}}}},
           {"entries", {{{"problems", problems}}}}};
    return SweepPlan::fromJson(j, ".");
}

} // namespace

class TestSweepRunner : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void initTestCase() {
        // The process-supervision cases run a stand-in worker (tests/data/fakeworker) that speaks
        // the real protocol but crashes, hangs or fails on purpose.
        qputenv("DIODE_PLUGIN_PYTHON", testutil::dataPath("fakeworker").toUtf8());
    }

    void cpuRunReportsProgressAndFinishes() {
        const auto db = m_dir.filePath("cpu.db").toStdString();
        CpuBackend backend;
        SweepRunner runner(db, backend);
        const auto plan = planOf({8, 16, 24});
        const int64_t run = runner.createRun(plan);
        std::vector<SweepProgress> seen;
        runner.setProgressCallback([&](const SweepProgress &p) { seen.push_back(p); });
        QCOMPARE(runner.run(run, plan), std::string("finished"));
        QVERIFY(!seen.empty());
        QCOMPARE(seen.back().done, 3);
        QCOMPARE(seen.back().total, 3);
        QCOMPARE(seen.back().measurements, 6);
        QVERIFY(seen.back().problemsPerS > 0);
        Store s(db);
        QCOMPARE(s.run(run).status, std::string("finished"));
        QCOMPARE(s.measurementCount(run), 6);
        // The cpu backend's own times, filed as such.
        QCOMPARE(s.methodCounts(), (MethodCounts{{TimingMethod::Cpu, 6}}));
        QVERIFY(!SweepRunner::resumable(db)); // nothing left to resume
    }

    void cancelThenResumeMeasuresEachPairOnce() {
        const auto db = m_dir.filePath("cancel.db").toStdString();
        CpuBackend backend;
        const auto plan = planOf({8, 16, 24, 32, 40});
        int64_t run;
        {
            SweepRunner runner(db, backend);
            run = runner.createRun(plan);
            runner.setProgressCallback([&](const SweepProgress &p) {
                if (p.done == 2)
                    runner.cancel();
            });
            QCOMPARE(runner.run(run, plan), std::string("cancelled"));
        }
        {
            Store s(db);
            QCOMPARE(s.doneProblems(run).size(), size_t(2));
        }
        auto r = SweepRunner::resumable(db);
        QVERIFY(r);
        QCOMPARE(r->first.id, run);
        QCOMPARE(r->second.problems, plan.problems); // the frozen plan needs no plan file
        SweepRunner again(db, backend);
        int64_t measured = 0;
        again.setProgressCallback([&](const SweepProgress &p) { measured = p.measurements; });
        QCOMPARE(again.run(run, r->second), std::string("finished"));
        QCOMPARE(measured, 6); // 3 problems x 2 configs: nothing measured twice
        Store s(db);
        QCOMPARE(s.measurementCount(run), 10);
    }

    void workerCrashHangAndErrorAreStoredAndRunContinues() {
        const QString log = m_dir.filePath("worker.log");
        const auto db = m_dir.filePath("inductor.db").toStdString();
        InductorBackend backend(PYTHON3, log.toStdString());
        backend.start();
        QCOMPARE(backend.hello()["hardware"]["gpu"].get<std::string>(), std::string("Fake GPU"));
        SweepRunner runner(db, backend);
        // 13 crashes the worker, 17 hangs past the 3 s timeout, 19 reports out of memory.
        const auto plan = planOf({8, 13, 16, 17, 19, 24}, 3);
        const int64_t run = runner.createRun(plan);
        QCOMPARE(runner.run(run, plan), std::string("finished"));
        QCOMPARE(backend.restarts(), 2);
        Store s(db);
        QCOMPARE(s.run(run).gpuName, std::string("Fake GPU"));
        // M = 8, 16: version 1 answers, one Inductor time per candidate. M = 24: version 2, three
        // methods for ATen; Inductor's time and a failed graph_warm for the wrong Triton result.
        QCOMPARE(s.measurementCount(run), 2 * 2 + 3 + 2);
        const QString path = QString::fromStdString(db);
        QCOMPARE(testutil::scalar(
                     path, "SELECT count(*) FROM measurements m JOIN problems p ON p.id = m.problem_id "
                           "WHERE p.m = 24 AND m.method = 'graph_warm' AND m.status = 'failed'"),
                 1);
        QCOMPARE(testutil::scalar(
                     path, "SELECT count(*) FROM measurements m JOIN problems p ON p.id = m.problem_id "
                           "WHERE p.m = 16 AND m.method = 'inductor_autotune' AND m.status = 'ok'"),
                 2);
        // The baselines went through the writer: 2 baselines x 2 methods, max-autotune's pick is ATen.
        QCOMPARE(testutil::scalar(path, "SELECT count(*) FROM problem_baselines"), 4);
        QCOMPARE(testutil::scalar(
                     path, "SELECT count(*) FROM problem_baselines b JOIN kernel_configs c "
                           "ON c.id = b.pick_config_id WHERE b.baseline = 'max_autotune' AND c.kind = 'aten' "
                           "AND b.compile_s = 2.5"),
                 2);
        auto status = [&](int m) {
            return testutil::scalar(
                QString::fromStdString(db),
                qPrintable(QString("SELECT rp.status='%2' FROM run_problems rp JOIN problems p ON "
                                   "p.id=rp.problem_id WHERE p.m=%1")
                               .arg(m)
                               .arg(m == 17              ? "timeout"
                                    : m == 13 || m == 19 ? "failed"
                                                         : "ok")));
        };
        for (int m : {8, 13, 16, 17, 19, 24})
            QVERIFY2(status(m) == 1, qPrintable(QString::number(m)));
        std::string crash;
        s.forEachRecord([&](const RunInfo &, const ProblemRecord &r) {
            if (r.problem.m == 13)
                crash = r.error;
        });
        QVERIFY2(QString::fromStdString(crash).contains("worker crashed (killed by signal 11"),
                 crash.c_str());
    }

    void missingGpuIsOneClearMessageBeforeTheRun() {
        qputenv("FAKE_WORKER_HELLO_FAIL", "1");
        InductorBackend backend(PYTHON3, m_dir.filePath("nogpu.log").toStdString());
        try {
            backend.start();
            QFAIL("started without a GPU");
        } catch (const BackendUnavailable &e) {
            QVERIFY2(QString(e.what()).contains("sees no CUDA GPU"), e.what());
        }
        qunsetenv("FAKE_WORKER_HELLO_FAIL");
    }

    void missingInterpreterIsNamed() {
        InductorBackend backend("/nonexistent/python9", m_dir.filePath("nopy.log").toStdString());
        try {
            backend.start();
            QFAIL("started without an interpreter");
        } catch (const BackendUnavailable &e) {
            QVERIFY2(QString(e.what()).contains("could not start '/nonexistent/python9'"), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestSweepRunner)
#include "tst_sweeprunner.moc"
