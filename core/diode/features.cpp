#include "features.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace diode {

HardwareFeatures HardwareFeatures::forGpu(const std::string &name, int smCount)
{
    struct Known {
        const char *needle;
        int sms;
        double tbs;
        int smemKB;
    };
    static const Known known[] = {
        {"H200", 132, 4.8, 227}, {"H100", 132, 3.35, 227}, {"H20", 78, 4.0, 227},  {"GH200", 132, 4.0, 227},
        {"A100", 108, 2.0, 163}, {"L40S", 142, 0.86, 99},  {"L4", 58, 0.3, 99},    {"A10", 72, 0.6, 99},
        {"B200", 148, 8.0, 227}, {"MI300", 304, 5.3, 64},  {"4090", 128, 1.0, 99},
    };
    HardwareFeatures hw;
    hw.smCount = smCount > 0 ? smCount : 132;
    hw.memoryBandwidthTBs = 2.0;
    hw.sharedMemoryKB = 163;
    for (const auto &k : known)
        if (name.find(k.needle) != std::string::npos) {
            hw.smCount = smCount > 0 ? smCount : k.sms;
            hw.memoryBandwidthTBs = k.tbs;
            hw.sharedMemoryKB = k.smemKB;
            break;
        }
    return hw;
}

namespace {

const std::vector<std::string> kNames = {
    // problem
    "log2_M", "log2_N", "log2_K", "log2_B", "dtype_bf16", "dtype_fp16", "dtype_fp32", "op_mm", "op_addmm", "op_bmm",
    "a_transposed", "b_transposed", "log2_intensity", "log2_min_us", "M_mod8", "N_mod8", "K_mod8", "M_mod16",
    "N_mod16", "K_mod16", "M_mod128", "N_mod128", "K_mod128",
    // candidate
    "is_aten", "is_triton", "aten_bias_addmm", "tpl_mm", "tpl_bmm", "tpl_persistent", "tpl_other", "log2_BM",
    "log2_BN", "log2_BK", "log2_GROUP_M", "num_stages", "log2_num_warps", "even_k", "allow_tf32",
    // derived
    "log2_tiles", "log2_waves", "wave_tail", "log2_k_iters", "pad_waste_M", "pad_waste_N", "pad_waste_K",
    "log2_smem_kb", "smem_fraction", "log2_tile_intensity",
    // hardware
    "log2_sms", "mem_bw_tbs",
};

inline float l2(double v) { return float(std::log2(std::max(v, 1e-9))); }
inline double ceilDiv(double a, double b) { return std::ceil(a / b); }

} // namespace

const std::vector<std::string> &FeatureSchema::names() { return kNames; }

void FeatureSchema::check(const KernelConfig &c, const std::string &where)
{
    if (c.kind != "aten" && c.kind != "triton")
        throw InvalidInput(fmt::format("{}: candidate kind '{}' is not one the model knows (aten, triton)", where, c.kind));
    if (c.kind == "triton" && (c.blockM <= 0 || c.blockN <= 0 || c.blockK <= 0))
        throw InvalidInput(fmt::format("{}: triton candidate needs BLOCK_M, BLOCK_N and BLOCK_K", where));
}

void FeatureSchema::compute(const GemmProblem &p, const KernelConfig &c, const HardwareFeatures &hw,
                            std::vector<float> &out)
{
    const size_t start = out.size();
    const double M = double(p.m), N = double(p.n), K = double(p.k), B = double(p.batch);
    const int e = elementBytes(p.dtype);
    out.insert(out.end(), {l2(M), l2(N), l2(K), l2(B)});
    out.insert(out.end(), {float(p.dtype == DType::BF16), float(p.dtype == DType::FP16), float(p.dtype == DType::FP32)});
    out.insert(out.end(), {float(p.op == GemmOp::Mm), float(p.op == GemmOp::Addmm), float(p.op == GemmOp::Bmm)});
    out.insert(out.end(), {float(p.aTransposed), float(p.bTransposed)});
    out.push_back(l2(p.flops() / p.minBytes()));
    // The roofline floor in microseconds: bytes at the memory bandwidth or flops at a class rate.
    const double peakTflops = p.dtype == DType::FP32 ? 60.0 : 800.0;
    const double floorUs = std::max(p.minBytes() / (hw.memoryBandwidthTBs * 1e12), p.flops() / (peakTflops * 1e12)) * 1e6;
    out.push_back(l2(floorUs));
    for (int mod : {8, 16, 128})
        for (double v : {M, N, K}) out.push_back(float(std::fmod(v, mod) == 0));

    const bool aten = c.kind == "aten", triton = c.kind == "triton";
    out.insert(out.end(), {float(aten), float(triton), float(aten && c.name.find("bias_addmm") != std::string::npos)});
    const bool persistent = triton && c.name.find("persistent") != std::string::npos;
    const bool tplMm = triton && !persistent && c.name == "mm";
    const bool tplBmm = triton && !persistent && c.name == "bmm";
    out.insert(out.end(), {float(tplMm), float(tplBmm), float(persistent), float(triton && !tplMm && !tplBmm && !persistent)});
    if (triton) {
        const double bm = c.blockM, bn = c.blockN, bk = c.blockK;
        const auto flag = [&](const char *key) {
            return c.extra.is_object() && c.extra.contains(key) && c.extra[key].is_boolean() && c.extra[key].get<bool>();
        };
        out.insert(out.end(), {l2(bm), l2(bn), l2(bk), l2(std::max(1, c.groupM)), float(c.numStages),
                               l2(std::max(1, c.numWarps)), float(flag("EVEN_K")), float(flag("ALLOW_TF32"))});
        const double tiles = ceilDiv(M, bm) * ceilDiv(N, bn) * B;
        const double waves = tiles / hw.smCount;
        const double smemKB = double(std::max(1, c.numStages)) * (bm * bk + bk * bn) * e / 1024.0;
        out.insert(out.end(), {l2(tiles), l2(waves), float(waves - std::floor(waves)), l2(ceilDiv(K, bk)),
                               float(ceilDiv(M, bm) * bm / M - 1), float(ceilDiv(N, bn) * bn / N - 1),
                               float(ceilDiv(K, bk) * bk / K - 1), l2(smemKB), float(smemKB / hw.sharedMemoryKB),
                               l2(bm * bn / (bm + bn))});
    } else {
        out.insert(out.end(), 8 + 10, 0.f);
    }
    out.insert(out.end(), {l2(hw.smCount), float(hw.memoryBandwidthTBs)});
    if (out.size() - start != kNames.size())
        throw std::logic_error(fmt::format("feature schema wrote {} features, names {}", out.size() - start, kNames.size()));
}

} // namespace diode
