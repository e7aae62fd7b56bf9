#pragma once

#include "diode/infer/decision.h"
#include "diode/infer/decisionmodel.h"
#include "diode/infer/modelpackage.h"
#include "diode/infer/selectionpolicy.h"

#include <nlohmann/json.hpp>

#include <array>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace diode {

/// How a Selector decides: the plugin's install() options, `diode eval --margin`.
struct SelectorOptions {
    int topK = 1;
    double threshold = std::numeric_limits<double>::infinity();
    /// The ATen guard's margin; nullopt: the package's for the regime in use (packageMargin).
    std::optional<double> margin;
    /// The regime the compile runs in; nullopt: the one the package was trained for (regimeOf its
    /// timing method), so a package named alone gets its own calibrated margin everywhere.
    std::optional<Regime> regime;
    /// The ops decided (problem-JSON names); empty: every op.
    std::vector<std::string> ops;
    /// Candidates the model cannot describe are handed back with the kept ones (Inductor then
    /// benchmarks); otherwise they are dropped.
    bool keepUnscored = false;
    /// A GEMM the model does not decide is handed back to Inductor with its own candidates
    /// (max-autotune's behaviour); otherwise plain torch.compile's kernel is kept alone.
    bool deferToInductor = false;

    /// From {"top_k", "performance_threshold" (null: none), "margin" (null: the package's),
    /// "regime" (null: the package's), "ops" (null: all), "keep_unscored", "fallback" ("plain" |
    /// "inductor")}, every key optional; throws InvalidInput naming the key for a bad value or an
    /// unknown key.
    static SelectorOptions fromJson(const nlohmann::json &j);
};

/// What Inductor knows of a GEMM lowering that a problem line does not carry.
struct GemmContext {
    /// baddbmm: its addend is (B, M, N), not broadcast over M as problem JSON's (B, 1, N) is.
    bool addendVariesAlongM = false;
    /// Shared memory a block may use on the device, bytes; 0: not known (nothing excluded for it).
    int64_t sharedMemoryBytes = 0;
};

/// A GEMM as the plugin names it before anything is parsed: op and dtype as Inductor gives them
/// (torch's dtype names are accepted), so that an op or dtype no model knows is a reason, not an
/// error.
struct GemmLowering {
    std::string op, dtype;
    int64_t batch = 1, m = 0, n = 0, k = 0;
    bool aTransposed = false, bTransposed = false;
    GemmContext context;
};

/// The GEMM kernel decision, made once: the plugin (through diode_decide_gemm), `diode eval`,
/// the Validate page, calibration and `diode characterise` all ask it, so every figure scores the
/// rule a compile runs. In order: a lowering offering only ATen keeps plain's kernel; then the op
/// gate (options.ops, the package's feature schema), the dtype, a baddbmm addend that varies
/// along M, and the unseen-flag guard (a problem flag no training problem had) each keep plain's
/// kernel with their reason; candidates the model cannot describe, those the package's data
/// found wrong and those over the device's shared memory are excluded; the rest are scored (a
/// repeated GEMM's scores come from the cache) and the selection policy, with the margin for the
/// regime in use, picks among them. Thread-safe. The package must outlive the selector.
class Selector {
public:
    Selector(const ModelPackage &package, SelectorOptions options);

    /// The plugin's path: parses the lowering's op and dtype (an unknown one is a reason), checks
    /// its sizes (InvalidInput naming the field) and decides.
    Decision decide(const GemmLowering &gemm, const std::vector<KernelConfig> &candidates);
    /// The same for a parsed problem. `predictedMs` (one per candidate, finite) replaces scoring:
    /// for callers that predicted a table at once or read stored predictions.
    Decision decide(const GemmProblem &problem, const std::vector<KernelConfig> &candidates,
                    const GemmContext &context = {}, const std::vector<double> *predictedMs = nullptr);

    /// The form of a small-M site, by the package's form model (decisionmodel.h); a package without
    /// one keeps the library kernel ("no_model"). Counted as DecisionKind::SmallMForm.
    FormDecision decideSmallMForm(const SmallMSite &site);
    /// The configuration of a pointwise or reduction kernel, by the package's kernel-config model;
    /// a package without one keeps Inductor's default ("no_model"). Counted as KernelConfig.
    KernelConfigDecision decideKernelConfig(const TritonKernelShape &shape);
    /// Why the package's decision models could not be read ("" when they could or it has none).
    const std::string &decisionModelsError() const { return m_decisionsError; }

    /// The context of a GEMM on the GPU the package was made on (its shared memory per block, from
    /// the GPU table): how `diode eval` and the other offline callers decide, as a compile on that
    /// GPU would.
    GemmContext onPackageGpu() const;

    const SelectionPolicy &policy() const { return m_policy; }
    Regime regime() const { return m_regime; }
    const SelectorOptions &options() const { return m_options; }
    /// The options in use, the margin and regime resolved: {"top_k", "performance_threshold",
    /// "margin", "regime", "ops", "keep_unscored", "fallback", "decides"}; "decides" lists the
    /// decision kinds decided by a model (toString(DecisionKind)), the GEMM kernel's always.
    nlohmann::json describe() const;
    DecisionCounters &counters() { return m_counters; }
    const DecisionCounters &counters() const { return m_counters; }

private:
    // One candidate of the package's unsafe_candidates, for one op, dtype and layout.
    struct UnsafeKernel {
        std::string kind, name;
        std::array<int, 6> params;
    };
    Decision notSelected(Decision d, std::string reason, std::string why) const;
    void countBeside(DecisionKind kind, bool departed, const std::string &reason, std::string op);
    /// Why op `name` (parsed: `op`) is not decided, or "".
    std::string opRefused(const std::string &name, std::optional<GemmOp> op) const;
    bool isUnsafe(const GemmProblem &p, const KernelConfig &c) const;
    void scoreCached(const GemmProblem &p, const std::vector<KernelConfig> &configs, std::vector<double> &ms,
                     bool &reused);

    const ModelPackage &m_package;
    SelectorOptions m_options;
    Regime m_regime;
    SelectionPolicy m_policy;
    /// unsafe_candidates by "op dtype a_t b_t".
    std::map<std::string, std::vector<UnsafeKernel>> m_unsafe;
    std::mutex m_cacheLock;
    std::map<std::string, std::vector<double>> m_scores; ///< problem and candidates -> predictions
    DecisionModels m_decisions;                          ///< the package's models beside the GEMM network
    std::string m_decisionsError;
    DecisionCounters m_counters;
};

} // namespace diode
