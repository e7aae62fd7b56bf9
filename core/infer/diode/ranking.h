#pragma once

#include "diode/modelpackage.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace diode {

/// Candidate indices sorted by predicted time, fastest first (ties keep input order).
std::vector<size_t> orderByPrediction(const std::vector<double> &predictedMs);

/// Ranks one problem JSON line with `package`: {"problem": "<label>", "predicted_ms": [...],
/// "order": [...]}, or
/// {"error": "<where>: ..."} for a line the schema cannot describe: what `diode rank` prints per
/// line.
nlohmann::json rankProblemLine(const ModelPackage &package, const std::string &line,
                               const std::string &where);

} // namespace diode
