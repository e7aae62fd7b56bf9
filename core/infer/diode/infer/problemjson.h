#pragma once

#include "diode/infer/jsonlimits.h"
#include "diode/infer/measurement.h"

#include <nlohmann/json.hpp>

#include <array>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace diode {

/// Problem JSON (docs/FORMATS.md): one object per line, shared by the worker, `diode import`,
/// `diode rank` and the plugin. Version 2 gives each candidate `times` per timing method and the
/// problem its `baselines`; version 1 lines (`time_ms`) are still read. Lines are written as 2.
inline constexpr int kProblemJsonVersion = 2;

/// The fields that name a problem, in the order a problem's key lists them (the Python worker and
/// selector read this list through the plugin's diode_vocabulary()).
inline constexpr std::array<std::string_view, 8> kProblemFields{"op", "dtype",        "B",           "M", "N",
                                                                "K",  "a_transposed", "b_transposed"};

/// The GEMM search spaces of Inductor a line, a plan or the plugin names ("search_space"); a line
/// without one is of the first.
inline constexpr std::array<std::string_view, 2> kSearchSpaces{"DEFAULT", "EXHAUSTIVE"};
/// The space `text` names, in any case ("exhaustive" is EXHAUSTIVE); nullopt for none of them.
std::optional<std::string> parseSearchSpace(std::string_view text);

/// What one problem line may hold (docs/FORMATS.md, "Limits"): 16 MiB, nested 64 deep, 2,000,000
/// values (a line of 100,000 candidates holds some 1.5 million; `{}` repeated over 16 MiB would
/// build 400 MB). A later duplicate key replaces the earlier one, as Python's json module does. The
/// one bound of a line for every reader: import, rank, eval, compare, merge, lookup-table, the
/// worker's answers (core/infer/diode/infer/datafile.h bounds a whole file).
inline constexpr JsonLimits kProblemJsonLimits{64, 16ull << 20, false, 2'000'000};

GemmProblem problemFromJson(const nlohmann::json &j, const std::string &where);
nlohmann::json problemToJson(const GemmProblem &p);

/// Throws InvalidInput naming `where` ("line 12") and the field at fault; parseProblemLine also
/// refuses nesting deeper than kProblemJsonLimits before building the value.
ProblemRecord parseProblemRecord(const nlohmann::json &j, const std::string &where);
ProblemRecord parseProblemLine(const std::string &line, const std::string &where);
nlohmann::json toJson(const ProblemRecord &r);

/// What readProblemLine found: a line (possibly empty), a line longer than
/// kProblemJsonLimits.maxBytes (of which only that much was consumed: the stream cannot be trusted
/// to reach a newline, /dev/zero never does), or the end of the stream.
enum class LineRead { Line, TooLong, End };

/// std::getline with a bound: reads one line into `line` without its newline, never holding more
/// than kProblemJsonLimits.maxBytes of it.
LineRead readProblemLine(std::istream &in, std::string &line);

/// Problem JSON lines of a file, blank lines skipped; throws InvalidInput naming the file, the line
/// and the field. The one reader of such files: `diode eval`, `diode characterise`, the sweep's
/// problem files and the Python tools (diode_read_problem_lines) read with it.
std::vector<ProblemRecord> readProblemFile(const std::string &path);

/// A file name's extension in lower case (".jsonl" for "X.JSONL"), for choosing a reader by name.
std::string lowerExtension(const std::string &path);
/// Whether a file's name says problem JSON lines: .jsonl or .ndjson, in any case.
bool isProblemLinesName(const std::string &path);

} // namespace diode
