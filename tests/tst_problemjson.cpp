#include "testutil.h"

#include "diode/problemjson.h"

using namespace diode;

class TestProblemJson : public QObject {
    Q_OBJECT
private slots:
    void roundTripKeepsCandidatesAndUnknownKeys()
    {
        const std::string line =
            R"({"op":"addmm","dtype":"bf16","B":1,"M":16,"N":4096,"K":4096,"a_transposed":false,"b_transposed":true,)"
            R"("hardware":{"gpu":"NVIDIA H200"},"candidates":[{"kind":"aten","name":"extern_kernels.addmm","time_ms":0.02},)"
            R"({"kind":"triton","template":"mm","BLOCK_M":16,"BLOCK_N":128,"BLOCK_K":64,"GROUP_M":8,"num_stages":5,)"
            R"("num_warps":8,"EVEN_K":true,"NEW_PARAM":3,"time_ms":0.026},)"
            R"({"kind":"triton","template":"mm","BLOCK_M":256,"BLOCK_N":256,"BLOCK_K":128,"time_ms":null,"error":"out of resource"}]})";
        const auto rec = parseProblemLine(line, "line 1");
        QVERIFY(rec.problem.op == GemmOp::Addmm);
        QCOMPARE(rec.problem.n, 4096);
        QVERIFY(rec.problem.bTransposed);
        QCOMPARE(rec.candidates.size(), size_t(3));
        QCOMPARE(rec.candidates[1].config.blockM, 16);
        QCOMPARE(rec.candidates[1].config.extra["NEW_PARAM"].get<int>(), 3);
        QCOMPARE(*rec.candidates[1].timeMs, 0.026);
        QVERIFY(rec.candidates[2].status == MeasureStatus::Failed);
        QVERIFY(!rec.candidates[2].timeMs);
        QCOMPARE(rec.extra["hardware"]["gpu"].get<std::string>(), std::string("NVIDIA H200"));
        const auto again = parseProblemLine(toProblemLine(rec), "again");
        QCOMPARE(toProblemLine(again), toProblemLine(rec));
        QCOMPARE(again.candidates[1].config.key(), rec.candidates[1].config.key());
    }

    void configKeyIgnoresMeasurementFields()
    {
        auto a = KernelConfig::fromJson(nlohmann::json::parse(R"({"kind":"triton","template":"mm","BLOCK_M":64,"time_ms":1})"), "a");
        auto b = KernelConfig::fromJson(nlohmann::json::parse(R"({"time_ms":2,"BLOCK_M":64,"template":"mm","kind":"triton"})"), "b");
        QCOMPARE(a.key(), b.key());
        auto c = KernelConfig::fromJson(nlohmann::json::parse(R"({"kind":"triton","template":"mm","BLOCK_M":32})"), "c");
        QVERIFY(a.key() != c.key());
    }

    void badFieldsAreNamed_data()
    {
        QTest::addColumn<QString>("line");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown op") << R"({"op":"conv","dtype":"bf16","M":1,"N":1,"K":1})"
                                    << "line 3: field 'op' has unknown value \"conv\"";
        QTest::newRow("unknown dtype") << R"({"op":"mm","dtype":"int4","M":1,"N":1,"K":1})"
                                       << "line 3: field 'dtype' has unknown value \"int4\"";
        QTest::newRow("M zero") << R"({"op":"mm","dtype":"fp16","M":0,"N":1,"K":1})"
                                << "line 3: field 'M' is 0; sizes must be at least 1";
        QTest::newRow("negative K") << R"({"op":"mm","dtype":"fp16","M":4,"N":1,"K":-8})"
                                    << "line 3: field 'K' is -8";
        QTest::newRow("batched mm") << R"({"op":"mm","dtype":"fp16","B":4,"M":4,"N":1,"K":8})"
                                    << "field 'B' is 4 but op 'mm' is not batched";
        QTest::newRow("missing N") << R"({"op":"mm","dtype":"fp16","M":4,"K":8})" << "line 3: field 'N' is missing";
        QTest::newRow("unknown kind") << R"({"op":"mm","dtype":"fp16","M":4,"N":4,"K":8,"candidates":[{"kind":"cutlass"}]})"
                                      << "line 3 candidates[0]: candidate field 'kind' has unknown value \"cutlass\"";
        QTest::newRow("not json") << "{op: mm" << "line 3: not valid JSON";
    }
    void badFieldsAreNamed()
    {
        QFETCH(QString, line);
        QFETCH(QString, message);
        try {
            parseProblemLine(line.toStdString(), "line 3");
            QFAIL("accepted a bad line");
        } catch (const InvalidInput &e) {
            QVERIFY2(QString(e.what()).contains(message), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestProblemJson)
#include "tst_problemjson.moc"
