#pragma once

#include <string>
#include <string_view>

namespace diode {

/// `s` as one word of a POSIX shell: in single quotes, each quote in it written '\''.
std::string shellQuote(std::string_view s);

/// A batch script for sbatch, built so that no value can add a line or a command. sbatch reads
/// the `#SBATCH` lines itself, without a shell: it splits them at white space, keeps quotes and
/// stops at the first line that is not a comment, so their values cannot be quoted and are
/// refused outside a safe alphabet, naming the field. Free text goes into comments escaped, shell
/// words are quoted (shellQuote), and the lines that are shell by design (setup lines, a launcher)
/// are refused if they hold a control character, so each stays the one line it was given as.
/// Every `#SBATCH` line comes before the first command. The one writer of diode's Slurm scripts.
class SlurmScript {
public:
    SlurmScript();

    /// "# TEXT": control characters, quotes and backslashes in it written as JSON escapes.
    void comment(std::string_view text);
    /// "#SBATCH --OPTION=VALUE"; InvalidInput naming `field` for a value outside the alphabet.
    void sbatch(std::string_view option, std::string_view value, std::string_view field);
    /// "#SBATCH ARG" for an option given whole ("--qos=high"); the same alphabet as sbatch().
    void sbatchArgument(std::string_view argument, std::string_view field);
    /// A shell line as given (a setup line); InvalidInput naming `field` for a control character.
    void shellLine(std::string_view line, std::string_view field);
    /// A command line built by the caller from shellQuote()d words and checked fragments.
    void command(std::string_view line);

    const std::string &text() const { return m_text; }

    /// `name` as a Slurm job name: letters, digits, '.', '_' and '-', the rest as '_', at most 64.
    static std::string jobName(std::string_view name);
    /// InvalidInput naming `field` unless `value` holds only what an #SBATCH line can carry:
    /// printable ASCII but white space, quotes, backslash, '$', '`', '#' and ';'.
    static void checkSbatchValue(std::string_view value, std::string_view field);
    /// InvalidInput naming `field` if `value` holds a control character (a newline among them).
    static void checkOneLine(std::string_view value, std::string_view field);

private:
    std::string m_text;
    bool m_commandsBegun = false;
};

} // namespace diode
