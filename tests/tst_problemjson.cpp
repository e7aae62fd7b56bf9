#include "testutil.h"

#include "diode/infer/lookuptable.h"
#include "diode/infer/problemjson.h"

#include <sstream>

using namespace diode;

class TestProblemJson : public QObject {
    Q_OBJECT
private slots:
    // Recorded decisions become Inductor's lookup table: one key per GEMM, a model's repeated
    // layers once, lines recorded without an entry counted, and two different decisions for one
    // key refused naming both lines.
    void decisionsBecomeInductorsLookupTable() {
        const std::string mm =
            R"("inductor_lookup":{"key":"NVIDIA H200+((torch.bfloat16,[64,4096],[4096,1]),)+mm",)"
            R"("configs":[{"template_id":"triton::mm","BLOCK_M":64,"num_warps":4,"template_hash":"ab"}]})";
        std::istringstream in(
            "{\"op\":\"mm\"," + mm + "}\n\n{\"op\":\"mm\"," + mm + "}\n" +
            R"({"op":"bmm","inductor_lookup":{"key":"k2","configs":[{"template_id":"aten::bmm"}]}})" +
            "\n{\"op\":\"addmm\"}\n");
        LookupTable t;
        t.add(in, "d.jsonl");
        QCOMPARE(t.table.size(), size_t(2));
        QCOMPARE((std::make_tuple(t.lines, t.repeated, t.withoutEntry)), std::make_tuple(4, 1, 1));
        QCOMPARE(t.table["k2"][0]["template_id"].get<std::string>(), std::string("aten::bmm"));
        QCOMPARE(t.table.begin().value()[0]["BLOCK_M"].get<int>(), 64);

        std::istringstream other(
            R"({"inductor_lookup":{"key":"k2","configs":[{"template_id":"triton::bmm"}]}})");
        try {
            t.add(other, "e.jsonl");
            QFAIL("a second decision for one key was accepted");
        } catch (const InvalidInput &e) {
            QVERIFY2(QString(e.what()).contains("e.jsonl:1") && QString(e.what()).contains("d.jsonl:4"),
                     e.what());
        }
        for (const char *bad : {"not json", "[1]", R"({"inductor_lookup":{"key":"","configs":[{}]}})",
                                R"({"inductor_lookup":{"key":"k","configs":[{"BLOCK_M":1}]}})"}) {
            std::istringstream b(bad);
            LookupTable fresh;
            QVERIFY_THROWS_EXCEPTION(InvalidInput, fresh.add(b, "bad.jsonl"));
        }
    }

    void roundTripKeepsCandidatesAndUnknownKeys() {
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
        // Version 1: time_ms is Inductor's autotune number, the only method of the line.
        QCOMPARE(rec.candidates[1].timings.size(), size_t(1));
        QVERIFY(rec.candidates[1].timings[0].method == TimingMethod::InductorAutotune);
        QCOMPARE(*rec.candidates[1].timeMs(TimingMethod::InductorAutotune), 0.026);
        QVERIFY(!rec.candidates[1].timeMs(TimingMethod::GraphWarm));
        QCOMPARE(rec.candidates[2].timings.size(), size_t(1));
        QVERIFY(rec.candidates[2].timings[0].method == TimingMethod::InductorAutotune);
        QVERIFY(rec.candidates[2].timings[0].status == MeasureStatus::Failed);
        QCOMPARE(rec.candidates[2].error(), std::string("out of resource"));
        QCOMPARE(rec.extra["hardware"]["gpu"].get<std::string>(), std::string("NVIDIA H200"));
        // Written as version 2; read back, the failure stays under the method it was filed under.
        const auto written = toJson(rec);
        QCOMPARE(written["version"].get<int>(), 2);
        QVERIFY(!written["candidates"][1].contains("time_ms"));
        QCOMPARE(written["candidates"][1]["times"]["inductor_autotune"].get<double>(), 0.026);
        const auto again = parseProblemLine(toJson(rec).dump(), "again");
        QCOMPARE(toJson(again).dump(), toJson(rec).dump());
        QCOMPARE(again.candidates[1].config.key(), rec.candidates[1].config.key());
        QVERIFY(again.candidates[2].timings[0].method == TimingMethod::InductorAutotune);
        QVERIFY(again.candidates[2].timings[0].status == MeasureStatus::Failed);
    }

    // baddbmm (bmm plus an addend (B, 1, N)) is read and written like bmm: its batch is kept,
    // its op name printed from the one op table, its ATen kernel and the bmm template kept.
    void baddbmmRoundTrips() {
        const std::string line =
            R"({"op":"baddbmm","dtype":"fp16","B":512,"M":1,"N":2048,"K":128,"a_transposed":false,"b_transposed":true,)"
            R"("candidates":[{"kind":"aten","name":"extern_kernels.baddbmm","times":{"graph_warm":0.011}},)"
            R"({"kind":"triton","template":"bmm","BLOCK_M":16,"BLOCK_N":64,"BLOCK_K":64,"GROUP_M":8,"num_stages":3,)"
            R"("num_warps":4,"times":{"graph_warm":0.009}}]})";
        const auto rec = parseProblemLine(line, "line 1");
        QVERIFY(rec.problem.op == GemmOp::Baddbmm);
        QCOMPARE(rec.problem.batch, 512);
        QVERIFY(rec.problem.bTransposed);
        QCOMPARE(rec.problem.label(), std::string("baddbmm fp16 512x1x2048x128 Bt"));
        // The addend (B, 1, N) is read once besides A, B and C.
        QCOMPARE(rec.problem.minBytes(), 2.0 * 512 * (1.0 * 128 + 128.0 * 2048 + 1.0 * 2048 + 2048));
        const auto written = toJson(rec);
        QCOMPARE(written["op"].get<std::string>(), std::string("baddbmm"));
        QCOMPARE(written["B"].get<int64_t>(), int64_t(512));
        const auto again = parseProblemLine(toJson(rec).dump(), "again");
        QVERIFY(again.problem == rec.problem);
        QCOMPARE(toJson(again).dump(), toJson(rec).dump());
        QCOMPARE(again.candidates[0].config.name, std::string("extern_kernels.baddbmm"));
        QCOMPARE(again.candidates[1].config.name, std::string("bmm"));
        QCOMPARE(*again.candidates[1].timeMs(TimingMethod::GraphWarm), 0.009);
        QCOMPARE(std::string(opNames()), std::string("mm, addmm, bmm, baddbmm"));
        for (GemmOp op : allOps())
            QVERIFY(parseOp(toString(op)) == op);
    }

    void cpuCandidatesOfVersion1AreCpuTimes() {
        const auto rec = parseProblemLine(
            R"({"op":"mm","dtype":"fp32","M":8,"N":8,"K":8,"candidates":[{"kind":"cpu","name":"tiled","BLOCK_M":16,)"
            R"("BLOCK_N":32,"BLOCK_K":32,"threads":2,"time_ms":0.5}]})",
            "cpu");
        QCOMPARE(rec.candidates[0].timings.size(), size_t(1));
        QVERIFY(rec.candidates[0].timings[0].method == TimingMethod::Cpu);
        QCOMPARE(*rec.candidates[0].timeMs(TimingMethod::Cpu), 0.5);
    }

    void version2TimesErrorsAndBaselines() {
        const auto rec = parseProblemLine(testutil::v2Line(16), "v2");
        QCOMPARE(rec.candidates.size(), size_t(4));
        const auto &aten = rec.candidates[0];
        QCOMPARE(*aten.timeMs(TimingMethod::GraphWarm), 0.0123);
        QCOMPARE(*aten.timeMs(TimingMethod::GraphCold), 0.0150);
        QCOMPARE(*aten.timeMs(TimingMethod::InductorAutotune), 0.0201);
        QCOMPARE(aten.timings.size(), size_t(3));
        QVERIFY(aten.error().empty());
        // Wrong result: Inductor's number stays a success, the in-graph timing is the failure.
        const auto &wrong = rec.candidates[2];
        QCOMPARE(*wrong.timeMs(TimingMethod::InductorAutotune), 0.05);
        QVERIFY(wrong.timing(TimingMethod::GraphWarm));
        QVERIFY(wrong.timing(TimingMethod::GraphWarm)->status == MeasureStatus::Failed);
        QVERIFY(QString::fromStdString(wrong.error()).startsWith("wrong result"));
        QVERIFY(!wrong.timing(TimingMethod::GraphCold));
        // Failed to compile: one failed row, graph_warm.
        const auto &broken = rec.candidates[3];
        QCOMPARE(broken.timings.size(), size_t(1));
        QVERIFY(broken.timings[0].method == TimingMethod::GraphWarm);
        QVERIFY(broken.timings[0].status == MeasureStatus::Failed);
        // Baselines: one row per (baseline, method); compile seconds and the pick on each.
        QCOMPARE(rec.baselines.size(), size_t(4));
        int picks = 0;
        for (const auto &b : rec.baselines) {
            QVERIFY(b.baseline == "default" || b.baseline == "max_autotune");
            QCOMPARE(*b.compileS, b.baseline == "default" ? 0.9 : 7.3);
            if (b.pick) {
                ++picks;
                QCOMPARE(b.pick->key(), rec.candidates[1].config.key());
            }
        }
        QCOMPARE(picks, 2);
        QVERIFY(!rec.extra.contains("baselines"));
        QVERIFY(!rec.extra.contains("version"));
        QCOMPARE(rec.extra["search_space"].get<std::string>(), std::string("DEFAULT"));

        const auto again = parseProblemLine(toJson(rec).dump(), "again");
        QCOMPARE(toJson(again).dump(), toJson(rec).dump());
        QCOMPARE(again.baselines.size(), size_t(4));
        QCOMPARE(toJson(again)["baselines"]["max_autotune"]["pick"].get<int>(), 1);
        QVERIFY(!toJson(again)["baselines"]["default"].contains("pick"));
        QVERIFY(again.candidates[3].timings[0].method == TimingMethod::GraphWarm);
    }

    void configKeyIgnoresMeasurementFields() {
        auto a = KernelConfig::fromJson(
            nlohmann::json::parse(R"({"kind":"triton","template":"mm","BLOCK_M":64,"time_ms":1})"), "a");
        auto b = KernelConfig::fromJson(
            nlohmann::json::parse(R"({"time_ms":2,"BLOCK_M":64,"template":"mm","kind":"triton"})"), "b");
        QCOMPARE(a.key(), b.key());
        auto c = KernelConfig::fromJson(
            nlohmann::json::parse(R"({"kind":"triton","template":"mm","BLOCK_M":32})"), "c");
        QVERIFY(a.key() != c.key());
        // The same kernel from a version 2 line is the same config.
        auto d = KernelConfig::fromJson(
            nlohmann::json::parse(
                R"({"kind":"triton","template":"mm","BLOCK_M":64,"times":{"graph_warm":1},"error":"x"})"),
            "d");
        QCOMPARE(d.key(), a.key());
    }

    void badFieldsAreNamed_data() {
        QTest::addColumn<QString>("line");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown op")
            << R"({"op":"conv","dtype":"bf16","M":1,"N":1,"K":1})"
            << "line 3: field 'op' has unknown value \"conv\"; expected one of mm, addmm, bmm, baddbmm";
        QTest::newRow("unknown dtype") << R"({"op":"mm","dtype":"int4","M":1,"N":1,"K":1})"
                                       << "line 3: field 'dtype' has unknown value \"int4\"";
        QTest::newRow("M zero") << R"({"op":"mm","dtype":"fp16","M":0,"N":1,"K":1})"
                                << "line 3: field 'M' is 0; sizes must be at least 1";
        QTest::newRow("negative K") << R"({"op":"mm","dtype":"fp16","M":4,"N":1,"K":-8})"
                                    << "line 3: field 'K' is -8";
        // Refused as plans refuse it, not imported and ranked (2.6e9 ms).
        QTest::newRow("M 2^63-1")
            << R"({"op":"mm","dtype":"fp16","M":9223372036854775807,"N":1,"K":1})"
            << "line 3: field 'M' is 9223372036854775807; sizes must be at most 2147483647";
        QTest::newRow("B 2^31") << R"({"op":"bmm","dtype":"fp16","B":2147483648,"M":1,"N":1,"K":1})"
                                << "line 3: field 'B' is 2147483648; sizes must be at most 2147483647";
        QTest::newRow("baddbmm B zero") << R"({"op":"baddbmm","dtype":"bf16","B":0,"M":1,"N":8,"K":8})"
                                        << "line 3: field 'B' is 0; sizes must be at least 1";
        QTest::newRow("batched mm") << R"({"op":"mm","dtype":"fp16","B":4,"M":4,"N":1,"K":8})"
                                    << "field 'B' is 4 but op 'mm' is not batched";
        QTest::newRow("missing N") << R"({"op":"mm","dtype":"fp16","M":4,"K":8})"
                                   << "line 3: field 'N' is missing";
        QTest::newRow("unknown kind")
            << R"({"op":"mm","dtype":"fp16","M":4,"N":4,"K":8,"candidates":[{"kind":"cutlass"}]})"
            << "line 3 candidates[0]: candidate field 'kind' has unknown value \"cutlass\"";
        QTest::newRow("not json") << "{op: mm"
                                  << "line 3: not valid JSON";
        QTest::newRow("BLOCK_M 2^40")
            << R"({"op":"mm","dtype":"fp16","M":4,"N":4,"K":8,"candidates":[{"kind":"triton","template":"mm","BLOCK_M":1099511627776}]})"
            << "line 3 candidates[0]: candidate field 'BLOCK_M' must be an integer in 0..1048576, got "
               "1099511627776";
        QTest::newRow("num_warps 2^64-1")
            << R"({"op":"mm","dtype":"fp16","M":4,"N":4,"K":8,"candidates":[{"kind":"triton","template":"mm","num_warps":18446744073709551615}]})"
            << "candidate field 'num_warps' must be an integer in 0..1048576, got 18446744073709551615";
        QTest::newRow("newer version") << R"({"version":3,"op":"mm","dtype":"fp16","M":4,"N":4,"K":8})"
                                       << "line 3: problem JSON version 3; this build reads up to 2";
        QTest::newRow("unknown method")
            << R"({"version":2,"op":"mm","dtype":"fp16","M":4,"N":4,"K":8,"candidates":[{"kind":"aten","name":"a","times":{"graph_hot":1}}]})"
            << "line 3 candidates[0]: field 'times' has unknown timing method \"graph_hot\"";
        QTest::newRow("negative time")
            << R"({"version":2,"op":"mm","dtype":"fp16","M":4,"N":4,"K":8,"candidates":[{"kind":"aten","name":"a","times":{"graph_cold":-1}}]})"
            << "line 3 candidates[0]: field 'times.graph_cold' must be a positive number";
        QTest::newRow("pick out of range")
            << R"({"version":2,"op":"mm","dtype":"fp16","M":4,"N":4,"K":8,"candidates":[],"baselines":{"max_autotune":{"graph_warm":1,"pick":0}}})"
            << "line 3 baselines.max_autotune: field 'pick' must index the 0 candidates, got 0";
    }
    void badFieldsAreNamed() {
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
