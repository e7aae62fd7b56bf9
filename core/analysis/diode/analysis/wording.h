#pragma once

#include "diode/infer/gemmproblem.h"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace diode {

// How `diode` and the workbench word the facts both of them show, so that the two faces say the
// same thing in the same words: the baselines' names on each backend, counts of problems and of
// problem lines, the warning a small held-out set carries, and speed-ups.

/// The name of baseline selector `key` (evaluation.h's kBaselineOrder: "aten", "max-autotune",
/// "first-config", "random") for data of the cpu backend (`cpuData`) or of a GPU. On a GPU "aten"
/// is plain torch.compile (the ATen kernel it calls); on cpu data there is no torch.compile, no
/// ATen kernel and no Inductor: "aten" and "first-config" both pick the plan's first tile, and are
/// named so. Names fit 28 columns (the CLI's tables).
std::string baselineName(std::string_view key, bool cpuData = false);
/// Whether the faces show baseline `key` for such data: on cpu data "aten" is "first-config"
/// again, shown once.
bool baselineShown(std::string_view key, bool cpuData);

/// Distinct problems among `problems` (a problem measured in two runs or two search spaces is
/// one problem in two problem lines).
size_t distinctProblems(const std::vector<GemmProblem> &problems);
/// "769 problems in 789 lines", or "26 problems" where each problem is one line.
std::string problemCount(size_t problems, size_t lines);

/// Below this many held-out problems a metric is a sample too small to judge a model by: a
/// difference of a few percent between selectors is within what another draw would give.
inline constexpr size_t kFewHeldOutProblems = 30;
/// The warning metrics over `problems` held-out problems carry; empty from kFewHeldOutProblems on.
std::string fewProblemsWarning(size_t problems);

/// A speed-up × as text, without the sign: `decimals` digits, but at least two significant ones
/// ("94.3", "1.055", "0.012"), so a tiny ratio never reads "0.0"; "n/a" for NaN or none.
std::string speedupText(double v, int decimals);

/// What a package is called wherever it is listed or compared: its file's name without ".diode"
/// (what the plugin's folder and `diode inspect FILE` show), whatever name its manifest carries
/// (the shipped H100 packages' manifests say "warm-raw").
std::string packageName(const std::string &path);

/// A duration in words: "40 s", "3 min 5 s", "2 h 10 min" (the workbench's ETAs and estimates).
std::string durationText(double seconds);

} // namespace diode
