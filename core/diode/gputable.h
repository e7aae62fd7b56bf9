#pragma once

#include <span>
#include <string>

namespace diode {

/// What we take from a GPU's datasheet: the one table the feature schema (memory bandwidth,
/// shared memory, SM count when the data has none) and the roofline views (peak TFLOP/s) read.
struct GpuSpec {
    const char *match;   ///< a substring of the device name ("NVIDIA GH200 480GB" contains "GH200")
    int smCount;         ///< multiprocessors of the full part
    double bandwidthTBs; ///< HBM/GDDR bandwidth, TB/s
    int sharedMemoryKB;  ///< shared memory per SM usable by one block
    const char *peaksSource = nullptr; ///< where the TFLOP/s come from; null: not known here
    double bf16Tflops = 0, fp16Tflops = 0, fp32Tflops = 0; ///< dense tensor-core peaks (fp32: TF32)
};

/// Every GPU the table knows, most specific names first: the first entry whose `match` is in
/// a name is that GPU ("GH200" before "H200", "H200" before "H20", "A100" before "A10").
std::span<const GpuSpec> knownGpus();
/// The entry for a device name, or null.
const GpuSpec *findGpu(const std::string &name);

} // namespace diode
