#pragma once

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

/// Writes `path` through `write(std::ostream &)` into `path.partial` beside it and renames that into
/// place, so neither a failure nor a reader meanwhile sees half a file, and a failure leaves no
/// partial file behind (nor does `write` throwing). Throws `Error(message)` naming the file: it cannot be
/// opened, the writing failed (a full disk) or the rename did. Returns what `write` returns. The one atomic
/// file write of the project: packages, exports, plans, chosen problems, Slurm scripts, installed models.
template <typename Error, typename Write>
auto writeFileAtomically(const std::string &path, Write &&write, bool binary = false) {
    namespace fs = std::filesystem;
    const std::string partial = path + ".partial";
    auto fail = [&](const std::string &message) {
        std::error_code ec;
        fs::remove(partial, ec);
        return Error(message);
    };
    std::ofstream os(partial, binary ? std::ios::out | std::ios::binary : std::ios::out);
    if (!os)
        throw fail(fmt::format("cannot write '{}': {}", partial, std::strerror(errno)));
    auto finish = [&] {
        os.close();
        if (!os)
            throw fail(fmt::format("writing '{}' failed (is its disk full?)", path));
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
