#pragma once

#include <filesystem>
#include <stdexcept>

namespace diode {

/// Installing a package failed: the message names the file and the reason.
class InstallError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The directory packages are installed into for the Inductor plugin: the first of
/// userModelLocations() (core/infer/diode/infer/packagechoice.h).
std::filesystem::path pluginModelDirectory();

/// Copies `package` into `directory` (created when missing) under its own file name and returns
/// the installed path. A damaged package or a cpu model (timing method `cpu`) is refused. An existing file of
/// that name is replaced only when `overwrite` is set; otherwise InstallError says it exists.
std::filesystem::path installPackage(const std::filesystem::path &package,
                                     const std::filesystem::path &directory, bool overwrite);

} // namespace diode
