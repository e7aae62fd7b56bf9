#pragma once

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

namespace diode::cli {

/// A number option's check. CLI11's own print a 309-digit range for "--deadline 0", call "abc" out of
/// range and let "nan" through every comparison; these say what is wanted and refuse what is not a
/// finite number. `aboveMin`: `min` itself is refused ("above 0" rather than "at least 0").
inline CLI::Validator numberIn(double min, double max = std::numeric_limits<double>::infinity(),
                               bool aboveMin = false) {
    const std::string range = std::isinf(max) ? fmt::format("{} {}", aboveMin ? "above" : "at least", min)
                                              : fmt::format("from {} to {}", min, max);
    return CLI::Validator(
        [=](std::string &text) -> std::string {
            errno = 0;
            char *end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            if (text.empty() || end == text.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
                return fmt::format("'{}' is not a number; expected a number {}", text, range);
            if (v < min || v > max || (aboveMin && v == min))
                return fmt::format("{} is out of range; expected a number {}", text, range);
            return {};
        },
        "NUMBER " + range);
}

/// The same for a whole number from `min` to `max`.
inline CLI::Validator integerIn(int64_t min, int64_t max = std::numeric_limits<int64_t>::max()) {
    const std::string range = max == std::numeric_limits<int64_t>::max()
                                  ? fmt::format("at least {}", min)
                                  : fmt::format("from {} to {}", min, max);
    return CLI::Validator(
        [=](std::string &text) -> std::string {
            errno = 0;
            char *end = nullptr;
            const long long v = std::strtoll(text.c_str(), &end, 10);
            if (text.empty() || end == text.c_str() || *end != '\0')
                return fmt::format("'{}' is not a whole number; expected one {}", text, range);
            if (errno == ERANGE || v < min || v > max)
                return fmt::format("{} is out of range; expected a whole number {}", text, range);
            return {};
        },
        "INT " + range);
}

} // namespace diode::cli
