#include "gpupeaks.h"

#include <algorithm>
#include <array>

namespace diode {

std::optional<GpuPeaks> knownPeaks(const std::string &gpuName) {
    struct Known {
        const char *match;
        GpuPeaks peaks;
    };
    // Dense tensor-core figures from NVIDIA's datasheets (SXM parts); fp32 is TF32.
    static const std::array<Known, 4> known{{
        {"H200", {"NVIDIA H200 SXM datasheet", 989.4, 989.4, 494.7, 4.8}},
        {"H100", {"NVIDIA H100 SXM datasheet", 989.4, 989.4, 494.7, 3.35}},
        {"A100", {"NVIDIA A100 SXM datasheet", 312, 312, 156, 2.039}},
        {"L40S", {"NVIDIA L40S datasheet", 362.05, 362.05, 183, 0.864}},
    }};
    for (const auto &k : known)
        if (gpuName.find(k.match) != std::string::npos)
            return k.peaks;
    return std::nullopt;
}

} // namespace diode
