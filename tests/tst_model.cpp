#include "testutil.h"

#include "diode/analysis/dataset.h"
#include "diode/analysis/gpupeaks.h"
#include "diode/analysis/metrics.h"
#include "diode/infer/features.h"
#include "diode/infer/gputable.h"
#include "diode/infer/modelpackage.h"
#include "diode/train/trainer.h"

#include <QTemporaryFile>

#include <cmath>
#include <functional>
#include <set>
#include <zlib.h>

#include <unistd.h>

using namespace diode;

namespace {

KernelConfig triton(int bm, int bn, int bk, int stages = 3, int warps = 4) {
    KernelConfig c;
    c.kind = "triton";
    c.name = "mm";
    c.blockM = bm;
    c.blockN = bn;
    c.blockK = bk;
    c.groupM = 8;
    c.numStages = stages;
    c.numWarps = warps;
    return c;
}

MlpWeights tinyWeights(int hidden = 4, int schema = FeatureSchema::kVersion) {
    MlpWeights w;
    const int f = FeatureSchema::size(schema);
    w.layerSizes = {f, hidden, 1};
    w.inputMean.assign(size_t(f), 0.5f);
    w.inputStd.assign(size_t(f), 2.0f);
    w.weights = {std::vector<float>(size_t(hidden * f)), std::vector<float>(size_t(hidden))};
    for (size_t i = 0; i < w.weights[0].size(); ++i)
        w.weights[0][i] = float(std::sin(double(i))) * 0.1f;
    for (size_t i = 0; i < w.weights[1].size(); ++i)
        w.weights[1][i] = 0.3f + 0.1f * float(i);
    w.biases = {std::vector<float>(size_t(hidden), 0.05f), std::vector<float>{-2.0f}};
    return w;
}

std::string packageError(const std::string &bytes) {
    try {
        ModelPackage::fromBytes(bytes);
    } catch (const PackageError &e) {
        return e.what();
    }
    return {};
}

std::vector<TrainingProblem> shippedDataset() {
    Store store(testutil::sourcePath("trained_models/h200/h200-dataset.db").toStdString(),
                Store::Mode::ReadOnly);
    return loadDataset(store, std::nullopt).problems;
}

} // namespace

class TestModel : public QObject {
    Q_OBJECT
private slots:
    // Schema 3 added op_baddbmm and nothing else: the features a schema-1 or -2 package reads of an
    // mm, addmm or bmm problem are the current ones without that input, value for value, under the
    // names the schema-2 package recorded when it was trained (the warm package shipped before
    // baddbmm, kept under tests/data/packages); baddbmm has no input there.
    void olderFeatureSchemasKeepTheirFeatures() {
        const auto shipped = ModelPackage::load(
            testutil::sourcePath("tests/data/packages/h200-ingraph-warm-schema2.diode").toStdString());
        QCOMPARE(shipped.featureSchema(), 2);
        QVERIFY(shipped.manifest()["feature_names"].get<std::vector<std::string>>() ==
                FeatureSchema::names(2));
        QCOMPARE(FeatureSchema::size(2), FeatureSchema::size() - 1);
        const auto &now = FeatureSchema::names();
        const int dropped = int(std::find(now.begin(), now.end(), "op_baddbmm") - now.begin());
        QVERIFY(dropped < FeatureSchema::size());
        const auto hw = HardwareFeatures::forGpu("NVIDIA H200", 132);
        std::vector<KernelConfig> aten(1);
        aten[0].kind = "aten";
        aten[0].name = "extern_kernels.bmm";
        for (const GemmProblem &p : {GemmProblem{GemmOp::Mm, DType::BF16, 1, 1024, 4096, 4096, false, true},
                                     GemmProblem{GemmOp::Addmm, DType::FP16, 1, 16, 4096, 11008, false, true},
                                     GemmProblem{GemmOp::Bmm, DType::FP32, 64, 1, 2048, 128, false, true}})
            for (const KernelConfig &c : {triton(64, 128, 32), aten[0]})
                for (int schema : {1, 2}) {
                    std::vector<float> old, cur;
                    FeatureSchema::compute(p, c, hw, old, schema);
                    FeatureSchema::compute(p, c, hw, cur);
                    QCOMPARE(cur[size_t(dropped)], 0.f);
                    cur.erase(cur.begin() + dropped);
                    QVERIFY2(old == cur, p.label().c_str());
                }
        QVERIFY(!FeatureSchema::knowsOp(GemmOp::Baddbmm, 2));
        QVERIFY(FeatureSchema::knowsOp(GemmOp::Bmm, 1));
        const GemmProblem alibi{GemmOp::Baddbmm, DType::BF16, 512, 1, 2048, 128, false, true};
        std::vector<float> f;
        FeatureSchema::compute(alibi, aten[0], hw, f);
        QCOMPARE(f[size_t(dropped)], 1.f);
        QVERIFY(!shipped.scoresOp(GemmOp::Baddbmm));
        QVERIFY(shipped.scoresOp(GemmOp::Addmm));
        try {
            shipped.predictMs(alibi, aten);
            QFAIL("a schema-2 package scored baddbmm");
        } catch (const InvalidInput &e) {
            QVERIFY2(QString(e.what()).contains("op 'baddbmm' has no input in feature schema 2"), e.what());
        }
    }

    // A cpu sweep of a plan with baddbmm, then training: the package is of the current schema,
    // lists baddbmm among its ops and scores a baddbmm problem as one it was trained on.
    void aPackageTrainedOnBaddbmmScoresIt() {
        QTemporaryDir dir;
        const QString db = dir.filePath("b.db"), pkg = dir.filePath("b.diode");
        QString out, err;
        QCOMPARE(testutil::runCli({"sweep", "--backend", "cpu", "--plan",
                                   testutil::dataPath("plans/cpu-baddbmm.json"), "--db", db},
                                  &out, &err),
                 0);
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM problems WHERE op = 'baddbmm'"), int64_t(12));
        QCOMPARE(
            testutil::scalar(db, "SELECT count(*) FROM measurements m JOIN problems p ON p.id = m.problem_id "
                                 "WHERE p.op = 'baddbmm' AND m.status = 'ok'"),
            int64_t(12 * 4));
        QCOMPARE(testutil::runCli({"train", "--db", db, "--out", pkg, "--epochs", "3", "--members", "1"},
                                  &out, &err),
                 0);
        const auto p = ModelPackage::load(pkg.toStdString());
        QCOMPARE(p.featureSchema(), FeatureSchema::kVersion);
        QCOMPARE(p.manifest()["feature_schema_version"].get<int>(), 3);
        const auto ops = p.manifest()["ops"].get<std::vector<std::string>>();
        QVERIFY(std::find(ops.begin(), ops.end(), "baddbmm") != ops.end());
        QVERIFY(p.scoresOp(GemmOp::Baddbmm));
        const GemmProblem q{GemmOp::Baddbmm, DType::FP16, 4, 32, 128, 32, false, true};
        QCOMPARE(p.unseenProblemFeature(q), std::string());
        KernelConfig cpu;
        cpu.kind = "cpu";
        cpu.name = "tiled";
        cpu.blockM = 16, cpu.blockN = 64, cpu.blockK = 32, cpu.threads = 1;
        const auto ms = p.predictMs(q, {cpu});
        QVERIFY(ms[0] > 0 && std::isfinite(ms[0]));
        // `diode rank` takes a baddbmm line too.
        QTemporaryFile line;
        QVERIFY(line.open());
        line.write(
            R"({"op":"baddbmm","dtype":"fp16","B":4,"M":32,"N":128,"K":32,"b_transposed":true,)"
            R"("candidates":[{"kind":"cpu","name":"tiled","BLOCK_M":16,"BLOCK_N":64,"BLOCK_K":32,"threads":1}]})"
            "\n");
        line.close();
        QCOMPARE(testutil::runCli({"rank", "--package", pkg, "--input", line.fileName()}, &out, &err), 0);
        QVERIFY2(out.contains("predicted_ms"), qPrintable(out + err));
    }

    void featureSchemaHandChecked() {
        const GemmProblem p{GemmOp::Mm, DType::BF16, 1, 1024, 1024, 1000, false, true};
        std::vector<float> f;
        const auto hw = HardwareFeatures::forGpu("NVIDIA H200", 132);
        QCOMPARE(hw.memoryBandwidthTBs, 4.8);
        FeatureSchema::compute(p, triton(128, 128, 64), hw, f);
        QCOMPARE(int(f.size()), FeatureSchema::size());
        const auto &n = FeatureSchema::names();
        auto at = [&](const char *name) {
            return f[size_t(std::find(n.begin(), n.end(), name) - n.begin())];
        };
        QCOMPARE(at("log2_M"), 10.f);
        QCOMPARE(at("dtype_bf16"), 1.f);
        QCOMPARE(at("b_transposed"), 1.f);
        QCOMPARE(at("M_mod128"), 1.f);
        QCOMPARE(at("K_mod16"), 0.f); // 1000 = 8 * 125
        QCOMPARE(at("K_mod8"), 1.f);
        QCOMPARE(at("log2_tiles"), 6.f); // 8 x 8 tiles of 128x128
        QVERIFY(std::abs(at("wave_tail") - float(64.0 / 132.0)) < 1e-6);
        QVERIFY(std::abs(at("pad_waste_K") - float(1024.0 / 1000.0 - 1)) <
                1e-6); // 16 iterations of 64 over K=1000
        QVERIFY(std::abs(at("log2_smem_kb") - float(std::log2(3 * (128 * 64 + 64 * 128) * 2 / 1024.0))) <
                1e-5);
        // ATen candidates carry no tile features.
        std::vector<KernelConfig> aten(1);
        aten[0].kind = "aten";
        aten[0].name = "extern_kernels.mm";
        f.clear();
        FeatureSchema::compute(p, aten[0], hw, f);
        QCOMPARE(at("is_aten"), 1.f);
        QCOMPARE(at("log2_BM"), 0.f);
        KernelConfig cpu;
        cpu.kind = "cpu";
        QVERIFY_THROWS_EXCEPTION(InvalidInput, FeatureSchema::check(cpu, "x")); // no tile
        // The cpu backend's tiled GEMM: neither ATen nor Triton, its threads where warps are,
        // fp32 tiles, K = 1000 not a multiple of 64.
        cpu.name = "tiled";
        cpu.blockM = 32;
        cpu.blockN = 64;
        cpu.blockK = 64;
        cpu.threads = 4;
        QVERIFY(FeatureSchema::describes(cpu));
        FeatureSchema::check(cpu, "x");
        f.clear();
        FeatureSchema::compute(p, cpu, hw, f);
        QCOMPARE(int(f.size()), FeatureSchema::size());
        QCOMPARE(at("is_aten"), 0.f);
        QCOMPARE(at("is_triton"), 0.f);
        QCOMPARE(at("tpl_other"), 0.f);
        QCOMPARE(at("log2_BM"), 5.f);
        QCOMPARE(at("log2_num_warps"), 2.f);
        QCOMPARE(at("num_stages"), 0.f);
        QCOMPARE(at("even_k"), 0.f);
        QCOMPARE(at("log2_tiles"), 9.f); // 32 x 16 tiles of 32x64
        QVERIFY(std::abs(at("log2_smem_kb") - float(std::log2((32 * 64 + 64 * 64) * 4 / 1024.0))) < 1e-5);
        QCOMPARE(at("log2_M"), 10.f); // the problem's features are the same for every kind
    }

    void splitIsByProblemAndSeeded() {
        const auto a = DataSplit::byProblem(100, 0.15, 0.15, 3), b = DataSplit::byProblem(100, 0.15, 0.15, 3);
        const auto c = DataSplit::byProblem(100, 0.15, 0.15, 4);
        QCOMPARE(a.test, b.test);
        QVERIFY(a.test != c.test);
        QCOMPARE(a.test.size(), size_t(15));
        QCOMPARE(a.validation.size(), size_t(15));
        std::set<size_t> all;
        for (auto *v : {&a.train, &a.validation, &a.test})
            all.insert(v->begin(), v->end());
        QCOMPARE(all.size(), size_t(100)); // disjoint and complete
    }

    void metricsOnHandComputedCases() {
        RankedProblem p{{}, {1.0, 2.0, 4.0, std::nullopt}, {3, 1, 2, 0}, {}};
        // Predicted order: 3 (no time), 1 (2 ms), 2 (4 ms), 0 (1 ms).
        QCOMPARE(topKEfficiency(p, 1), 0.0); // the pick has no timing
        QCOMPARE(topKEfficiency(p, 2), 0.5);
        QCOMPARE(topKEfficiency(p, 4), 1.0);
        RankedProblem q{{}, {1.0, 2.0, 4.0}, {1, 2, 3}, {1.0, 2.0, 8.0}};
        const auto m = evaluate({q});
        QCOMPARE(m.top1.mean, 1.0);
        QCOMPARE(m.hit1, 1.0);
        QCOMPARE(m.spearman, 1.0);
        QVERIFY(std::abs(m.mape - (1.0 / 3.0)) < 1e-12); // |8-4|/4 on one of three
        QVERIFY(std::abs(m.rmseLog - std::sqrt(std::log(2.0) * std::log(2.0) / 3)) < 1e-12);
        const auto d = Distribution::of({0.5, 1.0, 0.9, 0.8, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0});
        QCOMPARE(d.min, 0.5);
        QCOMPARE(d.p10, 0.5);
        QVERIFY(std::abs(d.mean - 0.92) < 1e-12);
    }

    void packageRoundTrip() {
        const auto w = tinyWeights();
        const auto pkg = ModelPackage::fromBytes(
            ModelPackage::toBytes({{"hardware", {{"gpu", "NVIDIA H200"}, {"sm_count", 132}}}}, w));
        QCOMPARE(pkg.manifest()["feature_schema_version"].get<int>(), FeatureSchema::kVersion);
        QCOMPARE(pkg.hardware().smCount, 132);
        const GemmProblem p{GemmOp::Addmm, DType::FP16, 1, 16, 4096, 4096, false, true};
        const auto ms = pkg.predictMs(p, {triton(16, 64, 128), triton(64, 128, 64)});
        QCOMPARE(ms.size(), size_t(2));
        // The same network by hand: normalise, one ReLU layer, linear output, exp.
        std::vector<float> f;
        FeatureSchema::compute(p, triton(16, 64, 128), pkg.hardware(), f);
        double out = w.biases[1][0];
        for (int h = 0; h < 4; ++h) {
            double a = w.biases[0][size_t(h)];
            for (int i = 0; i < FeatureSchema::size(); ++i)
                a += w.weights[0][size_t(h * FeatureSchema::size() + i)] * (f[size_t(i)] - 0.5) / 2.0;
            out += w.weights[1][size_t(h)] * std::max(0.0, a);
        }
        QVERIFY(std::abs(ms[0] / std::exp(out) - 1) < 1e-5);
    }

    // The reader's kernels pad hidden layers to 64 outputs and work in tiles of several rows:
    // widths that are not multiples of the tile, row counts with every remainder, and a network
    // without hidden layers must all give the plain formula's result.
    void oddShapesMatchThePlainFormula() {
        const int f = FeatureSchema::size();
        for (const std::vector<int> &sizes :
             {std::vector<int>{f, 70, 3, 1}, std::vector<int>{f, 1}, std::vector<int>{f, 128, 128, 64, 1}}) {
            MlpWeights w;
            w.layerSizes = sizes;
            for (int i = 0; i < f; ++i) {
                w.inputMean.push_back(0.1f * float(i % 7));
                w.inputStd.push_back(0.5f + 0.25f * float(i % 5));
            }
            for (size_t l = 0; l + 1 < sizes.size(); ++l) {
                w.weights.emplace_back(size_t(sizes[l] * sizes[l + 1]));
                for (size_t i = 0; i < w.weights.back().size(); ++i)
                    w.weights.back()[i] = float(std::cos(double(i * (l + 3)))) * 0.2f;
                w.biases.emplace_back(size_t(sizes[l + 1]));
                for (size_t i = 0; i < w.biases.back().size(); ++i)
                    w.biases.back()[i] = 0.01f * float(int(i % 9) - 4);
            }
            const auto pkg = ModelPackage::fromBytes(ModelPackage::toBytes({}, w));
            for (int rows : {1, 2, 5, 6, 7, 13, 20}) {
                Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> x(rows, f);
                for (int r = 0; r < rows; ++r)
                    for (int i = 0; i < f; ++i)
                        x(r, i) = float(std::sin(double(r * f + i))) * 3.f;
                const Eigen::VectorXf y = pkg.forward(x);
                QCOMPARE(int(y.size()), rows);
                for (int r = 0; r < rows; ++r) {
                    std::vector<double> h(static_cast<size_t>(f), 0.0);
                    for (int i = 0; i < f; ++i)
                        h[size_t(i)] = (x(r, i) - w.inputMean[size_t(i)]) / w.inputStd[size_t(i)];
                    for (size_t l = 0; l + 1 < sizes.size(); ++l) {
                        std::vector<double> next(size_t(sizes[l + 1]));
                        for (int o = 0; o < sizes[l + 1]; ++o) {
                            double a = w.biases[l][size_t(o)];
                            for (int i = 0; i < sizes[l]; ++i)
                                a += double(w.weights[l][size_t(o * sizes[l] + i)]) * h[size_t(i)];
                            next[size_t(o)] = l + 2 < sizes.size() ? std::max(0.0, a) : a;
                        }
                        h = std::move(next);
                    }
                    QVERIFY2(std::abs(double(y[r]) - h[0]) < 1e-4 * std::max(1.0, std::abs(h[0])),
                             qPrintable(QString("layers %1, %2 rows, row %3: %4 vs %5")
                                            .arg(sizes.size())
                                            .arg(rows)
                                            .arg(r)
                                            .arg(y[r])
                                            .arg(h[0])));
                }
            }
        }
        // predictMs into a caller's buffer gives what the allocating overload gives.
        const auto pkg = ModelPackage::fromBytes(ModelPackage::toBytes({}, tinyWeights()));
        const GemmProblem p{GemmOp::Mm, DType::BF16, 1, 512, 512, 512, false, false};
        const std::vector<KernelConfig> cands{triton(64, 64, 32), triton(128, 64, 64), triton(32, 32, 32)};
        std::vector<double> into{1.0};
        pkg.predictMs(p, cands, into);
        QCOMPARE(into, pkg.predictMs(p, cands));
    }

    void badPackagesNameTheFault() {
        const std::string good = ModelPackage::toBytes({}, tinyWeights());
        QVERIFY(packageError(good).empty());
        // Truncated anywhere.
        for (size_t cut : {size_t(0), size_t(7), size_t(15), size_t(200), good.size() / 2, good.size() - 1})
            QVERIFY2(!packageError(good.substr(0, cut)).empty(), qPrintable(QString::number(cut)));
        QVERIFY(packageError(good.substr(0, good.size() - 1)).find("truncated") != std::string::npos);
        // A bit flipped in the weights, and in the manifest.
        std::string flipped = good;
        flipped[flipped.size() - 9] ^= 0x10;
        QVERIFY2(packageError(flipped).find("checksum mismatch in tensor 'layer1.weight'") !=
                     std::string::npos,
                 packageError(flipped).c_str());
        flipped = good;
        flipped[40] ^= 0x01;
        QVERIFY(packageError(flipped).find("manifest checksum mismatch") != std::string::npos);
        // Written by a newer format.
        std::string newer = good;
        newer[8] = 9;
        QVERIFY(packageError(newer).find("package format 9; this build reads up to 2") != std::string::npos);
        // NaN and infinite weights.
        auto nan = tinyWeights();
        nan.weights[0][3] = std::nanf("");
        QVERIFY(packageError(ModelPackage::toBytes({}, nan)).find("'layer0.weight' holds NaN") !=
                std::string::npos);
        auto inf = tinyWeights();
        inf.biases[1][0] = INFINITY;
        QVERIFY(packageError(ModelPackage::toBytes({}, inf)).find("'layer1.bias' holds NaN or infinite") !=
                std::string::npos);
        // Tensor data that disagrees with the shapes in the manifest.
        auto shape = tinyWeights();
        shape.weights[0].pop_back();
        QVERIFY(packageError(ModelPackage::toBytes({}, shape)).find("disagrees with its shape") !=
                std::string::npos);
        auto width = tinyWeights();
        width.layerSizes[0] = 7;
        QVERIFY(packageError(ModelPackage::toBytes({}, width)).find("do not fit") != std::string::npos);
        QVERIFY(packageError("PK\x03\x04 a zip file, not a package").find("bad magic") != std::string::npos);
    }

    void tooFewProblemsIsRefused() {
        auto data = shippedDataset();
        data.resize(5);
        try {
            train(data, {});
            QFAIL("trained on 5 problems");
        } catch (const InvalidInput &e) {
            QVERIFY2(QString(e.what()).contains("at least 20 problems"), e.what());
        }
    }

    // Real LibTorch training on the shipped data (few epochs, a three-network ensemble trained in
    // batches of problems with both ranking terms), then the package reader's predictions
    // against LibTorch's on every test row.
    void trainedPackageMatchesLibTorch() {
        const auto data = shippedDataset();
        QVERIFY(data.size() >= 300);
        TrainOptions o;
        o.epochs = 15;
        o.patience = 1000;
        o.seed = 5;
        o.members = 3;
        o.batchProblems = 32;
        o.listWeight = 1;
        int reports = 0, lastStep = 0;
        std::set<int> members;
        o.progress = [&](const EpochReport &r) {
            ++reports;
            members.insert(r.member);
            QCOMPARE(r.step, lastStep + 1);
            lastStep = r.step;
        };
        const auto res = train(data, o);
        QCOMPARE(reports, 45);
        QCOMPARE(members.size(), size_t(3));
        QCOMPARE(res.members.size(), size_t(3));
        QCOMPARE(res.epochsRun, 45);
        QVERIFY(res.members[0].weights[0] != res.members[1].weights[0]);
        QVERIFY(res.testMetrics["model"]["all"]["problems"].get<int>() > 30);
        const std::set<size_t> trained(res.split.train.begin(), res.split.train.end());
        for (size_t t : res.split.test)
            QVERIFY(!trained.count(t));
        const std::string bytes = ModelPackage::toBytes({{"hardware", res.hardware}}, res.members);
        const auto pkg = ModelPackage::fromBytes(bytes);
        QCOMPARE(pkg.members(), 3);
        QCOMPARE(pkg.manifest()["format_version"].get<int>(), 2);
        const int f = FeatureSchema::size();
        QCOMPARE(res.testFeatures.size(), res.testTorchOutput.size());
        for (size_t r = 0; r < res.testFeatures.size(); ++r) {
            Eigen::Map<const Eigen::Matrix<float, 1, Eigen::Dynamic, Eigen::RowMajor>> x(
                res.testFeatures[r].data(), f);
            const double eigenMs = std::exp(double(pkg.forward(x)[0]));
            const double torchMs = std::exp(double(res.testTorchOutput[r]));
            QVERIFY2(std::abs(eigenMs / torchMs - 1) < 1e-4,
                     qPrintable(QString("row %1: %2 vs %3").arg(r).arg(eigenMs).arg(torchMs)));
        }
        // The ensemble predicts the mean of its members' ln(ms).
        for (size_t r = 0; r < 5; ++r) {
            Eigen::Map<const Eigen::Matrix<float, 1, Eigen::Dynamic, Eigen::RowMajor>> x(
                res.testFeatures[r].data(), f);
            double sum = 0;
            for (const auto &m : res.members)
                sum += double(ModelPackage::fromBytes(ModelPackage::toBytes({}, m)).forward(x)[0]);
            QVERIFY(std::abs(sum / 3 - double(pkg.forward(x)[0])) < 1e-4);
        }
        // The same seed gives the same model.
        lastStep = 0;
        const auto again = train(data, o);
        for (size_t m = 0; m < 3; ++m)
            QCOMPARE(again.members[m].biases.back(), res.members[m].biases.back());
    }

    // Fine-tuning (`diode train --init`) starts from a package's networks as written: with no
    // epoch to run, the result is the package itself; with epochs, the start counts as epoch 0,
    // so no member ends worse on its validation problems than the network it started from.
    void fineTuningStartsFromThePackage() {
        const auto data = shippedDataset();
        TrainOptions o;
        o.epochs = 3;
        o.patience = 1000;
        o.members = 2;
        const auto base = train(data, o);
        QTemporaryDir dir;
        const QString file = dir.filePath("base.diode");
        ModelPackage::save(file.toStdString(), {{"hardware", base.hardware}}, base.members);
        const auto start = packageWeights(file.toStdString());
        QCOMPARE(start.size(), size_t(2));
        for (size_t m = 0; m < 2; ++m) {
            QCOMPARE(start[m].layerSizes, base.members[m].layerSizes);
            QCOMPARE(start[m].weights, base.members[m].weights);
            QCOMPARE(start[m].biases, base.members[m].biases);
            QCOMPARE(start[m].inputStd, base.members[m].inputStd);
        }
        TrainOptions none = o;
        none.epochs = 0;
        none.seed = 9; // another split: the start is kept whatever the data
        const auto same = train(data, none, &start);
        for (size_t m = 0; m < 2; ++m) {
            QCOMPARE(same.members[m].weights, start[m].weights);
            QCOMPARE(same.members[m].biases, start[m].biases);
            QCOMPARE(same.bestEpochs[m], 0);
        }
        // Three members from two networks: member 2 starts from network 0 again.
        TrainOptions tuned = o;
        tuned.members = 3;
        tuned.learningRate = 3e-4;
        const auto res = train(data, tuned, &start);
        QCOMPARE(res.members.size(), size_t(3));
        QCOMPARE(res.members[2].layerSizes, start[0].layerSizes);
        QVERIFY(res.testMetrics["model"]["all"]["problems"].get<int>() > 30);
        // A package whose width is not this build's feature schema is refused by name.
        auto narrow = start;
        narrow[0].layerSizes.front() = 3;
        try {
            train(data, tuned, &narrow);
            QFAIL("a package of another width was fine-tuned");
        } catch (const InvalidInput &e) {
            QVERIFY2(QString(e.what()).contains("takes 3 features"), e.what());
        }
        // A package of other times than the data's is refused before training.
        QString out, err;
        QCOMPARE(
            testutil::runCli({"train", "--db", testutil::sourcePath("trained_models/h200/h200-dataset.db"),
                              "--init", testutil::sourcePath("trained_models/h200/h200-ingraph-warm.diode"),
                              "--out", dir.filePath("x.diode")},
                             &out, &err),
            2);
        QVERIFY2(err.contains("was trained on graph_warm times; the data's are inductor_autotune"),
                 qPrintable(err));
        QVERIFY(!QFile::exists(dir.filePath("x.diode")));
        // Fine-tuned through the CLI: the manifest names its start and records the hardware the
        // data was measured on (the runs' versions, the GPU table's facts).
        QCOMPARE(
            testutil::runCli({"train", "--db", testutil::sourcePath("trained_models/h200/h200-dataset.db"),
                              "--init", testutil::sourcePath("trained_models/h200/h200-gemm-mlp-v2.diode"),
                              "--out", dir.filePath("x.diode")},
                             &out, &err),
            2);
        QVERIFY2(err.contains("was trained on feature schema 1; fine-tuning computes schema 3"),
                 qPrintable(err));
        QCOMPARE(
            testutil::runCli({"train", "--db", testutil::sourcePath("trained_models/h200/h200-ingraph.db"),
                              "--init", testutil::sourcePath("trained_models/h200/h200-ingraph-warm.diode"),
                              "--epochs", "1", "--members", "1", "--out", dir.filePath("ft.diode")},
                             &out, &err),
            0);
        const auto m = ModelPackage::load(dir.filePath("ft.diode").toStdString()).manifest();
        QCOMPARE(m["fine_tuned_from"]["package"].get<std::string>(), std::string("h200-ingraph-warm.diode"));
        QCOMPARE(m["hardware"]["gpu"].get<std::string>(), std::string("NVIDIA H200"));
        QCOMPARE(m["hardware"]["arch"].get<std::string>(), std::string("9.0"));
        QCOMPARE(m["hardware"]["l2_mb"].get<int>(), 50);
        QCOMPARE(m["hardware"]["memory_mb"].get<int64_t>(), int64_t(143155));
        QCOMPARE(m["hardware"]["torch"], nlohmann::json::array({"2.11.0+cu130"}));
        QCOMPARE(m["hardware"]["drivers"], nlohmann::json::array({"580.159.04"}));
        // The data has Inductor's own benchmark times on some problems: max-autotune's pick is a
        // baseline of the test split on those, beside plain torch.compile's.
        const auto &tested = m["metrics"]["test_split"];
        const auto autotuned = tested["baselines"]["max-autotune"]["problems"].get<int>();
        QVERIFY2(autotuned > 0 && autotuned < tested["model"]["all"]["problems"].get<int>(),
                 tested.dump().c_str());
        QVERIFY(tested["baselines"]["max-autotune"]["top1_efficiency"]["mean"].get<double>() > 0.5);
    }

    // An ensemble's manifest that disagrees with its tensors or its format is refused by name.
    void ensembleManifestIsChecked() {
        const auto w = tinyWeights();
        const std::string two = ModelPackage::toBytes({}, std::vector<MlpWeights>{w, w});
        QCOMPARE(ModelPackage::fromBytes(two).members(), 2);
        auto rewrite = [&](const std::function<void(nlohmann::json &)> &edit, uint32_t version) {
            // Re-emit the file with an edited manifest (and a fresh manifest checksum).
            const uint32_t mlen = uint32_t(uint8_t(two[12])) | uint32_t(uint8_t(two[13])) << 8 |
                                  uint32_t(uint8_t(two[14])) << 16 | uint32_t(uint8_t(two[15])) << 24;
            auto m = nlohmann::json::parse(two.substr(16, mlen));
            edit(m);
            const std::string text = m.dump();
            std::string out = two.substr(0, 8);
            for (uint32_t v : {version, uint32_t(text.size())})
                for (int i = 0; i < 4; ++i)
                    out.push_back(char((v >> (8 * i)) & 0xff));
            out += text;
            const uint32_t c =
                uint32_t(crc32(0L, reinterpret_cast<const Bytef *>(text.data()), uInt(text.size())));
            for (int i = 0; i < 4; ++i)
                out.push_back(char((c >> (8 * i)) & 0xff));
            out += two.substr(16 + mlen + 4);
            return packageError(out);
        };
        QVERIFY(rewrite([](nlohmann::json &) {}, 1).find("format 1 cannot hold 2 member networks") !=
                std::string::npos);
        QVERIFY(rewrite([](nlohmann::json &m) { m["architecture"]["members"] = 3; }, 2)
                    .find("lists 12 tensors; the architecture needs 18") != std::string::npos);
        QVERIFY(rewrite([](nlohmann::json &m) { m["architecture"]["members"] = 0; }, 2)
                    .find("members 0 is out of range") != std::string::npos);
        QVERIFY(rewrite([](nlohmann::json &m) { m["tensors"][6]["name"] = "member0.input_mean"; }, 2)
                    .find("the architecture needs 'member1.input_mean'") != std::string::npos);
    }

    // What a package never saw is read from its normalisation: a flag feature with standard
    // deviation exactly 1 never varied in training and its mean is the one value seen.
    void unseenProblemFlagsComeFromTheNormalisation() {
        auto w = tinyWeights(); // every feature varied (std 2)
        const GemmProblem dW{GemmOp::Mm, DType::BF16, 1, 1024, 4096, 8192, true, false};
        const GemmProblem fwd{GemmOp::Mm, DType::BF16, 1, 1024, 4096, 8192, false, true};
        auto pkgWith = [&](const MlpWeights &x) {
            return ModelPackage::fromBytes(ModelPackage::toBytes({}, x));
        };
        QCOMPARE(pkgWith(w).unseenProblemFeature(dW), std::string());
        const auto &names = FeatureSchema::names();
        auto index = [&](const char *n) {
            return size_t(std::find(names.begin(), names.end(), n) - names.begin());
        };
        w.inputStd[index("a_transposed")] = 1.0f;
        w.inputMean[index("a_transposed")] = 0.0f;
        QCOMPARE(pkgWith(w).unseenProblemFeature(dW), std::string("a_transposed = 1"));
        QCOMPARE(pkgWith(w).unseenProblemFeature(fwd), std::string());
        w.inputStd[index("dtype_fp32")] = 1.0f; // trained on fp32 alone
        w.inputMean[index("dtype_fp32")] = 1.0f;
        QCOMPARE(pkgWith(w).unseenProblemFeature(fwd), std::string("dtype_fp32 = 0"));
        w.inputStd[index("log2_M")] = 1.0f; // not a flag: a size never judges coverage
        w.inputMean[index("log2_M")] = 3.0f;
        QCOMPARE(pkgWith(w).unseenProblemFeature({GemmOp::Mm, DType::FP32, 1, 64, 64, 64, false, false}),
                 std::string());
    }

    // One rule for "may a package made on one GPU serve another": the same model by name, a
    // similar one of the same architecture with a distance, never across architectures.
    void gpuTransferRule() {
        QCOMPARE(gpuTransfer("NVIDIA H200", "h200").kind, GpuTransfer::Same);
        const auto h100 = gpuTransfer("NVIDIA H200", "NVIDIA H100 80GB HBM3", "9.0", 132);
        QCOMPARE(h100.kind, GpuTransfer::Similar);
        QVERIFY(std::abs(h100.distance - std::log(4.8 / 3.35)) < 1e-9);
        QVERIFY2(h100.why.find("same architecture (9.0)") != std::string::npos, h100.why.c_str());
        const auto h20 = gpuTransfer("NVIDIA H200", "NVIDIA H20");
        QCOMPARE(h20.kind, GpuTransfer::Similar);
        QVERIFY(h20.distance > h100.distance); // fewer SMs, more L2, other bandwidth
        QVERIFY(gpuTransfer("NVIDIA H100 80GB HBM3", "NVIDIA H200").distance ==
                gpuTransfer("NVIDIA H200", "NVIDIA H100 80GB HBM3").distance);
        // A PCIe part has fewer SMs than the table's SXM entry: the device's own count counts.
        QVERIFY(gpuTransfer("NVIDIA H200", "NVIDIA H100 PCIe", "9.0", 114).distance > h100.distance);
        const auto a100 = gpuTransfer("NVIDIA H200", "NVIDIA A100-SXM4-80GB", "8.0");
        QCOMPARE(a100.kind, GpuTransfer::Refused);
        QVERIFY2(a100.why.find("architecture 8.0") != std::string::npos, a100.why.c_str());
        QCOMPARE(gpuTransfer("NVIDIA H200", "AMD Instinct MI300X").kind, GpuTransfer::Refused);
        QCOMPARE(gpuTransfer("Some Lab GPU", "NVIDIA H200").kind, GpuTransfer::Refused);
        QCOMPARE(gpuTransfer("NVIDIA H200", "NVIDIA Mystery", "").kind, GpuTransfer::Refused);
        const auto unknownSameArch = gpuTransfer("NVIDIA H200", "NVIDIA Mystery", "9.0");
        QCOMPARE(unknownSameArch.kind, GpuTransfer::Similar);
        QVERIFY(unknownSameArch.distance > h20.distance);
    }

    // One GPU table, most specific names first: every entry finds itself, and the features and
    // the roofline read the same numbers. A GH200 is itself from feature schema 2 on; a schema-1
    // package still loads and sees it as the H200 it was trained to see; schema 3 is refused.
    void gpuTableAndFeatureSchemaVersions() {
        for (const auto &g : knownGpus()) {
            const GpuSpec *found = findGpu(std::string("NVIDIA ") + g.match + " 80GB");
            QVERIFY2(found == &g, g.match);
        }
        QCOMPARE(HardwareFeatures::forGpu("NVIDIA GH200 480GB", 0).memoryBandwidthTBs, 4.0);
        QCOMPARE(HardwareFeatures::forGpu("NVIDIA GH200 480GB", 0, 1).memoryBandwidthTBs, 4.8);
        QCOMPARE(HardwareFeatures::forGpu("NVIDIA H200", 0, 1).memoryBandwidthTBs,
                 HardwareFeatures::forGpu("NVIDIA H200", 0).memoryBandwidthTBs);
        QCOMPARE(knownPeaks("NVIDIA H200")->bandwidthTBs,
                 HardwareFeatures::forGpu("NVIDIA H200", 0).memoryBandwidthTBs);
        QVERIFY(!knownPeaks("NVIDIA H20"));

        // Schemas 1 and 2 have the same inputs (1 looked a GH200 up as an H200); 3 adds op_baddbmm.
        const std::string current = ModelPackage::toBytes(
            {{"hardware", {{"gpu", "NVIDIA GH200 480GB"}, {"sm_count", 132}}}}, {tinyWeights()});
        const std::string older = ModelPackage::toBytes(
            {{"hardware", {{"gpu", "NVIDIA GH200 480GB"}, {"sm_count", 132}}}}, {tinyWeights(4, 2)});
        auto relabelled = [](const std::string &bytes, int schema) {
            const uint32_t mlen = uint32_t(uint8_t(bytes[12])) | uint32_t(uint8_t(bytes[13])) << 8 |
                                  uint32_t(uint8_t(bytes[14])) << 16 | uint32_t(uint8_t(bytes[15])) << 24;
            auto m = nlohmann::json::parse(bytes.substr(16, mlen));
            m["feature_schema_version"] = schema;
            const std::string text = m.dump();
            std::string out = bytes.substr(0, 12);
            for (int i = 0; i < 4; ++i)
                out.push_back(char((uint32_t(text.size()) >> (8 * i)) & 0xff));
            out += text;
            const uint32_t c =
                uint32_t(crc32(0L, reinterpret_cast<const Bytef *>(text.data()), uInt(text.size())));
            for (int i = 0; i < 4; ++i)
                out.push_back(char((c >> (8 * i)) & 0xff));
            out += bytes.substr(16 + mlen + 4);
            return out;
        };
        QCOMPARE(ModelPackage::fromBytes(current).hardware().memoryBandwidthTBs, 4.0);
        QCOMPARE(ModelPackage::fromBytes(relabelled(older, 2)).hardware().memoryBandwidthTBs, 4.0);
        QCOMPARE(ModelPackage::fromBytes(relabelled(older, 1)).hardware().memoryBandwidthTBs, 4.8);
        const GemmProblem p{GemmOp::Mm, DType::BF16, 1, 512, 512, 512, false, false};
        QVERIFY(ModelPackage::fromBytes(relabelled(older, 1)).predictMs(p, {triton(64, 64, 32)}) !=
                ModelPackage::fromBytes(relabelled(older, 2)).predictMs(p, {triton(64, 64, 32)}));
        // A network whose width is not its schema's is refused, naming both.
        QVERIFY(packageError(relabelled(current, 2)).find("feature schema 2") != std::string::npos);
        QVERIFY(packageError(relabelled(current, 4))
                    .find("package uses feature schema 4; this build reads schemas 1 to 3") !=
                std::string::npos);
        QVERIFY(packageError(relabelled(current, 0)).find("feature schema 0") != std::string::npos);
    }

    // The cpu pipeline end to end, as docs/CLI.md runs it (its exact plan and command lines, in
    // a fresh folder): a cpu sweep's times are `cpu`, the default for a cpu database, a model
    // trains on them and says it is a cpu model, eval measures it on its test split without
    // writing the database unless asked, and the measurements export.
    void cpuDatabaseTrainsOnCpuTimes() {
        QTemporaryDir dir;
        const QString db = dir.filePath("cpu.db"), pkg = dir.filePath("cpu.diode");
        // `diode ...` run in `dir`, as a newcomer types it there.
        auto diodeIn = [&dir](const QStringList &args, QString *out, QString *err) {
            return testutil::runCli(args, out, err, 600000, dir.path());
        };
        QString out, err;
        QCOMPARE(diodeIn({"sweep", "--backend", "cpu", "--plan",
                          testutil::sourcePath("resources/plans/cpu-smoke.json"), "--db", "cpu.db"},
                         &out, &err),
                 0);
        QCOMPARE(
            testutil::scalar(db, "SELECT count(*) FROM measurements WHERE method = 'cpu' AND status = 'ok'"),
            26 * 16);
        QCOMPARE(diodeIn({"train", "--db", "cpu.db"}, &out, &err), 0);
        QVERIFY2(err.contains("training on cpu times (default: the data holds cpu-backend times)"),
                 qPrintable(err));
        QVERIFY2(err.contains("wrote cpu.diode") && err.contains("a cpu model"), qPrintable(err));
        QVERIFY2(out.contains(QRegularExpression("held-out test problem lines \\([1-9][0-9]* of 26,")),
                 qPrintable(out));
        const auto trained = ModelPackage::load(pkg.toStdString());
        QVERIFY(trained.timingMethod() == TimingMethod::Cpu);
        QCOMPARE(trained.manifest()["timing_method"].get<std::string>(), std::string("cpu"));

        QCOMPARE(diodeIn({"eval", "--package", "cpu.diode", "--db", "cpu.db"}, &out, &err), 0);
        QVERIFY2(err.contains("measuring on the ") && err.contains("problems of cpu.db the model never saw"),
                 qPrintable(err));
        QVERIFY2(out.contains(QRegularExpression("^model\\s+[0-9.]+", QRegularExpression::MultilineOption)),
                 qPrintable(out));
        QVERIFY2(err.contains("predictions not stored (--store-predictions"), qPrintable(err));
        // The baseline named for what it is on cpu data (no torch.compile, no ATen), as the
        // workbench names it, and a handful of held-out problems said to be that.
        QVERIFY2(out.contains(QRegularExpression("\nthe plan's first tile\\s+[0-9.]+")) &&
                     !out.contains(QRegularExpression("\n(aten|first-config|plain torch.compile)\\s")),
                 qPrintable(out));
        QVERIFY2(out.contains(QRegularExpression("warning: only [0-9]+ held-out problems?: below 30")),
                 qPrintable(out));
        QCOMPARE(diodeIn({"inspect", "cpu.diode"}, &out, &err), 0);
        QVERIFY2(out.contains("hardware      ") && !out.contains("SMs") && !out.contains("ATen guard") &&
                     out.contains("selection     the tile predicted fastest"),
                 qPrintable(out));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM predictions"), int64_t(0));
        QCOMPARE(
            diodeIn({"eval", "--package", "cpu.diode", "--db", "cpu.db", "--store-predictions"}, &out, &err),
            0);
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM predictions"), int64_t(26 * 16));
        QCOMPARE(diodeIn({"export", "--db", "cpu.db", "--format", "csv", "--out", "cpu.csv"}, &out, &err), 0);
        QVERIFY2(err.contains("416 rows written to cpu.csv"), qPrintable(err));

        // The Inductor plugin lists a cpu model as unusable and never loads it.
        QProcess py;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("PYTHONPATH", testutil::sourcePath("plugin/python"));
        env.insert("TORCH_DIODE_AUTOREGISTER", "0");
        env.insert("TORCH_DIODE_LIBRARY", QStringLiteral(DIODE_INDUCTOR_LIBRARY));
        py.setProcessEnvironment(env);
        py.start(QStringLiteral(PYTHON3),
                 {"-c",
                  "import sys, json; from torch_diode import _models; "
                  "m = _models.describe(sys.argv[1], 'test', {'gpu': 'NVIDIA H200'}); "
                  "print(json.dumps([m.get('error', ''), _models.best_for({'gpu': 'NVIDIA H200'}, [m], "
                  "'warm')[0]]))",
                  pkg});
        QVERIFY(py.waitForFinished(60000));
        const QString said = QString::fromUtf8(py.readAllStandardOutput() + py.readAllStandardError());
        QVERIFY2(said.contains("a cpu model") && said.contains("null]"), qPrintable(said));

        QCOMPARE(testutil::runCli({"train", "--db", db, "--out", pkg, "--method", "cpu", "--epochs", "2"},
                                  &out, &err),
                 0);
        QVERIFY2(err.contains("training on cpu times (--method)"), qPrintable(err));
        QCOMPARE(testutil::runCli({"train", "--db", db, "--out", pkg, "--method", "graph_warm"}, &out, &err),
                 2);
        QVERIFY2(err.contains("the data has no successful graph_warm times; it has cpu (416)"),
                 qPrintable(err));
        // Packages from before timing methods were Inductor's autotune numbers; unknown names are refused.
        const auto shipped = ModelPackage::load(
            testutil::sourcePath("trained_models/h200/h200-gemm-mlp-v2.diode").toStdString());
        QVERIFY(shipped.timingMethod() == TimingMethod::InductorAutotune);
        QVERIFY(packageError(ModelPackage::toBytes({{"timing_method", "graph_hot"}}, tinyWeights()))
                    .find("'timing_method' is \"graph_hot\"") != std::string::npos);
    }

    // diode-train run directly (not through `diode train`) waits passively too: LibTorch's OpenMP
    // reads the policy before main(), so the program runs itself again with it set. Seen in the running
    // process's environment, the same process id after the exec.
    void diodeTrainRunDirectlyWaitsPassively() {
        QTemporaryDir dir;
        const QString plan = dir.filePath("slow.json");
        QFile f(plan);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(
            R"({"name":"slow","repeats":1000,"cpu":{"block_m":[64],"block_n":[64],"block_k":[64],"threads":[1]},
                   "entries":[{"ops":["mm"],"dtypes":["fp32"],"M":[512],"N":[512],"K":[512]}]})");
        f.close();
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove("OMP_WAIT_POLICY");
        p.setProcessEnvironment(env);
        const QString train = QFileInfo(QStringLiteral(DIODE_CLI)).dir().filePath("diode-train");
        p.start(train, {"sweep", "--backend", "cpu", "--plan", plan, "--db", dir.filePath("slow.db")});
        QVERIFY2(p.waitForStarted(10000), qPrintable(train));
        QByteArray environ;
        for (int i = 0; i < 100 && !environ.split('\0').contains("OMP_WAIT_POLICY=PASSIVE"); ++i) {
            QTest::qWait(50);
            QFile e(QStringLiteral("/proc/%1/environ").arg(p.processId()));
            if (e.open(QIODevice::ReadOnly))
                environ = e.readAll();
        }
        p.kill();
        p.waitForFinished(10000);
        QVERIFY2(environ.split('\0').contains("OMP_WAIT_POLICY=PASSIVE"), environ.constData());
    }

    // `diode train` checks where it will write before minutes of training, and bad input is exit
    // code 2 (docs/CLI.md's promise), never CLI11's 105/106.
    void trainRefusesAnUnwritablePackageBeforeTraining() {
        QTemporaryDir dir;
        const QString db = testutil::sourcePath("trained_models/h200/h200-dataset.db");
        const QString notAFolder = dir.filePath("file");
        QFile f(notAFolder);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.close();
        QString out, err;
        struct Case {
            QString out, says;
        };
        QList<Case> cases{
            // Under a regular file: no one, root included, can create it.
            {notAFolder + "/m.diode",
             "cannot write the package '" + notAFolder + "/m.diode': " + notAFolder + " is not a directory"},
            {dir.filePath("missing/m.diode"), "cannot write the package '" + dir.filePath("missing/m.diode") +
                                                  "': " + dir.filePath("missing") + " does not exist"},
            {dir.path(), "--out '" + dir.path() + "' is a directory; name the file to write"},
        };
        if (::geteuid() != 0) { // root writes through mode bits
            const QString ro = dir.filePath("read-only");
            QVERIFY(QDir().mkpath(ro));
            QFile::setPermissions(ro, QFileDevice::ReadOwner | QFileDevice::ExeOwner);
            cases.append({ro + "/m.diode", ro + " is not writable"});
        }
        for (const auto &c : cases) {
            QElapsedTimer t;
            t.start();
            QCOMPARE(testutil::runCli({"train", "--db", db, "--out", c.out}, &out, &err), 2);
            QVERIFY2(err.contains(c.says), qPrintable(err));
            // Before the data is loaded or a single epoch runs (full training: 400 epochs x 6).
            QVERIFY2(!err.contains("epoch") && !err.contains("training on") && out.isEmpty(),
                     qPrintable(err + out));
            QVERIFY2(t.elapsed() < 30000, qPrintable(QString::number(t.elapsed())));
            QVERIFY(!QFileInfo::exists(c.out + ".partial"));
        }
        QCOMPARE(testutil::runCli({"train"}, &out, &err), 2);
        QVERIFY2(err.contains("--db is required"), qPrintable(err));
        QCOMPARE(testutil::runCli({"train", "--db", dir.filePath("none.db")}, &out, &err), 2);
        QVERIFY2(err.contains(dir.filePath("none.db")), qPrintable(err));
        const QString missing = dir.filePath("nope.jsonl");
        QCOMPARE(testutil::runCli({"import", missing, "--db", dir.filePath("x.db")}, &out, &err), 2);
        QVERIFY2(err.contains(missing), qPrintable(err));
        QVERIFY(!QFileInfo::exists(dir.filePath("x.db")));
    }

    void rankKeepsGoingPastABadLine() {
        QTemporaryDir dir;
        const QString pkg = dir.filePath("tiny.diode");
        ModelPackage::save(pkg.toStdString(), {{"hardware", {{"gpu", "NVIDIA H200"}}}}, {tinyWeights()});
        const QString in = dir.filePath("in.jsonl");
        QFile f(in);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(
            R"({"op":"mm","dtype":"bf16","M":64,"N":512,"K":512,"candidates":[{"kind":"aten","name":"extern_kernels.mm"},{"kind":"triton","template":"mm","BLOCK_M":64,"BLOCK_N":64,"BLOCK_K":32,"num_stages":3,"num_warps":4}]})"
            "\n"
            R"({"op":"gemv","dtype":"bf16","M":64,"N":512,"K":512,"candidates":[]})"
            "\n"
            R"({"op":"mm","dtype":"int8","M":64,"N":512,"K":512,"candidates":[]})"
            "\n"
            R"({"op":"mm","dtype":"bf16","M":64,"N":512,"K":512,"candidates":[{"kind":"cutlass","name":"x"}]})"
            "\n"
            R"({"op":"bmm","dtype":"fp32","B":4,"M":8,"N":64,"K":64,"candidates":[{"kind":"triton","template":"bmm","BLOCK_M":16,"BLOCK_N":64,"BLOCK_K":32,"num_stages":2,"num_warps":4}]})"
            "\n");
        f.close();
        QString out;
        QCOMPARE(testutil::runCli({"rank", "--package", pkg, "--input", in}, &out), 2);
        const auto lines = out.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 5);
        const auto first = nlohmann::json::parse(lines[0].toStdString());
        QCOMPARE(first["predicted_ms"].size(), size_t(2));
        QCOMPARE(first["order"].size(), size_t(2));
        QVERIFY(lines[1].contains(R"("error")") && lines[1].contains("field 'op'"));
        QVERIFY(lines[2].contains(R"("error")") && lines[2].contains("field 'dtype'"));
        QVERIFY(lines[3].contains(R"("error")") && lines[3].contains("cutlass"));
        QCOMPARE(nlohmann::json::parse(lines[4].toStdString())["order"], nlohmann::json::array({0}));
        QString err;
        // A short summary by default; the manifest itself with --json.
        QCOMPARE(testutil::runCli({"inspect", "--package", pkg}, &out, &err), 0);
        QVERIFY2(out.count('\n') < 25 && !out.contains('{'), qPrintable(out));
        const QString schema = QStringLiteral("feature schema %1").arg(FeatureSchema::kVersion);
        for (const QString &part :
             {QStringLiteral("GPU           NVIDIA H200"), QStringLiteral("timing method inductor_autotune"),
              schema, QStringLiteral("No test-split metrics recorded")})
            QVERIFY2(out.contains(part), qPrintable(out + "\nmissing: " + part));
        QCOMPARE(testutil::runCli({"inspect", pkg, "--json"}, &out, &err), 0);
        QCOMPARE(nlohmann::json::parse(out.toStdString())["feature_schema_version"].get<int>(),
                 FeatureSchema::kVersion);
        // A trained package: what it learnt from and its test-split table against the baselines.
        const QString shipped = testutil::sourcePath("trained_models/h200/h200-gemm-mlp-v2.diode");
        QCOMPARE(testutil::runCli({"inspect", shipped}, &out, &err), 0);
        for (const char *part :
             {"h200-gemm-mlp-v2\n", "ops / dtypes  addmm, bmm, mm / bf16, fp16, fp32",
              "624 problem lines (12190 rows)", "436 train, 94 validation, 94 test problem lines",
              "mlp 50-64-64-32-1 (relu), 6 member(s)", "created       2026-",
              "On the test split (94 problem lines",
              "ATen guard    margin 0.10 warm, 0.08 cold (the defaults: no calibrated margin)"})
            QVERIFY2(out.contains(part), qPrintable(out + "\nmissing: " + part));
        QVERIFY2(out.contains(QRegularExpression("selector\\s+top1 mean\\s+top1 p10\\s+top3 mean\n")),
                 qPrintable(out));
        // The baselines as every face names them, plain torch.compile first (wording.h).
        for (const char *row :
             {"model", "plain torch\\.compile \\(ATen\\)", "Inductor's first config", "random"})
            QVERIFY2(out.contains(QRegularExpression(
                         QString("\n  %1\\s+0\\.\\d{4}\\s+0\\.\\d{4}\\s+0\\.\\d{4}\n").arg(row))),
                     qPrintable(out + "\nmissing row: " + row));
        // Which GPUs it serves, by the plugin's own rule: its GPU, the nearest of the same
        // architecture (transferred), never another architecture.
        QCOMPARE(testutil::runCli({"inspect", shipped, "--gpu", "NVIDIA H200", "--gpu",
                                   "NVIDIA H100 80GB HBM3", "--gpu", "NVIDIA A100-SXM4-80GB"},
                                  &out, &err),
                 0);
        for (const char *part :
             {"serves        NVIDIA H200: yes; trained on this GPU",
              "serves        NVIDIA H100 80GB HBM3: where no package of its own is found "
              "(transferred, distance 0.36); same architecture (9.0)",
              "serves        NVIDIA A100-SXM4-80GB: no; NVIDIA A100-SXM4-80GB is architecture 8.0"})
            QVERIFY2(out.contains(part), qPrintable(out + "\nmissing: " + part));
        QCOMPARE(testutil::runCli({"inspect", "--json", shipped}, &out, &err), 0);
        const auto manifest = nlohmann::json::parse(out.toStdString());
        QCOMPARE(manifest["training_data"]["problems"].get<int>(), 624);
        QVERIFY(!manifest.contains("tensors"));
        // A damaged package: a clear error, exit code 2.
        QFile p(pkg);
        QVERIFY(p.open(QIODevice::ReadWrite));
        p.resize(p.size() - 10);
        p.close();
        QCOMPARE(testutil::runCli({"inspect", pkg}, &out, &err), 2);
        QVERIFY2(err.contains("truncated"), qPrintable(err));
    }
};

QTEST_GUILESS_MAIN(TestModel)
#include "tst_model.moc"
