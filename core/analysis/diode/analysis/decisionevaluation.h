#pragma once

#include "diode/infer/decision.h"
#include "diode/infer/decisionmodel.h"

#include <nlohmann/json.hpp>

#include <optional>
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
    /// Kernels left out of the figures: the decision fixed a configuration the line has no time of (a
    /// line holding a sample of the grid rather than the portfolio, or one the GPU's memory stopped).
    int notMeasured = 0;
    /// Kernels whose default Inductor tunes at first run (TritonKernelShape::defaultTuned), and those of
    /// them the decision kept at the default: benchmarked in every compile that misses Inductor's autotune
    /// cache. 0 for lines older than the field.
    int defaultTuned = 0, tunedKept = 0;
    double geomeanPickOverDefault = 1;
    double geomeanBestOverDefault = 1;
    nlohmann::json toJson() const;
    /// Reads toJson()'s object back; throws InvalidInput naming `where` and the field.
    static KernelConfigEvaluation fromJson(const nlohmann::json &j, const std::string &where);
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
    static FormEvaluation fromJson(const nlohmann::json &j, const std::string &where);
};

KernelConfigEvaluation evaluateKernelConfigs(const KernelConfigModel &model,
                                             const std::vector<MeasuredKernel> &kernels, double margin);
FormEvaluation evaluateForms(const SmallMFormModel &model, const std::vector<MeasuredSite> &sites,
                             double margin);

/// How the decision models are built from lines and judged: train-decisions' options, the
/// defaults characterise uses.
struct DecisionTrainOptions {
    double kernelMargin = kDefaultKernelConfigMargin;
    double formMargin = kDefaultFormMargin;
    int kernelNeighbours = KernelConfigModel::kNeighbours;      ///< KernelConfigModel::build's
    double kernelWeightPower = KernelConfigModel::kWeightPower; ///< KernelConfigModel::build's
    /// The ops the form model is built from (empty: all); sites of other ops are not judged.
    std::vector<std::string> formOps;
};

/// The decision models built from measured kernel and site lines, with their figures held out by
/// family and the manifest section that carries them (manifest "decisions", docs/PACKAGE.md).
struct TrainedDecisions {
    KernelConfigModel kernelConfig;
    SmallMFormModel smallMForm;
    /// Each family held out in turn, models built from the other families' lines: {"kernel_config":
    /// {family: KernelConfigEvaluation, ..., "all": pooled}, "small_m_form": {...}}.
    nlohmann::json heldOut;
    KernelConfigEvaluation kernelConfigHeldOut; ///< all families pooled
    FormEvaluation smallMFormHeldOut;
    nlohmann::json section; ///< a kind without data is absent from it
};
/// Kernel lines must come from one GPU, and site lines from one (it may be another: a form model
/// can be borrowed); lines of two are refused, naming one of each (InvalidInput).
TrainedDecisions trainDecisions(const DecisionData &data, const DecisionTrainOptions &options = {});

/// A package's bytes with `section` as its manifest's "decisions" (what train-decisions and
/// characterise write); throws PackageError when `packageBytes` is no package.
std::string withDecisions(const std::string &packageBytes, const nlohmann::json &section);

/// Both models' figures with each family held out, in one line ("held out by family: kernel configs
/// within 3 % ..."): what train-decisions and characterise print.
std::string heldOutLine(const TrainedDecisions &t);

/// A package's decisions beside the GEMM kernel judged on measured kernel and site lines, with the
/// package's own margins: what `diode eval --decision-lines` prints and the Validate page's
/// Decisions tab shows. A kind is absent when the package has no model of it or the lines no
/// measurement for it; sites of ops the form model was not measured for keep the library kernel
/// in the plugin and are counted apart, not judged, and so are sites whose line timed another
/// library form than the one the package's decision writes (SmallMFormModel::timesItsLibraryForm).
struct DecisionLinesEvaluation {
    std::optional<KernelConfigEvaluation> kernelConfig;
    std::optional<FormEvaluation> smallMForm;
    size_t sitesOfOpsNotMeasured = 0;
    size_t sitesOfAnotherLibraryForm = 0;
    nlohmann::json toJson() const;
};
DecisionLinesEvaluation evaluateDecisionLines(const DecisionModels &models, const DecisionData &data);

/// What a package's decision models were built from, a line each ("from lines of NVIDIA H200
/// (model families ...)", "kernel configs: 219 measured kernels; ...", "small-M forms: ..."):
/// what `diode inspect` prints and the Validate page's Decisions tab shows. Empty when the package
/// has none.
std::vector<std::string> decisionModelsSummary(const nlohmann::json &manifest);

/// What figures on `data` are not, said before they are read: lines of another GPU than the
/// models', or of model families the models were trained on (on the same GPU: in-sample, not held
/// out). Empty when neither holds; `diode eval --decision-lines` and the Decisions tab say them.
std::vector<std::string> decisionLinesCaveats(const nlohmann::json &manifest, const DecisionData &data);

/// One decision kind's figures on one scope, as a table shows them side by side for both kinds.
struct DecisionFigures {
    DecisionKind kind = DecisionKind::KernelConfig;
    std::string scope; ///< the model family held out, "all families", or the lines judged
    int judged = 0;    ///< kernels or sites
    int changed = 0;   ///< given a configuration / decomposed
    /// Kernel configs: the pick within 3 % of the fastest measured; forms: the faster form picked.
    double goodShare = 0;
    int muchSlower = 0;   ///< the pick more than 10 % slower than Inductor's default / the library kernel
    int failedChosen = 0; ///< kernel configs only
    int notMeasured = 0;  ///< kernel configs only: picks the lines hold no time of, left out of `judged`
    /// Kernel configs only: judged kernels whose default Inductor tunes at first run, and those of them
    /// kept at it (KernelConfigEvaluation::defaultTuned, tunedKept).
    int defaultTuned = 0, tunedKept = 0;
    double pickOverDefault = 1, bestOverDefault = 1; ///< geometric means; forms: over the library kernel
};
DecisionFigures figuresOf(const KernelConfigEvaluation &e, std::string scope);
/// What `notMeasured` kernels left out of kernel-config figures means, in the words the CLI and the
/// workbench show ("" for none).
std::string notMeasuredNote(int notMeasured);
DecisionFigures figuresOf(const FormEvaluation &e, std::string scope);
/// The figures a package was trained with, each family held out in turn and then all of them
/// pooled (its manifest's "decisions", as `diode train-decisions` writes them); empty when the
/// package has no decision models. Throws InvalidInput naming the field of a malformed section.
std::vector<DecisionFigures> heldOutFigures(const nlohmann::json &manifest);

} // namespace diode
