#include "datafile.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

namespace diode {

namespace {

std::string lineTooLong(const std::string &source, int n) {
    return fmt::format(
        "{}: line {}: longer than {} bytes; a problem line may hold at most that (docs/FORMATS.md, "
        "\"Limits\")",
        source, n, kProblemJsonLimits.maxBytes);
}

bool blank(std::string_view line) {
    return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

} // namespace

std::string readDataFile(const std::string &path, std::string_view what) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto st = fs::status(path, ec);
    if (ec || !fs::exists(st))
        throw InvalidInput(fmt::format("{}: cannot read '{}': no such file", what, path));
    if (fs::is_directory(st))
        throw InvalidInput(fmt::format("{}: '{}' is a directory; expected a file", what, path));
    if (!fs::is_regular_file(st)) // a FIFO or a device is read whole, so might never end
        throw InvalidInput(
            fmt::format("{}: '{}' is not a regular file; a data file is read whole", what, path));
    const auto size = fs::file_size(path, ec);
    if (ec)
        throw InvalidInput(fmt::format("{}: cannot read '{}': {}", what, path, ec.message()));
    if (size > kMaxDataFileBytes)
        throw InvalidInput(
            fmt::format("{}: '{}' is {} bytes; a data file may hold at most {} (docs/FORMATS.md, "
                        "\"Limits\"): split it",
                        what, path, size, kMaxDataFileBytes));
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InvalidInput(fmt::format("{}: cannot read '{}'", what, path));
    std::string text(size, '\0');
    in.read(text.data(), std::streamsize(size));
    if (in.gcount() != std::streamsize(size))
        throw InvalidInput(
            fmt::format("{}: cannot read '{}' (read {} of {} bytes)", what, path, in.gcount(), size));
    return text;
}

void forEachDataLine(std::istream &in, const std::string &source,
                     const std::function<void(int, const std::string &)> &fn) {
    std::string line;
    uint64_t total = 0;
    for (int n = 1;; ++n) {
        const LineRead read = readProblemLine(in, line); // bounded: /dev/zero never ends a line
        if (read == LineRead::End)
            return;
        if (read == LineRead::TooLong)
            throw InvalidInput(lineTooLong(source, n));
        total += line.size() + 1;
        if (total > kMaxDataFileBytes)
            throw InvalidInput(fmt::format("{}: more than {} bytes; a data file may hold at most that "
                                           "(docs/FORMATS.md, \"Limits\"): split it",
                                           source, kMaxDataFileBytes));
        if (!blank(line))
            fn(n, line);
    }
}

void forEachDataLine(std::string_view text, const std::string &source,
                     const std::function<void(int, const std::string &)> &fn) {
    if (text.size() > kMaxDataFileBytes)
        throw InvalidInput(fmt::format("{}: more than {} bytes; a data file may hold at most that "
                                       "(docs/FORMATS.md, \"Limits\"): split it",
                                       source, kMaxDataFileBytes));
    std::string line;
    for (int n = 1; !text.empty(); ++n) {
        const size_t nl = text.find('\n');
        const std::string_view piece = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
        if (piece.size() > kProblemJsonLimits.maxBytes)
            throw InvalidInput(lineTooLong(source, n));
        if (blank(piece))
            continue;
        line.assign(piece);
        fn(n, line);
    }
}

} // namespace diode
