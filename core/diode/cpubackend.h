#pragma once

#include "backend.h"

namespace diode {

/// A real tiled CPU GEMM (fp32 arithmetic for every dtype) whose block sizes and thread count
/// are the kernel configuration, timed in-process: several repeats, median kept. It exists so
/// the whole pipeline runs on any machine with real measurements; runs are labelled "cpu".
class CpuBackend final : public Backend {
public:
    std::string name() const override { return "cpu"; }
    void start() override {}
    void describe(RunInfo &run) const override;
    std::set<TimingMethod> timingMethods() const override { return {TimingMethod::Cpu}; }
    ProblemOutcome measure(const GemmProblem &problem, const SweepPlan &plan,
                           const std::set<std::string> &skip, const MeasurementSink &sink,
                           const std::atomic<bool> &cancel) override;
};

/// C = A @ B (+ bias) with the given tiling; exposed so tests can check it against a naive GEMM.
void tiledGemm(const GemmProblem &p, const float *a, const float *b, const float *bias, float *c,
               const KernelConfig &config);

} // namespace diode
