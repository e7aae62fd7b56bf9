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
/// (core/train/trainer.cpp) and by inference in the plugin. Change anything here and the
/// version must go up: packages record the version they were trained with and are refused
/// by a build with another one. (Describing cpu candidates, which version 1 used to refuse, changed
/// no feature of an ATen or Triton candidate, so the version stayed.)
class FeatureSchema {
public:
    static constexpr int kVersion = 1;
    /// Names of the features, in order; their count is the model's input width.
    static const std::vector<std::string> &names();
    static int size() { return int(names().size()); }
    /// Appends the features of (problem, candidate) on `hw` to `out`.
    static void compute(const GemmProblem &p, const KernelConfig &c, const HardwareFeatures &hw, std::vector<float> &out);
    /// Whether the schema can describe a candidate: ATen; Triton and the cpu backend's tiled GEMM
    /// with BLOCK_M, BLOCK_N and BLOCK_K. The one definition of what a model can rank.
    static bool describes(const KernelConfig &c);
    /// Throws InvalidInput, naming `where`, for a candidate the schema cannot describe.
    static void check(const KernelConfig &c, const std::string &where);
};

} // namespace diode
