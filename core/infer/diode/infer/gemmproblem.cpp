#include "gemmproblem.h"

#include <fmt/format.h>

#include <utility>

namespace diode {

namespace {
// The one table of op names: parsing, printing and the lists in messages all read it.
constexpr std::pair<GemmOp, std::string_view> kOpNames[] = {
    {GemmOp::Mm, "mm"}, {GemmOp::Addmm, "addmm"}, {GemmOp::Bmm, "bmm"}, {GemmOp::Baddbmm, "baddbmm"}};
} // namespace

std::string_view toString(GemmOp op) {
    for (const auto &[o, name] : kOpNames)
        if (o == op)
            return name;
    return "?";
}

std::string_view opNames() {
    static const std::string names = [] {
        std::string s;
        for (const auto &[o, name] : kOpNames)
            s += (s.empty() ? "" : ", ") + std::string(name);
        return s;
    }();
    return names;
}

const std::vector<GemmOp> &allOps() {
    static const std::vector<GemmOp> ops = [] {
        std::vector<GemmOp> v;
        for (const auto &[o, name] : kOpNames)
            v.push_back(o);
        return v;
    }();
    return ops;
}

const std::vector<std::string> &opNameList() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (const auto &[o, name] : kOpNames)
            v.emplace_back(name);
        return v;
    }();
    return names;
}

bool isBatched(GemmOp op) {
    return op == GemmOp::Bmm || op == GemmOp::Baddbmm;
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

const std::vector<DType> &allDTypes() {
    static const std::vector<DType> dtypes{DType::BF16, DType::FP16, DType::FP32};
    return dtypes;
}

const std::vector<std::string> &dtypeNameList() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (DType d : allDTypes())
            v.emplace_back(toString(d));
        return v;
    }();
    return names;
}

std::optional<GemmOp> parseOp(std::string_view text) {
    for (const auto &[o, name] : kOpNames)
        if (text == name)
            return o;
    return std::nullopt;
}

std::optional<DType> parseDType(std::string_view text) {
    if (text.starts_with("torch."))
        text.remove_prefix(6);
    for (const DType d : allDTypes())
        if (text == toString(d) || text == torchName(d))
            return d;
    if (text == "half") // torch's aliases
        return DType::FP16;
    if (text == "float")
        return DType::FP32;
    return std::nullopt;
}

std::string_view torchName(DType dtype) {
    switch (dtype) {
    case DType::BF16:
        return "bfloat16";
    case DType::FP16:
        return "float16";
    case DType::FP32:
        return "float32";
    }
    return "float32";
}

int elementBytes(DType dtype) {
    return dtype == DType::FP32 ? 4 : 2;
}

double GemmProblem::minBytes() const {
    const double e = elementBytes(dtype);
    double bytes = e * double(batch) * (double(m) * k + double(k) * n + double(m) * n);
    if (op == GemmOp::Addmm)
        bytes += e * double(n);
    if (op == GemmOp::Baddbmm) // the addend (B, 1, N)
        bytes += e * double(batch) * double(n);
    return bytes;
}

std::string GemmProblem::label() const {
    std::string s = fmt::format("{} {} ", toString(op), toString(dtype));
    if (isBatched(op))
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
        // For every problem, not only a plan's: a line with M = 2^63-1 was imported, ranked and
        // evaluated (predicted 2.6e9 ms) though no kernel can index it.
        if (v > kMaxProblemSize)
            throw InvalidInput(fmt::format("{}: field '{}' is {}; sizes must be at most {} (kernels index "
                                           "with 32-bit integers)",
                                           where, field, v, kMaxProblemSize));
    };
    check("B", p.batch);
    check("M", p.m);
    check("N", p.n);
    check("K", p.k);
    if (!isBatched(p.op) && p.batch != 1)
        throw InvalidInput(
            fmt::format("{}: field 'B' is {} but op '{}' is not batched", where, p.batch, toString(p.op)));
}

} // namespace diode
