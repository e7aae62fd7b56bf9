#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace diode {

/// What a JSON document handed to us by a user may hold. nlohmann::json parses any depth, but
/// copying, comparing or destroying a value recurses once per level, so a file nested 100,000
/// deep ends in a stack overflow far from the parser; a duplicate key silently replaces the
/// first one; a file of gigabytes is read whole. Readers of plans and shape sets use the
/// defaults (docs/PLANS.md); other readers may pick their own.
struct JsonLimits {
    int maxDepth = 64;               ///< arrays and objects nested deeper are refused while parsing
    uint64_t maxBytes = 16ull << 20; ///< larger files are refused before they are read
    bool refuseDuplicateKeys = true; ///< a key given twice in one object is refused, naming it
    /// Values (objects, arrays, strings, numbers, booleans, nulls, each counted once) a document may
    /// hold; more are refused while parsing. Bytes alone do not bound the memory: `{}` is 3 bytes
    /// of text and some 80 bytes once built, so 240 MB of them once took 790 MB and ten minutes.
    uint64_t maxValues = UINT64_MAX;
};

/// Parses `text` in time linear in its length, refusing (InvalidInput, prefixed by `what`) nesting deeper
/// than the limit, more values than `limits.maxValues`, a key given twice, a number out of range and
/// malformed JSON; each message names the path of the value at fault ("entries[0].M[1]") and what was
/// expected, in a few hundred characters at most. Never a raw library message.
nlohmann::json parseJsonBounded(std::string_view text, const std::string &what,
                                const JsonLimits &limits = {});

/// Decodes msgpack `data`, refusing (InvalidInput, prefixed by `what`) arrays and maps nested
/// deeper than `limits.maxDepth`, or more values than `limits.maxValues`, before any value is built.
/// Malformed msgpack gives a discarded value, as nlohmann::json::from_msgpack(data, true, false) would, so
/// callers can try another format. `limits.refuseDuplicateKeys` does not apply.
nlohmann::json parseMsgpackBounded(std::string_view data, const std::string &what,
                                   const JsonLimits &limits = {});

/// Reads `path` whole. Refuses (InvalidInput starting with `what`), before reading, a path that is
/// missing, a directory, not a regular file (a FIFO or a device might never end) or larger than
/// `maxBytes`; `expected` says what it should be ("a JSON file").
std::string readFileBounded(const std::string &path, const std::string &what, uint64_t maxBytes,
                            std::string_view expected);

/// Reads `path` and parses it as above. Refuses, before reading, a path that is missing, a
/// directory, not a regular file or larger than `limits.maxBytes`. Messages start with `what`.
nlohmann::json readJsonFile(const std::string &path, const std::string &what, const JsonLimits &limits = {});

} // namespace diode
