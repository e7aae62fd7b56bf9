// libFuzzer harness for sweep plans: any bytes must give a plan (within the documented limits)
// or an InvalidInput naming where, never a crash, a hang, unbounded memory or undefined
// behaviour. Built with clang (-DDIODE_FUZZ=ON); elsewhere standalone_main.cpp replays a corpus.
#include "diode/sweep/sweepplan.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    try {
        // Shape sets are named relative to the plan: a folder that does not exist keeps the
        // harness from reading the files around it.
        const auto plan = diode::SweepPlan::parse(
            std::string_view(reinterpret_cast<const char *>(data), size), "/nonexistent-diode-fuzz");
        if (int64_t(plan.problems.size()) > diode::planlimits::kMaxProblems)
            std::abort();
        for (const auto &p : plan.problems)
            if (p.m < 1 || p.n < 1 || p.k < 1 || p.batch < 1 || p.m > diode::planlimits::kMaxSize ||
                p.n > diode::planlimits::kMaxSize || p.k > diode::planlimits::kMaxSize)
                std::abort();
        if (!plan.problems.empty())
            (void)diode::expandedProblemJson(plan, plan.problems.front()).dump();
    } catch (const diode::InvalidInput &) {
    }
    return 0;
}
