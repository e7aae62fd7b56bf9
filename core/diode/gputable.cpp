#include "gputable.h"

#include <array>

namespace diode {

namespace {

// Dense figures from the vendors' datasheets (SXM parts where there are several). Order
// matters: a name that contains another's match comes first (tst_model checks every entry
// finds itself).
constexpr std::array kGpus{
    GpuSpec{"GH200", 132, 4.0, 227, "NVIDIA GH200 datasheet", 989.4, 989.4, 494.7},
    GpuSpec{"H200", 132, 4.8, 227, "NVIDIA H200 SXM datasheet", 989.4, 989.4, 494.7},
    GpuSpec{"H100", 132, 3.35, 227, "NVIDIA H100 SXM datasheet", 989.4, 989.4, 494.7},
    GpuSpec{"H20", 78, 4.0, 227},
    GpuSpec{"A100", 108, 2.0, 163, "NVIDIA A100 SXM datasheet", 312, 312, 156},
    GpuSpec{"A10", 72, 0.6, 99},
    GpuSpec{"L40S", 142, 0.86, 99, "NVIDIA L40S datasheet", 362.05, 362.05, 183},
    GpuSpec{"L4", 58, 0.3, 99},
    GpuSpec{"B200", 148, 8.0, 227},
    GpuSpec{"MI300", 304, 5.3, 64},
    GpuSpec{"4090", 128, 1.0, 99},
};

} // namespace

std::span<const GpuSpec> knownGpus() {
    return kGpus;
}

const GpuSpec *findGpu(const std::string &name) {
    for (const auto &g : kGpus)
        if (name.find(g.match) != std::string::npos)
            return &g;
    return nullptr;
}

} // namespace diode
