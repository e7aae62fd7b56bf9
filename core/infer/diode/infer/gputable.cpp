#include "gputable.h"

#include <array>
#include <cctype>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

namespace diode {

namespace {

// Dense figures from the vendors' datasheets (SXM parts where there are several). Order
// matters: a name that contains another's match comes first (tst_model checks every entry
// finds itself).
constexpr std::array kGpus{
    GpuSpec{"GH200", 132, 4.0, 227, "9.0", 50, "NVIDIA GH200 datasheet", 989.4, 989.4, 494.7},
    GpuSpec{"H200", 132, 4.8, 227, "9.0", 50, "NVIDIA H200 SXM datasheet", 989.4, 989.4, 494.7},
    GpuSpec{"H100", 132, 3.35, 227, "9.0", 50, "NVIDIA H100 SXM datasheet", 989.4, 989.4, 494.7},
    GpuSpec{"H20", 78, 4.0, 227, "9.0", 60},
    GpuSpec{"A100", 108, 2.0, 163, "8.0", 40, "NVIDIA A100 SXM datasheet", 312, 312, 156},
    GpuSpec{"A10", 72, 0.6, 99, "8.6", 6},
    GpuSpec{"L40S", 142, 0.86, 99, "8.9", 96, "NVIDIA L40S datasheet", 362.05, 362.05, 183},
    GpuSpec{"L4", 58, 0.3, 99, "8.9", 48},
    GpuSpec{"B200", 148, 8.0, 227, "10.0", 0},
    GpuSpec{"MI300", 304, 5.3, 64, "gfx942", 0},
    GpuSpec{"4090", 128, 1.0, 99, "8.9", 72},
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

std::string normalizedGpuName(const std::string &name) {
    std::string n;
    for (char c : name)
        if (std::isalnum(static_cast<unsigned char>(c)))
            n += char(std::tolower(static_cast<unsigned char>(c)));
    for (const char *drop : {"nvidia", "geforce"})
        for (size_t at; (at = n.find(drop)) != std::string::npos;)
            n.erase(at, std::strlen(drop));
    return n;
}

GpuTransfer gpuTransfer(const std::string &packageGpu, const std::string &deviceGpu,
                        const std::string &deviceArch, int deviceSms) {
    GpuTransfer t;
    if (!packageGpu.empty() && normalizedGpuName(packageGpu) == normalizedGpuName(deviceGpu)) {
        t.kind = GpuTransfer::Same;
        t.why = fmt::format("trained on this GPU ({})", packageGpu);
        return t;
    }
    const GpuSpec *from = findGpu(packageGpu), *to = findGpu(deviceGpu);
    const std::string arch = !deviceArch.empty() ? deviceArch : to ? to->arch : "";
    if (!from) {
        t.why =
            fmt::format("the package's GPU '{}' is not in the GPU table, so its likeness to {} is unknown",
                        packageGpu, deviceGpu);
        return t;
    }
    if (arch.empty()) {
        t.why =
            fmt::format("{}'s architecture is unknown (not in the GPU table and not reported)", deviceGpu);
        return t;
    }
    if (arch != from->arch) {
        t.why = fmt::format("{} is architecture {}, the package's {} is {}: kernels and their costs differ "
                            "across architectures",
                            deviceGpu, arch, packageGpu, from->arch);
        return t;
    }
    t.kind = GpuTransfer::Similar;
    auto term = [](double a, double b) { return a > 0 && b > 0 ? std::abs(std::log(a / b)) : 0.0; };
    if (!to) {
        t.distance = 1.0; // same architecture, nothing else known: behind every GPU the table knows
        t.why = fmt::format("same architecture ({}) as the package's {}; {} is not in the GPU table", arch,
                            packageGpu, deviceGpu);
        return t;
    }
    const int sms = deviceSms > 0 ? deviceSms : to->smCount;
    t.distance =
        term(from->smCount, sms) + term(from->l2MB, to->l2MB) + term(from->bandwidthTBs, to->bandwidthTBs);
    t.why = fmt::format("same architecture ({}) as the package's {}: {} vs {} SMs, L2 {} vs {} MB, memory "
                        "{:.2f} vs {:.2f} TB/s",
                        arch, packageGpu, sms, from->smCount, to->l2MB, from->l2MB, to->bandwidthTBs,
                        from->bandwidthTBs);
    return t;
}

} // namespace diode
