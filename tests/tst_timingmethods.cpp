#include "testutil.h"

#include "diode/analysis/dataset.h"
#include "diode/infer/packagechoice.h"
#include "diode/infer/problemjson.h"
#include "diode/store/importer.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <filesystem>

using namespace diode;

namespace {

void writeFile(const QString &path, const std::string &bytes) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(bytes.data(), qint64(bytes.size()));
}

// A version 1 line on the same machine as testutil::v2Line's default (so it joins the same run).
std::string v1Line() {
    auto j = nlohmann::json::parse(testutil::v2Line(8));
    j.erase("version");
    j.erase("baselines");
    j["candidates"] = nlohmann::json::parse(
        R"([{"kind":"aten","name":"extern_kernels.mm","time_ms":0.004},)"
        R"({"kind":"triton","template":"mm","BLOCK_M":16,"BLOCK_N":128,"BLOCK_K":64,"GROUP_M":8,"num_stages":5,)"
        R"("num_warps":8,"EVEN_K":true,"ALLOW_TF32":false,"time_ms":null,"error":"no valid timing"}])");
    return j.dump();
}

const char *kMeasurements =
    "SELECT p.op, p.m, c.config_key, m.method, m.time_ms, m.status, m.error FROM measurements m "
    "JOIN kernel_configs c ON c.id = m.config_id JOIN problems p ON p.id = m.problem_id";
const char *kBaselines =
    "SELECT p.m, b.baseline, b.method, b.time_ms, b.compile_s, c.config_key FROM problem_baselines b "
    "JOIN problems p ON p.id = b.problem_id LEFT JOIN kernel_configs c ON c.id = b.pick_config_id";

} // namespace

// Timing methods end to end through the CLI: import, export, stats, and which times train and
// eval read.
class TestTimingMethods : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_source, m_db;

private slots:
    void initTestCase() {
        m_source = m_dir.filePath("worker.jsonl");
        writeFile(m_source, testutil::v2Line(16) + "\n" + testutil::v2Line(32) + "\n" + v1Line() + "\n" +
                                testutil::v2Line(64, "NVIDIA H100 80GB HBM3") + "\n");
        m_db = m_dir.filePath("a.db");
        QString out;
        QCOMPARE(testutil::runCli({"import", m_source, "--db", m_db}, &out), 0);
        QVERIFY2(out.contains("2 runs, 4 problems, 29 measurements"), qPrintable(out));
    }

    void importFilesEachTimeUnderItsMethod() {
        // Per v2 problem: ATen and the good Triton config x 3 methods, the wrong result's Inductor
        // time and failed graph_warm, the compile failure's failed graph_warm.
        QCOMPARE(testutil::scalar(
                     m_db, "SELECT count(*) FROM measurements m JOIN problems p ON p.id = m.problem_id "
                           "WHERE p.m = 16"),
                 9);
        QCOMPARE(testutil::rows(m_db,
                                "SELECT m.method, m.status, count(*) FROM measurements m JOIN problems p "
                                "ON p.id = m.problem_id WHERE p.m = 32 GROUP BY 1, 2"),
                 (QStringList{"graph_cold|ok|2", "graph_warm|failed|2", "graph_warm|ok|2",
                              "inductor_autotune|ok|3"}));
        // The version 1 line: time_ms is Inductor's number, its failure too.
        QCOMPARE(testutil::rows(m_db,
                                "SELECT m.method, m.status, m.time_ms FROM measurements m JOIN problems p "
                                "ON p.id = m.problem_id WHERE p.m = 8"),
                 (QStringList{"inductor_autotune|failed|", "inductor_autotune|ok|0.004"}));
        // v1 and v2 name the same kernels: one config each, whatever the line's version.
        QCOMPARE(testutil::scalar(m_db, "SELECT count(*) FROM kernel_configs"), 4);
        QCOMPARE(testutil::rows(m_db,
                                "SELECT baseline, method, compile_s FROM problem_baselines b JOIN problems p "
                                "ON p.id = b.problem_id WHERE p.m = 16"),
                 (QStringList{"default|graph_cold|0.9", "default|graph_warm|0.9",
                              "max_autotune|graph_cold|7.3", "max_autotune|graph_warm|7.3"}));
        QCOMPARE(testutil::scalar(
                     m_db, "SELECT count(*) FROM problem_baselines b JOIN kernel_configs c ON "
                           "c.id = b.pick_config_id WHERE c.block_m = 16 AND b.baseline = 'max_autotune'"),
                 6);
    }

    void exportThenImportKeepsMethodsTimesErrorsAndBaselines() {
        const QString jsonl = m_dir.filePath("out.jsonl"), again = m_dir.filePath("again.jsonl");
        const QString b = m_dir.filePath("b.db");
        QCOMPARE(testutil::runCli({"export", "--db", m_db, "--format", "jsonl", "--out", jsonl}), 0);
        const auto lines = QString::fromUtf8(testutil::fileBytes(jsonl)).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 4);
        for (const QString &line : lines) {
            const auto o = QJsonDocument::fromJson(line.toUtf8()).object();
            QCOMPARE(o["version"].toInt(), 2);
            for (const auto c : o["candidates"].toArray())
                QVERIFY(!c.toObject().contains("time_ms"));
        }
        QCOMPARE(testutil::runCli({"import", jsonl, "--db", b}), 0);
        QCOMPARE(testutil::rows(b, kMeasurements), testutil::rows(m_db, kMeasurements));
        QCOMPARE(testutil::rows(b, kBaselines), testutil::rows(m_db, kBaselines));
        QCOMPARE(testutil::rows(b, kMeasurements).size(), 29);
        QCOMPARE(testutil::rows(b, kBaselines).size(), 12);
        // And the file itself is a fixed point.
        QCOMPARE(testutil::runCli({"export", "--db", b, "--format", "jsonl", "--out", again}), 0);
        QCOMPARE(testutil::fileBytes(again), testutil::fileBytes(jsonl));
    }

    void csvHasOneRowPerMethod() {
        QString out;
        QCOMPARE(testutil::runCli({"export", "--db", m_db, "--format", "csv"}, &out), 0);
        const auto lines = out.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 1 + 29);
        const auto header = lines[0].split(',');
        const int method = int(header.indexOf("method"));
        QVERIFY(method > 0);
        QCOMPARE(header[method + 1], QString("time_ms"));
        int warm = 0;
        for (const QString &l : lines.mid(1))
            warm += l.split(',').value(method) == "graph_warm";
        QCOMPARE(warm, 3 * 4);
    }

    void statsCountMeasurementsPerMethodAndProblemsPerGpu() {
        QString out;
        QCOMPARE(testutil::runCli({"stats", "--db", m_db, "--json"}, &out), 0);
        const auto st = QJsonDocument::fromJson(out.toUtf8()).object();
        const auto byMethod = st["measurements_by_method"].toObject();
        QCOMPARE(byMethod["graph_warm"].toInt(), 3 * 4);
        QCOMPARE(byMethod["graph_cold"].toInt(), 3 * 2);
        QCOMPARE(byMethod["inductor_autotune"].toInt(), 3 * 3 + 2);
        QVERIFY(!byMethod.contains("cpu"));
        QCOMPARE(st["failed_measurements_by_method"].toObject()["graph_warm"].toInt(), 3 * 2);
        QCOMPARE(st["failed_measurements_by_method"].toObject()["inductor_autotune"].toInt(), 1);
        const auto byGpu = st["problems_by_gpu"].toObject();
        QCOMPARE(byGpu["NVIDIA H200"].toInt(), 3);
        QCOMPARE(byGpu["NVIDIA H100 80GB HBM3"].toInt(), 1);
        QCOMPARE(st["baselines"].toInt(), 12);
        QCOMPARE(st["default_method"].toObject()["method"].toString(), QString("graph_warm"));
        // The shipped dataset (schema 2, read-only): Inductor's numbers, said so.
        QCOMPARE(testutil::runCli(
                     {"stats", "--db", testutil::sourcePath("trained_models/h200/h200-dataset.db"), "--json"},
                     &out),
                 0);
        const auto shipped = QJsonDocument::fromJson(out.toUtf8()).object();
        QCOMPARE(shipped["measurements_by_method"].toObject().keys(), QStringList{"inductor_autotune"});
        QCOMPARE(shipped["measurements_by_method"].toObject()["inductor_autotune"].toInt(),
                 shipped["measurements"].toInt());
        QCOMPARE(shipped["default_method"].toObject()["method"].toString(), QString("inductor_autotune"));
        QCOMPARE(shipped["problems_by_gpu"].toObject()["NVIDIA H200"].toInt(), shipped["problems"].toInt());
    }

    // The shipped dataset is a store plus held-out lines kept out of it: stats covers both and
    // says when a held-out problem was trained on.
    void statsWithHeldoutCountsTheWholeDatasetAndTheOverlap() {
        const QString held = m_dir.filePath("held.jsonl");
        auto tagged = [](int m, const char *tag) {
            auto j = nlohmann::json::parse(testutil::v2Line(m));
            j["heldout"] = tag;
            return j.dump();
        };
        writeFile(held, tagged(128, "random") + "\n" + tagged(16, "family:llama") + "\n");
        QString out, err;
        QCOMPARE(testutil::runCli({"stats", "--db", m_db, "--heldout", held, "--json"}, &out, &err), 0);
        const auto st = QJsonDocument::fromJson(out.toUtf8()).object();
        QCOMPARE(st["problems"].toInt(), 4); // the database's own count is unchanged
        const auto h = st["heldout"].toObject();
        QCOMPARE(h["lines"].toInt(), 2);
        QCOMPARE(h["problems"].toInt(), 2);
        QCOMPARE(h["lines_by_heldout"].toObject()["family:llama"].toInt(), 1);
        QCOMPARE(h["measurements_by_method"].toObject()["graph_warm"].toInt(), 2 * 4);
        const auto d = st["dataset"].toObject();
        QCOMPARE(d["problems"].toInt(), 5); // M=16 is in both: counted once
        QCOMPARE(d["heldout_problems_in_db"].toInt(), 1);
        QCOMPARE(d["problems_by_gpu"].toObject()["NVIDIA H200"].toInt(), 4);
        QCOMPARE(d["problems_by_gpu"].toObject()["NVIDIA H100 80GB HBM3"].toInt(), 1);
        QCOMPARE(testutil::runCli({"stats", "--db", m_db, "--heldout", held}, &out, &err), 0);
        QVERIFY2(out.contains("dataset       5 problems (database and held out)"), qPrintable(out));
        QVERIFY2(out.contains("warning: 1 held-out problems are also in the database (trained on)"),
                 qPrintable(out));
        // A broken held-out line is refused, naming the file and line.
        writeFile(held, tagged(128, "random") + "\n{\"op\": \"mm\"}\n");
        QCOMPARE(testutil::runCli({"stats", "--db", m_db, "--heldout", held}, &out, &err), 2);
        QVERIFY2(err.contains("held.jsonl") && err.contains("line 2"), qPrintable(err));
    }

    void defaultRule() {
        using M = TimingMethod;
        QVERIFY(defaultTimingMethod({{M::GraphWarm, 1}, {M::InductorAutotune, 9}}).method == M::GraphWarm);
        QVERIFY(defaultTimingMethod({{M::Cpu, 4}, {M::InductorAutotune, 9}}).method == M::Cpu);
        QVERIFY(defaultTimingMethod({{M::InductorAutotune, 9}}).method == M::InductorAutotune);
        QVERIFY(defaultTimingMethod({{M::GraphWarm, 0}, {M::InductorAutotune, 9}}).method ==
                M::InductorAutotune);
        QCOMPARE(defaultTimingMethod({{M::GraphWarm, 3}}).describe(),
                 std::string("graph_warm times (default: the data has in-graph times)"));
        const auto asked = chooseTimingMethod(M::GraphCold, {{M::GraphCold, 2}});
        QVERIFY(asked.method == M::GraphCold && !asked.byDefault);
        try {
            chooseTimingMethod(M::Cpu, {{M::GraphWarm, 3}, {M::InductorAutotune, 5}});
            QFAIL("chose a method the data has no times of");
        } catch (const InvalidInput &e) {
            QCOMPARE(
                QString(e.what()),
                QString(
                    "the data has no successful cpu times; it has graph_warm (3), inductor_autotune (5)"));
        }
    }

    void datasetsReadOneMethod() {
        Store store(m_db.toStdString(), Store::Mode::ReadOnly);
        const auto warm = loadDataset(store, std::nullopt);
        QVERIFY(warm.method.method == TimingMethod::GraphWarm && warm.method.byDefault);
        QCOMPARE(warm.problems.size(), size_t(3)); // the version 1 problem has no in-graph time
        // Every candidate stays; the ones without a graph_warm time have none.
        QCOMPARE(warm.problems[0].configs.size(), size_t(4));
        QCOMPARE(*warm.problems[0].timesMs[0], 0.0123);
        QVERIFY(!warm.problems[0].timesMs[2] && !warm.problems[0].timesMs[3]);
        const auto inductor = loadDataset(store, TimingMethod::InductorAutotune);
        QCOMPARE(inductor.problems.size(), size_t(4));
        QCOMPARE(*inductor.problems[0].timesMs[0], 0.0201);
        QCOMPARE(*inductor.problems[0].timesMs[2], 0.05); // a wrong result still has Inductor's number
        QVERIFY_THROWS_EXCEPTION(InvalidInput, loadDataset(store, TimingMethod::Cpu));
        const auto file = loadDatasetJsonl(m_source.toStdString(), TimingMethod::GraphCold);
        QCOMPARE(file.problems.size(), size_t(3));
        QCOMPARE(*file.problems[0].timesMs[1], 0.013);
    }

    void wrongResultsBecomeThePackagesUnsafeCandidates() {
        // Each v2 line has a Triton candidate whose output failed the check ("wrong result") and
        // one that failed otherwise: only the first is a wrong result, whatever method is read,
        // and the manifest lists it once for its op, dtype and layout with the shapes it failed on.
        Store store(m_db.toStdString(), Store::Mode::ReadOnly);
        for (auto method : {TimingMethod::GraphWarm, TimingMethod::InductorAutotune}) {
            const auto data = loadDataset(store, method);
            QCOMPARE(data.wrongResults.size(), size_t(3)); // M = 16, 32 (H200) and 64 (H100)
            for (const auto &w : data.wrongResults) {
                QCOMPARE(w.config.blockM, 128);
                QVERIFY(w.error.rfind(kWrongResultError, 0) == 0);
            }
        }
        const auto unsafe = unsafeCandidates(loadDataset(store, std::nullopt).wrongResults);
        QCOMPARE(unsafe.size(), size_t(1));
        QCOMPARE(unsafe[0]["op"], "mm");
        QCOMPARE(unsafe[0]["dtype"], "bf16");
        QCOMPARE(unsafe[0]["b_transposed"], true);
        QCOMPARE(unsafe[0]["problems"], 3);
        QCOMPARE(unsafe[0]["candidate"]["BLOCK_M"], 128);
        QCOMPARE(unsafe[0]["shapes"].size(), size_t(3));
        QVERIFY(unsafe[0]["error"].get<std::string>().find("max relative error 0.41") != std::string::npos);
        DatasetFilter fp16;
        fp16.dtypes = {"fp16"};
        QVERIFY(loadDatasetJsonl(m_source.toStdString(), std::nullopt, fp16).wrongResults.empty());
    }

    void evalSaysWhichTimesItUses() {
        const QString package = testutil::sourcePath("trained_models/h200/h200-gemm-mlp-v2.diode");
        QString out, err;
        QCOMPARE(testutil::runCli({"eval", "--package", package, "--db", m_db}, &out, &err), 0);
        QVERIFY2(err.contains("evaluating on graph_warm times (default: the data has in-graph times)"),
                 qPrintable(err));
        QVERIFY2(err.contains("note: the model was trained on inductor_autotune times"), qPrintable(err));
        QVERIFY2(out.contains("model on 3 problems"), qPrintable(out));
        QCOMPARE(
            testutil::runCli({"eval", "--package", package, "--db", m_db, "--method", "inductor_autotune"},
                             &out, &err),
            0);
        QVERIFY2(err.contains("evaluating on inductor_autotune times (--method)"), qPrintable(err));
        QVERIFY2(out.contains("model on 4 problems"), qPrintable(out));
        const QString heldOut = testutil::sourcePath("trained_models/h200/h200-heldout.jsonl");
        QCOMPARE(testutil::runCli({"eval", "--package", package, "--input", heldOut}, &out, &err), 0);
        QVERIFY2(
            err.contains("evaluating on inductor_autotune times (default: the data has no in-graph times)"),
            qPrintable(err));
        QCOMPARE(
            testutil::runCli({"eval", "--package", package, "--input", heldOut, "--method", "graph_warm"},
                             &out, &err),
            2);
        QVERIFY2(err.contains("the data has no successful graph_warm times; it has inductor_autotune"),
                 qPrintable(err));
    }

    // Which package goes with which data (core/infer/diode/infer/packagechoice.h), on the shipped packages:
    // the plugin's default for a GPU and regime (torch_diode/_models.py best_for asks the same
    // choosePackage through diode_choose_package),
    // and the one the workbench shows with data of a GPU and truth.
    void packageChoiceFollowsTheGpuAndTheTruth() {
        const auto shipped = diode::packagesUnder(testutil::sourcePath("trained_models").toStdString());
        auto file = [](const std::optional<diode::PackageFacts> &p) {
            return p ? std::filesystem::path(p->path).filename().string() : std::string("(none)");
        };
        QCOMPARE(file(diode::defaultPackage(shipped, "NVIDIA H200")), std::string("h200-ingraph-warm.diode"));
        QCOMPARE(file(diode::defaultPackage(shipped, "NVIDIA H200", "cold")),
                 std::string("h200-ingraph-cold.diode"));
        // The H100 its own package; an H100 PCIe (no package of its own) the nearest of the same
        // architecture, the H100 80GB's (same L2, nearer SM count and bandwidth than the H200's).
        QCOMPARE(file(diode::defaultPackage(shipped, "NVIDIA H100 80GB HBM3")),
                 std::string("h100-ingraph-warm.diode"));
        QCOMPARE(file(diode::defaultPackage(shipped, "NVIDIA H100 80GB HBM3", "cold")),
                 std::string("h100-ingraph-cold.diode"));
        QCOMPARE(file(diode::defaultPackage(shipped, "NVIDIA H100 PCIe")),
                 std::string("h100-ingraph-warm.diode"));
        QCOMPARE(file(diode::defaultPackage(shipped, "AMD Instinct MI300X")), std::string("(none)"));
        QCOMPARE(diode::regimeFor(TimingMethod::GraphCold), std::string_view("cold"));
        QCOMPARE(diode::regimeFor(TimingMethod::InductorAutotune), std::string_view("warm"));

        using diode::packageForData;
        QCOMPARE(file(packageForData(shipped, "NVIDIA H200", TimingMethod::GraphWarm)),
                 std::string("h200-ingraph-warm.diode"));
        QCOMPARE(file(packageForData(shipped, "NVIDIA H200", TimingMethod::GraphCold)),
                 std::string("h200-ingraph-cold.diode"));
        QCOMPARE(file(packageForData(shipped, "NVIDIA H200", TimingMethod::InductorAutotune)),
                 std::string("h200-gemm-mlp-v2.diode"));
        QCOMPARE(file(packageForData(shipped, "CPU: AMD EPYC", TimingMethod::Cpu)), std::string("(none)"));
        QCOMPARE(file(packageForData(shipped, "NVIDIA H100 80GB HBM3", TimingMethod::GraphCold)),
                 std::string("h100-ingraph-cold.diode"));
        for (const auto &p : shipped) {
            const std::string name = std::filesystem::path(p.path).filename().string();
            // An in-graph package fits in-graph data of its GPU or a similar one (transferred).
            const bool inGraph = name.find("-ingraph-") != std::string::npos;
            QCOMPARE(diode::fitsData(p, "NVIDIA H200", TimingMethod::GraphWarm), inGraph);
            QCOMPARE(diode::fitsData(p, "NVIDIA H200", TimingMethod::InductorAutotune), !inGraph);
            QCOMPARE(diode::fitsData(p, "NVIDIA H100 80GB HBM3", TimingMethod::GraphWarm), inGraph);
            QVERIFY(!diode::fitsData(p, "CPU: AMD EPYC", TimingMethod::Cpu));
            QVERIFY(!diode::fitsData(p, "AMD Instinct MI300X", TimingMethod::GraphWarm));
        }
        // A cpu model fits cpu data only, and is never the plugin's default.
        diode::PackageFacts cpu{"cpu.diode", "cpu", "", "2030-01-01T00:00:00Z", TimingMethod::Cpu};
        auto withCpu = shipped;
        withCpu.push_back(cpu);
        QCOMPARE(file(packageForData(withCpu, "CPU: AMD EPYC", TimingMethod::Cpu)), std::string("cpu.diode"));
        QVERIFY(diode::fitsData(cpu, "", TimingMethod::Cpu));
        QVERIFY(!diode::fitsData(cpu, "NVIDIA H200", TimingMethod::GraphWarm));
        QCOMPARE(file(diode::defaultPackage(withCpu, "NVIDIA H200")), std::string("h200-ingraph-warm.diode"));
        // The newest wins between two packages of the same rank.
        diode::PackageFacts newer = *diode::defaultPackage(shipped, "NVIDIA H200");
        newer.path = "newer.diode";
        newer.createdAt = "2030-01-01T00:00:00Z";
        auto withNewer = shipped;
        withNewer.push_back(newer);
        QCOMPARE(file(diode::defaultPackage(withNewer, "NVIDIA H200")), std::string("newer.diode"));
        // An earlier place (the user's folder) wins over a better fit found later (shipped).
        auto userCold = *diode::defaultPackage(shipped, "NVIDIA H200", "cold");
        userCold.path = "user-cold.diode";
        auto ranked = shipped;
        for (auto &p : ranked)
            p.sourceRank = 1;
        ranked.push_back(userCold);
        QCOMPARE(file(diode::defaultPackage(ranked, "NVIDIA H200", "warm")), std::string("user-cold.diode"));
        // The device's architecture, where the runtime reports it, is what the transfer reads: a GPU
        // the table does not know gets a Hopper package when it says 9.0, none without it.
        const auto choice = diode::choosePackage(shipped, diode::DeviceGpu{"NVIDIA H999", "9.0", 140});
        QVERIFY(choice);
        QCOMPARE(choice->transfer.kind, diode::GpuTransfer::Similar);
        QVERIFY2(choice->transfer.why.find("same architecture (9.0)") != std::string::npos,
                 choice->transfer.why.c_str());
        QVERIFY(!diode::choosePackage(shipped, diode::DeviceGpu{"NVIDIA H999", "", 0}));
    }
};

QTEST_GUILESS_MAIN(TestTimingMethods)
#include "tst_timingmethods.moc"
