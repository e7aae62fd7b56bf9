#include "packagechoice.h"

#include "diode/infer/gputable.h"
#include "diode/infer/modelpackage.h"

#include <algorithm>
#include <cstdlib>
#include <system_error>

namespace diode {

namespace fs = std::filesystem;

std::optional<PackageFacts> PackageFacts::read(const fs::path &path) {
    try {
        const auto pkg = ModelPackage::load(path.string());
        const auto &m = pkg.manifest();
        PackageFacts f;
        f.path = path.string();
        f.name = m.value("name", path.stem().string());
        f.gpu = m.value("/hardware/gpu"_json_pointer, std::string());
        f.createdAt = m.value("created_at", std::string());
        f.timingMethod = pkg.timingMethod();
        return f;
    } catch (const std::exception &) {
        return std::nullopt;
    }
}

int regimeRank(TimingMethod trainedOn, std::string_view regime) {
    switch (trainedOn) {
    case TimingMethod::GraphWarm:
        return regime == "warm" ? 0 : 1;
    case TimingMethod::GraphCold:
        return regime == "cold" ? 0 : 1;
    case TimingMethod::InductorAutotune:
        return 2;
    case TimingMethod::Cpu:
        return 3;
    }
    return 3;
}

std::string pluginRefusal(TimingMethod trainedOn) {
    return trainedOn == TimingMethod::Cpu
               ? "a cpu model: trained on cpu-backend times of CPU tiles, it cannot rank GPU "
                 "kernels and is never loaded by the plugin"
               : "";
}

std::string_view regimeFor(TimingMethod method) {
    return method == TimingMethod::GraphCold ? "cold" : "warm";
}

std::optional<PackageChoice> choosePackage(const std::vector<PackageFacts> &packages, const DeviceGpu &device,
                                           std::string_view regime) {
    std::vector<PackageChoice> same, similar;
    for (size_t i = 0; i < packages.size(); ++i) {
        if (packages[i].timingMethod == TimingMethod::Cpu) // ranks cpu tiles, never GPU kernels
            continue;
        GpuTransfer t = gpuTransfer(packages[i].gpu, device.name, device.arch, device.sms);
        if (t.kind == GpuTransfer::Same) {
            same.push_back({i, std::move(t)});
        } else if (t.kind == GpuTransfer::Similar) {
            if (!similar.empty() && t.distance < similar.front().transfer.distance)
                similar.clear();
            if (similar.empty() || t.distance == similar.front().transfer.distance)
                similar.push_back({i, std::move(t)});
        }
    }
    auto &pool = same.empty() ? similar : same;
    if (pool.empty())
        return std::nullopt;
    std::stable_sort(pool.begin(), pool.end(), [&](const PackageChoice &x, const PackageChoice &y) {
        const PackageFacts &a = packages[x.index], &b = packages[y.index];
        if (a.sourceRank != b.sourceRank)
            return a.sourceRank < b.sourceRank;
        const int ra = regimeRank(a.timingMethod, regime), rb = regimeRank(b.timingMethod, regime);
        return ra != rb ? ra < rb : a.createdAt > b.createdAt;
    });
    return pool.front();
}

std::optional<PackageFacts> defaultPackage(const std::vector<PackageFacts> &packages, const std::string &gpu,
                                           std::string_view regime) {
    const auto choice = choosePackage(packages, DeviceGpu{gpu, {}, 0}, regime);
    return choice ? std::optional<PackageFacts>(packages[choice->index]) : std::nullopt;
}

namespace {

bool inGraph(TimingMethod m) {
    return m == TimingMethod::GraphWarm || m == TimingMethod::GraphCold;
}

const PackageFacts *newest(const std::vector<const PackageFacts *> &packages) {
    const PackageFacts *best = nullptr;
    for (const auto *p : packages)
        if (!best || p->createdAt > best->createdAt)
            best = p;
    return best;
}

} // namespace

bool fitsData(const PackageFacts &package, const std::string &gpu, TimingMethod dataMethod) {
    if ((package.timingMethod == TimingMethod::Cpu) != (dataMethod == TimingMethod::Cpu))
        return false;
    if (dataMethod == TimingMethod::Cpu)
        return true;
    return inGraph(package.timingMethod) == inGraph(dataMethod) &&
           gpuTransfer(package.gpu, gpu).kind != GpuTransfer::Refused;
}

std::optional<PackageFacts> packageForData(const std::vector<PackageFacts> &packages, const std::string &gpu,
                                           TimingMethod dataMethod) {
    if (dataMethod == TimingMethod::Cpu || dataMethod == TimingMethod::InductorAutotune) {
        std::vector<const PackageFacts *> fitting;
        for (const auto &p : packages)
            if (p.timingMethod == dataMethod &&
                (dataMethod == TimingMethod::Cpu || gpuTransfer(p.gpu, gpu).kind == GpuTransfer::Same))
                fitting.push_back(&p);
        if (const auto *p = newest(fitting))
            return *p;
        if (dataMethod == TimingMethod::Cpu)
            return std::nullopt;
    }
    return defaultPackage(packages, gpu, regimeFor(dataMethod));
}

std::vector<PackageFacts> packagesUnder(const fs::path &directory) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_regular_file(ec) && it->path().extension() == ".diode")
            files.push_back(it->path());
    std::sort(files.begin(), files.end());
    std::vector<PackageFacts> out;
    for (const auto &f : files)
        if (auto facts = PackageFacts::read(f))
            out.push_back(std::move(*facts));
    return out;
}

std::vector<ModelLocation> userModelLocations() {
    auto env = [](const char *name) {
        const char *v = std::getenv(name);
        return std::string(v ? v : "");
    };
    std::vector<ModelLocation> out;
    const std::string list = env("TORCH_DIODE_MODEL_PATH");
    for (size_t at = 0; at <= list.size();) {
        const size_t colon = std::min(list.find(':', at), list.size());
        if (colon > at)
            out.push_back({"TORCH_DIODE_MODEL_PATH", list.substr(at, colon - at)});
        at = colon + 1;
    }
    const std::string xdg = env("XDG_DATA_HOME");
    const std::filesystem::path base =
        xdg.empty() ? std::filesystem::path(env("HOME")) / ".local" / "share" : std::filesystem::path(xdg);
    out.push_back({"user", base / "torch_diode" / "models"});
    return out;
}

} // namespace diode
