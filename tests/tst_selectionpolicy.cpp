#include "testutil.h"

#include "diode/analysis/calibration.h"
#include "diode/analysis/datasplit.h"
#include "diode/analysis/evaluation.h"
#include "diode/infer/gemmproblem.h"
#include "diode/infer/modelpackage.h"
#include "diode/infer/selectionpolicy.h"
#include "diode/store/store.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include <cmath>

using namespace diode;

namespace {

KernelConfig aten(const std::string &name = "extern_kernels.mm") {
    KernelConfig c;
    c.kind = "aten";
    c.name = name;
    return c;
}

KernelConfig triton(int blockM) {
    KernelConfig c;
    c.kind = "triton";
    c.name = "mm";
    c.blockM = blockM;
    c.blockN = 64;
    c.blockK = 32;
    return c;
}

// Two ATen kernels, then three Triton configs (as Inductor offers an addmm's).
const std::vector<KernelConfig> kFive{aten("extern_kernels.addmm"), aten("extern_kernels.mm"), triton(16),
                                      triton(32), triton(64)};

SelectionPolicy policy(int topK, double margin, double threshold = INFINITY) {
    SelectionPolicy p;
    p.topK = topK;
    p.margin = margin;
    p.threshold = threshold;
    return p;
}

using Picks = std::vector<size_t>;

} // namespace

// The selector's rule (core/infer/diode/infer/selectionpolicy.h): plain torch.compile's kernel stays unless
// another is predicted faster by more than the margin; top_k and the threshold bound the rest.
class TestSelectionPolicy : public QObject {
    Q_OBJECT
private slots:
    void atenStaysWhenThePredictedWinIsWithinTheMargin() {
        // best Triton 9.5 against ATen 10.0: a 5 % predicted win, under an 8 % margin
        QCOMPARE(policy(3, 0.08).select(kFive, {10.0, 11.0, 9.5, 12.0, 13.0}), Picks{0});
    }
    void atenWinsAnExactTieAtTheMarginsEdge() {
        // ATen predicted exactly (1 + margin) x the best: still kept (<=, not <).
        QCOMPARE(policy(1, 0.25).select(kFive, {10.0, 11.0, 8.0, 12.0, 13.0}), Picks{0});
        // An equal prediction with the guard off: the earlier candidate, ATen, is first.
        QCOMPARE(policy(1, 0.0).select(kFive, {8.0, 11.0, 8.0, 12.0, 13.0}), Picks{0});
        QCOMPARE(policy(1, 0.0).select({triton(16), aten()}, {8.0, 8.0}), Picks{0});
        // ... and just over the edge, the faster kernel replaces ATen.
        QCOMPARE(policy(1, 0.25).select(kFive, {10.0001, 11.0, 8.0, 12.0, 13.0}), Picks{2});
    }
    void aWinBeyondTheMarginReplacesAten() {
        QCOMPARE(policy(1, 0.08).select(kFive, {10.0, 11.0, 8.0, 12.0, 13.0}), Picks{2});
        // Two templates kept, no ATen among them: plain's kernel follows, Inductor's fallback.
        QCOMPARE(policy(2, 0.08).select(kFive, {10.0, 11.0, 8.0, 8.5, 13.0}), (Picks{2, 3, 0}));
    }
    void theBestAtenIsPlainWithoutBiasAddmm() {
        QCOMPARE(policy(1, 0.08).select(kFive, {10.0, 9.0, 9.5, 12.0, 13.0}), Picks{1});
        QCOMPARE(*policy(1, 0).plainCandidate(kFive, {10.0, 9.0, 9.5, 12.0, 13.0}), size_t(1));
        QCOMPARE(*policy(1, 0).plainCandidate(kFive, {}), size_t(0)); // nothing predicted: the first
    }
    void biasAddmmIsPlainWhereOffered() {
        const std::vector<KernelConfig> c{aten("extern_kernels.addmm"), aten("extern_kernels.bias_addmm"),
                                          triton(16)};
        QCOMPARE(policy(1, 0.08).select(c, {9.6, 10.0, 11.0}), Picks{1});
        QCOMPARE(policy(1, 0.08).select(c, {8.0, 10.0, 11.0}), Picks{0}); // a win beyond the margin
    }
    void topKIsBoundedByTheThreshold() {
        QCOMPARE(policy(3, 0.08, 1.1).select(kFive, {20.0, 21.0, 8.0, 8.5, 9.5}), (Picks{2, 3, 0}));
        QCOMPARE(policy(3, 0.0).select(kFive, {20.0, 21.0, 8.0, 8.5, 9.5}), (Picks{2, 3, 4, 0}));
        // An ATen kernel among the kept: no fallback added.
        QCOMPARE(policy(2, 0.0).select(kFive, {9.0, 11.0, 9.5, 12.0, 13.0}), (Picks{0, 2}));
        QCOMPARE(policy(1, 0.0).select(kFive, {10.0, 11.0, 9.5, 12.0, 13.0}), Picks{2});
    }
    void noAtenCandidateMeansNoGuard() {
        const std::vector<KernelConfig> c{triton(16), triton(32), triton(64)};
        QCOMPARE(policy(1, 0.5).select(c, {3.0, 1.0, 2.0}), Picks{1});
        QCOMPARE(policy(2, 0.5).select(c, {3.0, 1.0, 2.0}), (Picks{1, 2})); // no plain to add
        QVERIFY(!policy(1, 0.5).plainCandidate(c, {3.0, 1.0, 2.0}));
        QVERIFY(policy(1, 0.08).select({}, {}).empty());
    }
    void atenMissingFromThePredictionsIsRefused() {
        // One time per candidate, finite: a missing or NaN prediction is not a ranking.
        QVERIFY_THROWS_EXCEPTION(InvalidInput, policy(1, 0.08).select(kFive, {9.5, 12.0, 13.0}));
        try {
            policy(1, 0.08).select(kFive, {NAN, 11.0, 9.5, 12.0, 13.0});
            QFAIL("a NaN prediction was ranked");
        } catch (const InvalidInput &e) {
            QVERIFY2(std::string(e.what()).find("candidates[0]") != std::string::npos, e.what());
        }
    }
    void badSettingsAreRefusedByName() {
        auto refused = [](const SelectionPolicy &p, const char *field) {
            try {
                p.validate();
            } catch (const InvalidInput &e) {
                return std::string(e.what()).find(field) != std::string::npos;
            }
            return false;
        };
        QVERIFY(refused(policy(0, 0.08), "top_k"));
        QVERIFY(refused(policy(1, -0.1), "margin"));
        QVERIFY(refused(policy(1, NAN), "margin"));
        QVERIFY(refused(policy(1, 0.1, 0.9), "threshold"));
        policy(1, 0.1, 1.0).validate();
    }
    void thePackagesMarginElseTheRegimesDefault() {
        QCOMPARE(defaultMargin(Regime::Warm), 0.10);
        QCOMPARE(defaultMargin(Regime::Cold), 0.08);
        QCOMPARE(packageMargin(nlohmann::json::object(), Regime::Cold), 0.08);
        const nlohmann::json calibrated{{kSelectionPolicyKey, {{"regime", "cold"}, {"margin", 0.05}}}};
        QCOMPARE(packageMargin(calibrated, Regime::Cold), 0.05);
        QCOMPARE(packageMargin(calibrated, Regime::Warm), 0.10); // calibrated for the other regime
        QVERIFY_THROWS_EXCEPTION(
            PackageError,
            packageMargin({{kSelectionPolicyKey, {{"regime", "hot"}, {"margin", 0.1}}}}, Regime::Warm));
        QVERIFY_THROWS_EXCEPTION(
            PackageError,
            packageMargin({{kSelectionPolicyKey, {{"regime", "warm"}, {"margin", -1}}}}, Regime::Warm));
        QVERIFY(regimeOf(TimingMethod::GraphCold) == Regime::Cold);
        QVERIFY(regimeOf(TimingMethod::InductorAutotune) == Regime::Warm);
        QVERIFY_THROWS_EXCEPTION(InvalidInput, parseRegime("lukewarm"));
    }
    void policyEfficiencyJudgesThePickByItsMeasuredTime() {
        RankedProblem p;
        p.measuredMs = {10.0, std::nullopt, 8.0, 12.0, 13.0};
        p.predictedMs = {10.0, 11.0, 9.5, 12.0, 13.0};
        const auto efficiency = [&](double margin) {
            return pickEfficiency(p, policy(1, margin).pick(kFive, policyPredictions(p)));
        };
        QCOMPARE(efficiency(0.08), 0.8);              // ATen kept: 8 / 10
        QCOMPARE(efficiency(0.0), 1.0);               // the arg-min
        p.predictedMs = {10.0, 1.0, 9.5, 12.0, 13.0}; // picks the untimed one
        QCOMPARE(efficiency(0.08), 0.0);
    }
    // `diode calibrate`'s rule on the shipped warm package and its own training database: the
    // split redrawn gives the trainer's test top-1 back, and the rule chooses the margin the
    // shipped package carries (written by the same command; docs/MODELS.md, "Policy").
    void calibratesTheShippedPackageToItsRecordedMargin() {
        const std::string path =
            testutil::sourcePath("trained_models/h200/h200-ingraph-warm.diode").toStdString();
        std::ifstream f(path, std::ios::binary);
        std::stringstream bytes;
        bytes << f.rdbuf();
        const auto pkg = ModelPackage::fromBytes(bytes.str());
        Store store(testutil::sourcePath("trained_models/h200/h200-ingraph.db").toStdString(),
                    Store::Mode::ReadOnly);
        const Dataset data = loadDataset(store, pkg.timingMethod(), packageFilter(pkg.manifest()));
        const Calibration c = calibrate(pkg, data);
        const auto &split = pkg.manifest()["training_data"]["split"];
        QCOMPARE(c.problems, split["validation"].get<size_t>() + split["test"].get<size_t>());
        QCOMPARE(c.testTop1Redrawn, c.testTop1Trainer);
        QVERIFY(pkg.manifest().contains(kSelectionPolicyKey));
        QCOMPARE(c.margin, packageMargin(pkg.manifest(), Regime::Warm));
        QCOMPARE(c.trials.size(), std::size(kCalibrationMargins));
        // max-autotune's baseline, which `diode calibrate --out` added to the shipped manifest, is
        // what the redrawn test split and the store's Inductor times give again.
        nlohmann::json recomputed = nlohmann::json::object();
        addMaxAutotuneBaseline(recomputed, c.test,
                               inductorBenchmarkData(store, packageFilter(pkg.manifest())));
        QCOMPARE(recomputed["baselines"]["max-autotune"],
                 pkg.manifest()["metrics"]["test_split"]["baselines"]["max-autotune"]);
        QCOMPARE(recomputed["baselines"]["max-autotune"]["problems"].get<int>(), 94);

        // Written into the manifest, the margin is the package's; the networks are untouched.
        nlohmann::json manifest = pkg.manifest();
        manifest[kSelectionPolicyKey] = c.toJson();
        manifest[kSelectionPolicyKey]["margin"] = 0.05;
        const std::string rewritten = ModelPackage::withManifest(bytes.str(), manifest);
        const auto again = ModelPackage::fromBytes(rewritten);
        QCOMPARE(packageMargin(again.manifest(), Regime::Warm), 0.05);
        QCOMPARE(packageMargin(again.manifest(), Regime::Cold), defaultMargin(Regime::Cold));
        const auto &p = data.problems.front();
        QCOMPARE(again.predictMs(p.problem, p.configs), pkg.predictMs(p.problem, p.configs));
        uint32_t manifestBytes = 0; // the header's u32 LE at offset 12 (docs/PACKAGE.md)
        std::memcpy(&manifestBytes, bytes.str().data() + 12, 4);
        const size_t tensors = bytes.str().size() - 20 - manifestBytes;
        QCOMPARE(rewritten.substr(rewritten.size() - tensors),
                 bytes.str().substr(bytes.str().size() - tensors));
        manifest["data_bytes"] = 1;
        QVERIFY_THROWS_EXCEPTION(PackageError, ModelPackage::withManifest(bytes.str(), manifest));

        // Data that is not the package's training data is refused, saying so.
        Dataset fewer = data;
        fewer.problems.pop_back();
        try {
            calibrate(pkg, fewer);
            QFAIL("calibrated on data that is not the package's");
        } catch (const InvalidInput &e) {
            QVERIFY2(std::string(e.what()).find("not its training data") != std::string::npos, e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestSelectionPolicy)
#include "tst_selectionpolicy.moc"
