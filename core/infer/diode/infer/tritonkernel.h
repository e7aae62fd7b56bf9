#pragma once

#include "diode/infer/gemmproblem.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace diode {

/// Inductor's reduction hint for a kernel (runtime/hints.py): how the reduced dimension lies in
/// memory. None for pointwise kernels.
enum class ReductionHint { None, Inner, Outer, OuterTiny, Default };

/// A pointwise or reduction kernel that Inductor generates, as the model sees it: the facts
/// Inductor knows when it generates the kernel (its numels, tiling, reduction hint, loads and
/// bytes). The plugin reads them off Inductor's objects at code generation
/// (torch_diode._kernels.kernel_shape) and the kernel sweep records the same reader's output, so
/// what a model is trained on and what it is asked about are one definition.
struct TritonKernelShape {
    bool reduction = false;
    int64_t x = 1; ///< pointwise elements, or reduction outputs
    int64_t y = 1; ///< the second tiled output dimension of a 2-D kernel, pointwise or reduction (1: none)
    int64_t r = 1; ///< elements reduced into each output (1: pointwise)
    ReductionHint hint = ReductionHint::None;
    bool persistentDefault = false; ///< Inductor would make it a persistent reduction
    /// Whether the kernel may be persistent at all: not when its reduction size is not static (then no
    /// persistent configuration is offered). Not a feature: it bounds the grid, not the time.
    bool persistentPossible = true;
    /// Inductor's heuristics give the kernel, kept at its default, several configurations, which it
    /// benchmarks at the kernel's first run (torch_diode._kernels.default_configs asks them). Not a
    /// feature: it says what keeping the default costs, not how fast a configuration runs.
    bool defaultTuned = false;
    int loads = 0, stores = 0, reductions = 0;
    int otherOps = 0;     ///< arithmetic ops besides loads, stores and reductions
    double bytesRead = 0; ///< over all loads, each buffer's accessed range once
    double bytesWritten = 0;
    double contiguity = 0; ///< log2 of Inductor's tiling score of r over x (0: not known)
    int itemsize = 4;      ///< the widest element read, in bytes

    /// Throws InvalidInput naming `where` and the field for a missing or out-of-range value.
    static TritonKernelShape fromJson(const nlohmann::json &j, const std::string &where);
    nlohmann::json toJson() const;
};

/// One launch configuration of such a kernel: what Inductor's FixedTritonConfig takes.
struct TritonConfig {
    bool persistent = false; ///< the whole reduction in one block (no R0_BLOCK)
    int xBlock = 1;
    int yBlock = 0; ///< 0: the kernel is not 2-D tiled
    int rBlock = 0; ///< 0: persistent or pointwise
    int numWarps = 4;
    int numStages = 1;

    /// {"XBLOCK", "YBLOCK"?, "R0_BLOCK"?, "num_warps", "num_stages"}: the keys Inductor's
    /// FixedTritonConfig expects for this kind of kernel, plus "persistent".
    nlohmann::json toJson() const;
    static TritonConfig fromJson(const nlohmann::json &j, const std::string &where);
    bool operator==(const TritonConfig &) const = default;
};

/// The configurations a kernel may be given: powers of two for the blocks and warps within
/// Inductor's block limits, at most kMaxElementsPerThread elements of each tile per thread (more
/// spill registers) and no idle threads, persistent only where the whole reduction fits one
/// tile. Tens to hundreds of configurations: portfolioConfigs takes from it what is measured and
/// chosen among.
std::vector<TritonConfig> candidateConfigs(const TritonKernelShape &shape);
inline constexpr int kMaxElementsPerThread = 64;

/// The configurations a kernel-config decision chooses among and the kernel sweep measures on every
/// kernel: at most kPortfolioSize of candidateConfigs, those first in the order of a stable hash of
/// the configuration. Kernels with the same grid get the same portfolio, so a kernel's nearest
/// measured kernels hold measured times of the very configurations it may be given, and a measured
/// kernel holds every configuration the decision could pick for it: what the held-out figures
/// judge is what the plugin runs.
std::vector<TritonConfig> portfolioConfigs(const TritonKernelShape &shape);
inline constexpr size_t kPortfolioSize = 24;
/// portfolioConfigs of the kernel whose grid (candidateConfigs) is `grid`, for a caller that has it.
std::vector<TritonConfig> portfolioOf(const std::vector<TritonConfig> &grid);

/// Whether `configs` holds `config`.
bool holds(const std::vector<TritonConfig> &configs, const TritonConfig &config);

/// What a kernel-config decision chooses among and the kernel sweep measures first: the portfolio,
/// then the configurations of `extra` that `shape`'s grid holds and the portfolio does not (a
/// package's learned ones, KernelConfigModel::extraConfigs).
std::vector<TritonConfig> decisionCandidates(const TritonKernelShape &shape,
                                             const std::vector<TritonConfig> &extra);

/// The configurations of `shape`'s grid one step from `config`: one of its blocks or its warps doubled
/// or halved, the neighbourhood Inductor's coordinate descent searches. The kernel sweep measures
/// the neighbours of a kernel's fastest configuration while one is faster (at most four steps), so
/// that a line's fastest configuration is near the best the grid holds, not only the portfolio's.
std::vector<TritonConfig> neighbourConfigs(const TritonKernelShape &shape, const TritonConfig &config);

/// Names of the kernel features and of the configuration features (kernelFeatures and
/// configFeatures write them in this order).
const std::vector<std::string> &kernelFeatureNames();
const std::vector<std::string> &configFeatureNames();
void kernelFeatures(const TritonKernelShape &shape, std::vector<float> &out);
/// `smCount`: the GPU's multiprocessors, for the waves a grid makes.
void configFeatures(const TritonKernelShape &shape, const TritonConfig &config, int smCount,
                    std::vector<float> &out);

/// A GEMM whose M (query tokens, decode rows) is small, or attention at one query token: the
/// place where Inductor can either call a library kernel or generate a multiply-and-sum that it
/// fuses with its neighbours (the concatenated KV cache, the expanded KV heads of grouped-query
/// attention, an activation after; a projection reads a computed input written out once:
/// FormDecision::materialiseOperand).
struct SmallMSite {
    std::string op = "bmm"; ///< "attention" (softmax(q k^T) v at one query token), "bmm", "mm", "addmm"
    DType dtype = DType::BF16;
    int64_t batch = 1;   ///< bmm: B; attention: batch x query heads
    int64_t m = 1;       ///< rows (query tokens)
    int64_t n = 1;       ///< GEMM: N; attention: keys (the cache's tokens)
    int64_t k = 1;       ///< GEMM: K; attention: head dimension
    int kvGroup = 1;     ///< attention: query heads per KV head (grouped-query attention)
    bool concat = false; ///< an operand is a concatenation (a KV cache grown by torch.cat)
    /// attention: the translator can write its library form over the KV cache as stored (its key and
    /// value are a cache, perhaps concatenated, with KV heads expanded; FlashAttention runs here)
    bool storedCache = false;

    static SmallMSite fromJson(const nlohmann::json &j, const std::string &where);
    nlohmann::json toJson() const;
};

/// `j[key]` as a flag: false where absent; InvalidInput naming `where` and the key where not a boolean.
bool optionalFlag(const nlohmann::json &j, const char *key, const std::string &where);

/// The ops a SmallMSite may be, in order (its features' one-hot).
const std::vector<std::string> &smallMOps();
const std::vector<std::string> &siteFeatureNames();
void siteFeatures(const SmallMSite &site, std::vector<float> &out);

std::string_view toString(ReductionHint hint);

} // namespace diode
