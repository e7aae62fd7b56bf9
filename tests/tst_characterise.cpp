#include "testutil.h"

#include "diode/analysis/characterise.h"
#include "diode/infer/decisionmodel.h"
#include "diode/infer/features.h"
#include "diode/infer/modelpackage.h"
#include "diode/sweep/inductorbackend.h"
#include "diode/sweep/kernelsweep.h"
#include "diode/train/characterisejob.h"

#include <QElapsedTimer>
#include <QFileInfo>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <fstream>
#include <map>
#include <thread>

using namespace diode;

namespace {

// Environment variables set for one test and unset whatever its outcome (the stand-ins' settings).
struct ScopedEnv {
    explicit ScopedEnv(std::initializer_list<std::pair<const char *, QByteArray>> vars) {
        for (const auto &[name, value] : vars) {
            qputenv(name, value);
            names.push_back(name);
        }
    }
    void set(const char *name, const QByteArray &value) {
        qputenv(name, value);
        names.push_back(name);
    }
    ~ScopedEnv() {
        for (const char *name : names)
            qunsetenv(name);
    }
    std::vector<const char *> names;
};

KernelConfig cpuTile(int bm, int bn, int bk) {
    KernelConfig c;
    c.kind = "cpu";
    c.name = "tiled";
    c.blockM = bm;
    c.blockN = bn;
    c.blockK = bk;
    c.threads = 1;
    return c;
}

std::vector<KernelConfig> tiles() {
    return {cpuTile(16, 32, 32), cpuTile(64, 32, 32), cpuTile(16, 128, 128), cpuTile(64, 128, 128)};
}

// A network whose weights depend on `seed`, so two of them rank candidates differently.
MlpWeights network(int seed, int hidden = 8) {
    MlpWeights w;
    const int f = FeatureSchema::size();
    w.layerSizes = {f, hidden, 1};
    w.inputMean.assign(size_t(f), 0.0f);
    w.inputStd.assign(size_t(f), 1.0f);
    w.weights = {std::vector<float>(size_t(hidden * f)), std::vector<float>(size_t(hidden))};
    for (size_t i = 0; i < w.weights[0].size(); ++i)
        w.weights[0][i] = float(std::sin(double(i) * (1.7 + seed))) * 0.3f;
    for (size_t i = 0; i < w.weights[1].size(); ++i)
        w.weights[1][i] = float(std::cos(double(i) * (0.9 + seed)));
    w.biases = {std::vector<float>(size_t(hidden), 0.1f), std::vector<float>{-1.0f}};
    return w;
}

ModelPackage ensemble(std::vector<MlpWeights> members) {
    return ModelPackage::fromBytes(ModelPackage::toBytes(
        {{"hardware", {{"gpu", "cpu"}, {"sm_count", 1}}}, {"timing_method", "cpu"}}, members));
}

GemmProblem mm(int64_t m, int64_t n, int64_t k, GemmOp op = GemmOp::Mm, DType dt = DType::FP32) {
    GemmProblem p;
    p.op = op;
    p.dtype = dt;
    p.m = m;
    p.n = n;
    p.k = k;
    return p;
}

Pool poolOf(const std::vector<GemmProblem> &problems) {
    Pool pool;
    pool.source = "test pool";
    for (const auto &p : problems)
        pool.problems.push_back({p, tiles()});
    return pool;
}

ScoredProblem scored(size_t pool, double score, int64_t commonness = 1) {
    ScoredProblem s;
    s.pool = pool;
    s.score = score;
    s.disagreement.mean = s.disagreement.max = score / double(commonness);
    s.commonness = commonness;
    return s;
}

std::vector<size_t> poolIndices(const std::vector<Choice> &chosen) {
    std::vector<size_t> out;
    for (const auto &c : chosen)
        out.push_back(c.scored.pool);
    return out;
}

void writeFile(const QString &path, const std::string &text) {
    std::ofstream(path.toStdString()) << text;
}

// The cpu tiles of the end-to-end plans: 8 candidates a problem, one timed repeat each.
constexpr const char *kCpuGrid =
    R"("timeout_s": 60, "repeats": 1, "cpu": {"block_m": [16, 64], "block_n": [32, 128], "block_k": [32, 128], "threads": [1]})";

} // namespace

class TestCharacterise : public QObject {
    Q_OBJECT
private slots:
    // A one-network package of a member is that network: the ensemble's ln-time is the mean of
    // its members', and a package that agrees with itself shows no disagreement.
    void membersAverageToTheEnsemble() {
        const auto pkg = ensemble({network(1), network(2), network(3)});
        const auto p = mm(48, 256, 128);
        const auto all = pkg.predictMs(p, tiles());
        std::vector<double> meanLn(all.size(), 0.0);
        std::vector<ModelPackage> members;
        for (int m = 0; m < pkg.members(); ++m) {
            members.push_back(pkg.member(m));
            QCOMPARE(members.back().members(), 1);
            const auto one = members.back().predictMs(p, tiles());
            for (size_t i = 0; i < one.size(); ++i)
                meanLn[i] += std::log(one[i]) / 3.0;
        }
        for (size_t i = 0; i < all.size(); ++i)
            QVERIFY2(std::abs(std::log(all[i]) - meanLn[i]) < 1e-4, qPrintable(QString::number(i)));
        QVERIFY(disagreement(pkg, members, p, tiles()).max > 0);
        QVERIFY_THROWS_EXCEPTION(InvalidInput, pkg.member(3));

        const auto single = ensemble({network(1)});
        const std::vector<ModelPackage> itself{single.member(0)};
        QCOMPARE(disagreement(single, itself, p, tiles()).mean, 0.0);
        QCOMPARE(disagreement(single, itself, p, tiles()).max, 0.0);
    }

    void higherDisagreementIsChosenFirst() {
        const Pool pool = poolOf({mm(16, 64, 64), mm(32, 64, 64), mm(48, 64, 64), mm(64, 64, 64)});
        const std::vector<ScoredProblem> s{scored(0, 0.01), scored(1, 0.30), scored(2, 0.0), scored(3, 0.12)};
        SelectionOptions o;
        o.count = 2;
        const auto chosen = chooseProblems(pool, s, o);
        QCOMPARE(poolIndices(chosen), (std::vector<size_t>{1, 3}));
        QVERIFY2(QString::fromStdString(chosen[0].why).startsWith("score 0.3000"), chosen[0].why.c_str());
    }

    // The same disagreement counts more for a weight shape that recurs across token counts.
    void commonShapesWeighMore() {
        const Pool pool = poolOf({mm(16, 256, 128), mm(64, 256, 128), mm(200, 256, 128), mm(64, 96, 128)});
        const auto pkg = ensemble({network(1), network(2)});
        const auto s = scorePool(pool, pkg);
        QCOMPARE(s.size(), size_t(4));
        QCOMPARE(s[0].commonness, int64_t(3));
        QCOMPARE(s[3].commonness, int64_t(1));
        for (const auto &x : s)
            QCOMPARE(x.score, x.disagreement.mean * double(x.commonness));
        // Equal disagreement: the common shape first.
        const std::vector<ScoredProblem> tie{scored(3, 0.1, 1), scored(0, 0.3, 3)};
        SelectionOptions o;
        o.count = 1;
        QCOMPARE(poolIndices(chooseProblems(pool, tie, o)), (std::vector<size_t>{0}));
    }

    void selectionIsDeterministicForASeed() {
        std::vector<GemmProblem> problems;
        for (int m = 1; m <= 24; ++m)
            problems.push_back(mm(8 * m, 64 * (1 + m % 3), 64));
        const Pool pool = poolOf(problems);
        // A one-network package disagrees with nobody: every score ties, the seed orders them.
        const auto flat = scorePool(pool, ensemble({network(1)}));
        SelectionOptions o;
        o.count = 10;
        o.seed = 5;
        const auto a = poolIndices(chooseProblems(pool, flat, o));
        QCOMPARE(poolIndices(chooseProblems(pool, flat, o)), a);
        o.seed = 6;
        QVERIFY(poolIndices(chooseProblems(pool, flat, o)) != a);
        const auto pkg = ensemble({network(1), network(2), network(4)});
        QCOMPARE(poolIndices(chooseProblems(pool, scorePool(pool, pkg), o)),
                 poolIndices(chooseProblems(pool, scorePool(pool, pkg), o)));
    }

    // A model most unsure of one kind still has every kind of the pool measured.
    void everyKindIsMeasured() {
        std::vector<GemmProblem> problems;
        for (int m = 1; m <= 8; ++m)
            problems.push_back(mm(16 * m, 128, 128));                     // mm fp32: 0..7
        problems.push_back(mm(32, 128, 128, GemmOp::Addmm, DType::BF16)); // 8
        problems.push_back(mm(64, 128, 128, GemmOp::Addmm, DType::BF16)); // 9
        problems.push_back(mm(32, 64, 64, GemmOp::Bmm, DType::FP16));     // 10
        const Pool pool = poolOf(problems);
        std::vector<ScoredProblem> s;
        for (size_t i = 0; i < 8; ++i)
            s.push_back(scored(i, 1.0 + double(i)));
        s.push_back(scored(8, 0.01));
        s.push_back(scored(9, 0.02));
        s.push_back(scored(10, 0.0));
        SelectionOptions o;
        o.count = 4;
        const auto chosen = chooseProblems(pool, s, o);
        const auto got = poolIndices(chosen);
        QCOMPARE(got.size(), size_t(4));
        // The best mm, the best addmm (9, not 8) and the only bmm; then the next best overall.
        QCOMPARE(got, (std::vector<size_t>{7, 6, 9, 10}));
        QVERIFY(QString::fromStdString(chosen[3].why).contains("spread"));
        QVERIFY(!QString::fromStdString(chosen[1].why).contains("spread"));
    }

    void nothingToChooseIsRefused() {
        const Pool pool = poolOf({mm(16, 64, 64)});
        SelectionOptions o;
        o.count = 0;
        QVERIFY_THROWS_EXCEPTION(InvalidInput, chooseProblems(pool, {scored(0, 1)}, o));
        o.count = 3;
        QVERIFY_THROWS_EXCEPTION(InvalidInput, chooseProblems(pool, {}, o));
    }

    void poolsAreReadWithTheirCandidates() {
        QTemporaryDir dir;
        const QString plan = dir.filePath("pool.json");
        writeFile(
            plan,
            std::string(R"({"name": "p", "version": 1, )") + kCpuGrid +
                R"(, "entries": [{"name": "a", "ops": ["mm"], "dtypes": ["fp32"], "M": [16, 32], "N": [64], "K": [64]}]})");
        const auto fromPlan = loadPool(plan.toStdString());
        QCOMPARE(fromPlan.problems.size(), size_t(2));
        QCOMPARE(fromPlan.problems[0].candidates.size(), size_t(8));
        QCOMPARE(characterisePlan(fromPlan, {{scored(1, 1), ""}}, "cpu").cpuConfigs.size(), size_t(8));
        QCOMPARE(characterisePlan(fromPlan, {{scored(1, 1), ""}}, "cpu").problems.front(),
                 fromPlan.problems[1].problem);

        const QString bare = dir.filePath("bare.jsonl");
        writeFile(bare, R"({"op": "mm", "dtype": "bf16", "M": 64, "N": 64, "K": 64})"
                        "\n");
        try {
            loadPool(bare.toStdString());
            QFAIL("a pool without candidates was accepted");
        } catch (const InvalidInput &e) {
            QVERIFY2(QString(e.what()).contains("no problem with two or more candidates"), e.what());
        }
    }

    // The whole flow for real on the cpu backend: a start package trained here, a sweep stopped by
    // its deadline and continued by the same command, fine-tuning, the table and the verdict.
    void characterisesOnTheCpuBackend() {
        QTemporaryDir dir;
        auto diode = [&](const QStringList &args, QString *out, QString *err) {
            return testutil::runCli(args, out, err, 280000, dir.path());
        };
        writeFile(dir.filePath("start.json"),
                  std::string(R"({"name": "start", "version": 1, )") + kCpuGrid + R"(, "entries": [
            {"name": "a", "ops": ["mm"], "dtypes": ["fp32"], "M": [8, 24, 40, 56, 72, 88], "N": [48, 96], "K": [48]},
            {"name": "b", "ops": ["bmm"], "dtypes": ["fp16"], "B": [2], "M": [12, 36, 60, 84, 100], "N": [40], "K": [40, 72]}]})");
        writeFile(dir.filePath("pool.json"),
                  std::string(R"({"name": "pool", "version": 1, )") + kCpuGrid + R"(, "entries": [
            {"name": "a", "ops": ["mm"], "dtypes": ["fp32"], "M": [16, 32, 48, 64, 80, 96], "N": [64, 128], "K": [64]},
            {"name": "b", "ops": ["addmm"], "dtypes": ["bf16"], "M": [1, 16, 64, 80, 112], "N": [96], "K": [64, 128], "b_transposed": [true]},
            {"name": "c", "ops": ["bmm"], "dtypes": ["fp16"], "B": [2], "M": [16, 32, 64, 96], "N": [64], "K": [32, 64]}]})");
        QString out, err;
        QCOMPARE(diode({"sweep", "--backend", "cpu", "--plan", "start.json", "--db", "start.db"}, &out, &err),
                 0);
        QCOMPARE(
            diode({"train", "--db", "start.db", "--out", "start.diode", "--epochs", "20", "--members", "2"},
                  &out, &err),
            0);

        // Bad input is refused before anything is measured, naming what is wrong.
        QCOMPARE(diode({"characterise", "--backend", "cpu", "--pool", "pool.json", "--db", "x.db", "--out",
                        "x.diode"},
                       &out, &err),
                 2);
        QVERIFY2(err.contains("name the start package with --package"), qPrintable(err));
        const QString gpuPackage = testutil::sourcePath("trained_models/h200/h200-ingraph-warm.diode");
        QCOMPARE(diode({"characterise", "--backend", "cpu", "--package", gpuPackage, "--pool", "pool.json",
                        "--db", "x.db", "--out", "x.diode"},
                       &out, &err),
                 2);
        QVERIFY2(err.contains("was trained on graph_warm times; the cpu backend measures cpu times"),
                 qPrintable(err));
        QVERIFY(!QFile::exists(dir.filePath("x.db")));
        // A budget that cannot leave training its 20 problems is refused before the sweep, not after it.
        // A refused run makes no folder for its outputs either.
        QCOMPARE(diode({"characterise", "--backend", "cpu", "--package", "start.diode", "--pool", "pool.json",
                        "--db", "runs/x.db", "--out", "x.diode", "--count", "20"},
                       &out, &err),
                 2);
        QVERIFY2(
            err.contains("--count 20: a characterisation needs at least 25 problems (20 % of them kept aside "
                         "as held out), so that training has its 20; nothing was swept"),
            qPrintable(err));
        QVERIFY(!QFile::exists(dir.filePath("runs")));
        // One that starts makes the folders its store and package go in.
        QCOMPARE(diode({"characterise", "--backend", "cpu", "--package", "start.diode", "--pool", "pool.json",
                        "--db", "runs/x.db", "--out", "packages/x.diode", "--deadline", "0.001"},
                       &out, &err),
                 2);
        QVERIFY2(err.contains("run the same command again to measure more"), qPrintable(err));
        QVERIFY(QFile::exists(dir.filePath("runs/x.db")) && QFileInfo(dir.filePath("packages")).isDir());

        const QStringList run{"characterise", "--backend", "cpu",     "--package", "start.diode", "--pool",
                              "pool.json",    "--db",      "char.db", "--out",     "new.diode",   "--count",
                              "30",           "--epochs",  "15",      "--explain"};
        // Stopped by its deadline long before 30 problems: too few to train, and it says to go on.
        QCOMPARE(diode(run + QStringList{"--deadline", "0.001"}, &out, &err), 2);
        QVERIFY2(err.contains("run the same command again to measure more"), qPrintable(err));
        // The sweep's first line says how it runs, as `diode sweep`'s does.
        QVERIFY2(err.contains("sweep run 1: 30 problems, backend cpu, database char.db; 1 worker (auto)"),
                 qPrintable(err));
        const int64_t first = testutil::scalar(dir.filePath("char.db"), "SELECT count(*) FROM measurements");
        QVERIFY2(first < 30 * 8, qPrintable(QString::number(first)));
        QCOMPARE(out.count(QRegularExpression("^ +[0-9]+  \\S", QRegularExpression::MultilineOption)), 30);
        QCOMPARE(out.count("[held out]"), 6);

        // The same command continues the run: every chosen problem once, nothing measured twice.
        QCOMPARE(diode(run, &out, &err), 0);
        QVERIFY2(err.contains("resuming run 1"), qPrintable(err));
        const QString db = dir.filePath("char.db");
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM runs"), int64_t(1));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM measurements WHERE status = 'ok'"),
                 int64_t(30 * 8));
        QCOMPARE(testutil::scalar(
                     db, "SELECT count(*) FROM (SELECT DISTINCT problem_id, config_id FROM measurements)"),
                 int64_t(30 * 8));
        QVERIFY2(
            out.contains("trained on 24 problem lines measured here; held out: 6 of the 30 chosen problems"),
            qPrintable(out));
        for (const char *row : {"transferred", "new", "torch.compile", "best ATen"})
            QVERIFY2(out.contains(QRegularExpression(QStringLiteral("^%1 ").arg(row),
                                                     QRegularExpression::MultilineOption)),
                     qPrintable(out));
        QVERIFY2(out.contains(QRegularExpression("^transferred +6 +[01]\\.[0-9]{4} +[01]\\.[0-9]{4}",
                                                 QRegularExpression::MultilineOption)),
                 qPrintable(out));
        const QRegularExpression verdict(
            "^new package: new (better|worse|no better) than the transferred one \\(mean "
            "[+-][0-9]+\\.[0-9] points, P10 [+-][0-9]+\\.[0-9]\\) \\(warning: only 6 held-out problems: "
            "below 30, "
            "[^)]*\\); (kept as new.diode|dropped)",
            QRegularExpression::MultilineOption);
        const auto m = verdict.match(out);
        QVERIFY2(m.hasMatch(), qPrintable(out));
        const bool better = m.captured(1) == "better";
        QCOMPARE(QFile::exists(dir.filePath("new.diode")), better);
        QCOMPARE(m.captured(2) == "kept as new.diode", better);
        QVERIFY(!QFile::exists(dir.filePath("new.diode.training")));
        if (better) {
            const auto pkg = ModelPackage::load(dir.filePath("new.diode").toStdString());
            QCOMPARE(pkg.manifest()["fine_tuned_from"]["package"].get<std::string>(),
                     std::string("start.diode"));
            QCOMPARE(pkg.members(), 2);
        }

        // Measured before: nothing is swept again; --force keeps the package whatever it shows.
        QCOMPARE(diode(run + QStringList{"--force"}, &out, &err), 0);
        QVERIFY2(err.contains("nothing to resume"), qPrintable(err));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM measurements"), int64_t(30 * 8));
        QVERIFY2(out.contains("kept as new.diode"), qPrintable(out));
        QVERIFY(QFile::exists(dir.filePath("new.diode")));
        // The cpu backend measures no kernel lines; a start package without decision models gives none.
        QVERIFY2(out.contains("no decision models beside the GEMM kernel (no kernel or site lines in "
                              "char.db.kernels.jsonl or char.db; the start package has none)"),
                 qPrintable(out));
        auto decisionsOf = [&](const char *name) {
            return ModelPackage::load(dir.filePath(name).toStdString())
                .manifest()
                .value("decisions", nlohmann::json());
        };
        QVERIFY(decisionsOf("new.diode").is_null());

        // A start package with decision models (another GPU's lines, as a transferred package has
        // them): the new package keeps them when this GPU has no lines, and says whose they are.
        const QString h100Kernels = testutil::sourcePath("trained_models/h100/h100-kernels.jsonl");
        QCOMPARE(
            diode({"train-decisions", h100Kernels, "--package", "start.diode", "--out", "start-dec.diode"},
                  &out, &err),
            0);
        QStringList withDecisions = run;
        withDecisions[withDecisions.indexOf("start.diode")] = "start-dec.diode";
        QCOMPARE(diode(withDecisions + QStringList{"--force"}, &out, &err), 0);
        QVERIFY2(out.contains("the start package's decision models, measured on NVIDIA H100 80GB HBM3"),
                 qPrintable(out));
        QCOMPARE(decisionsOf("new.diode"), decisionsOf("start-dec.diode"));

        // Kernel lines of this GPU (here given, as the inductor backend's kernel sweep writes them):
        // imported into the sweep's store and trained on, as train-decisions would.
        QVERIFY(QFile::copy(h100Kernels, dir.filePath("mine.jsonl")));
        QCOMPARE(diode(withDecisions + QStringList{"--force", "--kernel-lines", "mine.jsonl"}, &out, &err),
                 0);
        QVERIFY2(
            out.contains(QRegularExpression("decision models trained on 219 kernel and 0 site lines of "
                                            "NVIDIA H100 80GB HBM3 \\(in char.db\\); held out by family: "
                                            "kernel configs within 3 % of the fastest measured on [0-9.]+ % "
                                            "of 219 kernels")),
            qPrintable(out));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM measured_kernels"), int64_t(243));
        QCOMPARE(
            diode({"train-decisions", "--db", "char.db", "--package", "start.diode", "--out", "same.diode"},
                  &out, &err),
            0);
        QCOMPARE(decisionsOf("new.diode"), decisionsOf("same.diode"));
        // Lines that are not kernel or site lines stop the run before anything is measured, naming them;
        // an output never overwrites the lines.
        QCOMPARE(diode(withDecisions + QStringList{"--kernel-lines", "pool.json"}, &out, &err), 2);
        QVERIFY2(err.contains("pool.json:1"), qPrintable(err));
        QCOMPARE(diode(withDecisions + QStringList{"--kernel-lines", "mine.jsonl", "--chosen", "mine.jsonl"},
                       &out, &err),
                 2);
        QVERIFY2(err.contains("--chosen") && err.contains("mine.jsonl"), qPrintable(err));
        QCOMPARE(readDecisionData(dir.filePath("mine.jsonl").toStdString()).kernels.size(), size_t(219));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM runs"), int64_t(1));

        // The core API a workbench page would drive: progress callbacks, and a cancel that leaves
        // the run resumable and keeps nothing.
        CharacteriseRequest req;
        req.package = dir.filePath("start.diode").toStdString();
        req.pool = dir.filePath("pool.json").toStdString();
        req.backend = "cpu";
        req.db = dir.filePath("api.db").toStdString();
        req.out = dir.filePath("api.diode").toStdString();
        req.selection.count = 30;
        req.train.epochs = 5;
        req.train.threads = 1;
        // A request no command line made (the Hardware page's) is held to the same checks: an output
        // that is an input is refused, naming both, before anything is written.
        const QByteArray poolBytes = testutil::fileBytes(dir.filePath("pool.json"));
        for (const auto &[field, what] : {std::pair{&CharacteriseRequest::out, "--out"},
                                          std::pair{&CharacteriseRequest::chosen, "--chosen"},
                                          std::pair{&CharacteriseRequest::db, "--db"}}) {
            CharacteriseRequest bad = req;
            bad.*field = req.pool;
            try {
                CharacteriseJob(bad).run();
                QFAIL(qPrintable(QStringLiteral("%1 onto the pool was accepted").arg(what)));
            } catch (const InvalidInput &e) {
                QVERIFY2(QString(e.what()).contains(what) && QString(e.what()).contains("pool.json"),
                         e.what());
            }
        }
        QCOMPARE(testutil::fileBytes(dir.filePath("pool.json")), poolBytes);
        QVERIFY(!QFile::exists(dir.filePath("api.db")) &&
                !QFile::exists(dir.filePath("api.db.chosen.jsonl")));
        {
            CharacteriseJob job(req);
            job.sweepProgress = [&](const SweepProgress &p) {
                if (p.done >= 3)
                    job.cancel();
            };
            const auto res = job.run();
            QVERIFY(res.cancelled);
            QCOMPARE(res.sweepStatus, std::string("cancelled"));
        }
        const QString api = dir.filePath("api.db");
        const int64_t partial = testutil::scalar(api, "SELECT count(*) FROM measurements");
        QVERIFY2(partial >= 3 * 8 && partial < 30 * 8, qPrintable(QString::number(partial)));
        QVERIFY(!QFile::exists(dir.filePath("api.diode")));
        CharacteriseJob again(req);
        const auto res = again.run();
        QVERIFY(res.resumed);
        QVERIFY(!res.cancelled);
        QVERIFY(res.compared);
        QCOMPARE(res.table.size(), size_t(4));
        QCOMPARE(res.trainingProblems, 24);
        QCOMPARE(testutil::scalar(api, "SELECT count(*) FROM measurements"), int64_t(30 * 8));
        QCOMPARE(QFile::exists(dir.filePath("api.diode")), res.better);
    }

    // The inductor backend end to end with the stand-ins of the GPU's worker and kernel sweep
    // (tests/data/fakeworker): the GEMM sweep, then the kernel sweep into DB.kernels.jsonl, whose
    // lines the new package's decision models are trained on; a deadline that leaves under a minute
    // skips the kernel sweep, and a cancel during it keeps nothing.
    void characterisesOnTheInductorBackendWithItsKernelSweep() {
        QTemporaryDir dir;
        ScopedEnv environment{{"DIODE_PLUGIN_PYTHON", testutil::dataPath("fakeworker").toUtf8()},
                              {"FAKE_WORKER_INGRAPH", "1"},
                              {"FAKE_KERNEL_SWEEP_LINES",
                               testutil::sourcePath("trained_models/h200/h200-kernels.jsonl").toUtf8()},
                              {"FAKE_KERNEL_SWEEP_TRACE", dir.filePath("trace.jsonl").toUtf8()}};
        { // the pool: the H200's held-out mm problems, with their candidates
            std::ifstream in(
                testutil::sourcePath("trained_models/h200/h200-ingraph-heldout.jsonl").toStdString());
            std::ofstream out(dir.filePath("pool.jsonl").toStdString());
            std::string line;
            for (int kept = 0; kept < 120 && std::getline(in, line);)
                if (nlohmann::json::parse(line).value("op", "") == "mm")
                    out << line << '\n', ++kept;
        }
        const QString start = testutil::sourcePath("trained_models/h200/h200-ingraph-warm.diode");
        const QStringList run{"characterise", "--backend", "inductor",  "--python",         PYTHON3,
                              "--package",    start,       "--pool",    "pool.jsonl",       "--db",
                              "ind.db",       "--out",     "ind.diode", "--count",          "25",
                              "--epochs",     "3",         "--force",   "--kernel-workers", "2"};
        QString out, err;
        QCOMPARE(testutil::runCli(run, &out, &err, 280000, dir.path()), 0);
        QVERIFY2(err.contains("kernel sweep: finished"), qPrintable(err));
        QVERIFY2(
            out.contains("decision models trained on 251 kernel and 0 site lines of NVIDIA H200 (in ind.db)"),
            qPrintable(out));
        QCOMPARE(
            nlohmann::json::parse(testutil::fileBytes(dir.filePath("trace.jsonl")).toStdString())["argv"],
            nlohmann::json({"--out", "ind.db.kernels.jsonl", "--kinds", "kernel,site", "--workers", "2"}));
        const auto decisions =
            ModelPackage::load(dir.filePath("ind.diode").toStdString()).manifest()["decisions"];
        QCOMPARE(decisions["trained_on"]["gpu"].get<std::string>(), std::string("NVIDIA H200"));
        QCOMPARE(decisions["trained_on"]["kernels"].get<int>(), 251);
        QCOMPARE(testutil::scalar(dir.filePath("ind.db"), "SELECT count(*) FROM measured_kernels"),
                 int64_t(305));

        // With --steps, the step sweep after the kernel sweep, into the same lines, with the start
        // package's GEMM and form decisions; the decisions are trained on both.
        environment.set("FAKE_STEP_SWEEP_LINES",
                        testutil::sourcePath("trained_models/h200/h200-kernels-steps.jsonl").toUtf8());
        QFile::remove(dir.filePath("trace.jsonl"));
        QStringList withSteps = run;
        withSteps[withSteps.indexOf("ind.diode")] = "steps.diode";
        withSteps << "--steps"
                  << "vit-b4"
                  << "--kernel-lines"
                  << "steps.jsonl";
        QCOMPARE(testutil::runCli(withSteps, &out, &err, 280000, dir.path()), 0);
        QVERIFY2(err.contains("kernel sweep: finished") && err.contains("step sweep: finished"),
                 qPrintable(err));
        QVERIFY2(out.contains("decision models trained on 414 kernel and 0 site lines of NVIDIA H200"),
                 qPrintable(out));
        {
            QStringList argvs;
            for (const QString &line : QString::fromUtf8(testutil::fileBytes(dir.filePath("trace.jsonl")))
                                           .split('\n', Qt::SkipEmptyParts))
                argvs << QString::fromStdString(nlohmann::json::parse(line.toStdString())["argv"].dump());
            QCOMPARE(argvs.size(), 2);
            QCOMPARE(argvs[1],
                     QString::fromStdString(
                         nlohmann::json({"--steps", "vit-b4", "--package", start.toStdString(), "--out",
                                         "steps.jsonl", "--kinds", "kernel,site", "--workers", "2"})
                             .dump()));
        }

        // Steps the step tool refuses (the real tool: its names' one grammar), or steps without the kernel
        // sweep, stop the run before any GEMM is swept.
        {
            environment.set("DIODE_PLUGIN_PYTHON", testutil::sourcePath("plugin/python").toUtf8());
            QStringList refused = run;
            refused[refused.indexOf("ind.db")] = "refused.db";
            QCOMPARE(testutil::runCli(refused + QStringList{"--steps", "gpt2-train-b8-s512"}, &out, &err,
                                      60000, dir.path()),
                     2);
            QVERIFY2(err.contains("--steps gpt2-train-b8-s512") && err.contains("training step") &&
                         err.contains("nothing was swept"),
                     qPrintable(err));
            QCOMPARE(testutil::runCli(refused + QStringList{"--steps", "vit-b4", "--no-kernel-sweep"}, &out,
                                      &err, 60000, dir.path()),
                     2);
            QVERIFY2(err.contains("the step sweep runs after the kernel sweep"), qPrintable(err));
            QVERIFY(!QFile::exists(dir.filePath("refused.db")));
            environment.set("DIODE_PLUGIN_PYTHON", testutil::dataPath("fakeworker").toUtf8());
        }

        // Measured before, with under a minute of deadline: the kernel sweep is not started.
        QCOMPARE(testutil::runCli(run + QStringList{"--deadline", "30"}, &out, &err, 280000, dir.path()), 0);
        QVERIFY2(err.contains("kernel sweep: not run: less than a minute of --deadline was left"),
                 qPrintable(err));

        // Cancelled while the kernel sweep runs: nothing trained or kept; its lines stay for the next run.
        environment.set("FAKE_KERNEL_SWEEP_HANG", "1");
        CharacteriseRequest req;
        req.package = start.toStdString();
        req.pool = dir.filePath("pool.jsonl").toStdString();
        req.backend = "inductor";
        req.python = PYTHON3;
        req.db = dir.filePath("ind.db").toStdString();
        req.out = dir.filePath("cancelled.diode").toStdString();
        req.kernelLines = dir.filePath("more.jsonl").toStdString();
        req.selection.count = 25;
        req.train.epochs = 3;
        CharacteriseJob job(req);
        std::thread canceller;
        job.status = [&](const std::string &s) {
            if (s.starts_with("Measuring this GPU's") && !canceller.joinable())
                canceller = std::thread([&] {
                    for (int i = 0; i < 600 && !QFileInfo(QString::fromStdString(req.kernelLines)).size();
                         ++i)
                        std::this_thread::sleep_for(std::chrono::milliseconds(50));
                    job.cancel();
                });
        };
        const auto res = job.run();
        if (canceller.joinable())
            canceller.join();
        QVERIFY(res.cancelled);
        QVERIFY(!QFile::exists(dir.filePath("cancelled.diode")));
        QVERIFY(readDecisionData(req.kernelLines).kernels.size() > 0);
    }

    // The kernel sweep is the plugin's tool in a child process (here its stand-in,
    // tests/data/fakeworker): given what was asked, its lines appended; a cancel stops it with
    // SIGTERM and keeps what it wrote.
    // With steps, the step sweep's own tool (torch_diode.tools.step_kernels, real here: its --list
    // needs no GPU) is asked, and how a run ended counts the steps its out lacks.
    void stepSweepIsThePluginsStepToolAndCountsStepsLeft() {
        QTemporaryDir dir;
        KernelSweepRequest r;
        r.python = PYTHON3;
        r.out = dir.filePath("steps.jsonl").toStdString();
        r.steps = "vit-b4,llama-decode-cat-b1-s512";
        r.package = testutil::sourcePath("trained_models/h200/h200-ingraph-warm.diode").toStdString();
        r.kinds = "kernel";
        r.workers = 14;
        r.limit = 4;
        r.extraConfigsFrom = "descent.jsonl";
        r.match = "softmax"; // chooses among the steps' kernels, by their names
        const auto cmd = kernelSweepCommand(r);
        QCOMPARE(std::vector<std::string>(cmd.begin() + 1, cmd.end()),
                 (std::vector<std::string>{"-m", "torch_diode.tools.step_kernels", "--steps", r.steps,
                                           "--package", r.package, "--out", r.out, "--kinds", "kernel",
                                           "--workers", "14", "--limit", "4", "--match=softmax",
                                           "--extra-configs-from", "descent.jsonl"}));
        r.match.clear();
        std::ofstream(r.out)
            << R"({"kind": "kernel", "name": "step:llama-decode-cat-b1-s512/fused_mm_t_view"})"
            << "\n";
        const std::string again =
            "the same command again measures the missing ones; remove a step's lines from " + r.out +
            " to measure it again whole";
        QCOMPARE(describeKernelSweep(r, 0),
                 "stopped at its deadline, 1 step missing or measured in part (" + again + ")");
        r.steps = "llama-decode-cat-b1-s512";
        QCOMPARE(describeKernelSweep(r, 0), std::string("finished"));
        // A step measured in part (a line with fewer configurations than its grid: a deadline or a failed
        // worker cut it) is not finished, and the same command does not measure it again. (Under --limit
        // every step is cut on purpose.)
        r.limit = 0;
        std::ofstream(r.out, std::ios::app)
            << R"({"kind": "kernel", "name": "step:llama-decode-cat-b1-s512/fused_add", "grid": 3, "configs": [{}]})"
            << "\n";
        QCOMPARE(describeKernelSweep(r, 1),
                 "stopped with exit code 1, 1 step missing or measured in part (its output above says why; " +
                     again + ")");
        // Its sites are a kind of their own: missing until a site line of the step is there.
        r.kinds = "kernel,site";
        std::ofstream(r.out, std::ios::trunc)
            << R"({"kind": "kernel", "name": "step:llama-decode-cat-b1-s512/fused_mm_t_view"})"
            << "\n";
        QCOMPARE(describeKernelSweep(r, 0),
                 "stopped at its deadline, 1 step missing or measured in part (" + again + ")");
        std::ofstream(r.out, std::ios::app)
            << R"({"kind": "site", "name": "step:llama-decode-cat-b1-s512/attention-b32-m1-n513-k128-cat"})"
            << "\n";
        QCOMPARE(describeKernelSweep(r, 0), std::string("finished"));
        r.families = "llama2-7b"; // chooses among the kernel sweep's cases, not a step's kernels
        QVERIFY_THROWS_EXCEPTION(InvalidInput, kernelSweepCommand(r));
        r.families.clear();
        r.configsFrom = "h200-ingraph-warm.diode"; // the kernel sweep's decomposed forms, likewise
        QVERIFY_THROWS_EXCEPTION(InvalidInput, kernelSweepCommand(r));
        r.configsFrom.clear();
        r.package.clear(); // the steps are shaped by a package's decisions: none, no command
        QVERIFY_THROWS_EXCEPTION(InvalidInput, kernelSweepCommand(r));
    }

    void kernelSweepRunsThePluginsToolAndACancelStopsIt() {
        QTemporaryDir dir;
        const QString lines = testutil::sourcePath("trained_models/h100/h100-kernels.jsonl");
        ScopedEnv environment{{"DIODE_PLUGIN_PYTHON", testutil::dataPath("fakeworker").toUtf8()},
                              {"FAKE_KERNEL_SWEEP_LINES", lines.toUtf8()},
                              {"FAKE_KERNEL_SWEEP_TRACE", dir.filePath("trace.jsonl").toUtf8()}};
        KernelSweepRequest r;
        r.python = PYTHON3;
        r.out = dir.filePath("out.jsonl").toStdString();
        r.workers = 3;
        r.families = "qwen2-0.5b";
        r.deadlineS = 90;
        r.gpu = "7";
        r.extraConfigsFrom = "first.jsonl,descent.jsonl";
        QCOMPARE(runKernelSweep(r), 0);
        QCOMPARE(readDecisionData(r.out).kernels.size(), size_t(219));
        const auto trace =
            nlohmann::json::parse(testutil::fileBytes(dir.filePath("trace.jsonl")).toStdString());
        QCOMPARE(trace["argv"], nlohmann::json({"--out", r.out, "--kinds", "kernel,site", "--workers", "3",
                                                "--families", "qwen2-0.5b", "--deadline-s", "90",
                                                "--extra-configs-from", "first.jsonl,descent.jsonl"}));
        // On the GPU it was given, sharing that GPU's lock with the GEMM sweep's workers.
        QCOMPARE(trace["env"],
                 nlohmann::json({{"CUDA_VISIBLE_DEVICES", "7"}, {"TORCH_DIODE_GPU_LOCK", gpuLockPath("7")}}));
        // How it ended, from its exit code and the cases --list still names; where the tool could not
        // run (no GPU, no interpreter) --list is not asked either.
        const QString listed = dir.filePath("listed");
        environment.set("FAKE_KERNEL_SWEEP_LISTED", listed.toUtf8());
        QVERIFY(describeKernelSweep(r, 3).starts_with("not run: the plugin's Python found no GPU"));
        QVERIFY(describeKernelSweep(r, 127).starts_with("not run: its Python interpreter"));
        QVERIFY(!QFile::exists(listed));
        QCOMPARE(describeKernelSweep(r, 0), std::string("finished"));
        QVERIFY(QFile::exists(listed));
        environment.set("FAKE_KERNEL_SWEEP_LEFT", "3");
        QCOMPARE(describeKernelSweep(r, 0),
                 std::string("stopped at its deadline, 3 cases still to measure (the same command again "
                             "measures them)"));
        QCOMPARE(describeKernelSweep(r, 1),
                 std::string("stopped with exit code 1, 3 cases still to measure (its output above says why; "
                             "the same command again continues it)"));

        // A cancel, once the run has written its lines: SIGTERM to its group, and what it wrote stays.
        environment.set("FAKE_KERNEL_SWEEP_HANG", "1");
        std::atomic<bool> cancel{false};
        std::thread canceller([&] {
            for (int i = 0; i < 600 && readDecisionData(r.out).kernels.size() < 2 * 219; ++i)
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            cancel = true;
        });
        QElapsedTimer timer;
        timer.start();
        const int rc = runKernelSweep(r, &cancel);
        canceller.join();
        QCOMPARE(rc, 128 + SIGTERM);
        QVERIFY2(timer.elapsed() < 40000, qPrintable(QString::number(timer.elapsed())));
        QCOMPARE(readDecisionData(r.out).kernels.size(), size_t(2 * 219));
    }
};

QTEST_GUILESS_MAIN(TestCharacterise)
#include "tst_characterise.moc"
