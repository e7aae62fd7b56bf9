#include "slurmscript.h"

#include "diode/infer/gemmproblem.h"
#include "diode/infer/printable.h"

#include <fmt/format.h>

#include <cctype>
#include <cstring>
#include <stdexcept>

namespace diode {

std::string shellQuote(std::string_view s) {
    std::string q = "'";
    for (char c : s)
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

SlurmScript::SlurmScript()
    : m_text("#!/bin/bash\n") {}

void SlurmScript::comment(std::string_view text) {
    m_text += "# " + printable(text) + "\n"; // no line break survives printable()
}

void SlurmScript::checkSbatchValue(std::string_view value, std::string_view field) {
    // Beyond ASCII: UTF-8 text without control characters (a folder named in another script).
    bool bad = printable(value) != value;
    for (char ch : value) {
        const auto c = static_cast<unsigned char>(ch);
        bad = bad || c <= 0x20 || c == 0x7f || (c < 0x80 && std::strchr("'\"\\$`#;", c));
    }
    if (bad)
        throw InvalidInput(
            fmt::format("{} \"{}\" goes into an #SBATCH line, which may not hold white space, control "
                        "characters, quotes, backslashes, '$', '`', '#' or ';' (sbatch reads these lines "
                        "without a shell, so nothing in them can be quoted)",
                        field, printable(value)));
}

void SlurmScript::checkOneLine(std::string_view value, std::string_view field) {
    for (char ch : value) {
        const auto c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c == 0x7f)
            throw InvalidInput(fmt::format("{} \"{}\" holds a control character (a line break, a tab or an "
                                           "escape); each entry must be one line of shell",
                                           field, printable(value)));
    }
}

void SlurmScript::sbatch(std::string_view option, std::string_view value, std::string_view field) {
    if (value.empty())
        return;
    checkSbatchValue(value, field);
    sbatchArgument(fmt::format("--{}={}", option, value), field);
}

void SlurmScript::sbatchArgument(std::string_view argument, std::string_view field) {
    checkSbatchValue(argument, field);
    // sbatch stops reading #SBATCH lines at the first command: one after it would be ignored.
    if (m_commandsBegun)
        throw std::logic_error("an #SBATCH line after a command would be ignored by sbatch");
    m_text += fmt::format("#SBATCH {}\n", argument);
}

void SlurmScript::shellLine(std::string_view line, std::string_view field) {
    checkOneLine(line, field);
    m_commandsBegun = true;
    m_text += std::string(line) + "\n";
}

void SlurmScript::command(std::string_view line) {
    m_commandsBegun = true;
    m_text += std::string(line) + "\n";
}

std::string SlurmScript::jobName(std::string_view name) {
    std::string out;
    for (char c : name.substr(0, 64))
        out += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-' ? c : '_';
    return out;
}

} // namespace diode
