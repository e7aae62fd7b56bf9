#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace diode {

/// The decisions the plugin makes inside a compile, each made by one core call with its own
/// reasons and counters: the GEMM kernel (which of Inductor's candidates a GEMM runs), the form of
/// a small-M GEMM or one-token attention (library kernel or Inductor's fused multiply-and-sum,
/// decisionmodel.h) and the configuration of each pointwise and reduction kernel.
enum class DecisionKind { GemmKernel, SmallMForm, KernelConfig };
inline constexpr std::array kDecisionKinds{DecisionKind::GemmKernel, DecisionKind::SmallMForm,
                                           DecisionKind::KernelConfig};
/// "gemm_kernel", "small_m_form", "kernel_config": the kind's key in counters and in the plugin's
/// get_stats().
std::string_view toString(DecisionKind kind);

/// Why a candidate is never handed back whatever its prediction: the model cannot describe it
/// (FeatureSchema::describes), the package's data found its output wrong on problems of this op,
/// dtype and layout (manifest `unsafe_candidates`), or its pipelined loads need more shared memory
/// than the device has (it cannot compile).
enum class Exclusion : uint8_t { None, Unscorable, WrongResult, SharedMemory };
/// The names of kExclusions in order ("" for None): what counters and recorded decisions say.
inline constexpr std::array<std::string_view, 4> kExclusionNames{"", "unscorable", "wrong_result",
                                                                 "shared_memory"};
std::string_view toString(Exclusion e);

/// One decision and why it came out so: what the plugin hands Inductor and what `diode eval`,
/// the Validate page, calibration and `diode characterise` score.
struct Decision {
    DecisionKind kind = DecisionKind::GemmKernel;
    /// The candidates handed back, best first. Empty only when Inductor is to decide with its own
    /// candidates (`deferred`, or nothing plain to keep).
    std::vector<size_t> kept;
    /// The model decided. Otherwise `notSelected` says why and `kept` is plain's candidate alone
    /// (or empty, see above). For a small-M form or a kernel config: the site is decomposed, the
    /// kernel gets a fixed configuration; otherwise it keeps Inductor's own behaviour.
    bool selected = false;
    /// Not selected and the options hand such lowerings back to Inductor (fallback "inductor").
    bool deferred = false;
    /// Why the model did not decide, a counter key ("only_aten", "unscorable_op_baddbmm",
    /// "unscorable_dtype", "unscorable_unseen_a_transposed", ...); empty when selected.
    std::string notSelected;
    std::string why;                 ///< the same for a person, one sentence; empty when selected
    std::vector<double> predictedMs; ///< per candidate; NaN where none was scored
    std::vector<Exclusion> excluded; ///< per candidate
    std::optional<size_t> plain;     ///< the candidate plain torch.compile runs, if offered
    bool scoresReused = false;       ///< the predictions came from the score cache
    double margin = 0;               ///< the ATen guard's margin the policy ran with
    std::string op;                  ///< the op as the caller named it (counters by op)

    /// The top-1 decision: the first candidate kept.
    std::optional<size_t> pick() const {
        return kept.empty() ? std::nullopt : std::optional<size_t>(kept[0]);
    }
};

/// What the decisions of one selector came to, per kind: the counters the plugin's get_stats()
/// reports. Thread-safe.
class DecisionCounters {
public:
    void count(const Decision &d);
    void reset();
    /// Per kind ({"gemm_kernel": {...}}): "decisions"; "selected" (the model decided) and
    /// "selections_by_op" of those; "not_selected" ({reason: n}); "handed_back_several" (Inductor
    /// got more than one candidate, or its own, and benchmarks them); "scores_reused" (from the
    /// score cache); of the selected ones' candidates, "candidates_seen" (scored or unscorable),
    /// "candidates_scored", "candidates_filtered" (scored, not kept), "candidates_unknown_kept" and
    /// "candidates_unknown_dropped" (unscorable, handed back or not); "candidates_excluded" ({why:
    /// n}, wrong_result and shared_memory, of every decision that got as far as excluding).
    nlohmann::json toJson() const;

private:
    struct Kind {
        int64_t decisions = 0, selected = 0, handedBackSeveral = 0, scoresReused = 0;
        int64_t seen = 0, scored = 0, filtered = 0, unknownKept = 0, unknownDropped = 0;
        std::map<std::string, int64_t> notSelected, byOp, excluded;
    };
    mutable std::mutex m_lock;
    std::array<Kind, kDecisionKinds.size()> m_kinds;
};

} // namespace diode
