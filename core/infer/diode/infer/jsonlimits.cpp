#include "jsonlimits.h"

#include "diode/infer/gemmproblem.h"

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

/// nlohmann's messages start with "[json.exception.parse_error.101] "; users need only the rest, and
/// not a whole 20 MB token after "last read:".
std::string withoutLibraryPrefix(const char *what) {
    std::string s(what);
    if (s.rfind("[json.exception.", 0) == 0)
        if (auto end = s.find("] "); end != std::string::npos)
            s.erase(0, end + 2);
    if (s.size() > 300)
        s = s.substr(0, 240) + "... (" + std::to_string(s.size()) + " characters)";
    return s;
}

/// Builds the value event by event, as nlohmann's own DOM parser does, checking the limits as it
/// goes. Not nlohmann's callback parser: after each object or array it closes, that one scans the
/// whole parent for a value to discard, so a document of n objects took n^2 steps (400,000 `{}`
/// in an array took 56 s to import, 100,000 took 3.7 s).
class BoundedBuilder : public json::json_sax_t {
public:
    BoundedBuilder(const std::string &what, const JsonLimits &limits)
        : m_what(what)
        , m_limits(limits) {}

    json result;

    bool null() override { return scalar(json(nullptr)); }
    bool boolean(bool v) override { return scalar(json(v)); }
    bool number_integer(number_integer_t v) override { return scalar(json(v)); }
    bool number_unsigned(number_unsigned_t v) override { return scalar(json(v)); }
    bool number_float(number_float_t v, const string_t &) override { return scalar(json(v)); }
    bool string(string_t &v) override { return scalar(json(std::move(v))); }
    bool binary(binary_t &v) override { return scalar(json(std::move(v))); }
    bool start_object(std::size_t) override { return open(json::value_t::object, false); }
    bool key(string_t &k) override {
        auto &top = m_stack.back();
        top.key = k;
        if (m_limits.refuseDuplicateKeys && !top.keys.insert(k).second) {
            const std::string at = pathOf(m_stack, m_stack.size() - 1);
            throw InvalidInput(fmt::format("{}: key '{}' appears twice in {}; a key may appear once in an "
                                           "object (the second would hide the first)",
                                           m_what, k, at.empty() ? "the top-level object" : "'" + at + "'"));
        }
        // A later duplicate replaces the earlier value, as Python's json module does.
        m_element = &(*m_values.back())[k];
        return true;
    }
    bool end_object() override { return close(); }
    bool start_array(std::size_t) override { return open(json::value_t::array, true); }
    bool end_array() override { return close(); }
    bool parse_error(std::size_t, const std::string &, const nlohmann::detail::exception &e) override {
        const std::string at = pathOf(m_stack, m_stack.size());
        // 406: a number like 1e999 that no double holds.
        if (e.id == 406)
            throw InvalidInput(fmt::format("{}: {} has a number out of range ({}); expected a finite number",
                                           m_what, at.empty() ? "the document" : "field '" + at + "'",
                                           withoutLibraryPrefix(e.what())));
        throw InvalidInput(fmt::format("{}: not valid JSON{}: {}", m_what,
                                       at.empty() ? "" : " (near field '" + at + "')",
                                       withoutLibraryPrefix(e.what())));
    }

private:
    void count() {
        if (++m_count <= m_limits.maxValues)
            return;
        const std::string at = pathOf(m_stack, m_stack.size());
        throw InvalidInput(
            fmt::format("{}: holds more than {} JSON values (objects, arrays, strings, numbers, "
                        "booleans and nulls; the limit was passed {}); at most {} are allowed",
                        m_what, m_limits.maxValues, at.empty() ? "at the top level" : "in field '" + at + "'",
                        m_limits.maxValues));
    }
    // Where a new value goes: the document, the open array's end, or the open object's key.
    json *place(json &&v) {
        if (m_values.empty()) {
            result = std::move(v);
            return &result;
        }
        json &top = *m_values.back();
        if (top.is_array()) {
            top.get_ref<json::array_t &>().push_back(std::move(v));
            return &top.get_ref<json::array_t &>().back();
        }
        *m_element = std::move(v);
        return m_element;
    }
    void childDone() {
        if (!m_stack.empty() && m_stack.back().array)
            ++m_stack.back().index;
    }
    bool scalar(json &&v) {
        count();
        place(std::move(v));
        childDone();
        return true;
    }
    bool open(json::value_t type, bool array) {
        count();
        if (int(m_stack.size()) >= m_limits.maxDepth) {
            const std::string at = pathOf(m_stack, m_stack.size());
            throw InvalidInput(
                fmt::format("{}: {} nests arrays and objects deeper than {} levels; at most {} are "
                            "allowed",
                            m_what, at.empty() ? "the document" : "field '" + at + "'", m_limits.maxDepth,
                            m_limits.maxDepth));
        }
        m_values.push_back(place(json(type)));
        m_stack.push_back(Frame{array, 0, {}, {}});
        return true;
    }
    bool close() {
        m_values.pop_back();
        m_stack.pop_back();
        childDone();
        return true;
    }

    const std::string &m_what;
    const JsonLimits &m_limits;
    uint64_t m_count = 0;
    std::vector<json *> m_values; ///< the open arrays and objects, innermost last
    std::vector<Frame> m_stack;   ///< the same, for messages
    json *m_element = nullptr;    ///< the open object's value for its last key
};

} // namespace

json parseJsonBounded(std::string_view text, const std::string &what, const JsonLimits &limits) {
    BoundedBuilder builder(what, limits);
    json::sax_parse(text.begin(), text.end(), &builder, json::input_format_t::json, true);
    return std::move(builder.result);
}

namespace {

/// Tracks only the nesting depth and the values: a first pass over msgpack that builds nothing, so a
/// document nested 100,000 deep, or of a hundred million values, is refused before nlohmann builds
/// (and later recursively destroys) it.
struct DepthCheck : json::json_sax_t {
    int maxDepth = 0;
    int depth = 0;
    size_t opened = 0;
    uint64_t values = 0, maxValues = UINT64_MAX;
    bool tooDeep = false;
    bool tooMany = false;
    bool malformed = false;
    bool value() {
        tooMany = ++values > maxValues;
        return !tooMany;
    }
    bool open() {
        ++opened;
        if (!value())
            return false;
        if (++depth <= maxDepth)
            return true;
        tooDeep = true;
        return false;
    }
    bool null() override { return value(); }
    bool boolean(bool) override { return value(); }
    bool number_integer(number_integer_t) override { return value(); }
    bool number_unsigned(number_unsigned_t) override { return value(); }
    bool number_float(number_float_t, const string_t &) override { return value(); }
    bool string(string_t &) override { return value(); }
    bool binary(binary_t &) override { return value(); }
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
    check.maxValues = limits.maxValues;
    json::sax_parse(data.begin(), data.end(), &check, json::input_format_t::msgpack, true);
    if (check.tooMany)
        throw InvalidInput(fmt::format("{}: msgpack holds more than {} values; at most {} are allowed", what,
                                       limits.maxValues, limits.maxValues));
    if (check.tooDeep)
        throw InvalidInput(
            fmt::format("{}: msgpack nests arrays and maps deeper than {} levels (at the {}th one "
                        "opened); at most {} are allowed",
                        what, limits.maxDepth, check.opened, limits.maxDepth));
    if (check.malformed)
        return json(json::value_t::discarded);
    return json::from_msgpack(data.begin(), data.end(), true, false);
}

std::string readFileBounded(const std::string &path, const std::string &what, uint64_t maxBytes,
                            std::string_view expected) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto st = fs::status(path, ec);
    if (ec || !fs::exists(st))
        throw InvalidInput(fmt::format("{}: cannot read '{}': no such file", what, path));
    if (fs::is_directory(st))
        throw InvalidInput(fmt::format("{}: '{}' is a directory; expected {}", what, path, expected));
    if (!fs::is_regular_file(st)) // read whole: a FIFO or a device might never end
        throw InvalidInput(fmt::format("{}: '{}' is not a regular file; expected {}", what, path, expected));
    const auto size = fs::file_size(path, ec);
    if (ec)
        throw InvalidInput(fmt::format("{}: cannot read '{}': {}", what, path, ec.message()));
    if (size > maxBytes)
        throw InvalidInput(
            fmt::format("{}: '{}' is {} bytes; at most {} bytes are read", what, path, size, maxBytes));
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

json readJsonFile(const std::string &path, const std::string &what, const JsonLimits &limits) {
    return parseJsonBounded(readFileBounded(path, what, limits.maxBytes, "a JSON file"), what, limits);
}

} // namespace diode
