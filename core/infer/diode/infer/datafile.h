#pragma once

#include "diode/infer/jsonlimits.h"
#include "diode/infer/problemjson.h"

#include <cstdint>
#include <functional>
#include <istream>
#include <string>
#include <string_view>

namespace diode {

/// How much of a user's data file a reader takes (docs/FORMATS.md, "Limits"). A line is bounded by
/// kProblemJsonLimits (problemjson.h: 16 MiB, nested 64 deep, 2,000,000 values; the plugin and `diode
/// rank` read lines too); a file read whole, or line by line into memory, by these. Every reader of
/// data files goes through them: import, merge's JSON lines, eval, compare, stats --heldout,
/// --skip-measured and lookup-table.
inline constexpr uint64_t kMaxDataFileBytes = 1ull << 30;
/// A whole JSON or msgpack document (a torch-diode dataset): the file's bound, nested 64 deep, at
/// most 64 million values (some 5 GB built).
inline constexpr JsonLimits kDocumentLimits{64, kMaxDataFileBytes, false, 64'000'000};

/// `path` read whole; InvalidInput naming it (`what` first) for a directory, a FIFO, a device or
/// anything but a regular file (which might never end: /dev/zero), a file larger than
/// kMaxDataFileBytes (refused before it is read) and one that cannot be read.
std::string readDataFile(const std::string &path, std::string_view what);

/// Each non-blank line of `in`, numbered from 1, to `fn(number, line)`: bounded a line by
/// kProblemJsonLimits.maxBytes and in all by kMaxDataFileBytes, read no further than that
/// (InvalidInput "SOURCE: line N: longer than ..." or "SOURCE: more than ... bytes").
void forEachDataLine(std::istream &in, const std::string &source,
                     const std::function<void(int, const std::string &)> &fn);
/// The same over text in memory (a file readDataFile read).
void forEachDataLine(std::string_view text, const std::string &source,
                     const std::function<void(int, const std::string &)> &fn);

} // namespace diode
