#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace diode {

/// The oldest torch the plugin and the inductor worker run on (its InductorChoices hook and the
/// feedback saver's six arguments): what the plugin's install(), the sweep's worker check and the
/// Python package's optional dependency all read (the plugin through diode_vocabulary).
inline constexpr int kMinTorchMajor = 2;
inline constexpr int kMinTorchMinor = 9;

/// "2.9".
std::string minTorchVersion();
/// Whether torch's version text ("2.9.0+cu128", "2.10.0a0") is at least the minimum; nullopt
/// when the text starts with no major.minor.
std::optional<bool> torchVersionSupported(std::string_view version);

} // namespace diode
