#pragma once

#include "diode/infer/gemmproblem.h"

#include <optional>
#include <string>

namespace diode {

/// A GPU's dense peak compute per dtype and its memory bandwidth: the roofs of a roofline.
struct GpuPeaks {
    std::string source; ///< where the numbers come from ("NVIDIA H200 SXM datasheet", "user")
    double bf16Tflops = 0;
    double fp16Tflops = 0;
    double fp32Tflops = 0; ///< what torch's fp32 matmuls reach: TF32 tensor cores where allowed
    double bandwidthTBs = 0;
    double tflops(DType dtype) const {
        return dtype == DType::BF16 ? bf16Tflops : dtype == DType::FP16 ? fp16Tflops : fp32Tflops;
    }
};

/// Datasheet peaks (dense, no sparsity) for GPUs whose name the GPU table (gputable.h) knows
/// with peaks, e.g. "NVIDIA H200".
std::optional<GpuPeaks> knownPeaks(const std::string &gpuName);

} // namespace diode
