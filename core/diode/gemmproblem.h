#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace diode {

enum class GemmOp { Mm, Addmm, Bmm };
enum class DType { BF16, FP16, FP32 };

std::string_view toString(GemmOp op);
std::string_view toString(DType dtype);
std::optional<GemmOp> parseOp(std::string_view text);
/// Accepts our names (bf16) and torch's (bfloat16, torch.bfloat16).
std::optional<DType> parseDType(std::string_view text);
int elementBytes(DType dtype);

/// One GEMM to benchmark: C[B,M,N] = A[B,M,K] @ B[B,K,N] (+ bias[N] for addmm).
/// `bTransposed` means B is stored column-major, as an nn.Linear weight used as x @ W.t().
struct GemmProblem {
    GemmOp op = GemmOp::Mm;
    DType dtype = DType::BF16;
    int64_t batch = 1;
    int64_t m = 0;
    int64_t n = 0;
    int64_t k = 0;
    bool aTransposed = false;
    bool bTransposed = false;

    double flops() const { return 2.0 * double(batch) * double(m) * double(n) * double(k); }
    /// The fewest bytes a kernel must move: each operand read once, the output written once.
    double minBytes() const;
    /// A short human label: "mm bf16 1024x4096x4096 Bt".
    std::string label() const;
    auto operator<=>(const GemmProblem &) const = default;
};

/// Thrown for a problem or plan field that is missing or out of range; the message names it.
class InvalidInput : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Checks sizes (>= 1, batch 1 unless bmm); throws InvalidInput naming `where` and the field.
void validate(const GemmProblem &problem, const std::string &where);

} // namespace diode
