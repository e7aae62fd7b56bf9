#pragma once

#include <string>
#include <string_view>

namespace diode {

/// `text` as it may go to a terminal or into a one-line message: control characters (C0, DEL and
/// C1) written as escapes (\n, \t, \x1b), bytes that are not UTF-8 as \xNN. Names and fields read
/// from files (a package's name, a GPU name, a plan's name) pass through it before they are
/// printed, so that no file can move the cursor, clear the screen, set the window title or start a
/// line that looks like the program's own.
std::string printable(std::string_view text);

/// As printable(), keeping line breaks: for a message of several lines (an error with a log tail).
std::string printableLines(std::string_view text);

} // namespace diode
