#pragma once

#include "diode/infer/kernelconfig.h"
#include "diode/infer/timingmethod.h"

#include <nlohmann/json.hpp>

#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace diode {

/// The regime a compile runs in: "warm" (operands in L2, a decode loop) or "cold" (weights
/// evicted, a large model's forward pass). Each has its own calibrated ATen-guard margin.
enum class Regime { Warm, Cold };
std::string_view toString(Regime r);
/// Throws InvalidInput naming the accepted values.
Regime parseRegime(std::string_view text);
/// The regime whose times a package of `method` learnt: cold for graph_cold, else warm.
Regime regimeOf(TimingMethod method);

/// The ATen guard's margin of a package that carries none (every package written before
/// `diode calibrate`), per regime: calibrated on the shipped H200 in-graph packages' own
/// validation and test problems (docs/MODELS.md, "Policy"). 0.8 % of the warm package's 706
/// calibration picks were over 3 % slower than plain's kernel at 0.10 (1.1 % at 0.08, 3.4 % at 0);
/// 2.0 % of the cold one's at 0.08 (3.5 % at 0).
double defaultMargin(Regime regime);

/// The manifest key `diode calibrate` writes (docs/PACKAGE.md): {"regime", "margin", ...}.
inline constexpr const char *kSelectionPolicyKey = "selection_policy";
/// The margin a package's selector uses in `regime`: the manifest's calibrated one when it was
/// calibrated for that regime, else defaultMargin(regime). Throws PackageError for a malformed
/// field.
double packageMargin(const nlohmann::json &manifest, Regime regime);

/// The ATen kernel plain torch.compile runs for an addmm with a broadcast bias where Inductor offers
/// it: plain hands cuBLAS the 1-D bias (bias_addmm's path); extern addmm with the bias expanded
/// measured 1.27x slower (geomean, 371 held-out addmm problems on the H200).
inline constexpr std::string_view kPlainAddmmKernel = "extern_kernels.bias_addmm";

/// Which of a problem's candidates the selector keeps, from their predicted times: the one rule
/// the plugin, `diode eval` and the Validate page apply (docs/MODELS.md, "Policy").
///
/// The plain candidate (what plain torch.compile runs: `plainName` where it is offered, else the
/// op's best-predicted ATen kernel) is kept alone when it is predicted within (1 + margin) of the
/// best candidate, so ATen wins ties. Otherwise the topK best predicted within threshold x the best
/// are kept, fastest first; and when more than one is kept and none is ATen, the plain candidate
/// goes last, the extern kernel Inductor falls back to when every template fails its layout
/// constraints (measured: a ViT block's bmm with top_k 3 failed to compile without it). Margin 0 turns
/// the guard off (top-1 is then the arg-min). Without an ATen candidate there is no guard.
struct SelectionPolicy {
    int topK = 1;
    double margin = 0;
    double threshold = std::numeric_limits<double>::infinity();
    std::string plainName{kPlainAddmmKernel};

    /// Throws InvalidInput naming the field: topK >= 1, margin >= 0, threshold >= 1 (NaN never).
    void validate() const;
    /// The index of the plain candidate, nullopt without an ATen candidate. `predictedMs` may be
    /// empty (nothing predicted): then the first ATen kernel.
    std::optional<size_t> plainCandidate(const std::vector<KernelConfig> &candidates,
                                         const std::vector<double> &predictedMs) const;
    /// The indices kept, best first (empty only without candidates). `predictedMs` has one time
    /// per candidate (InvalidInput otherwise).
    std::vector<size_t> select(const std::vector<KernelConfig> &candidates,
                               const std::vector<double> &predictedMs) const;
    /// The top-1 decision: select()'s first.
    std::optional<size_t> pick(const std::vector<KernelConfig> &candidates,
                               const std::vector<double> &predictedMs) const;
    nlohmann::json toJson() const;
};

} // namespace diode
