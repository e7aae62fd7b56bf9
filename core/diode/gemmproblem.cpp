#include "gemmproblem.h"
#include "sweepplan.h"

#include <fmt/format.h>

namespace diode {

std::string_view toString(GemmOp op) {
    switch (op) {
    case GemmOp::Mm:
        return "mm";
    case GemmOp::Addmm:
        return "addmm";
    case GemmOp::Bmm:
        return "bmm";
    }
    return "?";
}

std::string_view toString(DType dtype) {
    switch (dtype) {
    case DType::BF16:
        return "bf16";
    case DType::FP16:
        return "fp16";
    case DType::FP32:
        return "fp32";
    }
    return "?";
}

std::optional<GemmOp> parseOp(std::string_view text) {
    if (text == "mm")
        return GemmOp::Mm;
    if (text == "addmm")
        return GemmOp::Addmm;
    if (text == "bmm")
        return GemmOp::Bmm;
    return std::nullopt;
}

std::optional<DType> parseDType(std::string_view text) {
    if (text.starts_with("torch."))
        text.remove_prefix(6);
    if (text == "bf16" || text == "bfloat16")
        return DType::BF16;
    if (text == "fp16" || text == "float16" || text == "half")
        return DType::FP16;
    if (text == "fp32" || text == "float32" || text == "float")
        return DType::FP32;
    return std::nullopt;
}

int elementBytes(DType dtype) {
    return dtype == DType::FP32 ? 4 : 2;
}

double GemmProblem::minBytes() const {
    const double e = elementBytes(dtype);
    double bytes = e * double(batch) * (double(m) * k + double(k) * n + double(m) * n);
    if (op == GemmOp::Addmm)
        bytes += e * double(n);
    return bytes;
}

std::string GemmProblem::label() const {
    std::string s = fmt::format("{} {} ", toString(op), toString(dtype));
    if (op == GemmOp::Bmm)
        s += fmt::format("{}x", batch);
    s += fmt::format("{}x{}x{}", m, n, k);
    if (aTransposed)
        s += " At";
    if (bTransposed)
        s += " Bt";
    return s;
}

void validate(const GemmProblem &p, const std::string &where) {
    auto check = [&](const char *field, int64_t v) {
        if (v < 1)
            throw InvalidInput(
                fmt::format("{}: field '{}' is {}; sizes must be at least 1", where, field, v));
        // The plans' limit, for every problem: a line with M = 2^63-1 was imported, ranked and
        // evaluated (predicted 2.6e9 ms) though no kernel can index it.
        if (v > planlimits::kMaxSize)
            throw InvalidInput(fmt::format("{}: field '{}' is {}; sizes must be at most {} (kernels index "
                                           "with 32-bit integers)",
                                           where, field, v, planlimits::kMaxSize));
    };
    check("B", p.batch);
    check("M", p.m);
    check("N", p.n);
    check("K", p.k);
    if (p.op != GemmOp::Bmm && p.batch != 1)
        throw InvalidInput(
            fmt::format("{}: field 'B' is {} but op '{}' is not batched", where, p.batch, toString(p.op)));
}

} // namespace diode
