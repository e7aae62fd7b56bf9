#include "testutil.h"

#include "diode/infer/torchversion.h"
#include "diode/infer/vocabulary.h"
#include "diode/sweep/cpubackend.h"
#include "diode/sweep/hardware.h"
#include "diode/sweep/inductorbackend.h"
#include "diode/sweep/sweeprunner.h"
#include "diode/sweep/sweepsession.h"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <set>

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

/// Every (problem M, config key, method) a run stored, with how often: a set measured once each.
std::multiset<std::string> measuredSet(const std::string &db) {
    std::multiset<std::string> out;
    Store s(db);
    s.forEachRecord([&](const RunInfo &, const ProblemRecord &r) {
        for (const auto &c : r.candidates)
            for (const auto &m : c.measurements())
                out.insert(fmt::format("{} {} {}", r.problem.m, c.config.key(), toString(m.method)));
    });
    return out;
}

std::vector<json> traceLines(const QString &path) {
    std::vector<json> out;
    std::ifstream in(path.toStdString());
    for (std::string line; std::getline(in, line);)
        out.push_back(json::parse(line));
    return out;
}

} // namespace

class TestSweepRunner : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

    // The fake worker started with `env` set to `value` is refused before any run, with every one
    // of `said` in the message.
    void refusedAtStart(const char *env, const char *value, const QStringList &said) {
        qputenv(env, value);
        InductorBackend backend(PYTHON3, m_dir.filePath(QString(env) + ".log").toStdString());
        try {
            backend.start();
            QFAIL(qPrintable(QString("started with %1=%2").arg(env, value)));
        } catch (const BackendUnavailable &e) {
            for (const auto &s : said)
                QVERIFY2(QString(e.what()).contains(s), e.what());
        }
        qunsetenv(env);
    }

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

    // N workers take problems from one queue: the store holds the set one worker measures, each
    // (problem, config) once; a cancelled run resumed with another number of workers loses and
    // doubles nothing.
    void severalWorkersMeasureWhatOneDoes() {
        const SweepPlan plan = planOf({8, 16, 24, 32, 40, 48, 56});
        auto sweep = [&](const std::string &db, int workers) {
            SweepSession::Request r;
            r.db = db;
            r.backend = "cpu";
            r.plan = plan;
            r.workersPerGpu = workers;
            SweepSession session(r);
            return std::make_pair(session.workers(), session.run());
        };
        const auto one = m_dir.filePath("one.db").toStdString(),
                   three = m_dir.filePath("three.db").toStdString();
        QCOMPARE(sweep(one, 1), std::make_pair(size_t(1), std::string("finished")));
        QCOMPARE(sweep(three, 3), std::make_pair(size_t(3), std::string("finished")));
        const auto expected = measuredSet(one);
        QCOMPARE(expected.size(), size_t(7 * 2));
        QVERIFY(measuredSet(three) == expected);

        const auto cut = m_dir.filePath("cut.db").toStdString();
        {
            SweepSession::Request r;
            r.db = cut;
            r.backend = "cpu";
            r.plan = plan;
            r.workersPerGpu = 3;
            SweepSession session(r);
            session.setProgressCallback([&](const SweepProgress &p) {
                if (p.done >= 2)
                    session.cancel();
            });
            QCOMPARE(session.run(), std::string("cancelled"));
        }
        QVERIFY(measuredSet(cut).size() < expected.size());
        SweepSession::Request again;
        again.db = cut;
        again.resume = true;
        again.workersPerGpu = 2;
        SweepSession resumed(again);
        QVERIFY(resumed.resumed());
        QCOMPARE(resumed.run(), std::string("finished"));
        QVERIFY(measuredSet(cut) == expected);
    }

    // Without --workers-per-gpu the session sizes itself by the cores it may use: six inductor
    // workers a GPU on a 16-core host with one GPU (what fed an H100 best), fewer with fewer cores,
    // one cpu worker; the layout line says which and why.
    void autoWorkersFollowTheCores() {
        QCOMPARE(SweepSession::autoWorkersPerGpu("inductor", 16, 1), 6);
        QCOMPARE(SweepSession::autoWorkersPerGpu("inductor", 32, 2), 6);
        QCOMPARE(SweepSession::autoWorkersPerGpu("inductor", 128, 8), 6);
        QCOMPARE(SweepSession::autoWorkersPerGpu("inductor", 8, 1), 2);
        QCOMPARE(SweepSession::autoWorkersPerGpu("inductor", 16, 4), 1);
        QCOMPARE(SweepSession::autoWorkersPerGpu("inductor", 2, 1), 1);
        QCOMPARE(SweepSession::autoWorkersPerGpu("cpu", 64, 1), 1);
        SweepSession::Request r;
        r.db = m_dir.filePath("auto.db").toStdString();
        r.backend = "cpu";
        r.plan = planOf({8, 16});
        QCOMPARE(r.workersPerGpu, SweepSession::kAutoWorkers);
        SweepSession session(r);
        QCOMPARE(session.workers(), size_t(1));
        QCOMPARE(QString::fromStdString(session.workerLayout()), QStringLiteral("1 worker (auto)"));
        r.db = m_dir.filePath("three-asked.db").toStdString();
        r.workersPerGpu = 3;
        SweepSession asked(r);
        QCOMPARE(asked.workers(), size_t(3));
        QVERIFY2(asked.workerLayout().starts_with("3 workers, "), asked.workerLayout().c_str());
    }

    // A new run leaves out what a store or problem lines already hold measured (another machine's
    // sweep); the run's frozen plan is the rest, so a resume needs neither; all measured: nothing to do.
    void skipMeasuredLeavesWhatOthersDid() {
        auto sweep = [&](const std::string &db, const SweepPlan &plan, std::vector<std::string> skip) {
            SweepSession::Request r;
            r.db = db;
            r.backend = "cpu";
            r.plan = plan;
            r.skipMeasured = std::move(skip);
            SweepSession session(r);
            if (!session.nothingToDo().empty())
                return session.nothingToDo();
            return session.run();
        };
        const auto first = m_dir.filePath("skip-first.db").toStdString();
        QCOMPARE(sweep(first, planOf({8, 16, 24}), {}), std::string("finished"));
        const QString lines = m_dir.filePath("skip-first.jsonl");
        QCOMPARE(testutil::runCli({"export", "--db", QString::fromStdString(first), "--out", lines}), 0);
        for (const std::string &skip : {first, lines.toStdString()}) {
            const auto rest =
                m_dir.filePath(QString::fromStdString("skip-rest-" + std::to_string(skip.size()) + ".db"))
                    .toStdString();
            QCOMPARE(sweep(rest, planOf({8, 16, 24, 32, 40}), {skip}), std::string("finished"));
            std::set<std::string> ms;
            for (const auto &k : measuredSet(rest))
                ms.insert(k.substr(0, k.find(' ')));
            QCOMPARE(ms, (std::set<std::string>{"32", "40"}));
            Store s(rest);
            QCOMPARE(s.runs().front().problemsPlanned, 2);
        }
        const std::string all = sweep(m_dir.filePath("skip-none.db").toStdString(), planOf({8, 24}), {first});
        QVERIFY2(QString::fromStdString(all).startsWith("nothing to measure: all 2 problems"), all.c_str());
        QVERIFY(!QFile::exists(m_dir.filePath("skip-none.db")));
        SweepSession::Request bad;
        bad.db = first;
        bad.backend = "cpu";
        bad.plan = planOf({8});
        bad.skipMeasured = {m_dir.filePath("nope.db").toStdString()};
        QVERIFY_THROWS_EXCEPTION(InvalidInput, SweepSession{bad});
    }

    // Each inductor worker gets its GPU, the GPU's lock, its share of the compile threads and a
    // cache folder of its own (removed at the end); the plan decides which problems run
    // Inductor's own benchmark, whatever worker takes them.
    void workersOnGpusGetTheirGpuLockThreadsAndCache() {
        const QString trace = m_dir.filePath("trace.jsonl");
        qputenv("FAKE_WORKER_TRACE", trace.toUtf8());
        json j{{"name", "gpus"},
               {"timeout_s", 30},
               {"inductor_every", 3},
               {"exhaustive_configs", 7},
               {"entries",
                {{{"ops", {"mm"}},
                  {"dtypes", {"bf16"}},
                  {"M", {8, 16, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104}},
                  {"N", {64}},
                  {"K", {32}}}}}};
        const SweepPlan plan = SweepPlan::fromJson(j, ".");
        SweepSession::Request r;
        r.db = m_dir.filePath("gpus.db").toStdString();
        r.backend = "inductor";
        r.python = PYTHON3;
        r.plan = plan;
        r.gpus = {"0", "1"};
        r.workersPerGpu = 2;
        {
            SweepSession session(r);
            QCOMPARE(session.workers(), size_t(4));
            QCOMPARE(session.run(), std::string("finished"));
        }
        qunsetenv("FAKE_WORKER_TRACE");
        // Each worker's environment, as it started: every one of the four, whichever took problems.
        std::map<int, std::string> gpuOfPid;
        std::multiset<std::string> gpus;
        std::set<std::string> caches;
        std::vector<json> requests;
        const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
        for (const auto &l : traceLines(trace)) {
            if (!l.contains("event")) {
                requests.push_back(l);
                continue;
            }
            const auto &env = l["env"];
            const std::string gpu = env["CUDA_VISIBLE_DEVICES"];
            QVERIFY(gpu == "0" || gpu == "1");
            QCOMPARE(env["TORCH_DIODE_GPU_LOCK"].get<std::string>(), gpuLockPath(gpu));
            QCOMPARE(env["TORCHINDUCTOR_COMPILE_THREADS"].get<std::string>(),
                     std::to_string(std::max(1, (cores - 4) / 4)));
            QCOMPARE(env["TORCH_DIODE_WORKER_CACHE"].get<std::string>(), std::string("1"));
            caches.insert(env["TORCHINDUCTOR_CACHE_DIR"].get<std::string>());
            gpus.insert(gpu);
            QVERIFY(gpuOfPid.emplace(l["pid"].get<int>(), gpu).second); // one start a worker: none restarted
        }
        QCOMPARE(gpus, (std::multiset<std::string>{"0", "0", "1", "1"}));
        QCOMPARE(caches.size(), size_t(4)); // a cache folder of its own each
        for (const auto &c : caches)
            QVERIFY2(!std::filesystem::exists(c), c.c_str());
        QCOMPARE(requests.size(), plan.problems.size()); // each problem once
        std::set<int64_t> ms;
        int benchmarked = 0;
        for (const auto &l : requests) {
            QVERIFY(gpuOfPid.count(l["pid"].get<int>())); // asked of one of the four
            ms.insert(l["M"].get<int64_t>());
            const GemmProblem &p =
                *std::find_if(plan.problems.begin(), plan.problems.end(),
                              [&](const GemmProblem &q) { return q.m == l["M"].get<int64_t>(); });
            QCOMPARE(l["inductor_benchmark"].get<bool>(), plan.inductorBenchmarkFor(p));
            benchmarked += l["inductor_benchmark"].get<bool>();
            QCOMPARE(l["exhaustive_configs"].get<int>(), 7);
            // The worker's seed and names come with the request, core's: it restates neither.
            QCOMPARE(l["sample_seed"].get<uint64_t>(), samplingHash(p));
            QCOMPARE(l["dtypes"], vocabulary()["dtypes"]);
        }
        QCOMPARE(ms.size(), plan.problems.size());
        QVERIFY2(benchmarked > 0 && benchmarked < int(plan.problems.size()),
                 qPrintable(QString::number(benchmarked)));
        QCOMPARE(measuredSet(r.db).size(), plan.problems.size() * 2);
    }

    void gpusOfTwoModelsOrABadListAreRefused() {
        qputenv("FAKE_WORKER_GPU_FROM_ENV", "1");
        SweepSession::Request r;
        r.db = m_dir.filePath("mixed.db").toStdString();
        r.backend = "inductor";
        r.python = PYTHON3;
        r.plan = planOf({8, 16});
        r.gpus = {"0", "1"};
        try {
            SweepSession session(r);
            session.run();
            QFAIL("swept on two GPU models into one run");
        } catch (const BackendUnavailable &e) {
            QVERIFY2(QString(e.what()).contains("'Fake GPU 0'") && QString(e.what()).contains("'Fake GPU 1'"),
                     e.what());
        }
        qunsetenv("FAKE_WORKER_GPU_FROM_ENV");
        QVERIFY(!QFile::exists(QString::fromStdString(r.db))); // refused before anything was written
        for (const auto &bad : std::vector<std::vector<std::string>>{{"0", "0"}, {"0", ""}}) {
            r.gpus = bad;
            try {
                SweepSession session(r);
                QFAIL("took a bad GPU list");
            } catch (const InvalidInput &e) {
                QVERIFY2(QString(e.what()).contains("name each GPU once"), e.what());
            }
        }
        r.gpus = {};
        r.workersPerGpu = -1;
        QVERIFY_THROWS_EXCEPTION(InvalidInput, SweepSession{r});
        qputenv("CUDA_VISIBLE_DEVICES", "3,GPU-5");
        QCOMPARE(gpuList("all"), (std::vector<std::string>{"3", "GPU-5"}));
        QCOMPARE(gpuList("2,7"), (std::vector<std::string>{"2", "7"}));
        qunsetenv("CUDA_VISIBLE_DEVICES");
    }

    void missingGpuIsOneClearMessageBeforeTheRun() {
        refusedAtStart("FAKE_WORKER_HELLO_FAIL", "1", {"sees no CUDA GPU"});
    }

    // The oldest torch the worker runs on is core's: the runner reads the version the worker reports.
    void tooOldTorchIsRefusedByTheRunner() {
        refusedAtStart("FAKE_WORKER_TORCH", "2.8.1+cu126",
                       {"torch 2.8.1+cu126", QString::fromStdString("needs torch >= " + minTorchVersion())});
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
