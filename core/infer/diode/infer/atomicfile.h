#pragma once

#include "diode/infer/gemmproblem.h"
#include "diode/infer/shippeddata.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

namespace diode {

/// What is at `path` if it is not a regular file or nothing: "a symbolic link", "a directory", "a
/// device", "a FIFO", "a socket"; "" otherwise. Not followed: a link is a link, whatever it points to.
inline std::string notARegularFile(const std::string &path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto st = fs::symlink_status(path, ec);
    if (ec || !fs::exists(st) || fs::is_regular_file(st))
        return {};
    if (fs::is_symlink(st))
        return "a symbolic link";
    if (fs::is_directory(st))
        return "a directory";
    if (fs::is_block_file(st) || fs::is_character_file(st))
        return "a device";
    if (fs::is_fifo(st))
        return "a FIFO";
    return fs::is_socket(st) ? "a socket" : "not a regular file";
}

/// Writes `path` through `write(std::ostream &)` into `path.partial` beside it and renames that into
/// place, so neither a failure nor a reader meanwhile sees half a file, and a failure leaves no
/// partial file behind (nor does `write` throwing). The rename replaces only a regular file: a symbolic
/// link, a directory, a device, a FIFO or a socket at `path` is refused (InvalidInput naming it) before
/// anything is written and again just before the rename, and so is shipped data (shippeddata.h). Throws
/// `Error(message)` naming the file: it cannot be opened, the writing failed (a full disk) or the rename
/// did. Returns what `write` returns. The one atomic file write of the project: packages, exports, plans,
/// chosen problems, Slurm scripts, installed models. Whether `path` is one of a command's inputs is the
/// caller's to check (refuseOutputPath, core/infer/diode/infer/outputpath.h).
template <typename Error, typename Write>
auto writeFileAtomically(const std::string &path, Write &&write, bool binary = false) {
    namespace fs = std::filesystem;
    const std::string partial = path + ".partial";
    auto refuseSpecial = [&] {
        if (const std::string what = notARegularFile(path); !what.empty())
            throw InvalidInput(fmt::format("'{}' is {}; an output is written beside it and renamed over it, "
                                           "which only a regular file may be: name a file",
                                           path, what));
    };
    shipped::refuseWritingShipped(path, "output file");
    refuseSpecial();
    auto fail = [&](const std::string &message) {
        std::error_code ec;
        fs::remove(partial, ec);
        return Error(message);
    };
    // A link or FIFO left at the partial name is removed, not followed: the file is made anew.
    if (std::error_code ec;
        fs::exists(fs::symlink_status(partial, ec)) && !fs::is_directory(fs::symlink_status(partial, ec)))
        fs::remove(partial, ec);
    std::ofstream os(partial, binary ? std::ios::out | std::ios::binary : std::ios::out);
    if (!os)
        throw fail(fmt::format("cannot write '{}': {}", partial, std::strerror(errno)));
    auto finish = [&] {
        os.close();
        if (!os)
            throw fail(fmt::format("writing '{}' failed (is its disk full?)", path));
        try {
            refuseSpecial(); // made meanwhile
        } catch (...) {
            std::error_code ec;
            fs::remove(partial, ec);
            throw;
        }
        std::error_code ec;
        fs::rename(partial, path, ec);
        if (ec)
            throw fail(fmt::format("cannot rename '{}' to '{}': {}", partial, path, ec.message()));
    };
    auto written = [&]() -> decltype(auto) { // `write` throwing leaves no partial file either
        try {
            return write(os);
        } catch (...) {
            os.close();
            std::error_code ec;
            fs::remove(partial, ec);
            throw;
        }
    };
    if constexpr (std::is_void_v<decltype(write(os))>) {
        written();
        finish();
    } else {
        auto result = written();
        finish();
        return result;
    }
}

} // namespace diode
