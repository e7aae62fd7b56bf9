#pragma once

#include "diode/infer/decisionmodel.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace diode {

/// How the kernel-config decision did on measured kernels it was not built from. Each kernel's
/// decision is taken among the configurations the sweep measured on it (the grid's other points
/// have no time to judge by) and Inductor's default.
struct KernelConfigEvaluation {
    int kernels = 0;
    int fixed = 0;              ///< kernels given a configuration rather than the default
    int withinThreePercent = 0; ///< the pick within 3 % of the fastest measured (default included)
    int slowerThanDefault = 0;  ///< the pick more than 10 % slower than the default
    int failedChosen = 0;       ///< a pick that failed to compile, run or match the default's output
    double geomeanPickOverDefault = 1;
    double geomeanBestOverDefault = 1;
    nlohmann::json toJson() const;
};

/// How the small-M form decision did on measured sites it was not built from.
struct FormEvaluation {
    int sites = 0;
    int decomposed = 0;
    int faster = 0;            ///< the pick was the faster measured form
    int slowerThanLibrary = 0; ///< the pick more than 10 % slower than the library kernel
    double geomeanPickOverLibrary = 1;
    double geomeanBestOverLibrary = 1;
    nlohmann::json toJson() const;
};

KernelConfigEvaluation evaluateKernelConfigs(const KernelConfigModel &model,
                                             const std::vector<MeasuredKernel> &kernels, double margin);
FormEvaluation evaluateForms(const SmallMFormModel &model, const std::vector<MeasuredSite> &sites,
                             double margin);

/// Each family held out in turn: models built from the other families' lines, judged on its own.
/// {"kernel_config": {family: KernelConfigEvaluation, ..., "all": pooled}, "small_m_form": {...}}.
/// `formOps`: the ops the form model is built from (empty: all); sites of other ops are not judged.
nlohmann::json evaluateByFamily(const DecisionData &data, double kernelMargin, double formMargin,
                                const std::vector<std::string> &formOps = {});

} // namespace diode
