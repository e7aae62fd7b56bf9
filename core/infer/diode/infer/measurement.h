#pragma once

#include "diode/infer/gemmproblem.h"
#include "diode/infer/kernelconfig.h"
#include "diode/infer/timingmethod.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace diode {

enum class MeasureStatus { Ok, Failed, Timeout };
std::string_view toString(MeasureStatus status);
MeasureStatus parseMeasureStatus(std::string_view text);

/// How a failed measurement's error starts when the kernel ran but its output failed the worker's
/// check against ATen's (docs/FORMATS.md: "wrong result: max error ..."): such a candidate is
/// never to be chosen (the package's unsafe_candidates).
inline constexpr std::string_view kWrongResultError = "wrong result";

/// One time of one kernel configuration on one problem by one timing method, or the reason there
/// is none: one row of the store, and what a backend hands the sweep runner.
struct Measurement {
    KernelConfig config;
    TimingMethod method = TimingMethod::InductorAutotune;
    std::optional<double> timeMs;
    MeasureStatus status = MeasureStatus::Ok;
    std::string error;
};

/// What one timing method gave for one candidate.
struct Timing {
    TimingMethod method = TimingMethod::InductorAutotune;
    std::optional<double> timeMs;
    MeasureStatus status = MeasureStatus::Ok;
    std::string error;
};

/// One candidate of a problem with its timings, at most one per method. A candidate without
/// timings was not measured (a ranking request).
struct Candidate {
    KernelConfig config;
    std::vector<Timing> timings;

    /// The successful time of `method`, if there is one.
    std::optional<double> timeMs(TimingMethod method) const;
    const Timing *timing(TimingMethod method) const;
    /// The first failure's text (or its status), empty when every timing succeeded.
    std::string error() const;
    /// The error of a timing whose output failed the check (kWrongResultError), empty if none did.
    std::string wrongResult() const;
    /// Its rows for the store.
    std::vector<Measurement> measurements() const;
};

/// One time of a whole-op baseline of a problem: the op compiled by plain `torch.compile`
/// ("default") or by max-autotune ("max_autotune", whose pick is one of the candidates).
struct BaselineTiming {
    static constexpr const char *kPlain = "default";            ///< plain torch.compile's function
    static constexpr const char *kMaxAutotune = "max_autotune"; ///< max-autotune's function

    std::string baseline; ///< kPlain or kMaxAutotune
    TimingMethod method = TimingMethod::GraphWarm;
    double timeMs = 0;
    std::optional<double> compileS;   ///< the baseline's compile seconds; nullopt: unknown
    std::optional<KernelConfig> pick; ///< the candidate max-autotune chose, when known
};

/// A problem with the candidates measured (or to be ranked) for it: one line of problem JSON.
struct ProblemRecord {
    GemmProblem problem;
    std::vector<Candidate> candidates;
    std::vector<BaselineTiming> baselines;
    std::string error;                               ///< set when the whole problem failed
    nlohmann::json extra = nlohmann::json::object(); ///< unknown keys, kept verbatim

    /// Files a store row under the last candidate when it has the row's config, else under a new
    /// candidate: rows of one config must come together.
    void add(const Measurement &m);
    /// Rows of all candidates.
    size_t measurementCount() const;
    /// The baseline `name`'s timing by `method`, or null when the record has none.
    const BaselineTiming *baseline(std::string_view name, TimingMethod method) const;
};

} // namespace diode
