#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace diode::cli {

/// Adds sweep-kernels (the kernel sweep on the local GPU) and train-decisions (the decision models
/// beside the GEMM kernel, written into a package) to `app`; returns the function that runs
/// whichever was chosen, or -1 when neither was.
std::function<int()> addDecisionCommands(CLI::App &app);

} // namespace diode::cli
