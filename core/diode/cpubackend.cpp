#include "cpubackend.h"

#include "hardware.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

namespace diode {

namespace {

// Row-major A is [M,K]; transposed A is stored [K,M]. Likewise B [K,N] or [N,K].
inline float at(const float *a, bool transposed, int64_t rows, int64_t cols, int64_t r, int64_t c) {
    return transposed ? a[c * rows + r] : a[r * cols + c];
}

void gemmRows(const GemmProblem &p, const float *a, const float *b, float *c, const KernelConfig &cfg,
              int64_t rowBegin, int64_t rowEnd) {
    const int64_t M = p.m, N = p.n, K = p.k;
    const int64_t bm = std::max(1, cfg.blockM), bn = std::max(1, cfg.blockN), bk = std::max(1, cfg.blockK);
    for (int64_t i0 = rowBegin; i0 < rowEnd; i0 += bm)
        for (int64_t j0 = 0; j0 < N; j0 += bn)
            for (int64_t k0 = 0; k0 < K; k0 += bk) {
                const int64_t i1 = std::min(i0 + bm, rowEnd), j1 = std::min(j0 + bn, N),
                              k1 = std::min(k0 + bk, K);
                for (int64_t i = i0; i < i1; ++i)
                    for (int64_t k = k0; k < k1; ++k) {
                        const float av = at(a, p.aTransposed, M, K, i, k);
                        float *crow = c + i * N;
                        if (p.bTransposed)
                            for (int64_t j = j0; j < j1; ++j)
                                crow[j] += av * b[j * K + k];
                        else
                            for (int64_t j = j0; j < j1; ++j)
                                crow[j] += av * b[k * N + j];
                    }
            }
}

} // namespace

void tiledGemm(const GemmProblem &p, const float *a, const float *b, const float *bias, float *c,
               const KernelConfig &cfg) {
    const int64_t M = p.m, N = p.n, K = p.k;
    for (int64_t batch = 0; batch < p.batch; ++batch) {
        const float *ab = a + batch * M * K, *bb = b + batch * K * N;
        float *cb = c + batch * M * N;
        for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j)
                cb[i * N + j] = bias ? bias[j] : 0.f;
        const int threads = std::max(1, cfg.threads);
        const int64_t bm = std::max(1, cfg.blockM);
        const int64_t tiles = (M + bm - 1) / bm;
        const int64_t perThread = (tiles + threads - 1) / threads;
        std::vector<std::thread> pool;
        for (int t = 1; t < threads; ++t) {
            const int64_t r0 = std::min(M, t * perThread * bm), r1 = std::min(M, (t + 1) * perThread * bm);
            if (r0 < r1)
                pool.emplace_back([&, r0, r1] { gemmRows(p, ab, bb, cb, cfg, r0, r1); });
        }
        gemmRows(p, ab, bb, cb, cfg, 0, std::min(M, perThread * bm));
        for (auto &th : pool)
            th.join();
    }
}

void CpuBackend::describe(RunInfo &run) const {
    const auto hw = HardwareMonitor().report();
    run.host = hw.host;
    run.gpuName = fmt::format("CPU: {}", hw.cpu);
    run.smCount = hw.cpuThreads;
}

ProblemOutcome CpuBackend::measure(const GemmProblem &p, const SweepPlan &plan,
                                   const std::set<std::string> &skip, const MeasurementSink &sink,
                                   const std::atomic<bool> &cancel) {
    using Clock = std::chrono::steady_clock;
    const double bytes = 4.0 * double(p.batch) * (double(p.m) * p.k + double(p.k) * p.n + double(p.m) * p.n);
    if (bytes > 2e9)
        return {MeasureStatus::Failed,
                fmt::format("problem needs {:.1f} GB; the CPU backend takes up to 2 GB", bytes / 1e9)};
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    std::vector<float> a(size_t(p.batch * p.m * p.k)), b(size_t(p.batch * p.k * p.n)),
        c(size_t(p.batch * p.m * p.n));
    std::vector<float> bias(p.op == GemmOp::Addmm ? size_t(p.n) : 0);
    for (auto *v : {&a, &b, &bias})
        for (auto &x : *v)
            x = dist(rng);
    const auto deadline = Clock::now() + std::chrono::duration<double>(plan.timeoutS);
    for (const auto &cfg : plan.cpuConfigs) {
        if (cancel)
            return ProblemOutcome::interrupted();
        if (skip.count(cfg.key()))
            continue;
        Measurement m;
        m.config = cfg;
        m.method = TimingMethod::Cpu;
        if (Clock::now() > deadline) {
            m.status = MeasureStatus::Timeout;
            m.error =
                fmt::format("per-problem timeout of {} s reached before this config ran", plan.timeoutS);
            sink(m);
            continue;
        }
        std::vector<double> times;
        tiledGemm(p, a.data(), b.data(), bias.empty() ? nullptr : bias.data(), c.data(), cfg); // warm-up
        for (int r = 0; r < plan.repeats && !cancel; ++r) {
            const auto t0 = Clock::now();
            tiledGemm(p, a.data(), b.data(), bias.empty() ? nullptr : bias.data(), c.data(), cfg);
            times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        }
        if (cancel)
            return ProblemOutcome::interrupted();
        std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
        m.timeMs = std::max(times[times.size() / 2], 1e-6);
        sink(m);
    }
    return {};
}

} // namespace diode
