#include "modelinstall.h"

#include "diode/infer/atomicfile.h"
#include "diode/infer/modelpackage.h"
#include "diode/infer/packagechoice.h"

#include <fmt/format.h>

#include <cstdlib>
#include <string>
#include <system_error>

namespace diode {

namespace fs = std::filesystem;

fs::path pluginModelDirectory() {
    return userModelLocations().front().path;
}

fs::path installPackage(const fs::path &package, const fs::path &directory, bool overwrite) {
    std::error_code ec;
    if (!fs::is_regular_file(package, ec))
        throw InstallError(fmt::format("'{}' is not a package file", package.string()));
    try {
        if (const auto why = pluginRefusal(ModelPackage::load(package.string()).timingMethod()); !why.empty())
            throw InstallError(
                fmt::format("'{}' is not installed into the plugin: {}", package.string(), why));
    } catch (const PackageError &e) {
        throw InstallError(fmt::format("'{}' is not a usable package: {}", package.string(), e.what()));
    }
    fs::create_directories(directory, ec);
    if (ec)
        throw InstallError(fmt::format("cannot create '{}': {}", directory.string(), ec.message()));
    const fs::path target = directory / package.filename();
    if (fs::exists(target, ec) && fs::equivalent(target, package, ec))
        return target; // already there
    if (fs::exists(target) && !overwrite)
        throw InstallError(
            fmt::format("'{}' already exists; choose to replace it or rename the package", target.string()));
    // Written beside the target and renamed, so the plugin never loads a half-written file.
    std::ifstream in(package, std::ios::binary);
    if (!in)
        throw InstallError(fmt::format("cannot read '{}': {}", package.string(), std::strerror(errno)));
    writeFileAtomically<InstallError>(
        target.string(), [&](std::ostream &os) { os << in.rdbuf(); }, true);
    return target;
}

} // namespace diode
