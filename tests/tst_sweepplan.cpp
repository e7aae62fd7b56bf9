#include "testutil.h"

#include <fmt/format.h>

#include "diode/infer/jsonlimits.h"
#include "diode/infer/problemjson.h"
#include "diode/sweep/sweepplan.h"

#include <sstream>

using namespace diode;
using json = nlohmann::json;

namespace {
SweepPlan expand(const char *text) {
    return SweepPlan::parse(text, DIODE_SOURCE_DIR "/resources/plans");
}

/// The message of the InvalidInput that `f` throws, or a note saying what happened instead.
template <typename F> QString refusal(F &&f) {
    try {
        f();
        return QStringLiteral("(accepted)");
    } catch (const InvalidInput &e) {
        return QString::fromUtf8(e.what());
    } catch (const std::exception &e) {
        return QStringLiteral("(not InvalidInput: %1)").arg(e.what());
    }
}

QString planRefusal(const QString &plan) {
    return refusal([&] { expand(plan.toUtf8().constData()); });
}

QString writeFile(const QTemporaryDir &dir, const QString &name, const QByteArray &text) {
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(text) != text.size())
        qFatal("cannot write %s", qPrintable(path));
    return path;
}

const char *kOneEntry = R"("entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[1],"N":[1],"K":[1]}])";

/// A plan that uses every field once, for the field-by-field type test.
json fieldTemplate() {
    return json::parse(R"({"name":"t","version":1,"search_space":"DEFAULT","timeout_s":10,
        "shuffle_seed":1,"repeats":2,"inductor_every":10,"exhaustive_configs":100,"aten_only":false,"cpu":{"block_m":[16],"block_n":[16],"block_k":[16],"threads":[1]},
        "entries":[{"name":"g","ops":["mm","bmm"],"dtypes":["bf16"],"B":[2],"M":{"log_uniform":{"min":1,
        "max":64,"count":4,"seed":1,"multiple_of":2}},"N":[8],"K":[8],"a_transposed":[false],
        "b_transposed":true,"zip_sizes":false,"sample":{"count":2,"seed":1}},
        {"problems":[{"op":"mm","dtype":"fp16","B":1,"M":1,"N":2,"K":3,"a_transposed":false,"b_transposed":true}]},
        {"ops":["mm"],"dtypes":["fp32"],"M":[4],"shape_set":"../shapes/llama-class.json"}]})");
}
} // namespace

class TestSweepPlan : public QObject {
    Q_OBJECT
private slots:
    void gridIsCartesianAndDeduplicated() {
        auto p = expand(
            R"({"entries":[{"ops":["mm","bmm"],"dtypes":["bf16","fp32"],"B":[2,4],"M":[1,8],"N":[64],"K":[32,48]},
                                      {"problems":[{"op":"mm","dtype":"bf16","M":1,"N":64,"K":32}]}]})");
        // mm: 2 dtypes x 2 M x 2 K = 8; bmm: 2 dtypes x 2 B x 2 M x 2 K = 16; the explicit one is a
        // duplicate.
        QCOMPARE(p.problems.size(), size_t(24));
        QCOMPARE(p.problems[0], (GemmProblem{GemmOp::Mm, DType::BF16, 1, 1, 64, 32, false, false}));
        QCOMPARE(p.searchSpace, std::string("DEFAULT"));
    }

    // A training step's GEMMs of one nn.Linear layer (N=3072 out, K=1024 in) at 4,096 tokens:
    // forward x W^T, dX = dY W (B row-major), dW^T = X^T dY (A column-major); addmm's backward is mm.
    void passesAreATrainingStepsGemms() {
        auto p = expand(
            R"({"entries":[{"ops":["addmm"],"dtypes":["bf16"],"M":[4096],"N":[3072],"K":[1024],"b_transposed":true,
                            "passes":["forward","grad_input","grad_weight"]},
                           {"ops":["bmm"],"dtypes":["fp16"],"B":[16],"M":[512],"N":[512],"K":[64],
                            "passes":["grad_weight"]}]})");
        QCOMPARE(p.problems.size(), size_t(4));
        QCOMPARE(p.problems[0], (GemmProblem{GemmOp::Addmm, DType::BF16, 1, 4096, 3072, 1024, false, true}));
        QCOMPARE(p.problems[1], (GemmProblem{GemmOp::Mm, DType::BF16, 1, 4096, 1024, 3072, false, false}));
        QCOMPARE(p.problems[2], (GemmProblem{GemmOp::Mm, DType::BF16, 1, 1024, 3072, 4096, true, false}));
        QCOMPARE(p.problems[3], (GemmProblem{GemmOp::Bmm, DType::FP16, 16, 64, 512, 512, true, false}));
        QVERIFY(
            planRefusal(
                R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[4],"N":[5],"K":[1],"passes":["dgrad"]}]})")
                .contains("field 'passes' has unknown value \"dgrad\"; expected one of forward, grad_input, "
                          "grad_weight"));
    }

    void logUniformIsSeededAndInRange() {
        const char *text = R"({"entries":[{"ops":["mm"],"dtypes":["fp16"],
            "M":{"log_uniform":{"min":1,"max":8192,"count":200,"seed":7}},"N":[128],"K":[128]}]})";
        auto a = expand(text), b = expand(text);
        QCOMPARE(a.problems, b.problems);
        std::set<int64_t> ms;
        for (auto &p : a.problems) {
            QVERIFY(p.m >= 1 && p.m <= 8192);
            ms.insert(p.m);
        }
        QVERIFY(ms.size() > 100);                         // dedup of equal draws; still spread
        QVERIFY(*ms.begin() < 16 && *ms.rbegin() > 2048); // log-uniform reaches both ends
        auto c = expand(R"({"entries":[{"ops":["mm"],"dtypes":["fp16"],
            "M":{"log_uniform":{"min":1,"max":8192,"count":200,"seed":8}},"N":[128],"K":[128]}]})");
        QVERIFY(c.problems != a.problems);
    }

    void shapeSetAndSampleAndShuffle() {
        auto full = expand(
            R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[1,16],"shape_set":"../shapes/llama-class.json","b_transposed":[true]}]})");
        QCOMPARE(full.problems.size(), size_t(2 * 17));
        QCOMPARE(full.problems[0].n, 3072);
        QVERIFY(full.problems[0].bTransposed);
        auto sampled = expand(
            R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[1,16],"shape_set":"../shapes/llama-class.json","sample":{"count":5,"seed":3}}]})");
        QCOMPARE(sampled.problems.size(), size_t(5));
        auto shuffled = expand(
            R"({"shuffle_seed":1,"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[1,16],"shape_set":"../shapes/llama-class.json","b_transposed":[true]}]})");
        QCOMPARE(shuffled.problems.size(), full.problems.size());
        QVERIFY(shuffled.problems != full.problems);
        auto a = shuffled.problems, b = full.problems;
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        QCOMPARE(a, b);
    }

    void badPlansNameEntryAndField_data() {
        QTest::addColumn<QString>("plan");
        QTest::addColumn<QString>("message");
        QTest::newRow("M=0")
            << R"({"entries":[{"name":"x","ops":["mm"],"dtypes":["bf16"],"M":[0],"N":[1],"K":[1]}]})"
            << "entries[0] (x): field 'M' has 0; sizes must be at least 1";
        QTest::newRow("negative N")
            << R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[4],"N":[-5],"K":[1]}]})"
            << "entries[0]: field 'N' has -5";
        QTest::newRow("unknown op")
            << R"({"entries":[{},{"ops":["gemv"],"dtypes":["bf16"],"M":[4],"N":[5],"K":[1]}]})"
            << "entries[0]: field 'ops' must be a non-empty list";
        QTest::newRow("unknown op 2")
            << R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[4],"N":[5],"K":[1]},{"name":"y","ops":["gemv"],"dtypes":["bf16"],"M":[4],"N":[5],"K":[1]}]})"
            << "entries[1] (y): field 'ops' has unknown value \"gemv\"";
        QTest::newRow("unknown dtype")
            << R"({"entries":[{"ops":["mm"],"dtypes":["fp8"],"M":[4],"N":[5],"K":[1]}]})"
            << "entries[0]: field 'dtypes' has unknown value \"fp8\"";
        QTest::newRow("explicit M=0")
            << R"({"entries":[{"problems":[{"op":"mm","dtype":"bf16","M":4,"N":4,"K":4},{"op":"mm","dtype":"bf16","M":0,"N":4,"K":4}]}]})"
            << "entries[0] problems[1]: field 'M' has 0";
        QTest::newRow("search space")
            << R"({"search_space":"FAST","entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[4],"N":[5],"K":[1]}]})"
            << "field 'search_space' has unknown value \"FAST\"";
        QTest::newRow("no entries") << R"({"entries":[]})"
                                    << "field 'entries' must be a non-empty list";
        QTest::newRow("missing K") << R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[4],"N":[5]}]})"
                                   << "entries[0]: field 'K' is missing";
        QTest::newRow("inductor_every")
            << R"({"inductor_every":-1,"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[4],"N":[5],"K":[1]}]})"
            << "plan: field 'inductor_every' must be an integer >= 0 and <= 1000000, got -1";
        QTest::newRow("exhaustive_configs")
            << R"({"exhaustive_configs":"many","entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[4],"N":[5],"K":[1]}]})"
            << "plan: field 'exhaustive_configs'";
        QTest::newRow("aten_only")
            << R"({"aten_only":1,"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[4],"N":[5],"K":[1]}]})"
            << "plan: field 'aten_only' must be true or false, got 1";
        QTest::newRow("bad log_uniform")
            << R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":{"log_uniform":{"min":0,"max":4,"count":2}},"N":[5],"K":[1]}]})"
            << "field 'M.log_uniform.min' must be an integer >= 1";
    }
    // Which problems run Inductor's own benchmark: about one in n, by the problem alone (so the
    // same problems whatever the order, shards or workers), all at 1, none at 0, never EXHAUSTIVE.
    void inductorBenchmarkEveryNthProblem() {
        auto planWith = [](int every, const char *space) {
            return SweepPlan::parse(
                fmt::format(R"({{"inductor_every":{},"search_space":"{}","entries":[{{"ops":["mm"],
                "dtypes":["bf16"],"M":{{"log_uniform":{{"min":1000,"max":10000000,"count":2000,"seed":3}}}},"N":[4096],
                "K":[4096],"b_transposed":true}}]}})",
                            every, space),
                ".");
        };
        const auto five = planWith(5, "DEFAULT");
        QVERIFY(five.problems.size() > 1500);
        int chosen = 0;
        for (const auto &p : five.problems)
            chosen += five.inductorBenchmarkFor(p);
        const double share = double(chosen) / double(five.problems.size());
        QVERIFY2(share > 0.15 && share < 0.25, qPrintable(QString::number(share)));
        const auto one = planWith(1, "DEFAULT"), none = planWith(0, "DEFAULT"),
                   exhaustive = planWith(1, "EXHAUSTIVE");
        for (const auto &p : five.problems) {
            QVERIFY(one.inductorBenchmarkFor(p));
            QVERIFY(!none.inductorBenchmarkFor(p));
            QVERIFY(!exhaustive.inductorBenchmarkFor(p));
        }
        QCOMPARE(
            SweepPlan::parse(R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[4],"N":[5],"K":[1]}]})", ".")
                .inductorEvery,
            1); // the default: every problem, as before the field existed
    }

    void badPlansNameEntryAndField() {
        QFETCH(QString, plan);
        QFETCH(QString, message);
        const QString got = planRefusal(plan);
        QVERIFY2(got.contains(message), qPrintable(got));
    }

    // `diode plan --expand` is the only expander the worker sees: every shipped plan's lines are
    // problem JSON with the plan's search space and name, as many as --count says, in plan order.
    void expandWritesProblemLines_data() {
        QTest::addColumn<QString>("plan");
        const QDir dir(testutil::sourcePath("resources/plans"));
        for (const auto &f : dir.entryList({"*.json"}))
            QTest::newRow(qPrintable(f)) << dir.filePath(f);
    }
    void expandWritesProblemLines() {
        QFETCH(QString, plan);
        QTemporaryDir tmp;
        const QString out = tmp.filePath("problems.jsonl");
        QString count, err;
        QCOMPARE(testutil::runCli({"plan", plan, "--count"}, &count, &err), 0);
        QCOMPARE(testutil::runCli({"plan", plan, "--expand", "--out", out}, nullptr, &err), 0);
        const auto lines = QString::fromUtf8(testutil::fileBytes(out)).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(QString::number(lines.size()), count.trimmed());
        const auto cpp = SweepPlan::load(plan.toStdString());
        QCOMPARE(size_t(lines.size()), cpp.problems.size());
        for (int i = 0; i < lines.size(); ++i) {
            const auto j = json::parse(lines[i].toStdString());
            QCOMPARE(problemFromJson(j, "line"), cpp.problems[size_t(i)]);
            QCOMPARE(j.at("search_space").get<std::string>(), cpp.searchSpace);
            QCOMPARE(j.at("plan").get<std::string>(), cpp.name);
        }
        QVERIFY(!QFile::exists(out + ".partial"));
        // Standard output gets the same lines.
        QString stdoutLines;
        QCOMPARE(testutil::runCli({"plan", plan, "--expand"}, &stdoutLines), 0);
        QCOMPARE(stdoutLines.toUtf8(), testutil::fileBytes(out));
    }

    void expandedLineCarriesSearchSpaceAndName() {
        auto p = expand(
            R"({"name":"t","search_space":"EXHAUSTIVE","entries":[{"ops":["bmm"],"dtypes":["fp16"],"B":[3],"M":[8],"N":[16],"K":[32]}]})");
        std::ostringstream os;
        QCOMPARE(writeExpandedProblems(p, os), int64_t(1));
        const auto j = json::parse(os.str());
        QCOMPARE(j.at("search_space").get<std::string>(), std::string("EXHAUSTIVE"));
        QCOMPARE(j.at("plan").get<std::string>(), std::string("t"));
        QCOMPARE(problemFromJson(j, "line"),
                 (GemmProblem{GemmOp::Bmm, DType::FP16, 3, 8, 16, 32, false, false}));
    }

    // Hardening (the hostile-input issue). Each row was accepted, crashed or showed a library
    // message before.
    void hostilePlansAreRefusedNamingTheField_data() {
        QTest::addColumn<QString>("plan");
        QTest::addColumn<QString>("message");
        const QString one = kOneEntry;
        // repeats: 2^31 crashed the sweep, 2^32+1 became 1.
        QTest::newRow("repeats 2^31")
            << "{\"repeats\":2147483648," + one + "}"
            << "plan: field 'repeats' must be an integer >= 1 and <= 1000, got 2147483648";
        QTest::newRow("repeats 2^32+1")
            << "{\"repeats\":4294967297," + one + "}"
            << "field 'repeats' must be an integer >= 1 and <= 1000, got 4294967297";
        QTest::newRow("repeats 1001") << "{\"repeats\":1001," + one + "}"
                                      << "field 'repeats' must be an integer";
        QTest::newRow("repeats 2^64") << "{\"repeats\":18446744073709551615," + one + "}"
                                      << "field 'repeats' must be an integer";
        // Sizes: counted before anything is allocated.
        QTest::newRow("log_uniform 1e8")
            << R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":{"log_uniform":{"min":1,"max":8192,"count":100000000}},"N":[1],"K":[1]}]})"
            << "entries[0]: field 'M.log_uniform.count' must be an integer >= 1 and <= 1000000, got "
               "100000000";
        QTest::newRow("log_uniform 1e12")
            << R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[1],"N":{"log_uniform":{"min":1,"max":8192,"count":1000000000000}},"K":[1]}]})"
            << "field 'N.log_uniform.count' must be an integer >= 1 and <= 1000000";
        QTest::newRow("log_uniform grid")
            << R"({"entries":[{"name":"big","ops":["mm"],"dtypes":["bf16"],"M":{"log_uniform":{"min":1,"max":8192,"count":1000000}},"N":{"log_uniform":{"min":1,"max":8192,"count":1000000}},"K":[1]}]})"
            << "entries[0] (big): fields ops 1 x dtypes 1 x B 1 x M 1000000 x N 1000000 x K 1 x a_transposed "
               "1 x "
               "b_transposed 1 make 1000000000000 problems; a plan may expand to at most 1000000 problems";
        QTest::newRow("size above 2^31-1")
            << R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[2147483648],"N":[1],"K":[1]}]})"
            << "entries[0]: field 'M' has 2147483648; at most 2147483647 is allowed";
        QTest::newRow("size 2^64-1")
            << R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[1],"N":[18446744073709551615],"K":[1]}]})"
            << "entries[0]: field 'N' has 18446744073709551615; at most";
        QTest::newRow("cpu grid") << "{\"cpu\":{\"block_m\":[1,2,3,4,5,6,7,8],\"block_n\":[1,2,3,4,5,6,7,8],"
                                     "\"block_k\":[1,2,3,4,5,6,7,8],\"threads\":[1,2,3,4,5,6,7,8,9]}," +
                                         one + "}"
                                  << "plan: field 'cpu' makes 4608 configurations";
        QTest::newRow("cpu threads") << "{\"cpu\":{\"threads\":[100000]}," + one + "}"
                                     << "plan: field 'cpu.threads' has 100000; at most 256";
        QTest::newRow("timeout a year") << "{\"timeout_s\":3.2e7," + one + "}"
                                        << "plan: field 'timeout_s' must be a number > 0 and <= 86400";
        // Types: each of these showed "[json.exception.type_error.302]".
        QTest::newRow("name 5") << "{\"name\":5," + one + "}"
                                << "plan: field 'name' must be a string, got 5";
        QTest::newRow("search_space 5")
            << "{\"search_space\":5," + one + "}"
            << "plan: field 'search_space' has unknown value 5; expected one of DEFAULT";
        QTest::newRow("zip_sizes yes")
            << R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[1],"N":[1],"K":[1],"zip_sizes":"yes"}]})"
            << "entries[0]: field 'zip_sizes' must be true or false, got \"yes\"";
        QTest::newRow("seed x")
            << R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":{"log_uniform":{"min":1,"max":9,"count":3,"seed":"x"}},"N":[1],"K":[1]}]})"
            << "entries[0]: field 'M.log_uniform.seed' must be an integer >= 0 and < 2^64, got \"x\"";
        QTest::newRow("entry name 5")
            << R"({"entries":[{"name":5,"ops":["mm"],"dtypes":["bf16"],"M":[1],"N":[1],"K":[1]}]})"
            << "entries[0]: field 'name' must be a string, got 5";
        QTest::newRow("number overflow")
            << R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[1e999],"N":[1],"K":[1]}]})"
            << "plan: field 'entries[0].M[0]' has a number out of range (number overflow parsing '1e999'); "
               "expected "
               "a finite number";
        // Validation gaps.
        QTest::newRow("B on mm (grid)")
            << R"({"entries":[{"ops":["mm","addmm"],"dtypes":["bf16"],"B":[4],"M":[1],"N":[1],"K":[1]}]})"
            << "entries[0]: field 'B' has 4 but none of 'ops' is batched";
        QTest::newRow("B on mm (explicit)")
            << R"({"entries":[{"problems":[{"op":"mm","dtype":"bf16","B":4,"M":1,"N":1,"K":1}]}]})"
            << "entries[0] problems[0]: field 'B' is 4 but op 'mm' is not batched";
        QTest::newRow("duplicate entries") << "{\"entries\":[{\"ops\":[\"gemv\"]}]," + one + "}"
                                           << "plan: key 'entries' appears twice in the top-level object";
        QTest::newRow("duplicate M")
            << R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[0],"M":[1],"N":[1],"K":[1]}]})"
            << "plan: key 'M' appears twice in 'entries[0]'";
        QTest::newRow("multiple_of above max")
            << R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":{"log_uniform":{"min":1,"max":100,"count":3,"multiple_of":128}},"N":[1],"K":[1]}]})"
            << "entries[0]: field 'M.log_uniform.multiple_of' is 128, more than max 100";
        QTest::newRow("negative log_uniform seed")
            << R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":{"log_uniform":{"min":1,"max":100,"count":3,"seed":-1}},"N":[1],"K":[1]}]})"
            << "entries[0]: field 'M.log_uniform.seed' must be an integer >= 0 and < 2^64, got -1";
        QTest::newRow("negative sample seed")
            << R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[1,2],"N":[1],"K":[1],"sample":{"count":1,"seed":-3}}]})"
            << "entries[0]: field 'sample.seed' must be an integer >= 0";
        QTest::newRow("negative shuffle seed") << "{\"shuffle_seed\":-1," + one + "}"
                                               << "plan: field 'shuffle_seed' must be an integer >= 0";
        QTest::newRow("zip with shape_set")
            << R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":[1],"shape_set":"../shapes/llama-class.json","zip_sizes":true}]})"
            << "entries[0]: field 'zip_sizes' pairs M, N and K; it cannot be used with 'shape_set'";
    }
    void hostilePlansAreRefusedNamingTheField() {
        QFETCH(QString, plan);
        QFETCH(QString, message);
        QElapsedTimer t;
        t.start();
        const QString got = planRefusal(plan);
        QVERIFY2(got.contains(message), qPrintable(got));
        QVERIFY2(t.elapsed() < 5000, "refused only after expanding"); // was 35 s and 7 GB for 1e8
    }

    void limitsAreInclusive() {
        QCOMPARE(expand((std::string("{\"repeats\":1000,") + kOneEntry + "}").c_str()).repeats, 1000);
        // A grid of exactly 1,000,000 problems is a plan; one more problem in another entry is not.
        std::string r = "[";
        for (int i = 1; i <= 100; ++i)
            r += std::to_string(i) + (i < 100 ? "," : "]");
        const std::string grid =
            R"({"ops":["mm"],"dtypes":["bf16"],"M":)" + r + ",\"N\":" + r + ",\"K\":" + r + "}";
        QCOMPARE(expand(("{\"entries\":[" + grid + "]}").c_str()).problems.size(), size_t(1'000'000));
        const QString got = planRefusal(QString::fromStdString(
            "{\"entries\":[" + grid +
            R"(,{"name":"one more","problems":[{"op":"mm","dtype":"fp16","M":1,"N":1,"K":1}]}]})"));
        QVERIFY2(
            got.contains("entries[1] (one more): the 'problems' list would make 1 problems, 1000001 with the "
                         "entries before it; a plan may expand to at most 1000000"),
            qPrintable(got));
        const auto lu = expand(
            R"({"entries":[{"ops":["mm"],"dtypes":["bf16"],"M":{"log_uniform":{"min":1,"max":2147483647,"count":1000000,"multiple_of":2147483647}},"N":[1],"K":[1]}]})");
        QCOMPARE(lu.problems.size(), size_t(1)); // every draw rounds to multiple_of == max
        QCOMPARE(lu.problems[0].m, int64_t(2147483647));
    }

    // Whatever type a field holds, the answer is a refusal naming it, never a library message.
    void everyFieldOfEveryTypeIsRefusedByName_data() {
        QTest::addColumn<QString>("pointer");
        QTest::addColumn<QString>("value");
        const json tmpl = fieldTemplate();
        QVERIFY(!SweepPlan::fromJson(tmpl, DIODE_SOURCE_DIR "/resources/plans").problems.empty());
        const char *values[] = {"5",     "-1",       "0",       "1.5", "\"x\"", "true",
                                "null",  "[]",       "[\"x\"]", "{}",  "1e300", "18446744073709551615",
                                "[[1]]", "{\"a\":1}"};
        std::set<std::string> pointers; // every leaf and every array or object on its way
        const json flat = tmpl.flatten();
        for (const auto &item : flat.items())
            for (json::json_pointer p(item.key()); !p.empty(); p = p.parent_pointer())
                pointers.insert(p.to_string());
        for (const auto &p : pointers)
            for (const char *v : values)
                QTest::addRow("%s = %s", p.c_str(), v) << QString::fromStdString(p) << QString::fromLatin1(v);
    }
    void everyFieldOfEveryTypeIsRefusedByName() {
        QFETCH(QString, pointer);
        QFETCH(QString, value);
        json plan = fieldTemplate();
        plan[json::json_pointer(pointer.toStdString())] = json::parse(value.toStdString());
        const QString got = refusal([&] { SweepPlan::fromJson(plan, DIODE_SOURCE_DIR "/resources/plans"); });
        if (got == "(accepted)")
            return;
        QVERIFY2(!got.startsWith("(not InvalidInput"), qPrintable(got));
        QVERIFY2(!got.contains("json.exception") && !got.contains("unexpected type"), qPrintable(got));
        QVERIFY2(got.contains("field '") || got.contains("must be"), qPrintable(got));
    }

    void deepNestingIsRefusedNotACrash() {
        // 100,000 levels overflowed the stack (SIGSEGV) when the plan was copied.
        const std::string deep = "{\"entries\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
        QString got = refusal([&] { SweepPlan::parse(deep, "."); });
        QVERIFY2(got.contains("plan: field 'entries[0][0]") &&
                     got.contains("nests arrays and objects deeper than 64 "
                                  "levels"),
                 qPrintable(got));
        QTemporaryDir dir;
        const QString path = writeFile(dir, "deep.json", QByteArray::fromStdString(deep));
        QString err;
        QCOMPARE(testutil::runCli({"plan", path, "--count"}, nullptr, &err), 2);
        QVERIFY2(err.contains(path + ": field 'entries[0][0]"), qPrintable(err));
        // 64 levels are JSON a plan reader accepts; 65 are not.
        QCOMPARE(parseJsonBounded(std::string(64, '[') + std::string(64, ']'), "x").is_array(), true);
        got = refusal([] { parseJsonBounded(std::string(65, '[') + std::string(65, ']'), "x"); });
        QVERIFY2(got.contains("deeper than 64 levels"), qPrintable(got));
    }

    void jsonReaderNamesPathAndRefusesWhatIsNotAFile() {
        QString got = refusal([] { parseJsonBounded(R"({"a":[1,{"b":2,"b":3}]})", "doc"); });
        QVERIFY2(got.startsWith("doc: key 'b' appears twice in 'a[1]'"), qPrintable(got));
        got = refusal([] { parseJsonBounded(R"({"a":[1,2,-1e400]})", "doc"); });
        QVERIFY2(got.startsWith("doc: field 'a[2]' has a number out of range"), qPrintable(got));
        got = refusal([] { parseJsonBounded("{\"a\":[1,2,}", "doc"); });
        QVERIFY2(got.startsWith("doc: not valid JSON (near field 'a[2]'): parse error at line 1"),
                 qPrintable(got));
        QVERIFY2(!got.contains("json.exception"), qPrintable(got));
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkdir("shapes.json"));
        got = refusal([&] { readJsonFile(dir.filePath("shapes.json").toStdString(), "doc"); });
        QVERIFY2(got.contains("is a directory; expected a JSON file"), qPrintable(got));
        got = refusal([&] { readJsonFile(dir.filePath("missing.json").toStdString(), "doc"); });
        QVERIFY2(got.contains("no such file"), qPrintable(got));
        const QString big = writeFile(dir, "big.json", QByteArray(2000, ' ') + "{}");
        got = refusal([&] { readJsonFile(big.toStdString(), "doc", JsonLimits{64, 1000, true}); });
        QVERIFY2(got.contains("is 2002 bytes; at most 1000 bytes are read"), qPrintable(got));
    }

    void shapeSetThatIsADirectoryNamesFileEntryAndField() {
        // Was "basic_filebuf::underflow error reading the file: Is a directory".
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkdir("shapes.json"));
        const QString plan = writeFile(
            dir, "plan.json",
            R"({"entries":[{"name":"s","ops":["mm"],"dtypes":["bf16"],"M":[1],"shape_set":"shapes.json"}]})");
        QString err;
        QCOMPARE(testutil::runCli({"plan", plan, "--count"}, nullptr, &err), 2);
        QVERIFY2(err.contains(plan + ": entries[0] (s): field 'shape_set' ('shapes.json'): '") &&
                     err.contains("is a directory; expected a JSON file"),
                 qPrintable(err));
        QVERIFY2(!err.contains("basic_filebuf"), qPrintable(err));
    }

    void cliRefusesBadInputWithExitCode2() {
        QTemporaryDir dir;
        const QString plan = writeFile(dir, "plan.json", "{\"name\":5," + QByteArray(kOneEntry) + "}");
        QString out, err;
        QCOMPARE(testutil::runCli({"plan", plan, "--expand"}, &out, &err), 2);
        QVERIFY(out.isEmpty());
        QVERIFY2(err.startsWith("error: " + plan + ": plan: field 'name' must be a string, got 5"),
                 qPrintable(err));
        const QString good = writeFile(dir, "good.json", "{" + QByteArray(kOneEntry) + "}");
        QCOMPARE(testutil::runCli({"plan", good, "--out", dir.filePath("x.jsonl")}, nullptr, &err),
                 2); // needs --expand
        QVERIFY(!QFile::exists(dir.filePath("x.jsonl")));
    }
};

QTEST_GUILESS_MAIN(TestSweepPlan)
#include "tst_sweepplan.moc"
