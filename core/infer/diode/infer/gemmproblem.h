#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace diode {

/// The GEMM ops of the schema (docs/FORMATS.md). Baddbmm is Bmm plus an addend of shape (B, 1, N),
/// broadcast over M (ALiBi attention's bias); a full (B, M, N) addend is not one of them.
enum class GemmOp { Mm, Addmm, Bmm, Baddbmm };
enum class DType { BF16, FP16, FP32 };

std::string_view toString(GemmOp op);
/// Every op name, in enum order, as messages list them: "mm, addmm, bmm, baddbmm".
std::string_view opNames();
/// Every op, in enum order.
const std::vector<GemmOp> &allOps();
/// Every op's name, in enum order: the choices a plan, a command line or a page offers.
const std::vector<std::string> &opNameList();
/// Whether the op takes a batch B other than 1 (bmm, baddbmm).
bool isBatched(GemmOp op);
std::string_view toString(DType dtype);
/// Every dtype, in enum order.
const std::vector<DType> &allDTypes();
/// Every dtype's name ("bf16", ...), in enum order.
const std::vector<std::string> &dtypeNameList();
std::optional<GemmOp> parseOp(std::string_view text);
/// Accepts our names (bf16) and torch's (bfloat16, torch.bfloat16).
std::optional<DType> parseDType(std::string_view text);
int elementBytes(DType dtype);
/// torch's name of the dtype without "torch." ("bfloat16", "float16", "float32").
std::string_view torchName(DType dtype);

/// The largest B, M, N or K of any problem: Inductor's kernels index with 32-bit integers, and the
/// worker refuses more (plans check it before expanding: sweepplan.h, planlimits).
inline constexpr int64_t kMaxProblemSize = 2'147'483'647;

/// One GEMM to benchmark: C[B,M,N] = A[B,M,K] @ B[B,K,N] (+ bias[N] for addmm, + addend[B,1,N] for
/// baddbmm).
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

/// Checks sizes (>= 1, batch 1 unless bmm or baddbmm); throws InvalidInput naming `where` and the field.
void validate(const GemmProblem &problem, const std::string &where);

} // namespace diode
