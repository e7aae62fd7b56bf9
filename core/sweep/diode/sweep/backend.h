#pragma once

#include "diode/infer/measurement.h"
#include "diode/store/store.h"
#include "diode/sweep/sweepplan.h"

#include <atomic>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace diode {

/// The backend cannot run on this machine at all (no torch, no GPU): said once, before a run.
class BackendUnavailable : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// How one problem ended. Measurements themselves go to the sink as they are taken.
struct ProblemOutcome {
    MeasureStatus status = MeasureStatus::Ok;
    std::string error;
    /// The cancel flag stopped the measurement part way: the problem stays unfinished (resume
    /// completes it). A problem measured in full before a cancel is a normal outcome.
    bool cancelled = false;
    /// Whole-op baseline times of the problem (the inductor worker's plain torch.compile and
    /// max-autotune), stored beside its measurements.
    std::vector<BaselineTiming> baselines{};

    static ProblemOutcome interrupted() { return {MeasureStatus::Failed, "cancelled", true, {}}; }
};

using MeasurementSink = std::function<void(const Measurement &)>;

/// Where measurements come from: the inductor worker or the CPU reference GEMM.
class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;
    /// Prepares the backend; throws BackendUnavailable with one clear sentence. Returns early, not
    /// ready, once `cancel` is set (Ctrl-C while a worker starts).
    virtual void start(const std::atomic<bool> &cancel) = 0;
    void start() {
        static const std::atomic<bool> never{false};
        start(never);
    }
    /// Fills what the backend knows of the machine and software into `run`.
    virtual void describe(RunInfo &run) const = 0;
    /// The timing methods its measurements carry.
    virtual std::set<TimingMethod> timingMethods() const = 0;
    /// Measures `problem`, skipping configs whose key is in `skip`. Must return within about
    /// `timeoutS` and soon after `cancel` becomes true.
    virtual ProblemOutcome measure(const GemmProblem &problem, const SweepPlan &plan,
                                   const std::set<std::string> &skip, const MeasurementSink &sink,
                                   const std::atomic<bool> &cancel) = 0;
};

} // namespace diode
