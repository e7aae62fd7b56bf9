#pragma once

#include "diode/sweep/sweepplan.h"

#include <string>

namespace diode {

/// How long a plan should take on a backend, and what that guess stands on.
struct SweepEstimate {
    int64_t problems = 0;
    int64_t choicesPerProblem = 0; ///< configs the backend times per problem (inductor: typical)
    double seconds = 0;
    std::string basis; ///< one sentence a user can check ("90.6 choices/GPU-minute measured on an H200")
};

/// Estimates the duration of `plan` on `backend` ("cpu" or "inductor") from measured rates:
/// the CPU from its FLOPs at the reference GEMM's rate on this build machine; inductor from
/// the shipped H200 sweep.
SweepEstimate estimateDuration(const SweepPlan &plan, const std::string &backend, int cpuThreads);

} // namespace diode
