#include "shippeddata.h"

#include "diode/config.h"
#include "diode/infer/gemmproblem.h"

#include <fmt/format.h>

#include <filesystem>
#include <system_error>

namespace diode::shipped {

namespace {

namespace fs = std::filesystem;

// Symbolic links and "..": the real location decides, so a link to a shipped file is shipped too.
fs::path realPath(const fs::path &p) {
    std::error_code ec;
    const fs::path r = fs::weakly_canonical(fs::absolute(p, ec), ec);
    return ec ? p.lexically_normal() : r;
}

bool isInside(const fs::path &file, const fs::path &folder) {
    const auto rel = file.lexically_relative(folder);
    return !rel.empty() && *rel.begin() != ".." && rel != ".";
}

} // namespace

std::string shippedFolderOf(const std::string &path) {
    if (path.empty() || path == ":memory:")
        return {};
    const fs::path file = realPath(path);
    for (const char *root : {DIODE_SOURCE_DIR, DIODE_INSTALL_DATADIR}) {
        const fs::path folder = realPath(fs::path(root) / kModelDirectory);
        if (isInside(file, folder))
            return folder.string();
    }
    return {};
}

bool isShippedPath(const std::string &path) {
    return !shippedFolderOf(path).empty();
}

void refuseWritingShipped(const std::string &path, std::string_view what) {
    const std::string folder = shippedFolderOf(path);
    if (folder.empty())
        return;
    std::error_code ec;
    if (fs::exists(path, ec))
        throw InvalidInput(
            fmt::format("{} '{}' is shipped data (in {}), which diode only reads; to write to it, "
                        "copy it first: cp '{}' my{}",
                        what, path, folder, path, fs::path(path).extension().string()));
    throw InvalidInput(
        fmt::format("{} '{}' would be written into the shipped data folder {}, which diode only "
                    "reads; write it elsewhere",
                    what, path, folder));
}

} // namespace diode::shipped
