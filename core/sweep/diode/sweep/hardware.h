#pragma once

#include "diode/store/store.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace diode {

/// What is known of one GPU. Fields a vendor library could not report stay empty or zero.
struct GpuInfo {
    std::string vendor; ///< "nvidia" or "amd"
    std::string name;
    int index = 0;
    int smCount = 0; ///< NVIDIA: multiprocessors; AMD: compute units
    int64_t memoryMb = 0;
    std::string driver;
    int maxSmClockMhz = 0;
    int maxMemClockMhz = 0;
    std::string uuid;
};

struct HardwareReport {
    std::string host;
    std::string cpu;
    int cpuThreads = 0;
    std::vector<GpuInfo> gpus;
    std::vector<std::string> notes; ///< why a vendor library gave nothing ("libnvidia-ml.so.1 not found")
};

/// Reads GPU identity and samples clocks, power and temperature. NVML is loaded at run time
/// (dlopen of libnvidia-ml.so.1), so one binary works with and without an NVIDIA driver;
/// ROCm SMI is used when the build found it.
class HardwareMonitor {
public:
    HardwareMonitor();
    ~HardwareMonitor();
    HardwareReport report() const;
    /// One telemetry sample of GPU `index`, or nothing when no vendor library can read it.
    std::optional<TelemetrySample> sample(int index) const;

private:
    struct Nvml;
    struct Rocm;
    std::unique_ptr<Nvml> m_nvml;
    std::unique_ptr<Rocm> m_rocm;
    std::vector<std::string> m_notes;
};

std::string hostName();
/// The cores this process may run on (its CPU affinity: taskset, a container's cpuset, a Slurm
/// task's allocation), which is what "all cores" means for threads and workers: more than that only
/// wait on each other.
int availableCores();

/// The GPUs a process started here may use, as CUDA_VISIBLE_DEVICES names them: that variable's
/// entries when it is set, else "0", "1", ... for each /dev/nvidiaN (empty when there is none).
std::vector<std::string> visibleGpuIds();
/// `--gpus`: "all" (visibleGpuIds(); InvalidInput when there is none) or GPU ids separated by
/// commas ("0,2", "GPU-8e1f...") as they are (SweepSession refuses empty or repeated ones).
std::vector<std::string> gpuList(std::string_view text);

} // namespace diode
