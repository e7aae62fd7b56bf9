#pragma once

#include "gemmproblem.h"
#include "kernelconfig.h"

#include <string>
#include <vector>

namespace diode {

/// What the model knows of the GPU: enough for one model family to serve several GPUs.
struct HardwareFeatures {
    int smCount = 132;              ///< multiprocessors (H200: 132)
    double memoryBandwidthTBs = 4.8; ///< datasheet class, from the GPU name
    int sharedMemoryKB = 227;       ///< usable shared memory per block
    /// Looks the GPU up by name (NVIDIA H100/H200/A100/L40S/...); unknown names keep the
    /// given SM count and a middle bandwidth class.
    static HardwareFeatures forGpu(const std::string &name, int smCount);
};

/// Feature schema version 1: the single definition of the model's inputs, used by training
/// (core/diode/trainer.cpp) and by inference in the plugin. Change anything here and the
/// version must go up: packages record the version they were trained with and are refused
/// by a build with another one.
class FeatureSchema {
public:
    static constexpr int kVersion = 1;
    /// Names of the features, in order; their count is the model's input width.
    static const std::vector<std::string> &names();
    static int size() { return int(names().size()); }
    /// Appends the features of (problem, candidate) on `hw` to `out`.
    static void compute(const GemmProblem &p, const KernelConfig &c, const HardwareFeatures &hw, std::vector<float> &out);
    /// Throws InvalidInput for a candidate the schema cannot describe (unknown kind).
    static void check(const KernelConfig &c, const std::string &where);
};

} // namespace diode
