#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace diode {

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
