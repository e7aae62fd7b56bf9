#include "testutil.h"

#include "diode/problemjson.h"
#include "diode/sweepplan.h"

using namespace diode;
using json = nlohmann::json;

namespace {
SweepPlan expand(const char *text) { return SweepPlan::fromJson(json::parse(text), DIODE_SOURCE_DIR "/resources/plans"); }
} // namespace

class TestSweepPlan : public QObject {
    Q_OBJECT
private slots:
    void gridIsCartesianAndDeduplicated()
    {
        auto p = expand(R"({"entries":[{"ops":["mm","bmm"],"dtypes":["bf16","fp32"],"B":[2,4],"M":[1,8],"N":[64],"K":[32,48]},
                                      {"problems":[{"op":"mm","dtype":"bf16","M":1,"N":64,"K":32}]}]})");
        // mm: 2 dtypes x 2 M x 2 K = 8; bmm: 2 dtypes x 2 B x 2 M x 2 K = 16; the explicit one is a duplicate.
        QCOMPARE(p.problems.size(), size_t(24));
        QCOMPARE(p.problems[0], (GemmProblem{GemmOp::Mm, DType::BF16, 1, 1, 64, 32, false, false}));
        QCOMPARE(p.searchSpace, std::string("DEFAULT"));
    }

    void logUniformIsSeededAndInRange()
    {
        const char *text = R"({"entries":[{"ops":["mm"],"dtypes":["fp16"],
            "M":{"log_uniform":{"min":1,"max":8192,"count":200,"seed":7}},"N":[128],"K":[128]}]})";
        auto a = expand(text), b = expand(text);
        QCOMPARE(a.problems, b.problems);
        std::set<int64_t> ms;
        for (auto &p : a.problems) {
            QVERIFY(p.m >= 1 && p.m <= 8192);
            ms.insert(p.m);
        }
        QVERIFY(ms.size() > 100); // dedup of equal draws; still spread
        QVERIFY(*ms.begin() < 16 && *ms.rbegin() > 2048); // log-uniform reaches both ends
        auto c = expand(R"({"entries":[{"ops":["mm"],"dtypes":["fp16"],
            "M":{"log_uniform":{"min":1,"max":8192,"count":200,"seed":8}},"N":[128],"K":[128]}]})");
        QVERIFY(c.problems != a.problems);
    }

    void shapeSetAndSampleAndShuffle()
    {
        auto full = expand(R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[1,16],"shape_set":"../shapes/llama-class.json","b_transposed":[true]}]})");
        QCOMPARE(full.problems.size(), size_t(2 * 17));
        QCOMPARE(full.problems[0].n, 3072);
        QVERIFY(full.problems[0].bTransposed);
        auto sampled = expand(R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[1,16],"shape_set":"../shapes/llama-class.json","sample":{"count":5,"seed":3}}]})");
        QCOMPARE(sampled.problems.size(), size_t(5));
        auto shuffled = expand(R"({"shuffle_seed":1,"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[1,16],"shape_set":"../shapes/llama-class.json","b_transposed":[true]}]})");
        QCOMPARE(shuffled.problems.size(), full.problems.size());
        QVERIFY(shuffled.problems != full.problems);
        auto a = shuffled.problems, b = full.problems;
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        QCOMPARE(a, b);
    }

    void badPlansNameEntryAndField_data()
    {
        QTest::addColumn<QString>("plan");
        QTest::addColumn<QString>("message");
        QTest::newRow("M=0") << R"({"entries":[{"name":"x","ops":["mm"],"dtypes":["bf16"],"M":[0],"N":[1],"K":[1]}]})"
                             << "entries[0] (x): field 'M' has 0; sizes must be at least 1";
        QTest::newRow("negative N") << R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[4],"N":[-5],"K":[1]}]})"
                                    << "entries[0]: field 'N' has -5";
        QTest::newRow("unknown op") << R"({"entries":[{},{"ops":["gemv"],"dtypes":["bf16"],"M":[4],"N":[5],"K":[1]}]})"
                                    << "entries[0]: field 'ops' must be a non-empty list";
        QTest::newRow("unknown op 2") << R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[4],"N":[5],"K":[1]},{"name":"y","ops":["gemv"],"dtypes":["bf16"],"M":[4],"N":[5],"K":[1]}]})"
                                      << "entries[1] (y): field 'ops' has unknown value \"gemv\"";
        QTest::newRow("unknown dtype") << R"({"entries":[{"ops":["mm"],"dtypes":["fp8"],"M":[4],"N":[5],"K":[1]}]})"
                                       << "entries[0]: field 'dtypes' has unknown value \"fp8\"";
        QTest::newRow("explicit M=0") << R"({"entries":[{"problems":[{"op":"mm","dtype":"bf16","M":4,"N":4,"K":4},{"op":"mm","dtype":"bf16","M":0,"N":4,"K":4}]}]})"
                                      << "entries[0] problems[1]: field 'M' has 0";
        QTest::newRow("search space") << R"({"search_space":"FAST","entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[4],"N":[5],"K":[1]}]})"
                                      << "field 'search_space' has unknown value \"FAST\"";
        QTest::newRow("no entries") << R"({"entries":[]})" << "field 'entries' must be a non-empty list";
        QTest::newRow("missing K") << R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[4],"N":[5]}]})"
                                   << "entries[0]: field 'K' is missing";
        QTest::newRow("bad log_uniform") << R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":{"log_uniform":{"min":0,"max":4,"count":2}},"N":[5],"K":[1]}]})"
                                         << "field 'M.log_uniform.min' must be an integer >= 1";
    }
    void badPlansNameEntryAndField()
    {
        QFETCH(QString, plan);
        QFETCH(QString, message);
        try {
            expand(plan.toUtf8().constData());
            QFAIL("accepted a bad plan");
        } catch (const InvalidInput &e) {
            QVERIFY2(QString(e.what()).contains(message), e.what());
        }
    }

    // The standalone worker expands plans in Python: both must give the same problems in order.
    void pythonExpansionMatches_data()
    {
        QTest::addColumn<QString>("plan");
        const QDir dir(testutil::sourcePath("resources/plans"));
        for (const auto &f : dir.entryList({"*.json"})) QTest::newRow(qPrintable(f)) << dir.filePath(f);
    }
    void pythonExpansionMatches()
    {
        QFETCH(QString, plan);
        QProcess py;
        py.setWorkingDirectory(testutil::sourcePath("plugin/python"));
        py.start(QStringLiteral(PYTHON3), {"-m", "torch_diode.plan", plan});
        QVERIFY(py.waitForFinished(60000));
        QCOMPARE(py.exitCode(), 0);
        const auto lines = QString::fromUtf8(py.readAllStandardOutput()).split('\n', Qt::SkipEmptyParts);
        const auto cpp = SweepPlan::load(plan.toStdString());
        QCOMPARE(size_t(lines.size()), cpp.problems.size());
        for (int i = 0; i < lines.size(); ++i)
            QCOMPARE(problemFromJson(json::parse(lines[i].toStdString()), "python"), cpp.problems[size_t(i)]);
    }

    void pythonRejectsWhatCppRejects()
    {
        QProcess py;
        py.setWorkingDirectory(testutil::sourcePath("plugin/python"));
        py.start(QStringLiteral(PYTHON3), {"-m", "torch_diode.plan", testutil::dataPath("plans/bad-m-zero.json")});
        QVERIFY(py.waitForFinished(60000));
        QCOMPARE(py.exitCode(), 2);
        QVERIFY(py.readAllStandardError().contains("entries[1] (decode): field 'M' has 0"));
    }
};

QTEST_GUILESS_MAIN(TestSweepPlan)
#include "tst_sweepplan.moc"
