#pragma once

#include "gemmproblem.h"
#include "kernelconfig.h"

#include <optional>
#include <string>
#include <vector>

namespace diode {

enum class MeasureStatus { Ok, Failed, Timeout };
std::string_view toString(MeasureStatus status);
MeasureStatus parseMeasureStatus(std::string_view text);

/// One timing of one kernel configuration on one problem, or the reason there is none.
struct Measurement {
    KernelConfig config;
    std::optional<double> timeMs;
    MeasureStatus status = MeasureStatus::Ok;
    std::string error;
};

/// A problem with the candidates measured (or to be ranked) for it: one line of problem JSON.
struct ProblemRecord {
    GemmProblem problem;
    std::vector<Measurement> candidates;
    std::string error;                                  ///< set when the whole problem failed
    nlohmann::json extra = nlohmann::json::object();    ///< unknown keys, kept verbatim
};

} // namespace diode
