#pragma once

#include "diode/infer/printable.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <string>

namespace diode::cli {

/// One line or more on standard error, its control characters escaped (printableLines: no file
/// name, GPU name or message read from data can drive the terminal). Never throws: a closed or full
/// standard error must not end a sweep with its run left `running`.
void sayText(const std::string &text);
template <typename... T> void say(fmt::format_string<T...> format, T &&...args) {
    sayText(fmt::format(format, std::forward<T>(args)...));
}

/// Standard output, as fmt::print, its control characters escaped. A failed write does not throw:
/// finishOutput() reports it at the end.
void showText(const std::string &text);
template <typename... T> void show(fmt::format_string<T...> format, T &&...args) {
    showText(fmt::format(format, std::forward<T>(args)...));
}

/// `j` as JSON text (indented by `indent`, -1 on one line); bytes that are not UTF-8 in its strings
/// (a msgpack import, a tampered store) become U+FFFD instead of ending the command.
inline std::string jsonText(const nlohmann::json &j, int indent) {
    return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// Flushes standard output (what fmt and std::cout wrote); false, after saying why on standard
/// error, when any write to it failed (a full disk, a closed pipe): the command then exits 1
/// instead of 0 with its output cut short.
bool finishOutput();

/// For a SIGINT or SIGTERM handler that has cancelled the work: the next of either kills the
/// process groups of the workers (killChildGroups) and ends the process as that signal does.
void onSecondSignal(int sig);

} // namespace diode::cli
