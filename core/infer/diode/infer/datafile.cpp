#include "diode/infer/datafile.h"

#include <fmt/format.h>

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
    return readFileBounded(path, std::string(what), kMaxDataFileBytes, "a data file (read whole)");
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
