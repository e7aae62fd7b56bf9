#include "testutil.h"

#include "diode/store/importer.h"

using namespace diode;
using json = nlohmann::json;

namespace {

// A torch-diode dataset written from its documented structure: problem keys are JSON-encoded
// strings, configs either objects or JSON-encoded strings, times in milliseconds.
json torchDiodeDataset(bool configAsString, bool torchDtypeObjects) {
    auto dtype = [&](const char *name) {
        return torchDtypeObjects ? json{{"__torch_dtype__", name}} : json(name);
    };
    auto problemKey = [&](int b, int m, int n, int k, const char *dt) {
        return json{{"B", b},
                    {"M", m},
                    {"N", n},
                    {"K", k},
                    {"M_dtype", dtype(dt)},
                    {"K_dtype", dtype(dt)},
                    {"out_dtype", dtype(dt)},
                    {"out_size", {b, m, n}},
                    {"out_stride", {m * n, n, 1}},
                    {"version", 1}}
            .dump();
    };
    auto config = [&](int bm, int bn, int bk, int stages, int warps) {
        json c{{"block_m", bm},
               {"block_n", bn},
               {"block_k", bk},
               {"group_m", 8},
               {"num_stages", stages},
               {"num_warps", warps},
               {"EVEN_K", true},
               {"ALLOW_TF32", false},
               {"USE_FAST_ACCUM", false},
               {"ACC_TYPE", "tl.float32"},
               {"grid", 1},
               {"name", "mm"},
               {"version", 1}};
        return configAsString ? json(c.dump()) : c;
    };
    json mm{{"name", "mm"}, {"solution", json::object()}};
    mm["solution"][problemKey(1, 64, 4096, 4096, "float16")] = {
        {"name", "mm"},
        {"timed_configs",
         {{{"config", config(64, 128, 32, 3, 4)}, {"time", 0.031}, {"version", 1}},
          {{"config", config(128, 128, 64, 4, 8)}, {"time", 0.024}, {"version", 1}}}}};
    mm["solution"][problemKey(1, 1, 1537, 3001, "bfloat16")] = {
        {"name", "mm"},
        {"timed_configs", {{{"config", config(16, 64, 128, 5, 4)}, {"time", 0.011}, {"version", 1}}}}};
    json bmm{{"name", "bmm"}, {"solution", json::object()}};
    bmm["solution"][problemKey(8, 32, 128, 256, "float32")] = {
        {"name", "bmm"},
        {"timed_configs", {{{"config", config(32, 32, 32, 2, 4)}, {"time", 0.007}, {"version", 1}}}}};
    return {{"hardware", {{"NVIDIA H100 80GB HBM3", {{"operation", {{"mm", mm}, {"bmm", bmm}}}}}}}};
}

void writeFile(const QString &path, const std::string &bytes) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
    f.write(bytes.data(), qint64(bytes.size()));
}

} // namespace

class TestImport : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

    void checkImported(const QString &dbPath, const ImportResult &r, const char *format) {
        QCOMPARE(r.format, std::string(format));
        QCOMPARE(r.problems, 3);
        QCOMPARE(r.measurements, 4);
        Store s(dbPath.toStdString());
        const auto st = s.stats();
        QCOMPARE(st.gpus, std::vector<std::string>{"NVIDIA H100 80GB HBM3"});
        QCOMPARE(st.ops, (std::vector<std::string>{"bmm", "mm"}));
        QCOMPARE(st.dtypes, (std::vector<std::string>{"bf16", "fp16", "fp32"}));
        QCOMPARE(testutil::scalar(dbPath, "SELECT count(*) FROM problems WHERE op='bmm' AND b=8 AND m=32"),
                 1);
        QCOMPARE(testutil::scalar(
                     dbPath,
                     "SELECT count(*) FROM kernel_configs WHERE block_m=128 AND block_k=64 AND num_warps=8"),
                 1);
        QCOMPARE(testutil::scalar(dbPath, "SELECT round(min(time_ms)*1000) FROM measurements"), 7);
    }

private slots:
    void torchDiodeJson_data() {
        QTest::addColumn<bool>("configAsString");
        QTest::addColumn<bool>("dtypeObjects");
        QTest::newRow("config object") << false << false;
        QTest::newRow("config string") << true << false;
        QTest::newRow("config string, __torch_dtype__") << true << true;
    }
    void torchDiodeJson() {
        QFETCH(bool, configAsString);
        QFETCH(bool, dtypeObjects);
        const QString file = m_dir.filePath(QString("td-%1.json").arg(QTest::currentDataTag()));
        writeFile(file, torchDiodeDataset(configAsString, dtypeObjects).dump(2));
        const QString dbPath = m_dir.filePath(QString("td-%1.db").arg(QTest::currentDataTag()));
        Store s(dbPath.toStdString());
        checkImported(dbPath, importFile(s, file.toStdString()), "torch-diode-json");
    }

    void torchDiodeMsgpack_data() { torchDiodeJson_data(); }
    void torchDiodeMsgpack() {
        QFETCH(bool, configAsString);
        QFETCH(bool, dtypeObjects);
        const QString file = m_dir.filePath(QString("td-%1.msgpack").arg(QTest::currentDataTag()));
        const auto bytes = json::to_msgpack(torchDiodeDataset(configAsString, dtypeObjects));
        writeFile(file, std::string(bytes.begin(), bytes.end()));
        const QString dbPath = m_dir.filePath(QString("mp-%1.db").arg(QTest::currentDataTag()));
        Store s(dbPath.toStdString());
        checkImported(dbPath, importFile(s, file.toStdString()), "torch-diode-msgpack");
    }

    void problemJsonLinesGroupRunsByHardware() {
        const QString file = m_dir.filePath("worker.jsonl");
        writeFile(
            file,
            R"({"op":"mm","dtype":"bf16","M":16,"N":4096,"K":4096,"b_transposed":true,"hardware":{"gpu":"NVIDIA H200","sm_count":132},"versions":{"torch":"2.11.0"},"candidates":[{"kind":"aten","name":"extern_kernels.mm","time_ms":0.02}]})"
            "\n\n"
            R"({"op":"bmm","dtype":"fp32","B":4,"M":8,"N":128,"K":4096,"hardware":{"gpu":"NVIDIA H200","sm_count":132},"versions":{"torch":"2.11.0"},"error":"out of GPU memory","candidates":[]})"
            "\n");
        const QString dbPath = m_dir.filePath("jsonl.db");
        Store s(dbPath.toStdString());
        const auto r = importFile(s, file.toStdString());
        QCOMPARE(r.format, std::string("problem-jsonl"));
        QCOMPARE(r.runs, 1);
        QCOMPARE(r.problems, 2);
        const auto runs = s.runs();
        QCOMPARE(runs[0].smCount, 132);
        QCOMPARE(runs[0].torchVersion, std::string("2.11.0"));
        QCOMPARE(s.stats().failedProblems, 1);
    }

    // The same problem swept in the DEFAULT and (sampled) EXHAUSTIVE spaces: two runs, each
    // naming its space, both problems' measurements kept (one run would have held the problem's
    // ATen measurement twice under one key).
    void searchSpacesAreSeparateRuns() {
        const QString file = m_dir.filePath("spaces.jsonl"), db = m_dir.filePath("spaces.db");
        const std::string common =
            R"("version":2,"op":"mm","dtype":"bf16","M":8,"N":4096,"K":4096,"b_transposed":true,)"
            R"("hardware":{"gpu":"NVIDIA H200","sm_count":132},"versions":{"torch":"2.11.0"},)";
        const std::string aten =
            R"({"kind":"aten","name":"extern_kernels.mm","times":{"graph_warm":0.020,"graph_cold":0.031}})";
        const std::string triton =
            R"({"kind":"triton","template":"mm","BLOCK_M":16,"BLOCK_N":64,"BLOCK_K":128,)"
            R"("GROUP_M":8,"num_stages":5,"num_warps":4,"times":{"graph_warm":0.018}})";
        writeFile(file, "{" + common + R"("search_space":"DEFAULT","candidates":[)" + aten + "]}\n{" +
                            common + R"("search_space":"EXHAUSTIVE","candidates":[)" + aten + "," + triton +
                            "]}\n");
        Store s(db.toStdString());
        const auto r = importFile(s, file.toStdString());
        QCOMPARE(r.runs, 2);
        QCOMPARE(r.problems, 2);
        QCOMPARE(r.measurements, int64_t(5));
        const auto runs = s.runs();
        QCOMPARE(runs.size(), size_t(2));
        QCOMPARE(runs[0].searchSpace, std::string("DEFAULT"));
        QCOMPARE(runs[1].searchSpace, std::string("EXHAUSTIVE"));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM problems"), int64_t(1));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM measurements"), int64_t(5));
    }

    // Importing the same content twice would double its data silently (4 imports of 1,000
    // problems gave 12,000 rows for 3,000 measurements): the second is refused naming the first,
    // the database unchanged; --again imports it once more on purpose. Export -> import of a
    // one-problem database works (it is new content for the new database).
    void sameContentIsImportedOnce() {
        const QString data = testutil::dataPath("bias-problems.jsonl");
        const QString db = m_dir.filePath("once.db");
        QString out, err;
        QCOMPARE(testutil::runCli({"import", data, "--db", db}, &out, &err), 0);
        const auto rows = testutil::scalar(db, "SELECT count(*) FROM measurements");
        const QString copy = m_dir.filePath("renamed-copy.jsonl");
        QVERIFY(QFile::copy(data, copy));
        QCOMPARE(testutil::runCli({"import", copy, "--db", db}, &out, &err), 2);
        QVERIFY2(err.contains("the same content was imported already (run 1 from '" + data + "'"),
                 qPrintable(err));
        QVERIFY(err.contains("--again"));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM measurements"), rows);
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM runs"), int64_t(1));
        QCOMPARE(testutil::runCli({"import", copy, "--db", db, "--again"}, &out, &err), 0);
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM runs"), int64_t(2));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM measurements"), 2 * rows);
    }

    // A one-line problem JSONL file parses as one object with a "hardware" key: it was taken for a
    // torch-diode dataset and refused, so export -> import of a one-problem database failed.
    void oneProblemLineIsProblemJsonl() {
        const QString file = m_dir.filePath("one.jsonl"), db = m_dir.filePath("one.db");
        writeFile(
            file,
            R"({"version":2,"op":"mm","dtype":"bf16","M":64,"N":128,"K":256,)"
            R"("hardware":{"gpu":"NVIDIA H200","sm_count":132},)"
            R"("candidates":[{"kind":"aten","name":"extern_kernels.mm","times":{"inductor_autotune":0.01}}]})"
            "\n");
        Store s(db.toStdString());
        const auto r = importFile(s, file.toStdString());
        QCOMPARE(r.format, std::string("problem-jsonl"));
        QCOMPARE(r.problems, 1);
        QCOMPARE(s.runs()[0].smCount, 132);
        // And the export of that database imports into a fresh one.
        const QString out = m_dir.filePath("one-out.jsonl"), db2 = m_dir.filePath("one-b.db");
        QCOMPARE(testutil::runCli({"export", "--db", db, "--format", "jsonl", "--out", out}), 0);
        QString err;
        QCOMPARE(testutil::runCli({"import", out, "--db", db2}, nullptr, &err), 0);
        QCOMPARE(testutil::scalar(db2, "SELECT count(*) FROM problems"), int64_t(1));
    }

    // A corrupt or foreign file: a clear message, and the database byte-for-byte as before.
    void badFilesLeaveDatabaseUntouched_data() {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("message");
        QTest::newRow("png") << QByteArray("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16)
                             << "not problem JSON lines, a torch-diode dataset";
        QTest::newRow("truncated json")
            << QByteArray(R"({"hardware": {"NVIDIA H200": {"operation": {"mm": {)")
            << "line 1: not valid JSON";
        QTest::newRow("foreign json")
            << QByteArray(R"({"name": "package.json", "version": "1.0"})") << "field 'op' is missing";
        QTest::newRow("bad line 3") << QByteArray(
                                           "{\"op\":\"mm\",\"dtype\":\"bf16\",\"M\":1,\"N\":2,\"K\":3}\n"
                                           "{\"op\":\"mm\",\"dtype\":\"bf16\",\"M\":2,\"N\":2,\"K\":3}\n"
                                           "{\"op\":\"mm\",\"dtype\":\"bf16\",\"M\":0,\"N\":2,\"K\":3}\n")
                                    << "line 3: field 'M' is 0";
        QTest::newRow("torch-diode unknown op")
            << QByteArray(R"({"hardware":{"X":{"operation":{"conv":{"solution":{}}}}}})")
            << "unknown op \"conv\"";
        QTest::newRow("empty") << QByteArray("\n\n") << "file is empty";
        // 2^40 was truncated to 0 and the config stored without BLOCK_M.
        json doc;
        const json cfg{{"name", "mm"},  {"block_m", uint64_t(1) << 40},
                       {"block_n", 64}, {"block_k", 32},
                       {"group_m", 8},  {"num_stages", 3},
                       {"num_warps", 4}};
        const json key{{"M", 64}, {"N", 64}, {"K", 64}, {"M_dtype", "float16"}};
        doc["hardware"]["X"]["operation"]["mm"]["solution"][key.dump()]["timed_configs"] =
            json::array({json{{"config", cfg}, {"time", 0.01}}});
        QTest::newRow("torch-diode block_m 2^40") << QByteArray::fromStdString(doc.dump())
                                                  << "timed_configs[0]: candidate field 'block_m' must be an "
                                                     "integer in 0..1048576, got 1099511627776";
    }
    void badFilesLeaveDatabaseUntouched() {
        QFETCH(QByteArray, content);
        QFETCH(QString, message);
        const QString dbPath = m_dir.filePath("keep.db");
        {
            Store s(dbPath.toStdString());
            if (s.stats().problems == 0) {
                const QString good = m_dir.filePath("good.json");
                writeFile(good, torchDiodeDataset(false, false).dump());
                importFile(s, good.toStdString());
            }
        }
        const QString file = m_dir.filePath("bad.input");
        writeFile(file, content.toStdString());
        const int64_t measurements = testutil::scalar(dbPath, "SELECT count(*) FROM measurements");
        const int64_t runs = testutil::scalar(dbPath, "SELECT count(*) FROM runs");
        QString err;
        QCOMPARE(testutil::runCli({"import", file, "--db", dbPath}, nullptr, &err), 2);
        QVERIFY2(err.contains(message), qPrintable(err));
        QVERIFY2(err.contains(file), qPrintable(err)); // names the file
        QCOMPARE(testutil::scalar(dbPath, "SELECT count(*) FROM measurements"), measurements);
        QCOMPARE(testutil::scalar(dbPath, "SELECT count(*) FROM runs"), runs);
        QVERIFY2(testutil::integrityCheck(dbPath) == "ok", testutil::integrityCheck(dbPath).c_str());
    }

    // An import is checked for mixing, so an H100's lines cannot go into an H200 dataset unnoticed
    // and be trained on as the H200's. Real lines of both shipped files.
    void importOfAnotherGpusDataIsRefusedUnlessAllowed() {
        const auto firstLines = [&](const char *shipped, const QString &out) {
            const auto lines = testutil::fileBytes(testutil::sourcePath(shipped)).split('\n');
            writeFile(out, (lines[0] + '\n' + lines[1] + '\n').toStdString());
        };
        const QString h200 = m_dir.filePath("mix-h200.jsonl"), h100 = m_dir.filePath("mix-h100.jsonl"),
                      db = m_dir.filePath("mix.db");
        firstLines("trained_models/h200/h200-ingraph-heldout.jsonl", h200);
        firstLines("trained_models/h100/h100-ingraph-heldout.jsonl", h100);
        QCOMPARE(testutil::runCli({"import", h200, "--db", db}), 0);
        const int64_t measurements = testutil::scalar(db, "SELECT count(*) FROM measurements");
        QString err;
        QCOMPARE(testutil::runCli({"import", h100, "--db", db}, nullptr, &err), 2);
        QVERIFY2(err.contains("importing " + h100 + " would mix data in " + db +
                              ": GPU NVIDIA H100 80GB HBM3 "
                              "with NVIDIA H200") &&
                     err.contains("--allow-mixed-data"),
                 qPrintable(err));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM measurements"), measurements);
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM runs"), 1);
        QCOMPARE(testutil::runCli({"import", h100, "--db", db, "--allow-mixed-data"}), 0);
        QVERIFY(testutil::scalar(db, "SELECT count(*) FROM measurements") > measurements);
        QCOMPARE(testutil::scalar(db, "SELECT count(DISTINCT gpu_name) FROM runs"), 2);
    }

    void exportRoundTripsThroughImport() {
        const QString src = m_dir.filePath("src.json"), a = m_dir.filePath("exp-a.db"),
                      b = m_dir.filePath("exp-b.db");
        writeFile(src, torchDiodeDataset(false, true).dump());
        QCOMPARE(testutil::runCli({"import", src, "--db", a}), 0);
        const QString jsonl = m_dir.filePath("out.jsonl"), csv = m_dir.filePath("out.csv");
        QCOMPARE(testutil::runCli({"export", "--db", a, "--format", "jsonl", "--out", jsonl}), 0);
        QCOMPARE(testutil::runCli({"export", "--db", a, "--format", "csv", "--out", csv}), 0);
        QCOMPARE(testutil::runCli({"import", jsonl, "--db", b}), 0);
        QCOMPARE(testutil::scalar(b, "SELECT count(*) FROM measurements"), 4);
        QCOMPARE(testutil::scalar(b, "SELECT sum(time_ms)*1000"),
                 testutil::scalar(a, "SELECT sum(time_ms)*1000"));
        const auto csvLines = QString::fromUtf8(testutil::fileBytes(csv)).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(csvLines.size(), 1 + 4);
        QVERIFY(csvLines[0].startsWith("run,gpu,op,dtype,B,M,N,K"));
    }

    // `diode export --out x.csv` must not write JSON lines into x.csv without a word. The
    // file's name picks the format when --format is not given; a --format it contradicts is
    // refused before anything is written, and a file already there keeps its bytes.
    void exportFormatFollowsTheFileName() {
        const QString src = m_dir.filePath("fmt-src.json"), db = m_dir.filePath("fmt.db");
        writeFile(src, torchDiodeDataset(false, true).dump());
        QCOMPARE(testutil::runCli({"import", src, "--db", db}), 0);
        const QString csv = m_dir.filePath("fmt.csv"), jsonl = m_dir.filePath("fmt.jsonl");
        QString out, err;
        QCOMPARE(testutil::runCli({"export", "--db", db, "--out", csv}, &out, &err), 0);
        QVERIFY2(testutil::fileBytes(csv).startsWith("run,gpu,op,dtype,B,M,N,K"),
                 testutil::fileBytes(csv).left(80));
        QVERIFY2(err.contains("4 rows written to " + csv + " (csv)"), qPrintable(err));
        QCOMPARE(testutil::runCli({"export", "--db", db, "--out", jsonl}, &out, &err), 0);
        QVERIFY(testutil::fileBytes(jsonl).startsWith("{"));
        QVERIFY2(err.contains(jsonl + " (jsonl)"), qPrintable(err));

        const QByteArray before = testutil::fileBytes(csv);
        QCOMPARE(testutil::runCli({"export", "--db", db, "--format", "jsonl", "--out", csv}, &out, &err), 2);
        QVERIFY2(err.contains("--format jsonl does not match --out '" + csv + "', whose name says csv"),
                 qPrintable(err));
        QCOMPARE(testutil::fileBytes(csv), before);
        QVERIFY(!QFileInfo::exists(csv + ".partial"));
        QCOMPARE(testutil::runCli({"export", "--db", db, "--format", "csv", "--out", jsonl}, &out, &err), 2);
        QVERIFY2(err.contains("whose name says jsonl"), qPrintable(err));
        // A name that says nothing keeps the default, and says which format it got.
        const QString txt = m_dir.filePath("fmt.txt");
        QCOMPARE(testutil::runCli({"export", "--db", db, "--out", txt}, &out, &err), 0);
        QVERIFY2(err.contains(txt + " (jsonl)"), qPrintable(err));
    }
};

QTEST_GUILESS_MAIN(TestImport)
#include "tst_import.moc"
