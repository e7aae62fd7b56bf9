#include "hardware.h"

#include "diode/config.h"

#include <fmt/format.h>

#include <dlfcn.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#if DIODE_HAVE_ROCM_SMI
#include <rocm_smi/rocm_smi.h>
#endif

namespace diode {

// NVML's C ABI is stable across drivers; these are the entry points we resolve from the driver's
// libnvidia-ml.so.1 at run time (the CUDA toolkit that ships nvml.h is often absent on the
// machines that have the driver).
struct HardwareMonitor::Nvml {
    using Device = void *;
    void *lib = nullptr;
    int (*init)() = nullptr;
    int (*shutdown)() = nullptr;
    int (*count)(unsigned *) = nullptr;
    int (*handle)(unsigned, Device *) = nullptr;
    int (*name)(Device, char *, unsigned) = nullptr;
    int (*driver)(char *, unsigned) = nullptr;
    int (*memory)(Device, void *) = nullptr;
    int (*clock)(Device, int, unsigned *) = nullptr;
    int (*maxClock)(Device, int, unsigned *) = nullptr;
    int (*power)(Device, unsigned *) = nullptr;
    int (*temperature)(Device, int, unsigned *) = nullptr;
    int (*utilization)(Device, unsigned *) = nullptr;
    int (*attribute)(Device, void *) = nullptr;
    int (*uuid)(Device, char *, unsigned) = nullptr;
    static constexpr int kClockSm = 1, kClockMem = 2, kTempGpu = 0;

    template <typename F> bool resolve(F &fn, const char *symbol) {
        fn = reinterpret_cast<F>(dlsym(lib, symbol));
        return fn != nullptr;
    }
};

struct HardwareMonitor::Rocm {
    bool ok = false;
};

namespace {

std::string cpuModel() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) {
            auto pos = line.find(':');
            if (pos != std::string::npos)
                return line.substr(pos + 2);
        }
    return "unknown CPU";
}

// NVML reports multiprocessor counts only for MIG instances (nvmlDeviceGetAttributes), so the
// SM count of a whole GPU comes from the CUDA driver, matched to NVML's device by UUID.
std::map<std::string, int> cudaSmCountsByUuid() {
    std::map<std::string, int> out;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return out;
    using Init = int (*)(unsigned);
    using Count = int (*)(int *);
    using Get = int (*)(int *, int);
    using Attr = int (*)(int *, int, int);
    using Uuid = int (*)(unsigned char *, int);
    auto init = reinterpret_cast<Init>(dlsym(lib, "cuInit"));
    auto count = reinterpret_cast<Count>(dlsym(lib, "cuDeviceGetCount"));
    auto get = reinterpret_cast<Get>(dlsym(lib, "cuDeviceGet"));
    auto attr = reinterpret_cast<Attr>(dlsym(lib, "cuDeviceGetAttribute"));
    auto uuid = reinterpret_cast<Uuid>(dlsym(lib, "cuDeviceGetUuid_v2"));
    if (!uuid)
        uuid = reinterpret_cast<Uuid>(dlsym(lib, "cuDeviceGetUuid"));
    int n = 0;
    if (init && count && get && attr && uuid && init(0) == 0 && count(&n) == 0) {
        constexpr int kMultiprocessorCount = 16; // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
        for (int i = 0; i < n; ++i) {
            int dev = 0, sms = 0;
            unsigned char u[16] = {};
            if (get(&dev, i) != 0 || attr(&sms, kMultiprocessorCount, dev) != 0 || uuid(u, dev) != 0)
                continue;
            std::string text = "GPU-";
            for (int b = 0; b < 16; ++b) {
                if (b == 4 || b == 6 || b == 8 || b == 10)
                    text += '-';
                text += fmt::format("{:02x}", u[b]);
            }
            out[text] = sms;
        }
    }
    // libcuda stays loaded: after cuInit the driver has threads and handlers of its own, and
    // unloading it under them is not supported (a LibTorch in the same process, as in
    // diode-train, loads it again through the CUDA runtime).
    return out;
}

} // namespace

std::string hostName() {
    char buf[256] = {};
    gethostname(buf, sizeof buf - 1);
    return buf;
}

int availableCores() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    return int(std::max(1u, std::thread::hardware_concurrency()));
}

namespace {
/// Every entry of a comma-separated list, empty ones included ("0,,2": "0", "", "2").
std::vector<std::string> commaSeparated(std::string_view text) {
    std::vector<std::string> out;
    for (size_t at = 0; at <= text.size();) {
        const size_t comma = std::min(text.find(',', at), text.size());
        out.emplace_back(text.substr(at, comma - at));
        at = comma + 1;
    }
    return out;
}
} // namespace

std::vector<std::string> gpuList(std::string_view text) {
    if (text == "all") {
        auto ids = visibleGpuIds();
        if (ids.empty())
            throw InvalidInput(
                "--gpus all: no GPU here (CUDA_VISIBLE_DEVICES is not set and /dev has no nvidiaN)");
        return ids;
    }
    return commaSeparated(text); // SweepSession refuses an empty or repeated entry
}

std::vector<std::string> visibleGpuIds() {
    std::vector<std::string> ids;
    if (const char *visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible) {
        ids = commaSeparated(visible);
        std::erase(ids, std::string());
        return ids;
    }
    std::error_code ec;
    for (const auto &entry : std::filesystem::directory_iterator("/dev", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.size() > 6 && name.rfind("nvidia", 0) == 0 &&
            std::all_of(name.begin() + 6, name.end(), [](unsigned char c) { return std::isdigit(c); }))
            ids.push_back(name.substr(6));
    }
    std::sort(ids.begin(), ids.end(),
              [](const auto &a, const auto &b) { return std::stoi(a) < std::stoi(b); });
    return ids;
}

HardwareMonitor::HardwareMonitor() {
    auto nvml = std::make_unique<Nvml>();
    nvml->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!nvml->lib) {
        m_notes.push_back("NVML: libnvidia-ml.so.1 not found (no NVIDIA driver on this machine)");
    } else {
        bool ok = nvml->resolve(nvml->init, "nvmlInit_v2") && nvml->resolve(nvml->shutdown, "nvmlShutdown") &&
                  nvml->resolve(nvml->count, "nvmlDeviceGetCount_v2") &&
                  nvml->resolve(nvml->handle, "nvmlDeviceGetHandleByIndex_v2") &&
                  nvml->resolve(nvml->name, "nvmlDeviceGetName") &&
                  nvml->resolve(nvml->driver, "nvmlSystemGetDriverVersion") &&
                  nvml->resolve(nvml->memory, "nvmlDeviceGetMemoryInfo") &&
                  nvml->resolve(nvml->clock, "nvmlDeviceGetClockInfo") &&
                  nvml->resolve(nvml->maxClock, "nvmlDeviceGetMaxClockInfo");
        nvml->resolve(nvml->power, "nvmlDeviceGetPowerUsage");
        nvml->resolve(nvml->temperature, "nvmlDeviceGetTemperature");
        nvml->resolve(nvml->utilization, "nvmlDeviceGetUtilizationRates");
        nvml->resolve(nvml->attribute, "nvmlDeviceGetAttributes_v2");
        nvml->resolve(nvml->uuid, "nvmlDeviceGetUUID");
        if (!ok) {
            m_notes.push_back("NVML: libnvidia-ml.so.1 lacks required entry points (driver too old)");
            dlclose(nvml->lib);
        } else if (int rc = nvml->init(); rc != 0) {
            m_notes.push_back(fmt::format("NVML: nvmlInit failed with code {} (driver not loaded?)", rc));
            dlclose(nvml->lib);
        } else {
            m_nvml = std::move(nvml);
        }
    }
#if DIODE_HAVE_ROCM_SMI
    m_rocm = std::make_unique<Rocm>();
    // rsmi_init prints to the console when there is no amdgpu driver: ask only where there is one.
    if (access("/dev/kfd", F_OK) != 0)
        m_notes.push_back("ROCm SMI: no /dev/kfd (no AMD GPU driver on this machine)");
    else if (!(m_rocm->ok = rsmi_init(0) == RSMI_STATUS_SUCCESS))
        m_notes.push_back("ROCm SMI: rsmi_init failed");
#else
    m_notes.push_back("ROCm SMI: not built in (librocm-smi-dev was not found at configure time)");
#endif
}

HardwareMonitor::~HardwareMonitor() {
    if (m_nvml) {
        m_nvml->shutdown();
        dlclose(m_nvml->lib);
    }
#if DIODE_HAVE_ROCM_SMI
    if (m_rocm && m_rocm->ok)
        rsmi_shut_down();
#endif
}

HardwareReport HardwareMonitor::report() const {
    HardwareReport r;
    r.host = hostName();
    r.cpu = cpuModel();
    r.cpuThreads = int(std::thread::hardware_concurrency());
    r.notes = m_notes;
    if (m_nvml) {
        unsigned n = 0;
        m_nvml->count(&n);
        char drv[96] = {};
        m_nvml->driver(drv, sizeof drv);
        for (unsigned i = 0; i < n; ++i) {
            Nvml::Device d = nullptr;
            if (m_nvml->handle(i, &d) != 0)
                continue;
            GpuInfo g;
            g.vendor = "nvidia";
            g.index = int(i);
            g.driver = drv;
            char name[96] = {};
            m_nvml->name(d, name, sizeof name);
            g.name = name;
            unsigned long long mem[3] = {}; // nvmlMemory_t: total, free, used
            if (m_nvml->memory(d, mem) == 0)
                g.memoryMb = int64_t(mem[0] >> 20);
            unsigned v = 0;
            if (m_nvml->maxClock(d, Nvml::kClockSm, &v) == 0)
                g.maxSmClockMhz = int(v);
            if (m_nvml->maxClock(d, Nvml::kClockMem, &v) == 0)
                g.maxMemClockMhz = int(v);
            if (m_nvml->attribute) {
                unsigned attrs[16] = {}; // nvmlDeviceAttributes_t starts with multiprocessorCount
                if (m_nvml->attribute(d, attrs) == 0)
                    g.smCount = int(attrs[0]);
            }
            if (m_nvml->uuid) {
                char uuid[96] = {};
                if (m_nvml->uuid(d, uuid, sizeof uuid) == 0)
                    g.uuid = uuid;
            }
            r.gpus.push_back(g);
        }
        if (std::any_of(r.gpus.begin(), r.gpus.end(), [](const GpuInfo &g) { return g.smCount == 0; })) {
            const auto sms = cudaSmCountsByUuid();
            for (auto &g : r.gpus)
                if (auto it = sms.find(g.uuid); g.smCount == 0 && it != sms.end())
                    g.smCount = it->second;
        }
    }
#if DIODE_HAVE_ROCM_SMI
    if (m_rocm && m_rocm->ok) {
        uint32_t n = 0;
        rsmi_num_monitor_devices(&n);
        for (uint32_t i = 0; i < n; ++i) {
            GpuInfo g;
            g.vendor = "amd";
            g.index = int(i);
            char name[128] = {};
            if (rsmi_dev_name_get(i, name, sizeof name) == RSMI_STATUS_SUCCESS)
                g.name = name;
            uint64_t total = 0;
            if (rsmi_dev_memory_total_get(i, RSMI_MEM_TYPE_VRAM, &total) == RSMI_STATUS_SUCCESS)
                g.memoryMb = int64_t(total >> 20);
            char drv[64] = {};
            if (rsmi_version_str_get(RSMI_SW_COMP_DRIVER, drv, sizeof drv) == RSMI_STATUS_SUCCESS)
                g.driver = drv;
            r.gpus.push_back(g);
        }
    }
#endif
    return r;
}

std::optional<TelemetrySample> HardwareMonitor::sample(int index) const {
    if (m_nvml) {
        Nvml::Device d = nullptr;
        if (m_nvml->handle(unsigned(index), &d) != 0)
            return std::nullopt;
        TelemetrySample s;
        unsigned v = 0;
        if (m_nvml->clock(d, Nvml::kClockSm, &v) == 0)
            s.smClockMhz = v;
        if (m_nvml->clock(d, Nvml::kClockMem, &v) == 0)
            s.memClockMhz = v;
        if (m_nvml->power && m_nvml->power(d, &v) == 0)
            s.powerW = v / 1000.0;
        if (m_nvml->temperature && m_nvml->temperature(d, Nvml::kTempGpu, &v) == 0)
            s.temperatureC = v;
        unsigned util[2] = {}; // nvmlUtilization_t: gpu, memory
        if (m_nvml->utilization && m_nvml->utilization(d, util) == 0)
            s.utilizationPct = util[0];
        return s;
    }
#if DIODE_HAVE_ROCM_SMI
    if (m_rocm && m_rocm->ok) {
        TelemetrySample s;
        rsmi_frequencies_t f{};
        if (rsmi_dev_gpu_clk_freq_get(uint32_t(index), RSMI_CLK_TYPE_SYS, &f) == RSMI_STATUS_SUCCESS)
            s.smClockMhz = f.frequency[f.current] / 1e6;
        if (rsmi_dev_gpu_clk_freq_get(uint32_t(index), RSMI_CLK_TYPE_MEM, &f) == RSMI_STATUS_SUCCESS)
            s.memClockMhz = f.frequency[f.current] / 1e6;
        uint64_t p = 0;
        if (rsmi_dev_power_ave_get(uint32_t(index), 0, &p) == RSMI_STATUS_SUCCESS)
            s.powerW = p / 1e6;
        int64_t t = 0;
        if (rsmi_dev_temp_metric_get(uint32_t(index), 0, RSMI_TEMP_CURRENT, &t) == RSMI_STATUS_SUCCESS)
            s.temperatureC = t / 1000.0;
        uint32_t busy = 0;
        if (rsmi_dev_busy_percent_get(uint32_t(index), &busy) == RSMI_STATUS_SUCCESS)
            s.utilizationPct = busy;
        return s;
    }
#endif
    return std::nullopt;
}

} // namespace diode
