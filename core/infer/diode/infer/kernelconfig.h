#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace diode {

/// A GPU candidate's key, in order: its kind, its name (the ATen function, or the Triton template),
/// then these problem-JSON fields. It is the plugin ABI's packed row (diode_inductor.h) and the
/// Python selector's candidate key (read through diode_vocabulary). The last kCandidateKeyFlags are
/// flags: 0/1, -1 when not given.
inline constexpr std::array<const char *, 8> kCandidateKeyFields{
    "BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_stages", "num_warps", "EVEN_K", "ALLOW_TF32"};
inline constexpr size_t kCandidateKeyFlags = 2;
/// A packed row's kind codes, in order (the plugin ABI's rows): "other" is a candidate the caller
/// could not read, which no model describes.
inline constexpr std::array<const char *, 3> kCandidateRowKinds{"aten", "triton", "other"};
/// Inductor's GROUP_M where a Triton GEMM template does not set it (its mm configs' default): a
/// candidate key without GROUP_M has this one.
inline constexpr int kDefaultGroupM = 8;

/// One kernel choice for a GEMM: an ATen (cuBLAS) call, a Triton template instance with its
/// block sizes, or a configuration of the CPU reference GEMM. Keys this build does not know
/// (new template parameters) are kept in `extra` so they survive a round trip.
struct KernelConfig {
    std::string kind; ///< "aten", "triton" or "cpu"
    std::string name; ///< ATen: "extern_kernels.mm"; Triton: the template, "mm"; CPU: "tiled"
    int blockM = 0;
    int blockN = 0;
    int blockK = 0;
    int groupM = 0;
    int numStages = 0;
    int numWarps = 0;
    int threads = 0;      ///< CPU backend only
    nlohmann::json extra; ///< null or an object; null costs no allocation per row

    /// The shared memory a Triton GEMM config's pipelined loads need at least: num_stages tiles of
    /// A (BLOCK_M x BLOCK_K) and of B (BLOCK_K x BLOCK_N) of `elementBytes` each (one stage at
    /// least). Inductor's own estimate adds barriers and, for persistent TMA, the epilogue's, so a
    /// config over the device's limit by this lower bound cannot compile (measured on an H200:
    /// 128x128x128 with 4 stages, bf16, 262,144 bytes against 232,448). The feature schema's
    /// shared-memory inputs are this too.
    int64_t tileLoadBytes(int elementBytes) const {
        return int64_t(numStages > 1 ? numStages : 1) *
               (int64_t(blockM) * blockK + int64_t(blockK) * blockN) * elementBytes;
    }
    /// Canonical text identity: equal configs have equal keys (used for dedup in the store).
    std::string key() const;
    nlohmann::json toJson() const;
    /// Whether diode reads candidates of this kind (the one list; kKnownKinds names it in messages).
    /// Which of them a model can describe is FeatureSchema::describes().
    static bool isKnownKind(std::string_view kind);
    static constexpr const char *kKnownKinds = "aten, triton or cpu";
    /// Throws InvalidInput naming `where` for an unknown kind or a malformed field.
    static KernelConfig fromJson(const nlohmann::json &j, const std::string &where);
    /// One integer parameter (BLOCK_M, num_warps, ...) from any reader: 0..2^20, else InvalidInput
    /// naming `where` and `field`. Never truncated (2^40 is refused, not stored as 0).
    static int intParameter(const nlohmann::json &v, const std::string &where, const std::string &field);
    bool operator==(const KernelConfig &o) const { return key() == o.key(); }
};

} // namespace diode
