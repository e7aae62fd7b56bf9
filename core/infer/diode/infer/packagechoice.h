#pragma once

#include "diode/infer/gputable.h"
#include "diode/infer/timingmethod.h"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace diode {

/// The package the Inductor plugin loads by default for a GPU and a regime, decided here once:
/// the plugin's best_for() (plugin/python/torch_diode/_models.py) calls choosePackage through the
/// ABI (diode_choose_package), the workbench and `diode characterise` call it directly. install()'s
/// regime defaults to "warm" there as here.
inline constexpr std::string_view kDefaultRegime = "warm";

/// What the choice reads of a package file.
struct PackageFacts {
    std::string path, name, gpu, createdAt;
    TimingMethod timingMethod = TimingMethod::InductorAutotune;
    /// Where it was found, earlier first: the plugin's search locations in order (the user's path
    /// before the shipped packages); 0 everywhere where there is one place.
    int sourceRank = 0;
    /// The facts of the package at `path`, or nullopt when it is not a readable package.
    static std::optional<PackageFacts> read(const std::filesystem::path &path);
};

/// How well a package's truth fits a regime ("warm", "cold"): trained on that regime's in-graph
/// times (0), on the other regime's (1), on Inductor's own benchmark (2); a cpu model never fits (3).
int regimeRank(TimingMethod trainedOn, std::string_view regime);
/// Why the Inductor plugin never loads a package trained with `trainedOn`, or "" when it may: a cpu
/// model ranks the cpu backend's tiles, not GPU kernels. The plugin's listing and `diode install`
/// both say this.
std::string pluginRefusal(TimingMethod trainedOn);
/// The regime whose package fits data read with `method`: "cold" for graph_cold, else "warm".
std::string_view regimeFor(TimingMethod method);

/// The GPU a package is chosen for: its name ("NVIDIA H200") and, where the runtime reports them,
/// its architecture ("9.0") and SM count (otherwise core's GPU table's).
struct DeviceGpu {
    std::string name, arch;
    int sms = 0;
};
/// Which package the plugin loads, and how it transfers to the device.
struct PackageChoice {
    size_t index = 0; ///< into the packages given
    GpuTransfer transfer;
};
/// The package loaded by default on `device`: one made on that GPU model, else one of the nearest
/// similar GPU (gpuTransfer); among those the earliest sourceRank, then the best regimeRank, then
/// the newest. Never a cpu model; nullopt when none transfers.
std::optional<PackageChoice> choosePackage(const std::vector<PackageFacts> &packages, const DeviceGpu &device,
                                           std::string_view regime = kDefaultRegime);
/// choosePackage for a device known by its name alone.
std::optional<PackageFacts> defaultPackage(const std::vector<PackageFacts> &packages, const std::string &gpu,
                                           std::string_view regime = kDefaultRegime);

/// Whether a package suits data of `gpu` whose times are read with `dataMethod` (the data's
/// truth): a cpu model for cpu data only; otherwise a package of that GPU model, or one that
/// transfers to it, trained on the same kind of times (in CUDA graphs, or Inductor's own benchmark).
bool fitsData(const PackageFacts &package, const std::string &gpu, TimingMethod dataMethod);
/// The package the workbench shows with such data: for in-graph data the plugin's own default
/// (defaultPackage for regimeFor(dataMethod)); for data with only Inductor's timings the newest
/// package of that GPU trained on them, else the plugin's default; for cpu data the newest cpu
/// model. Nullopt when none fits.
std::optional<PackageFacts> packageForData(const std::vector<PackageFacts> &packages, const std::string &gpu,
                                           TimingMethod dataMethod);

/// A place the plugin looks for a user's packages, and what named it.
struct ModelLocation {
    std::string source; ///< "TORCH_DIODE_MODEL_PATH" or "user"
    std::filesystem::path path;
};
/// Where the plugin looks for a user's packages, in order, before the shipped ones: each entry of
/// the ':'-separated $TORCH_DIODE_MODEL_PATH (files or folders), then the user folder
/// ($XDG_DATA_HOME/torch_diode/models, else ~/.local/share/torch_diode/models). The plugin reads
/// this list through the ABI (diode_model_locations); `diode install` installs into the first.
std::vector<ModelLocation> userModelLocations();

/// Every readable package (*.diode) under `directory`, recursively, sorted by path.
std::vector<PackageFacts> packagesUnder(const std::filesystem::path &directory);

} // namespace diode
