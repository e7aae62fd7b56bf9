#include "gpupeaks.h"

#include "diode/infer/gputable.h"

namespace diode {

std::optional<GpuPeaks> knownPeaks(const std::string &gpuName) {
    const GpuSpec *g = findGpu(gpuName); // the one GPU table (gputable.h)
    if (!g || !g->peaksSource)
        return std::nullopt;
    return GpuPeaks{g->peaksSource, g->bf16Tflops, g->fp16Tflops, g->fp32Tflops, g->bandwidthTBs};
}

} // namespace diode
