#include "jsonlimits.h"

#include "diode/gemmproblem.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

namespace diode {

namespace {

using json = nlohmann::json;

/// Where the parser is: one frame per open array or object, so a message can name the value.
struct Frame {
    bool array = false;
    size_t index = 0;           ///< array: the element being parsed
    std::string key;            ///< object: the key of the value being parsed
    std::set<std::string> keys; ///< object: keys seen so far
};

std::string pathOf(const std::vector<Frame> &stack, size_t frames) {
    std::string path;
    for (size_t i = 0; i < frames && i < stack.size(); ++i) {
        const auto &f = stack[i];
        if (f.array)
            path += fmt::format("[{}]", f.index);
        else if (!f.key.empty() || i + 1 < frames)
            path += (path.empty() ? "" : ".") + f.key;
    }
    // Deep nesting would make a path hundreds of characters long; its start says where.
    if (path.size() > 80)
        path = path.substr(0, 60) + "...";
    return path;
}

/// nlohmann's messages start with "[json.exception.parse_error.101] "; users need only the rest.
std::string withoutLibraryPrefix(const char *what) {
    std::string s(what);
    if (s.rfind("[json.exception.", 0) == 0)
        if (auto end = s.find("] "); end != std::string::npos)
            s.erase(0, end + 2);
    return s;
}

} // namespace

json parseJsonBounded(std::string_view text, const std::string &what, const JsonLimits &limits) {
    std::vector<Frame> stack;
    uint64_t values = 0;
    auto count = [&] {
        if (++values <= limits.maxValues)
            return;
        const std::string at = pathOf(stack, stack.size());
        throw InvalidInput(
            fmt::format("{}: holds more than {} JSON values (objects, arrays, strings, numbers, "
                        "booleans and nulls; the limit was passed {}); at most {} are allowed",
                        what, limits.maxValues, at.empty() ? "at the top level" : "in field '" + at + "'",
                        limits.maxValues));
    };
    auto childDone = [&] {
        if (!stack.empty() && stack.back().array)
            ++stack.back().index;
    };
    auto open = [&](bool array) {
        if (int(stack.size()) >= limits.maxDepth) {
            const std::string at = pathOf(stack, stack.size());
            throw InvalidInput(fmt::format(
                "{}: {} nests arrays and objects deeper than {} levels; at most {} are "
                "allowed",
                what, at.empty() ? "the document" : "field '" + at + "'", limits.maxDepth, limits.maxDepth));
        }
        stack.push_back(Frame{array, 0, {}, {}});
    };
    // The callback parser builds the value iteratively and lets us stop at the first level too
    // deep, before anything recursive touches the value.
    const json::parser_callback_t callback = [&](int, json::parse_event_t event, json &parsed) {
        switch (event) {
        case json::parse_event_t::object_start:
            count();
            open(false);
            break;
        case json::parse_event_t::array_start:
            count();
            open(true);
            break;
        case json::parse_event_t::key: {
            auto &top = stack.back();
            top.key = parsed.get<std::string>();
            if (limits.refuseDuplicateKeys && !top.keys.insert(top.key).second) {
                const std::string at = pathOf(stack, stack.size() - 1);
                throw InvalidInput(
                    fmt::format("{}: key '{}' appears twice in {}; a key may appear once in an "
                                "object (the second would hide the first)",
                                what, top.key, at.empty() ? "the top-level object" : "'" + at + "'"));
            }
            break;
        }
        case json::parse_event_t::object_end:
        case json::parse_event_t::array_end:
            stack.pop_back();
            childDone();
            break;
        case json::parse_event_t::value:
            count(); // a string, number, boolean or null: objects and arrays counted as they opened
            childDone();
            break;
        }
        return true;
    };
    try {
        return json::parse(text.begin(), text.end(), callback);
    } catch (const json::out_of_range &e) {
        // 406: a number like 1e999 that no double holds.
        const std::string at = pathOf(stack, stack.size());
        throw InvalidInput(fmt::format("{}: {} has a number out of range ({}); expected a finite number",
                                       what, at.empty() ? "the document" : "field '" + at + "'",
                                       withoutLibraryPrefix(e.what())));
    } catch (const json::exception &e) {
        const std::string at = pathOf(stack, stack.size());
        throw InvalidInput(fmt::format("{}: not valid JSON{}: {}", what,
                                       at.empty() ? "" : " (near field '" + at + "')",
                                       withoutLibraryPrefix(e.what())));
    }
}

namespace {

/// Tracks only the nesting depth: a first pass over msgpack that builds nothing, so a document
/// nested 100,000 deep is refused before nlohmann builds (and later recursively destroys) it.
struct DepthCheck : json::json_sax_t {
    int maxDepth = 0;
    int depth = 0;
    size_t opened = 0;
    bool tooDeep = false;
    bool malformed = false;
    bool open() {
        ++opened;
        if (++depth <= maxDepth)
            return true;
        tooDeep = true;
        return false;
    }
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t &) override { return true; }
    bool string(string_t &) override { return true; }
    bool binary(binary_t &) override { return true; }
    bool start_object(std::size_t) override { return open(); }
    bool key(string_t &) override { return true; }
    bool end_object() override { return --depth, true; }
    bool start_array(std::size_t) override { return open(); }
    bool end_array() override { return --depth, true; }
    bool parse_error(std::size_t, const std::string &, const nlohmann::detail::exception &) override {
        malformed = true;
        return false;
    }
};

} // namespace

json parseMsgpackBounded(std::string_view data, const std::string &what, const JsonLimits &limits) {
    DepthCheck check;
    check.maxDepth = limits.maxDepth;
    json::sax_parse(data.begin(), data.end(), &check, json::input_format_t::msgpack, true);
    if (check.tooDeep)
        throw InvalidInput(
            fmt::format("{}: msgpack nests arrays and maps deeper than {} levels (at the {}th one "
                        "opened); at most {} are allowed",
                        what, limits.maxDepth, check.opened, limits.maxDepth));
    if (check.malformed)
        return json(json::value_t::discarded);
    return json::from_msgpack(data.begin(), data.end(), true, false);
}

json readJsonFile(const std::string &path, const std::string &what, const JsonLimits &limits) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto st = fs::status(path, ec);
    if (ec || !fs::exists(st))
        throw InvalidInput(fmt::format("{}: cannot read '{}': no such file", what, path));
    if (fs::is_directory(st))
        throw InvalidInput(fmt::format("{}: '{}' is a directory; expected a JSON file", what, path));
    if (!fs::is_regular_file(st))
        throw InvalidInput(fmt::format("{}: '{}' is not a regular file; expected a JSON file", what, path));
    const auto size = fs::file_size(path, ec);
    if (ec)
        throw InvalidInput(fmt::format("{}: cannot read '{}': {}", what, path, ec.message()));
    if (size > limits.maxBytes)
        throw InvalidInput(fmt::format("{}: '{}' is {} bytes; at most {} bytes are read", what, path, size,
                                       limits.maxBytes));
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InvalidInput(fmt::format("{}: cannot read '{}'", what, path));
    std::string text(size, '\0');
    in.read(text.data(), std::streamsize(size));
    if (in.gcount() != std::streamsize(size))
        throw InvalidInput(
            fmt::format("{}: cannot read '{}' (read {} of {} bytes)", what, path, in.gcount(), size));
    return parseJsonBounded(text, what, limits);
}

} // namespace diode
