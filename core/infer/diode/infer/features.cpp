#include "features.h"

#include "diode/infer/gputable.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

namespace diode {

HardwareFeatures HardwareFeatures::forGpu(const std::string &name, int smCount, int schema) {
    HardwareFeatures hw;
    hw.smCount = smCount > 0 ? smCount : 132;
    hw.memoryBandwidthTBs = 2.0;
    hw.sharedMemoryKB = 163;
    const GpuSpec *g = findGpu(name);
    // Version 1 matched "H200" before "GH200"; its packages were trained on those features.
    if (g && schema == 1 && std::string_view(g->match) == "GH200")
        g = findGpu("H200");
    if (g) {
        hw.smCount = smCount > 0 ? smCount : g->smCount;
        hw.memoryBandwidthTBs = g->bandwidthTBs;
        hw.sharedMemoryKB = g->sharedMemoryKB;
    }
    return hw;
}

namespace {

const std::vector<std::string> kNames = {
    // problem
    "log2_M",
    "log2_N",
    "log2_K",
    "log2_B",
    "dtype_bf16",
    "dtype_fp16",
    "dtype_fp32",
    "op_mm",
    "op_addmm",
    "op_bmm",
    "op_baddbmm",
    "a_transposed",
    "b_transposed",
    "log2_intensity",
    "log2_min_us",
    "M_mod8",
    "N_mod8",
    "K_mod8",
    "M_mod16",
    "N_mod16",
    "K_mod16",
    "M_mod128",
    "N_mod128",
    "K_mod128",
    // candidate
    "is_aten",
    "is_triton",
    "aten_bias_addmm",
    "tpl_mm",
    "tpl_bmm",
    "tpl_persistent",
    "tpl_other",
    "log2_BM",
    "log2_BN",
    "log2_BK",
    "log2_GROUP_M",
    "num_stages",
    "log2_num_warps",
    "even_k",
    "allow_tf32",
    // derived
    "log2_tiles",
    "log2_waves",
    "wave_tail",
    "log2_k_iters",
    "pad_waste_M",
    "pad_waste_N",
    "pad_waste_K",
    "log2_smem_kb",
    "smem_fraction",
    "log2_tile_intensity",
    // hardware
    "log2_sms",
    "mem_bw_tbs",
};

inline float l2(double v) {
    return float(std::log2(std::max(v, 1e-9)));
}
inline double ceilDiv(double a, double b) {
    return std::ceil(a / b);
}

// l2 of small whole numbers (block sizes, warps, k iterations, tile counts) from a table filled by
// l2 itself, so the values are bit for bit those of l2: ranking calls this ~10 times per candidate.
constexpr int kLog2Table = 4096;
float l2n(double v) {
    static const std::array<float, kLog2Table + 1> table = [] {
        std::array<float, kLog2Table + 1> t{};
        for (int i = 1; i <= kLog2Table; ++i)
            t[size_t(i)] = l2(double(i));
        return t;
    }();
    if (v >= 1 && v <= kLog2Table && v == double(int(v)))
        return table[size_t(int(v))];
    return l2(v);
}

constexpr size_t kProblemFeatures = 24, kCandidateFeatures = 25, kHardwareFeatures = 2;
// Where op_baddbmm sits; versions 1 and 2 have every feature but it, in the same order.
constexpr size_t kBaddbmmIndex = 10;
constexpr int kFirstBaddbmmSchema = 3;

bool hasBaddbmm(int schema) {
    return schema >= kFirstBaddbmmSchema;
}

void checkSchema(int schema) {
    if (schema < kOldestFeatureSchemaVersion || schema > kFeatureSchemaVersion)
        throw InvalidInput(fmt::format("feature schema {} is not one this build computes ({} to {})", schema,
                                       kOldestFeatureSchemaVersion, kFeatureSchemaVersion));
}

// The problem's and the hardware's features are the same for every candidate of a ranking call:
// they are computed once and copied while the problem and hardware stay the same.
struct ProblemFeatures {
    GemmProblem problem;
    int smCount = 0, sharedMemoryKB = 0;
    double memoryBandwidthTBs = 0;
    bool valid = false;
    float values[kProblemFeatures + kHardwareFeatures];

    bool matches(const GemmProblem &p, const HardwareFeatures &hw) const {
        return valid && problem == p && smCount == hw.smCount && sharedMemoryKB == hw.sharedMemoryKB &&
               memoryBandwidthTBs == hw.memoryBandwidthTBs;
    }
    void compute(const GemmProblem &p, const HardwareFeatures &hw) {
        problem = p;
        smCount = hw.smCount;
        sharedMemoryKB = hw.sharedMemoryKB;
        memoryBandwidthTBs = hw.memoryBandwidthTBs;
        const double M = double(p.m), N = double(p.n), K = double(p.k), B = double(p.batch);
        float *o = values;
        *o++ = l2n(M), *o++ = l2n(N), *o++ = l2n(K), *o++ = l2n(B);
        *o++ = float(p.dtype == DType::BF16), *o++ = float(p.dtype == DType::FP16),
        *o++ = float(p.dtype == DType::FP32);
        *o++ = float(p.op == GemmOp::Mm), *o++ = float(p.op == GemmOp::Addmm),
        *o++ = float(p.op == GemmOp::Bmm), *o++ = float(p.op == GemmOp::Baddbmm);
        *o++ = float(p.aTransposed), *o++ = float(p.bTransposed);
        *o++ = l2(p.flops() / p.minBytes());
        // The roofline floor in microseconds: bytes at the memory bandwidth or flops at a class rate.
        const double peakTflops = p.dtype == DType::FP32 ? 60.0 : 800.0;
        const double floorUs =
            std::max(p.minBytes() / (hw.memoryBandwidthTBs * 1e12), p.flops() / (peakTflops * 1e12)) * 1e6;
        *o++ = l2(floorUs);
        for (int mod : {8, 16, 128})
            for (double v : {M, N, K})
                *o++ = float(std::fmod(v, mod) == 0);
        *o++ = l2n(hw.smCount), *o++ = float(hw.memoryBandwidthTBs);
        valid = true;
    }
};

} // namespace

const std::vector<std::string> &FeatureSchema::names(int schema) {
    checkSchema(schema);
    static const std::vector<std::string> withoutBaddbmm = [] {
        auto v = kNames;
        v.erase(v.begin() + kBaddbmmIndex);
        return v;
    }();
    return hasBaddbmm(schema) ? kNames : withoutBaddbmm;
}

bool FeatureSchema::knowsOp(GemmOp op, int schema) {
    return op != GemmOp::Baddbmm || hasBaddbmm(schema);
}

std::vector<int> FeatureSchema::currentIndices(int schema) {
    std::vector<int> out;
    for (const auto &n : names(schema))
        out.push_back(int(std::find(kNames.begin(), kNames.end(), n) - kNames.begin()));
    return out;
}

const std::vector<int> &FeatureSchema::problemFlags(int schema) {
    auto flagsOf = [](const std::vector<std::string> &names) {
        std::vector<int> out;
        for (size_t i = 0; i < names.size(); ++i) {
            const std::string &n = names[i];
            if (n.rfind("dtype_", 0) == 0 || n.rfind("op_", 0) == 0 || n == "a_transposed" ||
                n == "b_transposed")
                out.push_back(int(i));
        }
        return out;
    };
    static const std::vector<int> current = flagsOf(names()), old = flagsOf(names(kFirstBaddbmmSchema - 1));
    return hasBaddbmm(schema) ? current : old;
}

bool FeatureSchema::describes(const KernelConfig &c) {
    if (c.kind == "aten")
        return true;
    const bool tiled = c.blockM > 0 && c.blockN > 0 && c.blockK > 0;
    if (c.kind == "cpu")
        return tiled;
    return c.kind == "triton" && tiled &&
           std::find(kTritonTemplates.begin(), kTritonTemplates.end(), c.name) != kTritonTemplates.end();
}

void FeatureSchema::check(const KernelConfig &c, const std::string &where) {
    if (!KernelConfig::isKnownKind(c.kind))
        throw InvalidInput(fmt::format("{}: candidate kind '{}' is not one the model knows ({})", where,
                                       c.kind, KernelConfig::kKnownKinds));
    if (c.kind == "triton" &&
        std::find(kTritonTemplates.begin(), kTritonTemplates.end(), c.name) == kTritonTemplates.end())
        throw InvalidInput(fmt::format("{}: Triton template '{}' is not one a model describes ({})", where,
                                       c.name, fmt::join(kTritonTemplates, ", ")));
    if (!describes(c))
        throw InvalidInput(fmt::format("{}: {} candidate needs BLOCK_M, BLOCK_N and BLOCK_K", where, c.kind));
}

void FeatureSchema::compute(const GemmProblem &p, const KernelConfig &c, const HardwareFeatures &hw,
                            std::vector<float> &out, int schema) {
    if (kNames.size() != kProblemFeatures + kCandidateFeatures + kHardwareFeatures)
        throw std::logic_error(fmt::format("feature schema writes {} features, names {}",
                                           kProblemFeatures + kCandidateFeatures + kHardwareFeatures,
                                           kNames.size()));
    const bool current = hasBaddbmm(schema);
    if (!knowsOp(p.op, schema))
        throw InvalidInput(
            fmt::format("op '{}' has no input in feature schema {}: a package of that schema cannot "
                        "score it (schema {} and newer can)",
                        toString(p.op), schema, kFirstBaddbmmSchema));
    const size_t width = current ? kNames.size() : kNames.size() - 1;
    thread_local ProblemFeatures last;
    if (!last.matches(p, hw))
        last.compute(p, hw);
    const size_t start = out.size();
    out.resize(start + width);
    float *o = out.data() + start;
    if (current) {
        o = std::copy_n(last.values, kProblemFeatures, o);
    } else { // every problem feature but op_baddbmm, which is 0 for the ops the schema knows
        o = std::copy_n(last.values, kBaddbmmIndex, o);
        o = std::copy_n(last.values + kBaddbmmIndex + 1, kProblemFeatures - kBaddbmmIndex - 1, o);
    }

    const double M = double(p.m), N = double(p.n), K = double(p.k), B = double(p.batch);
    const bool aten = c.kind == "aten", triton = c.kind == "triton", cpu = c.kind == "cpu";
    *o++ = float(aten), *o++ = float(triton),
    *o++ = float(aten && c.name.find("bias_addmm") != std::string::npos);
    const bool persistent = triton && c.name.find("persistent") != std::string::npos;
    const bool tplMm = triton && !persistent && c.name == "mm";
    const bool tplBmm = triton && !persistent && c.name == "bmm";
    *o++ = float(tplMm), *o++ = float(tplBmm), *o++ = float(persistent),
    *o++ = float(triton && !tplMm && !tplBmm && !persistent);
    if (triton || cpu) {
        // The cpu backend's tiled GEMM (neither ATen nor Triton) fills the same tile columns: its
        // threads stand where warps do, it computes in fp32, and it has no pipeline stages.
        const int e = cpu ? 4 : elementBytes(p.dtype);
        const double bm = c.blockM, bn = c.blockN, bk = c.blockK;
        const bool hasExtra = c.extra.is_object() && !c.extra.empty();
        const auto flag = [&](const char *key) {
            return hasExtra && c.extra.contains(key) && c.extra[key].is_boolean() && c.extra[key].get<bool>();
        };
        const bool evenK = cpu ? std::fmod(K, bk) == 0 : flag("EVEN_K");
        *o++ = l2n(bm), *o++ = l2n(bn), *o++ = l2n(bk), *o++ = l2n(std::max(1, c.groupM)),
        *o++ = float(c.numStages);
        *o++ = l2n(std::max(1, cpu ? c.threads : c.numWarps)), *o++ = float(evenK),
        *o++ = float(flag("ALLOW_TF32"));
        const double tiles = ceilDiv(M, bm) * ceilDiv(N, bn) * B;
        const double waves = tiles / hw.smCount;
        const double smemKB = double(c.tileLoadBytes(e)) / 1024.0;
        *o++ = l2n(tiles), *o++ = l2n(waves), *o++ = float(waves - std::floor(waves)),
        *o++ = l2n(ceilDiv(K, bk));
        *o++ = float(ceilDiv(M, bm) * bm / M - 1), *o++ = float(ceilDiv(N, bn) * bn / N - 1);
        *o++ = float(ceilDiv(K, bk) * bk / K - 1), *o++ = l2n(smemKB),
        *o++ = float(smemKB / hw.sharedMemoryKB);
        *o++ = l2(bm * bn / (bm + bn));
    } else {
        o = std::fill_n(o, 8 + 10, 0.f);
    }
    o = std::copy_n(last.values + kProblemFeatures, kHardwareFeatures, o);
    if (size_t(o - (out.data() + start)) != width)
        throw std::logic_error(
            fmt::format("feature schema wrote {} features, names {}", o - (out.data() + start), width));
}

} // namespace diode
