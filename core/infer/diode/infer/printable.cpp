#include "printable.h"

#include <fmt/format.h>

namespace diode {

namespace {

// The length of the UTF-8 sequence starting at `s[i]`, or 0 if none is there.
size_t utf8Length(std::string_view s, size_t i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > s.size())
        return 0;
    for (size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80)
            return 0;
    return n;
}

std::string escaped(std::string_view text, bool keepLineBreaks) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        const size_t n = utf8Length(text, i);
        if (n == 0) {
            out += fmt::format("\\x{:02x}", c);
            ++i;
        } else if (n == 1 && (c < 0x20 || c == 0x7f)) {
            if (c == '\n' && keepLineBreaks)
                out += '\n';
            else if (c == '\n')
                out += "\\n";
            else if (c == '\t')
                out += "\\t";
            else if (c == '\r')
                out += "\\r";
            else
                out += fmt::format("\\x{:02x}", c);
            ++i;
        } else if (n == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0) {
            // U+0080..U+009F: the C1 controls (CSI among them) that some terminals obey.
            out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[i + 1]));
            i += 2;
        } else {
            out.append(text.substr(i, n));
            i += n;
        }
    }
    return out;
}

} // namespace

std::string printable(std::string_view text) {
    return escaped(text, false);
}

std::string printableLines(std::string_view text) {
    return escaped(text, true);
}

} // namespace diode
