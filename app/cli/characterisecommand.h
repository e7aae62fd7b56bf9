#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace diode::cli {

/// Adds `characterise` to `app`; returns the function that runs it when it was chosen (or
/// returns -1 when it was not). It trains, so `diode` hands it to diode-train (main.cpp).
std::function<int()> addCharacteriseCommand(CLI::App &app);

} // namespace diode::cli
