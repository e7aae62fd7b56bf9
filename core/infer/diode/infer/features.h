#pragma once

#include "diode/infer/gemmproblem.h"
#include "diode/infer/kernelconfig.h"

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace diode {

/// The feature schema this build computes, and the oldest whose packages it still reads.
inline constexpr int kFeatureSchemaVersion = 3;
inline constexpr int kOldestFeatureSchemaVersion = 1;

/// What the model knows of the GPU: enough for one model family to serve several GPUs.
struct HardwareFeatures {
    int smCount = 132;               ///< multiprocessors (H200: 132)
    double memoryBandwidthTBs = 4.8; ///< datasheet class, from the GPU name
    int sharedMemoryKB = 227;        ///< usable shared memory per block
    /// Looks the GPU up by name in the GPU table (gputable.h: NVIDIA H100/H200/GH200/A100/...);
    /// unknown names keep the given SM count and a middle bandwidth class. `schema` is the
    /// feature schema of the package that will read the features: version 1 looked a GH200 up
    /// as an H200 ("H200" came first in its table), and a version-1 package gets that back.
    static HardwareFeatures forGpu(const std::string &name, int smCount, int schema = kFeatureSchemaVersion);
};

/// Feature schema version 3: the single definition of the model's inputs, used by training
/// (core/train/trainer.cpp) and by inference in the plugin. Change anything here and the
/// version must go up: packages record the version they were trained with; a build reads the
/// versions from kOldestFeatureSchemaVersion up, computing each one's features, and refuses
/// others by name. (Describing cpu candidates, which version 1 used to refuse, changed no
/// feature of an ATen or Triton candidate, so the version stayed.) Version 2: a GH200 is looked
/// up as itself (4.0 TB/s), no longer as an H200 (4.8 TB/s); nothing else changed. Version 3: the
/// op baddbmm and its one-hot input `op_baddbmm` (after `op_bmm`); every other feature of every
/// mm, addmm and bmm problem is the same value as in version 2, so a version-1 or -2 package
/// computes exactly the inputs it was trained on and cannot score baddbmm (knowsOp).
class FeatureSchema {
public:
    static constexpr int kVersion = kFeatureSchemaVersion;
    /// Names of the features of `schema`, in order; their count is the model's input width.
    static const std::vector<std::string> &names(int schema = kVersion);
    static int size(int schema = kVersion) { return int(names(schema).size()); }
    /// Whether `schema` has an input for `op` (baddbmm from version 3).
    static bool knowsOp(GemmOp op, int schema = kVersion);
    /// For each feature of `schema`, its index in the current schema's names: how a network of an
    /// older schema is widened to the current inputs (fine-tuning; the new inputs get zero weight).
    static std::vector<int> currentIndices(int schema);
    /// Appends the features of (problem, candidate) on `hw` to `out`, as `schema` defines them.
    /// Throws InvalidInput for an op the schema has no input for.
    static void compute(const GemmProblem &p, const KernelConfig &c, const HardwareFeatures &hw,
                        std::vector<float> &out, int schema = kVersion);
    /// The Triton GEMM templates a model describes: those of Inductor's mm and bmm lowerings that
    /// the training data holds. Others (persistent TMA, decompose-K subgraphs) are left to Inductor.
    static constexpr std::array<std::string_view, 2> kTritonTemplates{"mm", "bmm"};
    /// Whether the schema can describe a candidate: ATen; a Triton template of kTritonTemplates and
    /// the cpu backend's tiled GEMM, each with BLOCK_M, BLOCK_N and BLOCK_K. The one definition of
    /// what a model can rank, for training, evaluation and the plugin.
    static bool describes(const KernelConfig &c);
    /// Throws InvalidInput, naming `where`, for a candidate the schema cannot describe.
    static void check(const KernelConfig &c, const std::string &where);
    /// Indices of the problem's one-hot and layout flags (dtype, op, a_transposed, b_transposed):
    /// a flag the training data never varied marks problems the model has not seen
    /// (ModelPackage::unseenProblemFeature).
    static const std::vector<int> &problemFlags(int schema = kVersion);
};

} // namespace diode
