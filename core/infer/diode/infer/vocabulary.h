#pragma once

#include <nlohmann/json.hpp>

namespace diode {

/// The names and limits core defines and its Python callers share, as one JSON object: what the
/// plugin library reports (diode_vocabulary, plugin/include/diode_inductor.h lists the keys) and
/// what the sweep runner hands the inductor worker with each request. Python reads these instead
/// of restating them.
const nlohmann::json &vocabulary();

} // namespace diode
