#include "cpubackend.h"

#include "diode/sweep/hardware.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
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
              int64_t rowBegin, int64_t rowEnd, const GemmStop &stop, std::atomic<bool> &stopped) {
    const int64_t M = p.m, N = p.n, K = p.k;
    const int64_t bm = std::max(1, cfg.blockM), bn = std::max(1, cfg.blockN), bk = std::max(1, cfg.blockK);
    for (int64_t i0 = rowBegin; i0 < rowEnd; i0 += bm)
        for (int64_t j0 = 0; j0 < N; j0 += bn) {
            // One bm x bn tile of C at a time: a few milliseconds at most, then a look at the clock.
            if (stopped.load(std::memory_order_relaxed) || stop()) {
                stopped = true;
                return;
            }
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
}

} // namespace

bool tiledGemm(const GemmProblem &p, const float *a, const float *b, const float *bias, float *c,
               const KernelConfig &cfg, const GemmStop &stop) {
    const int64_t M = p.m, N = p.n, K = p.k;
    std::atomic<bool> stopped{false};
    for (int64_t batch = 0; batch < p.batch && !stopped; ++batch) {
        const float *ab = a + batch * M * K, *bb = b + batch * K * N;
        float *cb = c + batch * M * N;
        // addmm's bias [N] serves every batch; baddbmm's addend [B,1,N] has a row per batch.
        const float *row = bias && p.op == GemmOp::Baddbmm ? bias + batch * N : bias;
        for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j)
                cb[i * N + j] = row ? row[j] : 0.f;
        const int threads = std::max(1, cfg.threads);
        const int64_t bm = std::max(1, cfg.blockM);
        const int64_t tiles = (M + bm - 1) / bm;
        const int64_t perThread = (tiles + threads - 1) / threads;
        std::vector<std::thread> pool;
        for (int t = 1; t < threads; ++t) {
            const int64_t r0 = std::min(M, t * perThread * bm), r1 = std::min(M, (t + 1) * perThread * bm);
            if (r0 < r1)
                pool.emplace_back([&, r0, r1] { gemmRows(p, ab, bb, cb, cfg, r0, r1, stop, stopped); });
        }
        gemmRows(p, ab, bb, cb, cfg, 0, std::min(M, perThread * bm), stop, stopped);
        for (auto &th : pool)
            th.join();
    }
    return !stopped;
}

void CpuBackend::describe(RunInfo &run) const {
    const auto hw = HardwareMonitor().report();
    run.host = hw.host;
    run.gpuName = fmt::format("CPU: {}", hw.cpu);
    run.smCount = hw.cpuThreads;
}

namespace {
std::mutex &cpuTimingMutex() {
    static std::mutex m;
    return m;
}
} // namespace

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
    // Not zeroed on allocation (a std::vector would write every page first: 1.2 s for 170 MB on a
    // busy 2-core VM, deaf to Ctrl-C): the fill below writes A, B and the bias, chunk by chunk with
    // a look at the cancel flag, and the GEMM writes C before it reads it.
    const size_t na = size_t(p.batch * p.m * p.k), nb = size_t(p.batch * p.k * p.n),
                 nBias = p.op == GemmOp::Addmm     ? size_t(p.n)
                         : p.op == GemmOp::Baddbmm ? size_t(p.batch * p.n)
                                                   : 0;
    const auto a = std::make_unique_for_overwrite<float[]>(na),
               b = std::make_unique_for_overwrite<float[]>(nb),
               c = std::make_unique_for_overwrite<float[]>(size_t(p.batch * p.m * p.n)),
               bias = std::make_unique_for_overwrite<float[]>(nBias);
    constexpr size_t kFillChunk = size_t(1) << 20;
    for (const auto &[v, n] : {std::pair{a.get(), na}, std::pair{b.get(), nb}, std::pair{bias.get(), nBias}})
        for (size_t i = 0; i < n; ++i) {
            if (i % kFillChunk == 0 && cancel)
                return ProblemOutcome::interrupted();
            v[i] = dist(rng);
        }
    const auto deadline = std::chrono::time_point_cast<Clock::duration>(
        Clock::now() + std::chrono::duration<double>(plan.timeoutS));
    const GemmStop stop{&cancel, deadline};
    const float *biasData = nBias ? bias.get() : nullptr;
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
        // A GEMM cut short by Ctrl-C or the deadline is never timed: a cancel drops this config's
        // measurement (resume takes it again), a deadline stores it as a timeout.
        std::vector<double> times;
        // Several workers of one sweep share the CPU as the inductor backend's share a GPU: they
        // take turns timing, so no timing runs beside another.
        const std::lock_guard cpuTurn(cpuTimingMutex());
        bool whole = tiledGemm(p, a.get(), b.get(), biasData, c.get(), cfg, stop); // warm-up
        for (int r = 0; whole && r < plan.repeats; ++r) {
            const auto t0 = Clock::now();
            whole = tiledGemm(p, a.get(), b.get(), biasData, c.get(), cfg, stop);
            if (whole)
                times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        }
        if (cancel)
            return ProblemOutcome::interrupted();
        if (!whole || times.empty()) {
            m.status = MeasureStatus::Timeout;
            m.error = fmt::format("per-problem timeout of {} s reached while this config ran", plan.timeoutS);
            sink(m);
            continue;
        }
        std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
        m.timeMs = std::max(times[times.size() / 2], 1e-6);
        sink(m);
    }
    return {};
}

} // namespace diode
