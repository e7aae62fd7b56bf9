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
    const char *arch;    ///< NVIDIA: compute capability ("9.0"); AMD: the gfx target ("gfx942")
    int l2MB;            ///< last-level cache (L2) in MB; 0: not known here
    const char *peaksSource = nullptr; ///< where the TFLOP/s come from; null: not known here
    double bf16Tflops = 0, fp16Tflops = 0, fp32Tflops = 0; ///< dense tensor-core peaks (fp32: TF32)
};

/// Every GPU the table knows, most specific names first: the first entry whose `match` is in
/// a name is that GPU ("GH200" before "H200", "H200" before "H20", "A100" before "A10").
std::span<const GpuSpec> knownGpus();
/// The entry for a device name, or null.
const GpuSpec *findGpu(const std::string &name);

/// Whether a model trained on one GPU may serve another, and how far apart they are: the one
/// rule the plugin (nearest package when none matches), `diode` and the workbench use.
struct GpuTransfer {
    enum Kind { Same, Similar, Refused } kind = Refused;
    /// Similar: |ln| ratios of SM count, L2 and memory bandwidth, summed (0 for twins); the
    /// nearest package has the smallest.
    double distance = 0;
    std::string why; ///< one line: what matched and what differs, or why it is refused
};
/// `packageGpu` is the GPU a package was trained on (its manifest); `deviceGpu` the device's name
/// and `deviceArch` its architecture as the runtime reports it ("9.0"; empty: from the table),
/// `deviceSms` its multiprocessors (0: from the table; a PCIe part has fewer than its SXM entry).
/// The same GPU model is a name equal up to case, spaces and the vendor's prefix. Otherwise a
/// transfer needs both in the table with the same architecture (same compute capability):
/// across architectures or vendors the kernels and their costs differ, and it is refused.
GpuTransfer gpuTransfer(const std::string &packageGpu, const std::string &deviceGpu,
                        const std::string &deviceArch = {}, int deviceSms = 0);
/// "NVIDIA H200" and "h200" name the same GPU: lower case, alphanumerics only, without "nvidia"
/// and "geforce".
std::string normalizedGpuName(const std::string &name);

} // namespace diode
