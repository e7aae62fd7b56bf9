#pragma once

#include "diode/infer/tritonkernel.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace diode {

/// One kernel as the kernel sweep measured it: Inductor's own launch (`defaultMs`, its heuristics
/// and its first-run autotuning) and each fixed configuration tried, in CUDA graphs.
struct MeasuredKernel {
    std::string family; ///< the model family it came from, for holding out
    std::string name;
    TritonKernelShape shape;
    double defaultMs = 0;
    std::vector<TritonConfig> configs;
    std::vector<std::optional<double>> timesMs; ///< nullopt: failed to compile or run
    std::vector<std::string> errors;            ///< per configuration: why it has no time ("" if timed)
    int grid = 0; ///< configurations tried: the portfolio, then the descent's (0: not given)
    std::string gpu;
    int smCount = 0;
    double seconds = 0; ///< what measuring it took
};

/// How the name of a line measured inside a model step begins (the step sweep's: "step:SCENARIO/...");
/// the sweep's own cases are compiled alone.
inline constexpr std::string_view kStepLinePrefix = "step:";

/// One small-M site as the sweep measured it: the library path (cuBLAS, cuDNN or flash attention,
/// with whatever copies it needs, or none: `libraryOverCache`) and the multiply-and-sum form
/// Inductor fuses, each timed whole:
/// compiled alone, or inside a model step (`inStep`), where its times are its share of the step's
/// (the library kernels the decomposed form removes, and that plus the step's change per site).
struct MeasuredSite {
    std::string family;
    std::string name;
    bool inStep() const {
        return std::string_view(name).substr(0, kStepLinePrefix.size()) == kStepLinePrefix;
    }
    SmallMSite site;
    double libraryMs = 0;
    double decomposedMs = 0;
    std::optional<double> decomposedDefaultMs; ///< with Inductor's own configs
    std::optional<double> decomposedTunedMs;   ///< with coordinate descent's
    std::string configsFrom;                   ///< the package whose configs timed it ("": none)
    /// Attention with grouped KV heads, its library form timed as FlashAttention over the KV cache as
    /// stored (no copy; new tokens concatenated by torch.cat merged by log-sum-exp); false: the
    /// attention as written (Inductor's SDPA kernel over the copies it makes).
    bool libraryOverCache = false;
    std::string gpu;
    int smCount = 0;
    double seconds = 0;
};

/// Whether `site`'s library form reads its KV cache as stored, where a model's sites were timed so:
/// attention with grouped KV heads (kvGroup > 1), whose copy as written repeats each KV head once
/// per query head, and which FlashAttention reads once for all of them, where the translator can
/// write it so (SmallMSite::storedCache: a static cache's in-place write, a mask, a GPU without
/// FlashAttention keep the attention as written). Attention with a KV head per
/// query head stays as written (docs/MODELS.md: measured both ways, neither form's time is
/// predictable enough there).
bool readsCacheAsStored(const SmallMSite &site);

/// A case the sweep could not measure, with its reason: kept so that a store says what was tried.
struct SkippedCase {
    std::string kind; ///< "kernel" or "site"
    std::string family;
    std::string name;
    std::string gpu;
    int smCount = 0;
    std::string reason;
    double seconds = 0;
};

/// Reads the sweep's JSON lines (docs/FORMATS.md, "Kernel and site lines"): a line of kind
/// "kernel" or "site"; throws InvalidInput naming the file, line and field.
struct DecisionData {
    std::vector<MeasuredKernel> kernels;
    std::vector<MeasuredSite> sites;
    std::vector<SkippedCase> skipped; ///< not trained on
    /// `more`'s lines after these.
    void append(DecisionData &&more);
};
DecisionData readDecisionData(const std::string &path);
/// The lines of several files, in order; the first bad line throws, naming its file and line.
DecisionData readDecisionData(const std::vector<std::string> &paths);
/// The lines of `text` (a file read whole), named `source` in messages.
DecisionData readDecisionLines(std::string_view text, const std::string &source);
/// Whether a JSON value is a kernel or site line (its "kind"): how import tells these lines from others.
bool isDecisionLine(const nlohmann::json &j);
/// Each as the line readDecisionData reads back to the same struct.
nlohmann::json toJson(const MeasuredKernel &k);
nlohmann::json toJson(const MeasuredSite &s);
nlohmann::json toJson(const SkippedCase &c);

/// The most measured rows or sites a decision model's prediction may average (a package's
/// "neighbours" field, train-decisions' --kernel-neighbours).
inline constexpr int kMaxNeighbours = 64;
/// The range of the power a kernel-config model raises its inverse distances to (a package's
/// "weight_power" field, train-decisions' --kernel-weight-power).
inline constexpr double kMinWeightPower = 0.5;
inline constexpr double kMaxWeightPower = 8.0;

/// Predicts a configuration's time relative to Inductor's default launch of the same kernel from
/// the nearest measured (kernel, configuration) rows: a row's distance is its kernel's (kernel
/// features, each scaled by its spread in the data) and its configuration's (log2 blocks, warps,
/// stages) together, and the k nearest are averaged, each weighted by 1 / (0.25 + distance) raised
/// to a power (kWeightPower unless trained otherwise), with a prior of "as fast as the default". A
/// nearest-neighbour table rather than a network: a few hundred kernels measured on the configurations a
/// decision chooses among, and a prediction that can be traced to the kernels it came from.
class KernelConfigModel {
public:
    static constexpr int kVersion = 1;
    static constexpr int kNeighbours = 8; ///< the shipped models' and their held-out figures'
    /// Builds the table from measured kernels; kernels without a default time or with fewer than
    /// two timed configurations are skipped. `neighbours`: the measured rows a prediction averages,
    /// 1 to kMaxNeighbours (else InvalidInput); `weightPower`: the power of the inverse-distance
    /// weights, kMinWeightPower to kMaxWeightPower (else InvalidInput): the higher, the more the
    /// nearest rows decide.
    static KernelConfigModel build(const std::vector<MeasuredKernel> &kernels, int neighbours = kNeighbours,
                                   double weightPower = kWeightPower);
    /// The default: the shipped H200 models' and their held-out figures' (docs/MODELS.md, "Kernel
    /// configs and small-M forms").
    static constexpr double kWeightPower = 3.0;
    /// What a package written before the "weight_power" field was weighed by: plain inverse distance.
    static constexpr double kUnwrittenWeightPower = 1.0;
    /// Reads a package's "decisions.kernel_config" section; throws InvalidInput naming the field.
    static KernelConfigModel fromJson(const nlohmann::json &j);
    nlohmann::json toJson() const;

    /// log2(time / default time) predicted for each configuration of `shape`. With `triedNearby`, also
    /// whether one of the kernels the prediction looks among was measured with that very configuration.
    std::vector<double> predictLog2Ratio(const TritonKernelShape &shape,
                                         const std::vector<TritonConfig> &configs,
                                         std::vector<bool> *triedNearby = nullptr) const;
    /// The name of a kernel feature every measured kernel shares and `shape` does not (a reduction
    /// layout or a tiling never measured), "" when there is none. Such a kernel is unlike all the
    /// measured ones whatever its other features, and is not decided: the spread a distance is scaled
    /// by has nothing to say about a feature that never varied.
    std::string unmeasuredFeature(const TritonKernelShape &shape) const;
    int kernels() const { return int(m_kernels.size()); }
    int smCount() const { return m_smCount; }
    /// Configurations beyond the portfolios that every measured kernel whose grid holds them was
    /// measured with (a line the GPU's memory cut short, fewer configurations than its `grid`, does not
    /// count against one), on at least kMinExtraKernels: a decision offers them beside a kernel's portfolio
    /// (decisionCandidates), predicted from kernels that all measured them. A configuration measured on
    /// a few kernels only (the sweep's descent) is not one: predicted for another kernel from those few,
    /// it is given where it is slow.
    const std::vector<TritonConfig> &extraConfigs() const { return m_extra; }
    static constexpr int kMinExtraKernels = 4;

private:
    struct Kernel {
        std::vector<float> features;
        std::vector<std::vector<float>> configs; ///< configFeatures of each measured config
        std::vector<float> log2Ratio;
    };
    std::vector<Kernel> m_kernels;
    std::vector<TritonConfig> m_extra;
    std::vector<float> m_scale; ///< per kernel feature: 1 / spread (0 for a constant feature)
    int m_neighbours = kNeighbours;
    double m_weightPower = kWeightPower;
    int m_smCount = 132;
};

/// Predicts log2(decomposed time / library time) of a small-M site from the nearest measured sites
/// of the same op. An op no measured site had is not predicted (`covers`): such a site keeps its
/// library kernel. A site measured inside model steps is predicted by those measurements alone (their
/// mean) and supersedes the sites compiled alone that describe the same site (within kSameSite of
/// it); where one measured inside a step is among a site's nearest, the nearest of those alone
/// predict it. Alone, a site has other neighbours to fuse with than in a decoder layer (a weak proxy
/// of the step, docs/MODELS.md), and the step's figure is the one a compile meets.
/// A model built from sites whose library form read the KV cache as stored (MeasuredSite::
/// libraryOverCache) says so (`libraryOverCache`), and is built from the sites whose library form is
/// the one its decisions write (readsCacheAsStored): another's library time is of another decision.
class SmallMFormModel {
public:
    static constexpr int kVersion = 1;
    static constexpr int kNeighbours = 4; ///< the shipped models' and their held-out figures'
    /// The scaled feature distance within which two sites are the same site measured twice (a cache of
    /// 512 tokens and one of 513 lie 0.003 apart; twice the batch, about 0.5).
    static constexpr double kSameSite = 0.1;
    /// `ops`: the ops of the sites to build from (empty: every op measured).
    static SmallMFormModel build(const std::vector<MeasuredSite> &sites, int neighbours = kNeighbours,
                                 const std::vector<std::string> &ops = {});
    static SmallMFormModel fromJson(const nlohmann::json &j);
    nlohmann::json toJson() const;
    double predictLog2Ratio(const SmallMSite &site) const;
    int sites() const { return int(m_rows.size()); }
    bool covers(const std::string &op) const;
    bool libraryOverCache() const { return m_libraryOverCache; }
    /// Whether the library form this model's decisions write at `site` reads its KV cache as stored.
    bool libraryReadsCacheAsStored(const SmallMSite &site) const;
    /// Whether `s` was timed with the library form this model's decisions write at its site.
    bool timesItsLibraryForm(const MeasuredSite &s) const;

private:
    std::vector<std::string> m_ops; ///< the ops of its sites
    std::vector<std::vector<float>> m_rows;
    std::vector<float> m_log2Ratio;
    std::vector<bool> m_inStep;    ///< per row: measured inside a model step
    std::vector<bool> m_overCache; ///< per row: its library form read the KV cache as stored
    std::vector<float> m_scale;
    int m_neighbours = 4;
    bool m_libraryOverCache = false;
};

/// The margin by which a decision must be predicted faster before it departs from Inductor's own
/// behaviour, unless the package was calibrated with another: Inductor's default config, the
/// library kernel at a small-M site. A default Inductor tunes at first run is departed from for a
/// configuration predicted within the margin of it (decideKernelConfig).
inline constexpr double kDefaultKernelConfigMargin = 0.05;
inline constexpr double kDefaultFormMargin = 0.05;

/// A kernel's configuration: fixed (`config`) or left to Inductor, and why.
struct KernelConfigDecision {
    bool fixed = false;
    TritonConfig config;
    double predictedRatio = 1; ///< the chosen configuration's time over the default's
    int candidates = 0;
    /// "predicted_faster", "replaces_first_run_tuning" (a default Inductor tunes at first run, replaced
    /// by a configuration predicted within the margin of it), "default_predicted_best", "no_candidates",
    /// "none_tried_nearby", "feature_not_measured" (KernelConfigModel::unmeasuredFeature; `unmeasured`
    /// names it)
    std::string reason;
    std::string unmeasured;
};
/// The distinct fastest configuration of each measured kernel that lies beyond its portfolio, in
/// the order of the kernels: what a second kernel sweep measures on every kernel (`diode
/// sweep-kernels --extra-configs-from`), so that a package trained on it offers them (extraConfigs).
std::vector<TritonConfig> fastestBeyondPortfolio(const std::vector<MeasuredKernel> &kernels);

KernelConfigDecision decideKernelConfig(const KernelConfigModel &model, const TritonKernelShape &shape,
                                        double margin = kDefaultKernelConfigMargin);

/// A small-M site's form: decomposed into a multiply-and-sum, or the library kernel, and why.
struct FormDecision {
    bool decompose = false;
    /// How the site's decomposed form reads its activation operand, whichever form is chosen (a
    /// measurement may decompose a site the model would not): from memory, written once, instead of
    /// recomputed in every program of the multiply-and-sum; true for mm and addmm (decideForm says why).
    bool materialiseOperand = false;
    /// How the site's library form reads a KV cache with grouped KV heads, whichever form is chosen:
    /// as stored (FlashAttention over it, new tokens merged), as the model's library times were
    /// measured, instead of over the copies the attention as written makes (readsCacheAsStored).
    bool libraryOverCache = false;
    double predictedRatio = 1; ///< decomposed time over library time
    std::string reason; ///< "decomposed_predicted_faster", "library_predicted_faster", "op_not_measured"
};
FormDecision decideForm(const SmallMFormModel &model, const SmallMSite &site,
                        double margin = kDefaultFormMargin);
/// Whether `site`'s decomposed form reads its activation operand written out once (mm and addmm):
/// FormDecision::materialiseOperand, whatever the decision and whether or not a model covers the site.
bool materialisesOperand(const SmallMSite &site);

/// The decision models a package carries beside its GEMM network (manifest "decisions",
/// docs/PACKAGE.md), each absent when the package has none.
struct DecisionModels {
    std::optional<KernelConfigModel> kernelConfig;
    double kernelConfigMargin = kDefaultKernelConfigMargin;
    std::optional<SmallMFormModel> smallMForm;
    double formMargin = kDefaultFormMargin;
    /// Throws InvalidInput naming the field of a malformed section.
    static DecisionModels fromManifest(const nlohmann::json &manifest);
};

} // namespace diode
