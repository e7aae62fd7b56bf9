// The decisions beside the GEMM kernel: the kernel-config grid, the nearest-neighbour models built
// from measured lines, their decisions and their section in a package, on the shipped H200 data.

#include "testutil.h"

#include "diode/analysis/decisionevaluation.h"
#include "diode/infer/decisionmodel.h"
#include "diode/infer/modelpackage.h"
#include "diode/infer/selector.h"
#include "diode/infer/tritonkernel.h"

#include <QProcess>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <fstream>

using namespace diode;

namespace {

TritonKernelShape reduction(int64_t x, int64_t r, ReductionHint hint) {
    TritonKernelShape s;
    s.reduction = true;
    s.x = x;
    s.r = r;
    s.hint = hint;
    s.loads = 2;
    s.stores = 1;
    s.reductions = 1;
    s.bytesRead = double(x) * double(r) * 2;
    s.bytesWritten = double(x) * 2;
    s.itemsize = 2;
    return s;
}

std::string shipped(const char *name) {
    return (testutil::sourcePath(QStringLiteral("trained_models/h200/")) + QString::fromLatin1(name))
        .toStdString();
}

// A measured kernel whose configurations take `times` (nullopt: failed) against a default of 1 ms.
MeasuredKernel measured(const std::string &family, const TritonKernelShape &shape,
                        const std::vector<std::pair<TritonConfig, std::optional<double>>> &times) {
    MeasuredKernel k;
    k.family = family;
    k.shape = shape;
    k.defaultMs = 1.0;
    k.smCount = 132;
    for (const auto &[c, t] : times) {
        k.configs.push_back(c);
        k.timesMs.push_back(t);
    }
    return k;
}

} // namespace

class TestDecisions : public QObject {
    Q_OBJECT
private slots:
    void gridKeepsInductorsLimitsAndNoIdleThreads();
    void neighboursAreOneStepAwayInTheGrid();
    void descentLinesHoldThePortfolioThenItsNeighbourhood();
    void secondSweepLinesMeasureEveryExtraOnEveryKernel();
    void configsMeasuredOnEveryKernelJoinThePortfolio();
    void aReductionTiledInYIsGivenYBlocksAlongItsContiguousRows();
    void persistentConfigsNeverDropTheXDimension();
    void aReductionThatCannotBePersistentIsOfferedNoPersistentConfig();
    void badShapesAndConfigsAreRefusedByField();
    void thePortfolioIsPartOfTheGridAndTheSameForTheSameGrid();
    void aConfigThatFailedOnAKernelIsNeverChosenForIt();
    void theDefaultStaysUnlessPredictedFasterByTheMargin();
    void aDefaultTunedAtFirstRunIsReplacedByOnePredictedWithinTheMargin();
    void aKernelUnlikeEveryMeasuredOneKeepsTheDefault();
    void formModelKeepsTheLibraryForAnOpItNeverMeasured();
    void decomposedProjectionsReadTheirOperandWrittenOnce();
    void aSiteMeasuredInAStepSupersedesTheSameSiteMeasuredAlone();
    void aModelSaysItsLibraryFormReadsTheCacheAsStored();
    void modelsSurviveThePackageRoundTrip();
    void readerNamesTheFileLineAndField();
    void shippedPackagesCarryBothModelsAndDecideAsDocumented();
    void trainDecisionsReproducesTheShippedHeldOutFigures();
    void kernelNeighboursAreATrainingChoiceTheModelKeeps();
    void kernelWeightPowerIsATrainingChoiceTheModelKeeps();
    void heldOutFiguresReadBackWhatTrainingWrote();
    void inspectSummarisesTheDecisionModels();
    void figuresOnLinesSayWhatTheyAreNot();
    void linesOfTwoGpusAreNotTrainedIntoOneModel();
};

void TestDecisions::gridKeepsInductorsLimitsAndNoIdleThreads() {
    for (const auto &shape :
         {reduction(32768, 1025, ReductionHint::Default), reduction(8, 4096, ReductionHint::Inner),
          reduction(262400, 128, ReductionHint::Inner)}) {
        const auto grid = candidateConfigs(shape);
        QVERIFY(grid.size() > 20);
        for (const auto &c : grid) {
            const int64_t r = c.persistent ? 1 << int(std::ceil(std::log2(double(shape.r)))) : c.rBlock;
            const int64_t tile = int64_t(c.xBlock) * r;
            QVERIFY2(tile / (32 * c.numWarps) <= kMaxElementsPerThread, c.toJson().dump().c_str());
            QVERIFY(c.xBlock <= 1024 && c.rBlock <= 4096);
            QVERIFY((c.xBlock & (c.xBlock - 1)) == 0 && (c.numWarps & (c.numWarps - 1)) == 0);
            QCOMPARE(c.persistent, c.rBlock == 0);
        }
    }
    TritonKernelShape pointwise;
    pointwise.x = 100000;
    for (const auto &c : candidateConfigs(pointwise)) {
        QCOMPARE(c.rBlock, 0);
        QVERIFY(c.xBlock >= 32 && c.xBlock <= 4096);
    }
}

void TestDecisions::aReductionTiledInYIsGivenYBlocksAlongItsContiguousRows() {
    // Attention's probabilities times values at one query token, split over a cache of 512 tokens: 4,096
    // outputs along y (heads x head size, contiguous in the cache), four splits along x, 128 tokens each.
    auto pv = reduction(4, 128, ReductionHint::Outer);
    pv.y = 4096;
    const auto back = TritonKernelShape::fromJson(pv.toJson(), "shape");
    QCOMPARE(back.y, int64_t(4096));
    const auto grid = candidateConfigs(back);
    QVERIFY(grid.size() > kPortfolioSize);
    for (const auto &c : grid) {
        QVERIFY2(c.yBlock >= 16 && c.yBlock <= 1024, c.toJson().dump().c_str());
        const int64_t tile = int64_t(c.yBlock) * c.xBlock * c.rBlock;
        QVERIFY2(tile / (32 * c.numWarps) <= kMaxElementsPerThread, c.toJson().dump().c_str());
        QVERIFY(c.xBlock <= 4 && c.rBlock <= 128);
        QCOMPARE(c.toJson()["YBLOCK"].get<int>(), c.yBlock); // FixedTritonConfig's key
    }
    // Looped configurations only; a y smaller than the smallest YBLOCK is tiled whole.
    QVERIFY(std::none_of(grid.begin(), grid.end(), [](const TritonConfig &c) { return c.persistent; }));
    auto narrow = reduction(4, 32, ReductionHint::Outer);
    narrow.y = 8;
    for (const auto &c : candidateConfigs(narrow))
        QVERIFY2(c.yBlock == 8 && !c.persistent, c.toJson().dump().c_str());
    // No more programs along y than a CUDA grid's y dimension holds.
    auto wide = pv;
    wide.y = int64_t(1) << 21;
    for (const auto &c : candidateConfigs(wide))
        QVERIFY2((wide.y + c.yBlock - 1) / c.yBlock <= 65535, c.toJson().dump().c_str());
    // A model whose measured kernels hold 2-D tiled pointwise kernels but no reduction tiled in y never
    // tried one of its configurations near it: the kernel keeps Inductor's default.
    auto kernels = readDecisionData(shipped("h200-kernels-steps.jsonl")).kernels;
    std::erase_if(kernels, [](const MeasuredKernel &k) { return k.shape.reduction && k.shape.y > 1; });
    QVERIFY(
        std::any_of(kernels.begin(), kernels.end(), [](const MeasuredKernel &k) { return k.shape.y > 1; }));
    const auto d = decideKernelConfig(KernelConfigModel::build(kernels), back, 0.05);
    QVERIFY(!d.fixed);
    QVERIFY2(d.reason == "none_tried_nearby", (d.reason + d.unmeasured).c_str());
}

void TestDecisions::neighboursAreOneStepAwayInTheGrid() {
    const auto shape = reduction(32768, 1025, ReductionHint::Default);
    const auto grid = candidateConfigs(shape);
    const TritonConfig c{false, 32, 0, 128, 4, 1};
    QVERIFY(std::find(grid.begin(), grid.end(), c) != grid.end());
    // XBLOCK, R0_BLOCK and the warps each halved and doubled; this kernel is not tiled in y.
    const std::vector<TritonConfig> expected = {{false, 16, 0, 128, 4, 1}, {false, 64, 0, 128, 4, 1},
                                                {false, 32, 0, 64, 4, 1},  {false, 32, 0, 256, 4, 1},
                                                {false, 32, 0, 128, 2, 1}, {false, 32, 0, 128, 8, 1}};
    QVERIFY(neighbourConfigs(shape, c) == expected);
    // At the grid's edge only what the grid holds: no reduction block beyond the reduction's power of
    // two (2,048), no more than 16 warps.
    const TritonConfig edge{false, 1, 0, 2048, 16, 1};
    QVERIFY(std::find(grid.begin(), grid.end(), edge) != grid.end());
    const std::vector<TritonConfig> inside = {
        {false, 2, 0, 2048, 16, 1}, {false, 1, 0, 1024, 16, 1}, {false, 1, 0, 2048, 8, 1}};
    QVERIFY(neighbourConfigs(shape, edge) == inside);
}

void TestDecisions::descentLinesHoldThePortfolioThenItsNeighbourhood() {
    // The shipped descent lines: on each kernel its portfolio first, then configurations of its grid
    // each one step from one measured before it; what the portfolio's best leaves is what docs/MODELS.md
    // gives (the decision among the portfolio judged against the fastest the descent found).
    const auto data = readDecisionData(shipped("h200-kernels-descent.jsonl"));
    QVERIFY(data.kernels.size() > 250);
    int beyond = 0;
    for (const auto &k : data.kernels) {
        const auto portfolio = portfolioConfigs(k.shape), grid = candidateConfigs(k.shape);
        size_t first = 0;
        while (first < k.configs.size() &&
               std::find(portfolio.begin(), portfolio.end(), k.configs[first]) != portfolio.end())
            ++first;
        for (size_t i = first; i < k.configs.size(); ++i) {
            QVERIFY2(std::find(grid.begin(), grid.end(), k.configs[i]) != grid.end(), k.name.c_str());
            bool step = false;
            for (size_t j = 0; j < i && !step; ++j) {
                const auto n = neighbourConfigs(k.shape, k.configs[j]);
                step = std::find(n.begin(), n.end(), k.configs[i]) != n.end();
            }
            QVERIFY2(step, k.name.c_str());
            ++beyond;
        }
    }
    QVERIFY(beyond > 1000);
    const auto e = trainDecisions(data).heldOut["kernel_config"]["all"];
    QCOMPARE(e["kernels"].get<int>(), 275);
    QCOMPARE(e["picks_not_measured"].get<int>(), 0);
    QCOMPARE(qRound(e["within_3_percent_of_fastest"].get<double>() * 1000), 436);
}

void TestDecisions::secondSweepLinesMeasureEveryExtraOnEveryKernel() {
    // The shipped second sweep (--extra-configs-from the descent lines): every configuration the descent
    // found fastest beyond a portfolio was measured on every kernel whose grid holds it, so a model built
    // from these lines offers all of them; its held-out figures are docs/MODELS.md's.
    const auto data = readDecisionData(shipped("h200-kernels-extras.jsonl"));
    const auto wanted =
        fastestBeyondPortfolio(readDecisionData(shipped("h200-kernels-descent.jsonl")).kernels);
    QCOMPARE(int(wanted.size()), 58);
    const auto extra = KernelConfigModel::build(data.kernels).extraConfigs();
    QCOMPARE(extra.size(), wanted.size());
    for (const auto &c : wanted)
        QVERIFY2(std::find(extra.begin(), extra.end(), c) != extra.end(), c.toJson().dump().c_str());
    const auto e = trainDecisions(data).heldOut["kernel_config"]["all"];
    QCOMPARE(e["kernels"].get<int>(), 284);
    QCOMPARE(e["over_10_percent_slower_than_default"].get<int>(), 6);
    QCOMPARE(qRound(e["within_3_percent_of_fastest"].get<double>() * 1000), 687);
}

void TestDecisions::configsMeasuredOnEveryKernelJoinThePortfolio() {
    // Six kernels of one grid, each measured on the portfolio, the first also with a configuration
    // beyond it (as the descent leaves one): it is not offered, and the fastest beyond the portfolio is.
    std::vector<TritonKernelShape> shapes;
    for (int64_t x : {12288, 14336, 11008, 16384, 9000, 10000})
        shapes.push_back(reduction(x, 4096, ReductionHint::Inner));
    const auto portfolio = portfolioConfigs(shapes[0]), grid = candidateConfigs(shapes[0]);
    const TritonConfig beyond = *std::find_if(grid.begin(), grid.end(), [&](const TritonConfig &c) {
        return std::find(portfolio.begin(), portfolio.end(), c) == portfolio.end();
    });
    auto lines = [&](size_t measuredBeyond) {
        std::vector<MeasuredKernel> out;
        for (size_t i = 0; i < shapes.size(); ++i) {
            std::vector<std::pair<TritonConfig, std::optional<double>>> times;
            for (const auto &c : portfolio)
                times.push_back({c, 0.9});
            if (i < measuredBeyond)
                times.push_back({beyond, 0.3});
            out.push_back(measured("a", shapes[i], times));
        }
        return out;
    };
    const auto once = lines(1);
    QVERIFY(fastestBeyondPortfolio(once) == std::vector<TritonConfig>{beyond});
    const auto few = KernelConfigModel::build(once);
    QVERIFY(few.extraConfigs().empty());
    auto d = decideKernelConfig(few, shapes[1], 0.05);
    QCOMPARE(d.candidates, int(kPortfolioSize));
    QVERIFY(!(d.config == beyond));

    // Measured on every kernel whose grid holds it: offered beside the portfolio, chosen when fastest,
    // and kept by the package.
    const auto everywhere = KernelConfigModel::build(lines(shapes.size()));
    QVERIFY(everywhere.extraConfigs() == std::vector<TritonConfig>{beyond});
    d = decideKernelConfig(everywhere, shapes[1], 0.05);
    QCOMPARE(d.candidates, int(kPortfolioSize) + 1);
    QVERIFY(d.fixed);
    QVERIFY(d.config == beyond);
    const auto back = KernelConfigModel::fromJson(nlohmann::json::parse(everywhere.toJson().dump()));
    QVERIFY(back.extraConfigs() == everywhere.extraConfigs());
    QVERIFY(decisionCandidates(shapes[1], back.extraConfigs()).back() == beyond);
    // A kernel whose grid does not hold it is not offered it; a package without them writes none.
    const auto small = reduction(2, 8, ReductionHint::Inner);
    const auto smallGrid = candidateConfigs(small);
    QVERIFY(std::find(smallGrid.begin(), smallGrid.end(), beyond) == smallGrid.end());
    QVERIFY(decisionCandidates(small, {beyond}) == portfolioConfigs(small));
    QVERIFY(!KernelConfigModel::build(once).toJson().contains("extra_configs"));
    auto bad = everywhere.toJson();
    bad["extra_configs"][0]["XBLOCK"] = 3;
    QVERIFY_THROWS_EXCEPTION(InvalidInput, KernelConfigModel::fromJson(bad));
    // Measured on five of the six, or on all of only three: not offered. A line the GPU's memory cut short
    // (fewer configurations than its grid) does not count against it.
    QVERIFY(KernelConfigModel::build(lines(shapes.size() - 1)).extraConfigs().empty());
    auto three = lines(3);
    three.resize(3);
    QVERIFY(KernelConfigModel::build(three).extraConfigs().empty());
    auto cut = lines(shapes.size() - 1);
    for (auto &k : cut)
        k.grid = int(portfolio.size()) + 1; // the last tried `beyond` too, and the memory stopped it
    QVERIFY(KernelConfigModel::build(cut).extraConfigs() == std::vector<TritonConfig>{beyond});
    // On the shipped descent lines no configuration beyond the portfolios was measured everywhere.
    QVERIFY(KernelConfigModel::build(readDecisionData(shipped("h200-kernels-descent.jsonl")).kernels)
                .extraConfigs()
                .empty());
}

void TestDecisions::persistentConfigsNeverDropTheXDimension() {
    // XBLOCK 1 makes a persistent reduction drop its x dimension, where Inductor's code generation
    // failed with a concatenation fused in: the grid never offers it.
    const auto grid = candidateConfigs(reduction(262400, 128, ReductionHint::Inner));
    QVERIFY(std::any_of(grid.begin(), grid.end(), [](const TritonConfig &c) { return c.persistent; }));
    for (const auto &c : grid)
        QVERIFY(!(c.persistent && c.xBlock == 1));
}

void TestDecisions::aReductionThatCannotBePersistentIsOfferedNoPersistentConfig() {
    auto shape = reduction(262400, 128, ReductionHint::Inner);
    shape.persistentPossible = false; // a reduction size that is not static
    for (const auto &c : candidateConfigs(shape))
        QVERIFY(!c.persistent);
    const auto back = TritonKernelShape::fromJson(shape.toJson(), "shape");
    QVERIFY(!back.persistentPossible);
}

void TestDecisions::badShapesAndConfigsAreRefusedByField() {
    auto refused = [](const nlohmann::json &j, const char *field) {
        try {
            TritonKernelShape::fromJson(j, "shape");
        } catch (const InvalidInput &e) {
            return QString::fromUtf8(e.what()).contains(QString::fromLatin1(field));
        }
        return false;
    };
    QVERIFY(refused({{"reduction", true}, {"x", 0}, {"r", 8}}, "\"x\""));
    QVERIFY(refused({{"reduction", true}, {"x", 8}, {"r", 8}, {"hint", "sideways"}}, "hint"));
    QVERIFY(refused({{"reduction", false}, {"x", 8}, {"r", 8}}, "\"r\""));
    QVERIFY(refused({{"x", 8}, {"bytes_read", -1}}, "bytes_read"));
    try {
        TritonConfig::fromJson({{"XBLOCK", 3}, {"num_warps", 4}}, "config");
        QFAIL("XBLOCK 3 was accepted");
    } catch (const InvalidInput &e) {
        QVERIFY(QString::fromUtf8(e.what()).contains(QStringLiteral("power of two")));
    }
    try {
        TritonConfig::fromJson({{"XBLOCK", 4}, {"R0_BLOCK", 8}, {"num_warps", 4}, {"persistent", true}},
                               "config");
        QFAIL("a persistent config with R0_BLOCK was accepted");
    } catch (const InvalidInput &) {
    }
}

void TestDecisions::thePortfolioIsPartOfTheGridAndTheSameForTheSameGrid() {
    const auto shape = reduction(14336, 4096, ReductionHint::Inner);
    const auto grid = candidateConfigs(shape), portfolio = portfolioConfigs(shape);
    QVERIFY(grid.size() > 2 * kPortfolioSize);
    QCOMPARE(portfolio.size(), kPortfolioSize);
    for (const auto &c : portfolio)
        QVERIFY(std::find(grid.begin(), grid.end(), c) != grid.end());
    // Other numels rounding to the same powers of two, other loads and hints: the same configurations,
    // so kernels near each other hold measured times of the same ones.
    auto other = reduction(12288, 4000, ReductionHint::Default);
    other.loads = 5;
    QVERIFY(candidateConfigs(other) == grid);
    QVERIFY(portfolioConfigs(other) == portfolio);
    // A grid no larger than the portfolio is the portfolio; a small kernel's grid differs.
    TritonKernelShape tiny;
    tiny.x = 64;
    QVERIFY(portfolioConfigs(tiny) == candidateConfigs(tiny));
    QVERIFY(portfolioConfigs(reduction(8, 4096, ReductionHint::Inner)) != portfolio);
    // The decision gives only a configuration of the portfolio, however good another is measured.
    std::vector<std::pair<TritonConfig, std::optional<double>>> times;
    for (const auto &c : grid)
        times.push_back({c, std::find(portfolio.begin(), portfolio.end(), c) == portfolio.end() ? 0.2 : 0.8});
    const auto d = decideKernelConfig(KernelConfigModel::build({measured("a", shape, times)}), shape, 0.05);
    QVERIFY(d.fixed);
    QVERIFY(std::find(portfolio.begin(), portfolio.end(), d.config) != portfolio.end());
    QCOMPARE(d.candidates, int(kPortfolioSize));

    // Measured only with configurations outside the portfolio, however fast: no configuration the
    // decision may give was tried on a similar kernel, so none is given on a guess.
    std::vector<std::pair<TritonConfig, std::optional<double>>> elsewhere;
    for (const auto &c : grid)
        if (std::find(portfolio.begin(), portfolio.end(), c) == portfolio.end())
            elsewhere.push_back({c, 0.2});
    const auto none =
        decideKernelConfig(KernelConfigModel::build({measured("a", shape, elsewhere)}), shape, 0.05);
    QVERIFY(!none.fixed);
    QCOMPARE(none.reason, std::string("none_tried_nearby"));
}

void TestDecisions::aConfigThatFailedOnAKernelIsNeverChosenForIt() {
    const auto shape = reduction(32768, 1024, ReductionHint::Default);
    const auto grid = portfolioConfigs(shape);
    // Every configuration 2x faster than the default, except one that failed: the model must avoid it
    // although it would otherwise look best.
    std::vector<std::pair<TritonConfig, std::optional<double>>> times;
    for (size_t i = 0; i < grid.size(); i += 5)
        times.push_back({grid[i], 0.5});
    const TritonConfig failed = grid[3];
    times.push_back({failed, std::nullopt});
    const auto model = KernelConfigModel::build({measured("a", shape, times), measured("b", shape, times)});
    const auto d = decideKernelConfig(model, shape, 0.05);
    QVERIFY(d.fixed);
    QVERIFY(!(d.config == failed));
    QVERIFY(d.predictedRatio < 0.9);
}

void TestDecisions::theDefaultStaysUnlessPredictedFasterByTheMargin() {
    const auto shape = reduction(4096, 4096, ReductionHint::Inner);
    const auto grid = candidateConfigs(shape);
    std::vector<std::pair<TritonConfig, std::optional<double>>> times;
    for (const auto &c : grid)
        times.push_back({c, 0.97}); // 3 % faster than the default, at best
    const auto model = KernelConfigModel::build({measured("a", shape, times)});
    QVERIFY(!decideKernelConfig(model, shape, 0.05).fixed); // 3 % is inside a 5 % margin
    const auto d = decideKernelConfig(model, shape, 0.0);
    QVERIFY(d.fixed);
    QCOMPARE(d.reason, std::string("predicted_faster"));
    // Nothing measured: the prior says "as fast as the default".
    QVERIFY(!decideKernelConfig(KernelConfigModel::build({}), shape, 0.0).fixed);
}

void TestDecisions::aDefaultTunedAtFirstRunIsReplacedByOnePredictedWithinTheMargin() {
    // Kept, a default Inductor tunes at first run is benchmarked at every compile: a configuration
    // predicted within the margin of its time replaces it, one predicted slower by more does not.
    auto shape = reduction(64, 128, ReductionHint::Inner);
    const auto grid = candidateConfigs(shape);
    auto modelAt = [&](double ratio) {
        std::vector<std::pair<TritonConfig, std::optional<double>>> times;
        for (const auto &c : grid)
            times.push_back({c, ratio});
        return KernelConfigModel::build({measured("a", shape, times)});
    };
    const auto near = modelAt(1.03), far = modelAt(1.2);
    QVERIFY(!decideKernelConfig(near, shape, 0.05).fixed); // not tuned: the default is free
    shape.defaultTuned = true;
    const auto d = decideKernelConfig(near, shape, 0.05);
    QVERIFY(d.fixed);
    QCOMPARE(d.reason, std::string("replaces_first_run_tuning"));
    QVERIFY(holds(grid, d.config));
    const auto slow = decideKernelConfig(far, shape, 0.05);
    QVERIFY(!slow.fixed);
    QCOMPARE(slow.reason, std::string("default_predicted_best"));
    // The field travels in a kernel line, absent in lines older than it.
    QVERIFY(TritonKernelShape::fromJson(shape.toJson(), "t").defaultTuned);
    auto old = shape.toJson();
    old.erase("default_tuned");
    QVERIFY(!TritonKernelShape::fromJson(old, "t").defaultTuned);
    old["default_tuned"] = "yes";
    QVERIFY_THROWS_EXCEPTION(InvalidInput, TritonKernelShape::fromJson(old, "t"));
}

void TestDecisions::aKernelUnlikeEveryMeasuredOneKeepsTheDefault() {
    // Inner reductions measured 4x faster than the default with every configuration: an outer
    // reduction of the same sizes (a column sum of a training step) shares all their features but
    // the layout, which never varied in the data and so weighs nothing in a distance. It is not
    // predicted from them.
    const auto inner = reduction(32768, 128, ReductionHint::Inner);
    auto outer = inner;
    outer.hint = ReductionHint::Outer;
    std::vector<std::pair<TritonConfig, std::optional<double>>> fast;
    for (const auto &c : portfolioConfigs(inner))
        fast.push_back({c, 0.25});
    auto other = reduction(262144, 128, ReductionHint::Inner);
    const auto model = KernelConfigModel::build({measured("a", inner, fast), measured("b", other, fast)});
    QVERIFY(decideKernelConfig(model, inner, 0.05).fixed);
    QCOMPARE(model.unmeasuredFeature(outer), std::string("hint_outer"));
    const auto d = decideKernelConfig(model, outer, 0.05);
    QVERIFY(!d.fixed);
    QCOMPARE(d.reason, std::string("feature_not_measured"));
    QCOMPARE(d.unmeasured, std::string("hint_outer"));
    // Once one outer reduction is measured, the layout is a feature like the others: the kernel is
    // predicted from the nearest rows, its own kind's among them.
    std::vector<std::pair<TritonConfig, std::optional<double>>> same;
    for (const auto &c : portfolioConfigs(outer))
        same.push_back({c, 1.0});
    const auto both = KernelConfigModel::build(
        {measured("a", inner, fast), measured("b", other, fast), measured("c", outer, same)});
    QVERIFY(both.unmeasuredFeature(outer).empty());
    QVERIFY(decideKernelConfig(both, outer, 0.05).reason != "feature_not_measured");
    // The same rule survives the package (the scale stored to four decimals keeps its zeros).
    const auto back = KernelConfigModel::fromJson(nlohmann::json::parse(model.toJson().dump()));
    QCOMPARE(back.unmeasuredFeature(outer), std::string("hint_outer"));
}

void TestDecisions::formModelKeepsTheLibraryForAnOpItNeverMeasured() {
    std::vector<MeasuredSite> sites;
    for (int b : {32, 64, 128, 256}) {
        MeasuredSite s;
        s.family = "a";
        s.site.op = "attention";
        s.site.batch = b;
        s.site.n = 1024;
        s.site.k = 128;
        s.site.concat = true;
        s.libraryMs = 1.0;
        s.decomposedMs = 0.5;
        sites.push_back(s);
    }
    const auto model = SmallMFormModel::build(sites);
    SmallMSite attention = sites[1].site;
    const auto d = decideForm(model, attention, 0.05);
    QVERIFY(d.decompose);
    QVERIFY(std::abs(d.predictedRatio - 0.5) < 1e-3);
    SmallMSite mm = attention;
    mm.op = "mm";
    const auto m = decideForm(model, mm, 0.05);
    QVERIFY(!m.decompose);
    QCOMPARE(m.reason, std::string("op_not_measured"));
    // Building from attention alone leaves an op out even when it was measured.
    sites[0].site.op = "mm";
    QVERIFY(!SmallMFormModel::build(sites, 4, {"attention"}).covers("mm"));
}

void TestDecisions::decomposedProjectionsReadTheirOperandWrittenOnce() {
    // Every op measured 2x faster decomposed: each is decomposed, and only the projections (mm,
    // addmm) have their operand written out; a bmm's and attention's stay fused into the sum.
    std::vector<MeasuredSite> sites;
    for (const char *op : {"attention", "bmm", "mm", "addmm"})
        for (int n : {1024, 4096, 11008}) {
            MeasuredSite s;
            s.family = "a";
            s.site.op = op;
            s.site.n = n;
            s.site.k = 4096;
            s.libraryMs = 1.0;
            s.decomposedMs = 0.5;
            sites.push_back(s);
        }
    const auto model = SmallMFormModel::build(sites);
    for (const auto &s : sites) {
        const auto d = decideForm(model, s.site, 0.05);
        QVERIFY2(d.decompose, s.site.op.c_str());
        QCOMPARE(d.materialiseOperand, s.site.op == "mm" || s.site.op == "addmm");
    }
    // Kept as a library kernel, the answer still says how its decomposed form reads its operand: a
    // measurement that decomposes it anyway (the step sweep) writes it as a compile would.
    for (auto &s : sites)
        s.decomposedMs = 2.0;
    const auto slower = SmallMFormModel::build(sites);
    for (const auto &s : sites) {
        const auto d = decideForm(slower, s.site, 0.05);
        QVERIFY2(!d.decompose, s.site.op.c_str());
        QCOMPARE(d.materialiseOperand, s.site.op == "mm" || s.site.op == "addmm");
    }
    // So does an op the model never measured, and a package without a form model.
    const auto attentionOnly = SmallMFormModel::build(sites, SmallMFormModel::kNeighbours, {"attention"});
    QCOMPARE(decideForm(attentionOnly, sites[6].site, 0.05).reason, std::string("op_not_measured"));
    QVERIFY(decideForm(attentionOnly, sites[6].site, 0.05).materialiseOperand);
    Selector bare(ModelPackage::load(shipped("h200-gemm-mlp-v2.diode")), {});
    const auto none = bare.decideSmallMForm(sites[6].site);
    QCOMPARE(none.reason, std::string("no_model"));
    QVERIFY(none.materialiseOperand);
}

void TestDecisions::aSiteMeasuredInAStepSupersedesTheSameSiteMeasuredAlone() {
    // Attention at one query token measured alone at four batches and two cache lengths: the library
    // kernel is faster (decomposed 1.25x its time) on each.
    auto site = [](int batch, int n, double decomposedMs, const std::string &name) {
        MeasuredSite s;
        s.family = "a";
        s.name = name;
        s.site.op = "attention";
        s.site.batch = batch;
        s.site.n = n;
        s.site.k = 128;
        s.site.concat = true;
        s.libraryMs = 1.0;
        s.decomposedMs = decomposedMs;
        return s;
    };
    std::vector<MeasuredSite> sites;
    for (int batch : {32, 128, 256, 1024})
        for (int n : {512, 2048})
            sites.push_back(site(batch, n, 1.25,
                                 "llama2-7b/attention-b" + std::to_string(batch) + "-s" + std::to_string(n)));
    SmallMSite query = sites[0].site;
    query.n = 513; // the step's cache: 512 cached tokens and the new one
    QVERIFY(!decideForm(SmallMFormModel::build(sites), query, 0.05).decompose);
    // The same site inside a decode step, where the library form's copy of the cache is the step's
    // cost: decomposed is faster there. It decides that site, and only that one.
    QVERIFY(!sites[0].inStep());
    sites.push_back(site(32, 513, 0.8, std::string(kStepLinePrefix) + "llama-decode-cat-b1-s512/attention"));
    QVERIFY(sites.back().inStep());
    const auto model = SmallMFormModel::build(sites);
    QCOMPARE(model.sites(), 8); // the one measured alone at batch 32 over 512 tokens is superseded
    // Measured there, the site is predicted by its measurement, not averaged with its neighbours.
    QVERIFY(std::abs(decideForm(model, query, 0.05).predictedRatio - 0.8) < 1e-6);
    // Measured there in two steps, by the mean of the two (in log2: a geometric mean).
    {
        auto twice = sites;
        twice.push_back(
            site(32, 513, 0.5, std::string(kStepLinePrefix) + "llama-decode-cat-b1-s512-again/attention"));
        QVERIFY(std::abs(decideForm(SmallMFormModel::build(twice), query, 0.05).predictedRatio -
                         std::sqrt(0.4)) < 1e-6);
    }
    QVERIFY(decideForm(model, query, 0.05).decompose);
    QVERIFY(decideForm(model, sites[0].site, 0.05).decompose);
    // Among the nearest of the same batch over 2,048 tokens, the step's site speaks for it too; far from
    // it (batch 1024), the sites measured alone still decide: the library kernel.
    QVERIFY(decideForm(model, sites[1].site, 0.05).decompose);
    QVERIFY(!decideForm(model, sites[7].site, 0.05).decompose);
    // A package keeps which of its sites were measured in a step, and refuses an index it lacks.
    auto json = nlohmann::json::parse(model.toJson().dump());
    const auto back = SmallMFormModel::fromJson(json);
    QVERIFY(std::abs(decideForm(back, query, 0.05).predictedRatio - 0.8) < 1e-3); // stored rounded
    json["in_step"] = {8};
    QVERIFY_THROWS_EXCEPTION(InvalidInput, SmallMFormModel::fromJson(json));
    // Another op's sites are not superseded by it.
    sites.push_back(sites[0]);
    sites.back().site.op = "bmm";
    QCOMPARE(SmallMFormModel::build(sites).sites(), 9);
    // Where sites measured in steps are among a site's nearest, they alone predict it: at batch 128 over
    // 2,048 tokens the site measured alone there (1.25x) gives way to the steps' at 1,025 tokens (0.8x).
    for (int batch : {64, 128, 256})
        sites.push_back(site(batch, 1025, 0.8,
                             std::string(kStepLinePrefix) + "llama-decode-cat-b" +
                                 std::to_string(batch / 32) + "-s1024/attention"));
    const auto steps = SmallMFormModel::build(sites);
    QCOMPARE(steps.sites(), 9 + 3);
    SmallMSite between = sites[2].site; // batch 128, 512 tokens (measured alone: 1.25x)
    between.n = 2048;
    QVERIFY(std::abs(decideForm(steps, between, 0.05).predictedRatio - 0.8) < 1e-3);
    QVERIFY(!decideForm(SmallMFormModel::build(std::vector<MeasuredSite>(sites.begin(), sites.begin() + 8)),
                        between,
                        0.05)
                 .decompose); // from the sites measured alone, the library kernel
    // Another op's sites are predicted from its own: the bmm, measured alone, keeps its library kernel.
    QVERIFY(!decideForm(steps, sites[9].site, 0.05).decompose);
    QCOMPARE(sites[9].site.op, std::string("bmm"));
}

void TestDecisions::aModelSaysItsLibraryFormReadsTheCacheAsStored() {
    // Grouped-query attention over a concatenated cache timed twice: the library form over the copies
    // the attention as written makes (slow: decomposing is faster, 0.5x) and, where the translator can
    // write it so (stored_cache), over the cache as stored (1.25x); and attention with a KV head per
    // query head, timed as written.
    auto line = [](const std::string &name, int kvGroup, double decomposedMs, bool overCache) {
        nlohmann::json site{{"op", "attention"}, {"dtype", "bf16"},     {"B", 32},       {"M", 1}, {"N", 513},
                            {"K", 128},          {"kv_group", kvGroup}, {"concat", true}};
        if (overCache)
            site["stored_cache"] = true;
        nlohmann::json j{{"kind", "site"}, {"name", name},      {"family", "a"},
                         {"site", site},   {"library_ms", 1.0}, {"decomposed_ms", decomposedMs}};
        if (overCache)
            j["library_over_cache"] = true;
        return j.dump() + "\n";
    };
    const std::string copies =
        line("a/attention-g4-cat", 4, 0.5, false) + line("a/attention-cat", 1, 0.5, false);
    const std::string stored = line("a/attention-g4-cat-stored", 4, 1.25, true);
    // The line says how its library form was timed, and the store's JSON says it again.
    const auto data = readDecisionLines(copies + stored, "lines");
    QCOMPARE(data.sites.size(), size_t(3));
    QVERIFY(!data.sites[0].libraryOverCache && data.sites[2].libraryOverCache);
    QCOMPARE(toJson(data.sites[2]).value("library_over_cache", false), true);
    QVERIFY(!toJson(data.sites[0]).contains("library_over_cache"));
    auto bad = nlohmann::json::parse(stored);
    bad["library_over_cache"] = "yes";
    QVERIFY_THROWS_EXCEPTION(InvalidInput, readDecisionLines(bad.dump(), "bad"));
    const SmallMSite asWritten = data.sites[0].site, single = data.sites[1].site,
                     grouped = data.sites[2].site;
    QVERIFY(grouped.storedCache && !asWritten.storedCache);
    // Timed over copies only: decomposed is faster, and the library form is the attention as written.
    const auto before = SmallMFormModel::build(readDecisionLines(copies, "copies").sites);
    QVERIFY(!before.libraryOverCache());
    QCOMPARE(before.sites(), 2);
    QVERIFY(decideForm(before, grouped, 0.05).decompose);
    QVERIFY(!decideForm(before, grouped, 0.05).libraryOverCache);
    // With the cache read as stored: a site the translator can write so is predicted from the sites
    // timed so alone (the library form), one it cannot (a static cache, a mask) from the others.
    const auto after = SmallMFormModel::build(data.sites);
    QVERIFY(after.libraryOverCache());
    QCOMPARE(after.sites(), 3);
    QVERIFY(after.timesItsLibraryForm(data.sites[0]) && after.timesItsLibraryForm(data.sites[2]));
    const auto d = decideForm(after, grouped, 0.05);
    QVERIFY(!d.decompose && d.libraryOverCache);
    QVERIFY(std::abs(d.predictedRatio - 1.25) < 1e-3);
    QVERIFY(decideForm(after, asWritten, 0.05).decompose);
    QVERIFY(!decideForm(after, asWritten, 0.05).libraryOverCache);
    // Said whichever form is chosen, for grouped attention that can be read so (concatenated or not),
    // and for nothing else: a KV head per query head, or another op, or a model without attention.
    SmallMSite unconcatenated = grouped;
    unconcatenated.concat = false;
    QVERIFY(decideForm(after, unconcatenated, 0.05).libraryOverCache);
    QVERIFY(!decideForm(after, single, 0.05).libraryOverCache);
    QVERIFY(decideForm(after, single, 0.05).decompose);
    SmallMSite mm = grouped;
    mm.op = "mm";
    QVERIFY(!decideForm(after, mm, 0.05).libraryOverCache);
    QVERIFY(!SmallMFormModel::build(data.sites, 4, {"mm"}).libraryOverCache());
    // A line timed over the cache as stored where the decision writes the attention as written (a KV
    // head per query head) is another decision's.
    auto sites = data.sites;
    sites.push_back(readDecisionLines(line("a/attention-cat-stored", 1, 2.0, true), "x").sites[0]);
    QVERIFY(!SmallMFormModel::build(sites).timesItsLibraryForm(sites.back()));
    QCOMPARE(SmallMFormModel::build(sites).sites(), 3);
    // The package keeps it, with the rows timed so; a package without the field is one timed over copies.
    auto json = nlohmann::json::parse(after.toJson().dump());
    QCOMPARE(json["over_cache"], nlohmann::json::array({2}));
    QVERIFY(std::abs(decideForm(SmallMFormModel::fromJson(json), grouped, 0.05).predictedRatio - 1.25) <
            1e-3);
    auto outOfRange = json;
    outOfRange["over_cache"] = {3};
    QVERIFY_THROWS_EXCEPTION(InvalidInput, SmallMFormModel::fromJson(outOfRange));
    auto wrongType = json;
    wrongType["library_over_cache"] = 1;
    QVERIFY_THROWS_EXCEPTION(InvalidInput, SmallMFormModel::fromJson(wrongType));
    json.erase("library_over_cache");
    json.erase("over_cache");
    QVERIFY(!SmallMFormModel::fromJson(json).libraryOverCache());
    // Held out, a line is judged only by a model that writes its library form; `diode eval` counts the
    // others apart.
    QCOMPARE(evaluateForms(after, data.sites, 0.05).sites, 3);
    QCOMPARE(evaluateForms(before, data.sites, 0.05).sites, 2);
    DecisionModels models;
    models.smallMForm = before;
    const auto judged = evaluateDecisionLines(models, data);
    QCOMPARE(judged.smallMForm->sites, 2);
    QCOMPARE(judged.sitesOfAnotherLibraryForm, size_t(1));
    QCOMPARE(judged.toJson()["small_m_form"]["sites_of_another_library_form"], 1);
}

void TestDecisions::modelsSurviveThePackageRoundTrip() {
    const auto data = readDecisionData(shipped("h200-kernels.jsonl"));
    const auto model = KernelConfigModel::build(data.kernels);
    const auto back = KernelConfigModel::fromJson(nlohmann::json::parse(model.toJson().dump()));
    QCOMPARE(back.kernels(), model.kernels());
    for (const auto &k : std::vector<MeasuredKernel>(data.kernels.begin(), data.kernels.begin() + 20)) {
        const auto a = model.predictLog2Ratio(k.shape, k.configs),
                   b = back.predictLog2Ratio(k.shape, k.configs);
        for (size_t i = 0; i < a.size(); ++i)
            QVERIFY(std::abs(a[i] - b[i]) < 2e-3); // the table is stored to 4 decimals
    }
    nlohmann::json wrong = model.toJson();
    wrong["features"][0] = "something_else";
    QVERIFY_THROWS_EXCEPTION(InvalidInput, KernelConfigModel::fromJson(wrong));
}

void TestDecisions::readerNamesTheFileLineAndField() {
    QTemporaryDir dir;
    const std::string path = (dir.path() + QStringLiteral("/bad.jsonl")).toStdString();
    std::ofstream(path) << "{\"kind\": \"kernel\", \"shape\": {\"reduction\": true, \"x\": 8, \"r\": 8, "
                           "\"hint\": \"inner\"}, \"default_ms\": 1, \"configs\": []}\n"
                        << "{\"kind\": \"site\", \"site\": {\"op\": \"conv\", \"dtype\": \"bf16\", \"M\": 1, "
                           "\"N\": 2, \"K\": 2}, \"library_ms\": 1, \"decomposed_ms\": 1}\n";
    try {
        readDecisionData(path);
        QFAIL("a site of op conv was read");
    } catch (const InvalidInput &e) {
        const QString msg = QString::fromUtf8(e.what());
        QVERIFY2(msg.contains(QStringLiteral("bad.jsonl:2")) && msg.contains(QStringLiteral("op")), e.what());
    }
}

void TestDecisions::shippedPackagesCarryBothModelsAndDecideAsDocumented() {
    for (const char *name : {"h200-ingraph-warm.diode", "h200-ingraph-cold.diode"}) {
        const auto pkg = ModelPackage::load(shipped(name));
        Selector selector(pkg, {});
        QVERIFY(selector.decisionModelsError().empty());
        // One query token of Llama-2-7B decode at batch 8 over 1,024 cached tokens grown by
        // torch.cat: decomposed (docs/BENCHMARKS.md, "Model steps").
        SmallMSite site;
        site.op = "attention";
        site.batch = 8 * 32;
        site.n = 1024;
        site.k = 128;
        site.concat = true;
        QVERIFY(selector.decideSmallMForm(site).decompose);
        // A batch-1 step's gate projection (M = 1): decomposed, as the measured batch-1 steps run it.
        SmallMSite projection;
        projection.op = "mm";
        projection.m = 1;
        projection.n = 11008;
        projection.k = 4096;
        QVERIFY(selector.decideSmallMForm(projection).decompose);
        site.op = "bmm"; // no bmm site was measured: the library kernel
        QCOMPARE(selector.decideSmallMForm(site).reason, std::string("op_not_measured"));
        const auto k = selector.decideKernelConfig(reduction(32768, 1025, ReductionHint::Default));
        // Its portfolio and the package's configurations beyond it that its grid holds.
        QVERIFY2(k.candidates > int(kPortfolioSize), std::to_string(k.candidates).c_str());
        QVERIFY2(k.reason == "predicted_faster" || k.reason == "default_predicted_best", k.reason.c_str());
        // A copy tiled in two dimensions (a ViT block's head transpose): the step sweep measured such
        // kernels, so it gets a decision like any other.
        auto tiled = reduction(512, 1, ReductionHint::Default);
        tiled.reduction = false;
        tiled.hint = ReductionHint::None;
        tiled.y = 8192;
        const auto t = selector.decideKernelConfig(tiled);
        QVERIFY2(t.reason == "predicted_faster" || t.reason == "default_predicted_best", t.reason.c_str());
        const auto counters = selector.counters().toJson();
        QCOMPARE(counters["small_m_form"]["decisions"].get<int>(), 3);
        QCOMPARE(counters["small_m_form"]["selected"].get<int>(), 2);
        QCOMPARE(counters["kernel_config"]["decisions"].get<int>(), 2);
    }
}

void TestDecisions::kernelNeighboursAreATrainingChoiceTheModelKeeps() {
    // --kernel-neighbours N: the model averages N measured rows, says so in the package, and its
    // held-out figures are those of the same choice made through the core.
    QTemporaryDir dir;
    const QString kernels = QString::fromStdString(shipped("h200-kernels.jsonl"));
    const QString out = dir.filePath("k1.diode"), report = dir.filePath("k1.json");
    QCOMPARE(testutil::runCli({"train-decisions", kernels, "--kernel-neighbours", "1", "--package",
                               QString::fromStdString(shipped("h200-ingraph-warm.diode")), "--out", out,
                               "--report", report}),
             0);
    const auto section = ModelPackage::load(out.toStdString()).manifest()["decisions"]["kernel_config"];
    QCOMPARE(section["neighbours"].get<int>(), 1);
    DecisionTrainOptions one;
    one.kernelNeighbours = 1;
    const auto viaCore = trainDecisions(readDecisionData(shipped("h200-kernels.jsonl")), one);
    QCOMPARE(section["held_out_by_family"].dump(), viaCore.heldOut["kernel_config"].dump());
    std::ifstream written(report.toStdString());
    QCOMPARE(nlohmann::json::parse(written)["kernel_config"].dump(), viaCore.heldOut["kernel_config"].dump());
    // The default's figures differ: the choice reaches the held-out judgement, not only the file.
    QVERIFY(viaCore.heldOut["kernel_config"]["all"] !=
            trainDecisions(readDecisionData(shipped("h200-kernels.jsonl"))).heldOut["kernel_config"]["all"]);
    QString err;
    QCOMPARE(testutil::runCli({"train-decisions", kernels, "--kernel-neighbours", "0"}, nullptr, &err), 2);
    QVERIFY2(err.contains("--kernel-neighbours"), qPrintable(err));
    // The core refuses what a package could not hold ("neighbours" 1 to kMaxNeighbours), whoever asks.
    for (int k : {0, kMaxNeighbours + 1}) {
        DecisionTrainOptions bad;
        bad.kernelNeighbours = k;
        QVERIFY_THROWS_EXCEPTION(InvalidInput,
                                 trainDecisions(readDecisionData(shipped("h200-kernels.jsonl")), bad));
    }
    one.kernelNeighbours = kMaxNeighbours;
    QCOMPARE(trainDecisions(readDecisionData(shipped("h200-kernels.jsonl")), one)
                 .kernelConfig.toJson()["neighbours"],
             kMaxNeighbours);
}

void TestDecisions::kernelWeightPowerIsATrainingChoiceTheModelKeeps() {
    // --kernel-weight-power P: the model weighs its rows by 1 / (0.25 + distance)^P, says so in the
    // package, and its held-out figures are those of the same choice made through the core (3, the
    // default, compared with plain inverse distance).
    QTemporaryDir dir;
    const QString kernels = QString::fromStdString(shipped("h200-kernels.jsonl"));
    const QString out = dir.filePath("p3.diode");
    QCOMPARE(testutil::runCli({"train-decisions", kernels, "--package",
                               QString::fromStdString(shipped("h200-ingraph-warm.diode")), "--out", out}),
             0);
    const auto section = ModelPackage::load(out.toStdString()).manifest()["decisions"]["kernel_config"];
    QCOMPARE(section["weight_power"].get<double>(), 3.0);
    const auto data = readDecisionData(shipped("h200-kernels.jsonl"));
    DecisionTrainOptions three;
    three.kernelWeightPower = 3;
    const auto viaCore = trainDecisions(data, three);
    QCOMPARE(section["held_out_by_family"].dump(), viaCore.heldOut["kernel_config"].dump());
    DecisionTrainOptions plain;
    plain.kernelWeightPower = KernelConfigModel::kUnwrittenWeightPower;
    QVERIFY(viaCore.heldOut["kernel_config"]["all"] !=
            trainDecisions(data, plain).heldOut["kernel_config"]["all"]);

    // A package read back keeps the power; one written before the field was weighed by plain inverse
    // distance, and predicts as a model built with power 1.
    const auto &k = data.kernels.front();
    const auto back = KernelConfigModel::fromJson(viaCore.kernelConfig.toJson());
    QCOMPARE(back.toJson()["weight_power"].get<double>(), 3.0);
    auto before = viaCore.kernelConfig.toJson();
    before.erase("weight_power");
    const auto one =
        KernelConfigModel::fromJson(KernelConfigModel::build(data.kernels, KernelConfigModel::kNeighbours,
                                                             KernelConfigModel::kUnwrittenWeightPower)
                                        .toJson());
    const auto unweighed = KernelConfigModel::fromJson(before).predictLog2Ratio(k.shape, k.configs);
    QVERIFY(unweighed == one.predictLog2Ratio(k.shape, k.configs));
    QVERIFY(unweighed != back.predictLog2Ratio(k.shape, k.configs));

    // The bounds are powers a model may have; bad values are refused by name, from the command line,
    // the core and a package alike.
    for (double p : {kMinWeightPower, kMaxWeightPower})
        QCOMPARE(KernelConfigModel::fromJson(
                     KernelConfigModel::build(data.kernels, KernelConfigModel::kNeighbours, p).toJson())
                     .toJson()["weight_power"]
                     .get<double>(),
                 p);
    QString err;
    QCOMPARE(testutil::runCli({"train-decisions", kernels, "--kernel-weight-power", "0.1"}, nullptr, &err),
             2);
    QVERIFY2(err.contains("--kernel-weight-power"), qPrintable(err));
    for (double p : {0.1, kMaxWeightPower + 1, std::nan("")}) {
        DecisionTrainOptions bad;
        bad.kernelWeightPower = p;
        QVERIFY_THROWS_EXCEPTION(InvalidInput, trainDecisions(data, bad));
    }
    for (const nlohmann::json &p : {nlohmann::json("3"), nlohmann::json(100.0), nlohmann::json(0.0)}) {
        auto j = viaCore.kernelConfig.toJson();
        j["weight_power"] = p;
        try {
            KernelConfigModel::fromJson(j);
            QFAIL("a bad weight_power was read");
        } catch (const InvalidInput &e) {
            QVERIFY2(std::string(e.what()).find("weight_power") != std::string::npos, e.what());
        }
    }
}

void TestDecisions::trainDecisionsReproducesTheShippedHeldOutFigures() {
    // The figures docs/MODELS.md gives are the ones the shipped data gives again: the H200 packages'
    // and the H100 packages' (the H100 kernels, weighed by plain inverse distance as they were
    // trained; both the H200 sites of every op).
    const std::string h100Kernels =
        testutil::sourcePath("trained_models/h100/h100-kernels.jsonl").toStdString();
    const std::vector<std::pair<std::string, QStringList>> cases = {
        {shipped("h200-ingraph-warm.diode"),
         {QString::fromStdString(shipped("h200-kernels-extras.jsonl")),
          QString::fromStdString(shipped("h200-kernels-steps.jsonl")),
          QString::fromStdString(shipped("h200-sites.jsonl")),
          QString::fromStdString(shipped("h200-sites-as-written.jsonl")),
          QString::fromStdString(shipped("h200-sites-steps.jsonl"))}},
        {testutil::sourcePath("trained_models/h100/h100-ingraph-warm.diode").toStdString(),
         {"--kernel-weight-power", "1", QString::fromStdString(h100Kernels),
          QString::fromStdString(shipped("h200-sites.jsonl")),
          QString::fromStdString(shipped("h200-sites-as-written.jsonl"))}},
    };
    for (const auto &[package, args] : cases) {
        QProcess p;
        p.start(QStringLiteral(DIODE_CLI), QStringList{QStringLiteral("train-decisions")} + args);
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 0);
        const auto report = nlohmann::json::parse(p.readAllStandardOutput().toStdString());
        const auto pkg = ModelPackage::load(package);
        const auto &stored = pkg.manifest()["decisions"];
        QCOMPARE(report["kernel_config"].dump(), stored["kernel_config"]["held_out_by_family"].dump());
        QCOMPARE(report["small_m_form"].dump(), stored["small_m_form"]["held_out_by_family"].dump());
    }
    // The H100 packages decide M = 1 projections (a batch-1 step's): their form model holds mm sites.
    Selector h100(
        ModelPackage::load(testutil::sourcePath("trained_models/h100/h100-ingraph-warm.diode").toStdString()),
        {});
    SmallMSite projection;
    projection.op = "mm";
    projection.m = 1;
    projection.n = 11008;
    projection.k = 4096;
    QVERIFY(h100.decideSmallMForm(projection).reason != "op_not_measured");
}

void TestDecisions::linesOfTwoGpusAreNotTrainedIntoOneModel() {
    // The H100's and the H200's kernel lines together would give one model two SM counts: refused,
    // naming both GPUs. Kernels of one GPU beside another's sites is how the H100 packages are made.
    const std::string h100Kernels =
        testutil::sourcePath("trained_models/h100/h100-kernels.jsonl").toStdString();
    const DecisionData both =
        readDecisionData(std::vector<std::string>{h100Kernels, shipped("h200-kernels.jsonl")});
    try {
        trainDecisions(both);
        QFAIL("kernel lines of two GPUs were trained into one model");
    } catch (const InvalidInput &e) {
        const std::string what = e.what();
        QVERIFY2(what.find("kernel lines of two GPUs") != std::string::npos, e.what());
        QVERIFY2(what.find("H100") != std::string::npos && what.find("H200") != std::string::npos, e.what());
    }
    // A line that does not say its SM count (or its GPU) is of any GPU: only what both lines say is compared.
    DecisionData unsaid = readDecisionData(h100Kernels);
    unsaid.kernels[1].smCount = 0;
    unsaid.kernels[2].gpu.clear();
    QCOMPARE(trainDecisions(unsaid).kernelConfig.kernels(), unsaid.kernels.size());
    const DecisionData borrowed =
        readDecisionData(std::vector<std::string>{h100Kernels, shipped("h200-sites.jsonl")});
    const auto trained = trainDecisions(borrowed);
    QCOMPARE(trained.section["trained_on"]["gpu"].get<std::string>(), borrowed.kernels.front().gpu);
    QCOMPARE(trained.section["trained_on"]["sites_gpu"].get<std::string>(), borrowed.sites.front().gpu);
}

void TestDecisions::heldOutFiguresReadBackWhatTrainingWrote() {
    // What the Validate page's Decisions tab lists: the figures the manifest holds, read back to
    // the counts they were written from, families first and all of them pooled last.
    const auto manifest = ModelPackage::load(shipped("h200-ingraph-warm.diode")).manifest();
    const auto rows = heldOutFigures(manifest);
    const auto &kernels = manifest["decisions"]["kernel_config"]["held_out_by_family"];
    int families = 0;
    for (const auto &row : rows)
        if (row.kind == DecisionKind::KernelConfig && row.scope != "all families") {
            ++families;
            const auto back = KernelConfigEvaluation::fromJson(kernels.at(row.scope), row.scope);
            QCOMPARE(back.toJson().dump(), kernels.at(row.scope).dump());
            QCOMPARE(row.judged, kernels.at(row.scope)["kernels"].get<int>());
        }
    QCOMPARE(families + 1, int(kernels.size()));
    const auto pooled = std::find_if(rows.begin(), rows.end(), [](const DecisionFigures &f) {
        return f.kind == DecisionKind::KernelConfig && f.scope == "all families";
    });
    QVERIFY(pooled != rows.end());
    QCOMPARE(pooled->judged, kernels["all"]["kernels"].get<int>());
    QVERIFY(pooled->pickOverDefault < 1.0 && pooled->bestOverDefault <= pooled->pickOverDefault);
    QVERIFY(rows.back().kind == DecisionKind::SmallMForm); // both kinds, in that order
    QCOMPARE(rows.back().scope, std::string("all families"));

    // A malformed figure is refused by its field, not shown as a zero.
    auto broken = manifest;
    broken["decisions"]["small_m_form"]["held_out_by_family"]["all"]["sites"] = -3;
    try {
        heldOutFigures(broken);
        QFAIL("a negative count was read");
    } catch (const InvalidInput &e) {
        const QString msg = QString::fromUtf8(e.what());
        QVERIFY2(msg.contains("small_m_form.held_out_by_family.all") && msg.contains("\"sites\""), e.what());
    }
    QVERIFY(heldOutFigures(nlohmann::json::object()).empty()); // a package without decisions
}

void TestDecisions::inspectSummarisesTheDecisionModels() {
    // `diode inspect` shows what each decision model was built from and its held-out rows, the
    // manifest's own figures; a package without decision models says what the plugin does instead.
    const std::string pkg = shipped("h200-ingraph-warm.diode");
    const auto manifest = ModelPackage::load(pkg).manifest();
    QProcess p;
    p.start(QStringLiteral(DIODE_CLI), {QStringLiteral("inspect"), QString::fromStdString(pkg)});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 0);
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    const auto &d = manifest["decisions"];
    QVERIFY2(
        out.contains(QStringLiteral("kernel configs: %1 measured kernels; a prediction of the %2 nearest")
                         .arg(d["kernel_config"]["kernels"].size())
                         .arg(d["kernel_config"]["neighbours"].get<int>())),
        qPrintable(out));
    QVERIFY2(out.contains("measured rows (each weighing 1 / (0.25 + distance)^3)"), qPrintable(out));
    QVERIFY2(out.contains("from lines of NVIDIA H200 (model families"), qPrintable(out));
    // A package written before the weight power was a field says the plain inverse distance it was
    // trained with.
    QProcess h100;
    h100.start(
        QStringLiteral(DIODE_CLI),
        {QStringLiteral("inspect"), testutil::sourcePath("trained_models/h100/h100-ingraph-warm.diode")});
    QVERIFY(h100.waitForFinished(60000));
    QVERIFY(
        !ModelPackage::load(testutil::sourcePath("trained_models/h100/h100-ingraph-warm.diode").toStdString())
             .manifest()["decisions"]["kernel_config"]
             .contains("weight_power"));
    QVERIFY2(
        QString::fromUtf8(h100.readAllStandardOutput()).contains("(each weighing 1 / (0.25 + distance)^1)"),
        "the H100 package's inspect says its weight power");
    // The shipped packages are trained on the second sweep's and the step sweep's lines: they say how many
    // configurations they offer beyond the portfolios.
    QVERIFY2(out.contains(
                 QStringLiteral("; %1 configurations beyond the portfolios, measured on every kernel whose "
                                "grid holds them")
                     .arg(d["kernel_config"]["extra_configs"].size())),
             qPrintable(out));
    QVERIFY2(out.contains(QStringLiteral("small-M forms: %1 measured sites of attention, mm")
                              .arg(d["small_m_form"]["sites"].size())),
             qPrintable(out));
    for (const auto &f : heldOutFigures(manifest)) {
        const QString row = QStringLiteral("%1 %2 %3 %4%")
                                .arg(QString::fromStdString(f.scope), -13)
                                .arg(f.judged, 6)
                                .arg(f.changed, 7)
                                .arg(100.0 * f.goodShare, 5, 'f', 1);
        QVERIFY2(out.contains(row), qPrintable(row + "\n" + out));
    }
    // The H100 packages' form model is the H200's sites': both GPUs named.
    p.start(QStringLiteral(DIODE_CLI),
            {QStringLiteral("inspect"), testutil::sourcePath("trained_models/h100/h100-ingraph-warm.diode")});
    QVERIFY(p.waitForFinished(60000));
    QVERIFY(QString::fromUtf8(p.readAllStandardOutput())
                .contains("from lines of NVIDIA H100 80GB HBM3, sites of NVIDIA H200 (model families"));
    p.start(QStringLiteral(DIODE_CLI),
            {QStringLiteral("inspect"),
             testutil::sourcePath("tests/data/packages/h200-ingraph-warm-schema2.diode")});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 0);
    QVERIFY(QString::fromUtf8(p.readAllStandardOutput()).contains("No decisions beside the GEMM kernel"));
}

void TestDecisions::figuresOnLinesSayWhatTheyAreNot() {
    // Judged on another GPU's lines, or on the families the model was built from, the figures say so
    // before they are read; on lines that are neither they say nothing.
    const auto manifest = ModelPackage::load(shipped("h200-ingraph-warm.diode")).manifest();
    const std::string h100Kernels =
        testutil::sourcePath("trained_models/h100/h100-kernels.jsonl").toStdString();
    const auto other = decisionLinesCaveats(manifest, readDecisionData(h100Kernels));
    QCOMPARE(other.size(), size_t(1));
    QVERIFY2(
        other[0].find("of NVIDIA H100 80GB HBM3; this package's kernel-config model is of NVIDIA H200") !=
            std::string::npos,
        other[0].c_str());
    DecisionData own = readDecisionData(shipped("h200-kernels.jsonl"));
    const auto inSample = decisionLinesCaveats(manifest, own);
    QCOMPARE(inSample.size(), size_t(1));
    QVERIFY2(inSample[0].find("not held out") != std::string::npos &&
                 inSample[0].find("llama2-7b") != std::string::npos,
             inSample[0].c_str());
    for (auto &k : own.kernels)
        k.family = "mistral-7b";
    QVERIFY(decisionLinesCaveats(manifest, own).empty());
    QVERIFY(decisionLinesCaveats(nlohmann::json::object(), own).empty()); // a package without decisions
    // diode eval --decision-lines says it on stderr, its JSON unchanged.
    QString out, err;
    QCOMPARE(
        testutil::runCli({"eval", "--package", QString::fromStdString(shipped("h200-ingraph-warm.diode")),
                          "--decision-lines", QString::fromStdString(h100Kernels)},
                         &out, &err),
        0);
    QVERIFY2(err.contains("note: the kernel lines are of NVIDIA H100 80GB HBM3"), qPrintable(err));
    QVERIFY(nlohmann::json::parse(out.toStdString()).contains("kernel_config"));
    // Lines of another kind are named as such, with where kernel and site lines come from.
    try {
        readDecisionLines(R"({"op": "mm", "M": 8, "N": 8, "K": 8})", "problems.jsonl");
        QFAIL("a problem line was read as a kernel line");
    } catch (const InvalidInput &e) {
        QVERIFY2(QString(e.what()).contains("problems.jsonl:1: not a kernel or site line") &&
                     QString(e.what()).contains("diode sweep-kernels"),
                 e.what());
    }
}

QTEST_GUILESS_MAIN(TestDecisions)
#include "tst_decisions.moc"
