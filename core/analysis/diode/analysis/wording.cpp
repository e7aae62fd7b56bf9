#include "diode/analysis/wording.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

namespace diode {

std::string baselineName(std::string_view key, bool cpuData) {
    if (cpuData && (key == "aten" || key == "first-config"))
        return "the plan's first tile";
    if (key == "aten")
        return "plain torch.compile (ATen)";
    if (key == "max-autotune")
        return "max-autotune's pick";
    if (key == "first-config")
        return "Inductor's first config";
    return std::string(key);
}

bool baselineShown(std::string_view key, bool cpuData) {
    return !(cpuData && key == "aten");
}

size_t distinctProblems(const std::vector<GemmProblem> &problems) {
    return std::set<GemmProblem>(problems.begin(), problems.end()).size();
}

std::string problemCount(size_t problems, size_t lines) {
    const auto n = [](size_t v, const char *one, const char *many) {
        return fmt::format("{} {}", v, v == 1 ? one : many);
    };
    if (problems == lines)
        return n(problems, "problem", "problems");
    return fmt::format("{} in {}", n(problems, "problem", "problems"), n(lines, "line", "lines"));
}

std::string fewProblemsWarning(size_t problems) {
    if (problems >= kFewHeldOutProblems)
        return {};
    return fmt::format(
        "only {} held-out problem{}: below {}, a few points between selectors are noise, not a "
        "verdict",
        problems, problems == 1 ? "" : "s", kFewHeldOutProblems);
}

std::string speedupText(double v, int decimals) {
    if (std::isnan(v) || !(v > 0))
        return "n/a";
    if (v < 1) // two significant digits at least: 0.0123 reads 0.012, never 0.0
        decimals = std::max(decimals, 1 - int(std::floor(std::log10(v))));
    return fmt::format("{:.{}f}", v, decimals);
}

std::string packageName(const std::string &path) {
    return std::filesystem::path(path).stem().string();
}

std::string durationText(double s) {
    if (s < 60)
        return fmt::format("{} s", std::max(1, int(std::lround(s))));
    if (s < 3600)
        return fmt::format("{} min {} s", int(s) / 60, int(s) % 60);
    return fmt::format("{} h {} min", int(s) / 3600, int(s) % 3600 / 60);
}

} // namespace diode
