#pragma once

#include "diode/sweep/backend.h"

#include <atomic>
#include <chrono>

namespace diode {

/// A real tiled CPU GEMM (fp32 arithmetic for every dtype) whose block sizes and thread count
/// are the kernel configuration, timed in-process: several repeats, median kept. It exists so
/// the whole pipeline runs on any machine with real measurements; runs are labelled "cpu".
class CpuBackend final : public Backend {
public:
    std::string name() const override { return "cpu"; }
    using Backend::start;
    void start(const std::atomic<bool> &) override {}
    void describe(RunInfo &run) const override;
    std::set<TimingMethod> timingMethods() const override { return {TimingMethod::Cpu}; }
    ProblemOutcome measure(const GemmProblem &problem, const SweepPlan &plan,
                           const std::set<std::string> &skip, const MeasurementSink &sink,
                           const std::atomic<bool> &cancel) override;
};

/// When a GEMM under way gives up: a cancel flag set (Ctrl-C, the Sweep page's Cancel) or a
/// deadline passed (the plan's timeout_s). Checked between tiles, so a large problem stops within
/// milliseconds instead of finishing a multiply that takes a minute.
struct GemmStop {
    const std::atomic<bool> *cancel = nullptr;
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
    bool operator()() const {
        return (cancel && cancel->load(std::memory_order_relaxed)) ||
               std::chrono::steady_clock::now() > deadline;
    }
};

/// C = A @ B (+ bias) with the given tiling; exposed so tests can check it against a naive GEMM.
/// Returns false when `stop` ended it part way (C is then incomplete).
bool tiledGemm(const GemmProblem &p, const float *a, const float *b, const float *bias, float *c,
               const KernelConfig &config, const GemmStop &stop = {});

} // namespace diode
