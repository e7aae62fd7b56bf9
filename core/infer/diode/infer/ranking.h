#pragma once

#include "diode/infer/modelpackage.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace diode {

/// Candidate indices sorted by predicted time, fastest first (ties keep input order).
std::vector<size_t> orderByPrediction(const std::vector<double> &predictedMs);

/// Ranks one problem JSON line with `package`: {"problem": "<label>", "predicted_ms": [...],
/// "order": [...]}, with "unscored": [{"candidate": i, "why": ...}] for candidates the feature schema
/// cannot describe (their predicted_ms null, absent from the order), or {"error": "<where>: ..."} for a
/// line with nothing the model can rank: what `diode rank` prints per line.
nlohmann::json rankProblemLine(const ModelPackage &package, const std::string &line,
                               const std::string &where);

} // namespace diode
