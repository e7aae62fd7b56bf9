// Ranking latency of the package reader (Google Benchmark, one core): predict every candidate
// of one problem with a package of the shipped architecture. Results in docs/BENCHMARKS.md.
// Usage: bench_rank [PACKAGE]  (default: a package of the shipped shape with fixed weights)
#include "diode/infer/modelpackage.h"

#include <benchmark/benchmark.h>

#include <cmath>

using namespace diode;

namespace {

ModelPackage makePackage(const char *path) {
    if (path)
        return ModelPackage::load(path);
    MlpWeights w;
    const int f = FeatureSchema::size();
    w.layerSizes = {f, 128, 128, 64, 1};
    w.inputMean.assign(size_t(f), 0.f);
    w.inputStd.assign(size_t(f), 1.f);
    for (size_t l = 0; l + 1 < w.layerSizes.size(); ++l) {
        w.weights.emplace_back(size_t(w.layerSizes[l] * w.layerSizes[l + 1]));
        for (size_t i = 0; i < w.weights.back().size(); ++i)
            w.weights.back()[i] = float(std::sin(double(i))) * 0.05f;
        w.biases.emplace_back(size_t(w.layerSizes[l + 1]), 0.01f);
    }
    return ModelPackage::fromBytes(
        ModelPackage::toBytes({{"hardware", {{"gpu", "NVIDIA H200"}, {"sm_count", 132}}}}, w));
}

const char *g_path = nullptr;

void BM_Rank(benchmark::State &state) {
    static const ModelPackage pkg = makePackage(g_path);
    std::vector<KernelConfig> cands;
    const int n = int(state.range(0));
    for (int i = 0; i < n; ++i) {
        KernelConfig c;
        c.kind = i == 0 ? "aten" : "triton";
        c.name = i == 0 ? "extern_kernels.mm" : "mm";
        if (i) {
            c.blockM = 16 << (i % 5);
            c.blockN = 32 << (i / 5 % 4);
            c.blockK = 32 << (i / 20 % 3);
            c.groupM = 8;
            c.numStages = 2 + i % 4;
            c.numWarps = 4 << (i % 2);
        }
        cands.push_back(c);
    }
    const GemmProblem p{GemmOp::Mm, DType::BF16, 1, 2048, 4096, 4096, false, true};
    for (auto _ : state)
        benchmark::DoNotOptimize(pkg.predictMs(p, cands));
    state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_Rank)->Arg(20)->Arg(1000)->Unit(benchmark::kMicrosecond);

} // namespace

int main(int argc, char **argv) {
    if (argc > 1 && argv[1][0] != '-') {
        g_path = argv[1];
        --argc;
        ++argv;
    }
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    return 0;
}
