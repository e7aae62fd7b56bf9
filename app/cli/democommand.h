#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace diode::cli {

/// Adds `demo` to `app`; returns the function that runs it (or returns -1 when not chosen).
std::function<int()> addDemoCommand(CLI::App &app);

} // namespace diode::cli
