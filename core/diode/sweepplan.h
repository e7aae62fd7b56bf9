#pragma once

#include "gemmproblem.h"
#include "kernelconfig.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace diode {

/// The generator shared with plugin/python/torch_diode/plan.py, so a seed means the same
/// problems in C++ and in the standalone worker.
class SplitMix64 {
public:
    explicit SplitMix64(uint64_t seed) : m_state(seed) {}
    uint64_t next();
    double uniform(); ///< [0, 1) with 53 bits
private:
    uint64_t m_state;
};

/// A sweep plan (docs/PLANS.md): which problems to measure, in which search space, and for the
/// CPU backend which tile configurations. Expanded and validated before anything runs.
struct SweepPlan {
    std::string name;
    std::string searchSpace = "DEFAULT";
    double timeoutS = 600;
    int repeats = 5; ///< CPU backend: timed repeats per config (median kept)
    std::vector<KernelConfig> cpuConfigs;
    std::vector<GemmProblem> problems;
    nlohmann::json source; ///< the plan as written, stored with the run

    /// Throws InvalidInput naming the entry and field ("entries[2] (bmm): field 'M' has 0; ...").
    static SweepPlan fromJson(const nlohmann::json &j, const std::string &baseDir);
    static SweepPlan load(const std::string &path);
};

} // namespace diode
