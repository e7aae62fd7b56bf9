#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace diode {

/// One kernel of a model step and what it costs (schema 3): a line of "where the time goes".
struct DemoKernel {
    std::string name;
    std::string category; ///< one of DemoResult::kCategories
    double us = 0;        ///< microseconds per step
};

/// One compile of one case in one mode: seconds to compile, GPU time per call (warm: operands in
/// L2; cold: L2 flushed before each call, schema 2 on), or the error. Schema 3 measures a mode in
/// `processes` processes: the times are then their medians, beside the smallest and largest.
struct DemoTiming {
    std::optional<double> compileS;
    std::optional<double> kernelMs;
    std::string error;
    std::optional<double> kernelColdMs;
    std::optional<std::pair<double, double>> kernelMsSpread; ///< [min, max] over the processes
    std::optional<std::pair<double, double>> compileSSpread;
    int processes = 1;
    std::vector<DemoKernel> breakdown; ///< largest first; empty where not recorded
};

struct DemoCase {
    std::string name;
    std::string kind;                          ///< "gemm", "block" (a model block) or "model"
    std::map<std::string, DemoTiming> results; ///< by mode
};

/// One mode against max-autotune over the cases that have both: higher is better everywhere.
struct DemoModeSummary {
    double compileSpeedupMedian = 0; ///< max-autotune's compile seconds / this mode's, median
    double kernelSpeedupGeomean = 0; ///< max-autotune's kernel time / this mode's, geometric mean
    double kernelSpeedupWorst = 0;   ///< the smallest of those
    int cases = 0;                   ///< cases with both kernel times
};

/// The result of `diode demo` (`python3 -m torch_diode.tools.demo`), schema "diode-demo/3" (a mode
/// measured in several processes: medians and spreads; each model step's kernels by category),
/// "diode-demo/2" (cold kernel times, model blocks) or "diode-demo/1" (docs/FORMATS.md): what the
/// CLI prints as a table and the workbench's Demo page draws.
struct DemoResult {
    std::string schema;
    std::string gpu, torch, createdAt;
    std::vector<std::string> modes;
    std::vector<DemoCase> cases;
    nlohmann::json summary; ///< per mode, against max-autotune

    /// Throws InvalidInput naming the field at fault.
    static DemoResult fromJson(const nlohmann::json &j, const std::string &where);
    static DemoResult load(const std::string &path);
    /// Compile seconds and kernel microseconds per case and mode, then the speed-ups.
    std::string table() const;

    /// Against a reference mode (max-autotune unless given), as a speed-up: higher is better, 1
    /// is the same. NaN where either side has no time. The CLI and the workbench both show these.
    static double compileSpeedup(const DemoCase &c, const std::string &mode,
                                 const std::string &reference = kReference);
    static double kernelSpeedup(const DemoCase &c, const std::string &mode,
                                const std::string &reference = kReference, bool cold = false);
    /// Over the cases of `kind` ("" for all).
    DemoModeSummary summaryOf(const std::string &mode, const std::string &reference = kReference,
                              const std::string &kind = {}, bool cold = false) const;
    /// The case kinds present, in order of first appearance.
    std::vector<std::string> kinds() const;
    size_t caseCount(const std::string &kind) const;
    bool hasColdTimes() const;
    /// Appends the cases of a `diode demo --cases-out` file (one case object a line, as the
    /// model steps of `diode demo --models`; the last line of a name wins, since the demo writes a
    /// case again when it gains modes) and the modes they add. Throws InvalidInput naming the line.
    void appendCases(const std::string &path);
    /// The modes in the order every view shows them: plain torch.compile first (the baseline of a
    /// user who does not autotune), max-autotune second, then the others as the result lists them.
    std::vector<std::string> modesBaselinesFirst() const;
    /// What speed-ups are shown against first: plain torch.compile, else (a result without it)
    /// max-autotune.
    std::string baseline() const;
    static constexpr const char *kReference = "max-autotune";
    static constexpr const char *kPlain = "default"; ///< plain torch.compile
    static constexpr const char *kPlugin =
        "plugin"; ///< the recommended way: import torch_diode, plain torch.compile
    /// The kinds of kernel "where the time goes" sorts a model step's time into, in the order shown.
    static constexpr const char *kCategories[] = {"gemm",      "attention", "reduction",
                                                  "pointwise", "copy",      "other"};
    /// Since this day every timing starts from a flushed L2 (docs/BENCHMARKS.md, "Where a time
    /// starts"); before it the mode timed first could read up to 1.6x faster.
    static constexpr const char *kFlushedTimerSince = "2026-11-27";
    /// Whether the result was measured before kFlushedTimerSince (by its created_at; false when
    /// it does not say).
    bool measuredBeforeFlushedTimer() const;
    /// The sentence that goes with such a result; empty for a later one.
    std::string timerNote() const;
    /// Microseconds per step by category (kCategories' order) of a case's mode; empty without a breakdown.
    static std::vector<std::pair<std::string, double>> timeByCategory(const DemoTiming &t);
    /// How a mode is called where it is shown: "plain torch.compile" for "default", the mode's name
    /// otherwise.
    static std::string modeTitle(const std::string &mode);
};

} // namespace diode
