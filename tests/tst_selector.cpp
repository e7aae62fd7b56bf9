#include "testutil.h"

#include "diode/infer/modelpackage.h"
#include "diode/infer/problemjson.h"
#include "diode/infer/selector.h"

#include <fstream>
#include <sstream>

using namespace diode;

namespace {

std::string sourceFile(const char *relative) {
    return testutil::sourcePath(relative).toStdString();
}

std::string bytesOf(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

KernelConfig aten(const std::string &name) {
    KernelConfig c;
    c.kind = "aten";
    c.name = name;
    return c;
}

KernelConfig triton(int m, int n, int k, int stages, const std::string &tpl = "mm") {
    KernelConfig c;
    c.kind = "triton";
    c.name = tpl;
    c.blockM = m, c.blockN = n, c.blockK = k, c.groupM = 8, c.numStages = stages, c.numWarps = 4;
    return c;
}

GemmProblem mm(int64_t m, int64_t n, int64_t k, bool aT = false) {
    GemmProblem p;
    p.op = GemmOp::Mm;
    p.m = m, p.n = n, p.k = k, p.aTransposed = aT, p.bTransposed = true;
    return p;
}

// ATen and five Triton configs of an mm, the last two over an H200's shared memory in bf16.
const std::vector<KernelConfig> kCandidates{aten("extern_kernels.mm"), triton(16, 64, 64, 3),
                                            triton(64, 64, 32, 4),     triton(64, 128, 64, 3),
                                            triton(128, 128, 128, 4),  triton(256, 128, 128, 3)};

} // namespace

// The GEMM kernel decision (core/infer/diode/infer/selector.h), made once for the plugin, `diode eval`,
// the Validate page, calibration and `diode characterise`: its gates, exclusions, cache, margin and
// counters, on the shipped packages.
class TestSelector : public QObject {
    Q_OBJECT
    const std::string m_warm = sourceFile("trained_models/h200/h200-ingraph-warm.diode");
    const std::string m_cold = sourceFile("trained_models/h200/h200-ingraph-cold.diode");
    const std::string m_schema2 = sourceFile("tests/data/packages/h200-ingraph-warm-schema2.diode");

private slots:
    // A package named alone decides with its own calibrated margin, in every caller: a cold package
    // is cold (the plugin used the warm default for it before); a regime asked for, or a margin,
    // wins.
    void theMarginIsThePackagesForTheRegimeInUse() {
        const auto cold = ModelPackage::load(m_cold);
        QVERIFY(Selector(cold, {}).regime() == Regime::Cold);
        QCOMPARE(Selector(cold, {}).policy().margin, packageMargin(cold.manifest(), Regime::Cold));
        QCOMPARE(cold.manifest()[kSelectionPolicyKey]["regime"], nlohmann::json("cold"));
        SelectorOptions warm;
        warm.regime = Regime::Warm;
        QCOMPARE(Selector(cold, warm).policy().margin, defaultMargin(Regime::Warm));
        SelectorOptions given;
        given.margin = 0.3;
        QCOMPARE(Selector(cold, given).policy().margin, 0.3);
        const auto old = ModelPackage::load(m_schema2); // no calibrated margin: the regime's default
        QCOMPARE(Selector(old, {}).policy().margin, defaultMargin(Regime::Warm));
        QCOMPARE(Selector(old, {}).describe()["regime"], nlohmann::json("warm"));
    }

    // What a selector decides by a model (the plugin turns Inductor's first-run tuning off only where
    // kernel configurations are): a package without decision models, the GEMM kernel alone.
    void itSaysWhichDecisionsAModelMakes() {
        QCOMPARE(Selector(ModelPackage::load(m_schema2), {}).describe()["decides"],
                 nlohmann::json({"gemm_kernel"}));
        QCOMPARE(Selector(ModelPackage::load(m_cold), {}).describe()["decides"],
                 nlohmann::json({"gemm_kernel", "small_m_form", "kernel_config"}));
    }

    // Each gate keeps plain's kernel with its reason, in order; a problem like the training data's
    // is decided.
    void gatesKeepPlainsKernelWithTheirReason() {
        const auto old = ModelPackage::load(m_schema2);
        Selector s(old, {});
        const auto reason = [&](const GemmProblem &p, const std::vector<KernelConfig> &c,
                                GemmContext ctx = {}) {
            const Decision d = s.decide(p, c, ctx);
            if (!d.selected && d.kept != (d.plain ? std::vector<size_t>{*d.plain} : std::vector<size_t>{}))
                return std::string("plain's kernel not kept");
            return d.notSelected;
        };
        QCOMPARE(reason(mm(64, 1024, 4096), {aten("extern_kernels.mm")}), std::string("only_aten"));
        GemmProblem baddbmm = mm(64, 1024, 4096);
        baddbmm.op = GemmOp::Baddbmm;
        QCOMPARE(reason(baddbmm, kCandidates), std::string("unscorable_op_baddbmm")); // schema 2: no input
        QCOMPARE(reason(mm(64, 1024, 4096, true), kCandidates),
                 std::string("unscorable_unseen_a_transposed"));
        // A template no model describes, and no ATen kernel: nothing to score, nothing plain to keep.
        QCOMPARE(reason(mm(64, 1024, 4096), {triton(64, 64, 32, 3, "mm_persistent_tma")}),
                 std::string("unscorable_no_known_candidates"));
        QCOMPARE(reason(mm(64, 1024, 4096), kCandidates), std::string());

        // A package that knows baddbmm: an addend that varies along M is not the schema's op.
        const auto now = ModelPackage::load(m_warm);
        Selector current(now, {});
        baddbmm.op = GemmOp::Baddbmm;
        baddbmm.batch = 8;
        GemmContext full;
        full.addendVariesAlongM = true;
        QCOMPARE(current.decide(baddbmm, kCandidates, full).notSelected,
                 std::string("unscorable_baddbmm_full_addend"));
        QVERIFY(current.decide(baddbmm, kCandidates).selected);
        SelectorOptions notAsked;
        notAsked.ops = {"mm", "addmm"};
        QCOMPARE(Selector(now, notAsked).decide(baddbmm, kCandidates).notSelected,
                 std::string("unscorable_op_baddbmm"));

        // As Inductor names them: an op or dtype no model knows is a reason, not an error.
        GemmLowering g{"int_mm", "int8", 1, 64, 1024, 4096, false, true, {}};
        QCOMPARE(current.decide(g, kCandidates).notSelected, std::string("unscorable_op_int_mm"));
        g.op = "mm";
        QCOMPARE(current.decide(g, kCandidates).notSelected, std::string("unscorable_dtype"));
        g.dtype = "bfloat16";
        QVERIFY(current.decide(g, kCandidates).selected);
        g.m = 0;
        QVERIFY_THROWS_EXCEPTION(InvalidInput, current.decide(g, kCandidates));
    }

    // Never kept, however fast predicted: a config over the device's shared memory, and one the
    // package's data found wrong on problems of this op, dtype and layout.
    void foundWrongOrTooBigIsNeverKept() {
        const std::string bytes = bytesOf(m_warm);
        const auto pkg = ModelPackage::fromBytes(bytes);
        SelectorOptions all;
        all.topK = 100, all.margin = 0.0;
        Selector s(pkg, all);
        QCOMPARE(kCandidates[4].tileLoadBytes(2), int64_t(262144)); // 128x128x128, 4 stages, bf16
        const Decision free = s.decide(mm(64, 1024, 4096), kCandidates);
        QCOMPARE(free.kept.size(), kCandidates.size());
        GemmContext h200;
        h200.sharedMemoryBytes = 232448;
        QCOMPARE(s.onPackageGpu().sharedMemoryBytes, h200.sharedMemoryBytes); // the GPU table's H200
        const Decision onGpu = s.decide(mm(64, 1024, 4096), kCandidates, h200);
        QCOMPARE(onGpu.kept.size(), kCandidates.size() - 2);
        QVERIFY(onGpu.excluded[4] == Exclusion::SharedMemory);
        QVERIFY(onGpu.excluded[5] == Exclusion::SharedMemory);
        QVERIFY(std::isnan(onGpu.predictedMs[4]));

        // The package's unsafe_candidates, written in its manifest as the trainer writes them.
        nlohmann::json manifest = pkg.manifest();
        auto wrong = kCandidates[2].toJson();
        wrong.erase("GROUP_M"); // Inductor's default, as a line may leave it
        manifest["unsafe_candidates"] = {{{"op", "mm"},
                                          {"dtype", "bf16"},
                                          {"a_transposed", false},
                                          {"b_transposed", true},
                                          {"candidate", wrong},
                                          {"error", "wrong result: max error 1.08 (tolerance 0.03)"},
                                          {"problems", 1}},
                                         {{"op", "mm"}}}; // malformed: skipped, not fatal
        const auto unsafe = ModelPackage::fromBytes(ModelPackage::withManifest(bytes, manifest));
        Selector careful(unsafe, all);
        const Decision d = careful.decide(mm(64, 1024, 4096), kCandidates);
        QVERIFY(d.excluded[2] == Exclusion::WrongResult);
        QVERIFY(std::find(d.kept.begin(), d.kept.end(), size_t(2)) == d.kept.end());
        GemmProblem fp16 = mm(64, 1024, 4096);
        fp16.dtype = DType::FP16; // another dtype: nothing excluded
        QVERIFY(careful.decide(fp16, kCandidates).excluded[2] == Exclusion::None);
        QCOMPARE(careful.counters().toJson()["gemm_kernel"]["candidates_excluded"],
                 nlohmann::json({{"wrong_result", 1}}));
    }

    // Candidates the model cannot describe are dropped unless asked for; a GEMM it does not decide
    // goes back to Inductor when the options say so.
    void unscorableAndFallbackFollowTheOptions() {
        const auto pkg = ModelPackage::load(m_warm);
        std::vector<KernelConfig> c = kCandidates;
        KernelConfig decomposeK;
        decomposeK.kind = "other";
        decomposeK.name = "decompose_k";
        c.push_back(decomposeK);
        Selector dropping(pkg, {});
        const Decision d = dropping.decide(mm(64, 1024, 4096), c);
        QVERIFY(d.excluded.back() == Exclusion::Unscorable);
        QCOMPARE(d.kept.size(), size_t(1));
        SelectorOptions keep;
        keep.keepUnscored = true;
        QCOMPARE(Selector(pkg, keep).decide(mm(64, 1024, 4096), c).kept.back(), c.size() - 1);
        SelectorOptions defer;
        defer.deferToInductor = true;
        defer.ops = {"addmm"};
        Selector inductor(pkg, defer);
        const Decision notAsked = inductor.decide(mm(64, 1024, 4096), kCandidates);
        QCOMPARE(notAsked.notSelected, std::string("unscorable_op_mm"));
        QVERIFY(notAsked.deferred);
        QVERIFY(notAsked.kept.empty()); // Inductor's own candidates, though plain's is offered
        QCOMPARE(notAsked.plain, std::optional<size_t>(0));
        QVERIFY(!inductor.decide(mm(64, 1024, 4096), {aten("extern_kernels.mm")}).deferred); // only ATen
        const auto counters = dropping.counters().toJson()["gemm_kernel"];
        QCOMPARE(counters["candidates_unknown_dropped"].get<int>(), 1);
        QCOMPARE(counters["candidates_scored"].get<int>(), int(kCandidates.size()));
        QCOMPARE(counters["candidates_filtered"].get<int>(), int(kCandidates.size()) - 1);
        QCOMPARE(inductor.counters().toJson()["gemm_kernel"]["handed_back_several"].get<int>(), 1);
    }

    // A model's layers repeat their GEMMs: the same problem with the same candidates is scored once.
    void aRepeatedGemmIsScoredOnce() {
        const auto pkg = ModelPackage::load(m_warm);
        SelectorOptions two;
        two.topK = 2;
        Selector s(pkg, two);
        const Decision first = s.decide(mm(64, 1024, 4096), kCandidates);
        const Decision again = s.decide(mm(64, 1024, 4096), kCandidates);
        QVERIFY(!first.scoresReused);
        QVERIFY(again.scoresReused);
        QCOMPARE(again.kept, first.kept);
        QCOMPARE(again.predictedMs, first.predictedMs);
        QVERIFY(!s.decide(mm(65, 1024, 4096), kCandidates).scoresReused);
        const auto counters = s.counters().toJson()["gemm_kernel"];
        QCOMPARE(counters["scores_reused"].get<int>(), 1);
        QCOMPARE(counters["selections_by_op"], nlohmann::json({{"mm", 3}}));
    }

    void optionsAreReadByName() {
        const auto o = SelectorOptions::fromJson({{"top_k", 3},
                                                  {"margin", nullptr},
                                                  {"regime", "cold"},
                                                  {"fallback", "inductor"},
                                                  {"ops", {"mm"}}});
        QCOMPARE(o.topK, 3);
        QVERIFY(!o.margin);
        QVERIFY(o.regime == Regime::Cold);
        QVERIFY(o.deferToInductor);
        const std::vector<std::pair<nlohmann::json, std::string>> refused{
            {nlohmann::json{{"top_k", 0}}, "top_k"},
            {nlohmann::json{{"performance_threshold", 0.5}}, "performance_threshold"},
            {nlohmann::json{{"margin", -1}}, "margin"},
            {nlohmann::json{{"keep_unscored", 1}}, "keep_unscored"},
            {nlohmann::json{{"colour", 1}}, "unknown key 'colour'"}};
        for (const auto &[bad, name] : refused) {
            try {
                SelectorOptions::fromJson(bad);
                QFAIL(bad.dump().c_str());
            } catch (const InvalidInput &e) {
                QVERIFY2(std::string(e.what()).find(name) != std::string::npos, e.what());
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestSelector)
#include "tst_selector.moc"
