#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace diode::cli {

/// Adds train, eval, rank and inspect to `app`; returns the function that runs whichever was
/// chosen (or returns -1 when none of them was).
std::function<int()> addModelCommands(CLI::App &app);

} // namespace diode::cli
