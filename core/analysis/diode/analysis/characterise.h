#pragma once

#include "diode/infer/measurement.h"
#include "diode/infer/modelpackage.h"
#include "diode/sweep/sweepplan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace diode {

/// Active selection for `diode characterise` (core/train/characterisejob.h): which problems of a
/// pool to measure on a new GPU so that a package transferred from another GPU learns the most
/// per measured problem. No LibTorch: it reads the start package with the Eigen reader.

/// One problem of the pool and the candidates measured (or to be measured) for it.
struct PoolProblem {
    GemmProblem problem;
    std::vector<KernelConfig> candidates; ///< those the feature schema describes (FeatureSchema::describes)
};

/// The problems to choose from, each once, in the order first read.
struct Pool {
    std::string source;
    std::vector<PoolProblem> problems;
    std::string searchSpace = "DEFAULT"; ///< of the pool's lines or plan, for the inductor worker
    /// For the cpu backend: the plan's tile grid as a plan's "cpu" object, to sweep the same tiles.
    nlohmann::json cpuGrid;
    int repeats = 5;       ///< cpu backend: the pool plan's repeats
    double timeoutS = 600; ///< the pool plan's timeout_s
};

/// Reads a pool: a store (.db, every problem of every run), problem JSON lines (.jsonl, .ndjson),
/// or a sweep plan (.json; its cpu tile grid is every problem's candidate list, so only for the
/// cpu backend). Problems are kept once, with the candidates of their first record. Throws
/// InvalidInput naming the file when it holds no problem with two or more candidates the
/// model can describe: selection ranks candidates, and a pool without them cannot be ranked.
Pool loadPool(const std::string &path);

/// How far the networks of an ensemble disagree about one problem: for each member, the regret
/// of the ensemble's pick under that member's predictions, ln(member's time of the ensemble's
/// pick / member's fastest time); 0 when every member agrees the pick is fastest.
struct Disagreement {
    double mean = 0; ///< over the members
    double max = 0;
};
/// `members` are `ensemble.member(i)` for every i (made once by the caller).
Disagreement disagreement(const ModelPackage &ensemble, const std::vector<ModelPackage> &members,
                          const GemmProblem &problem, const std::vector<KernelConfig> &candidates);

/// The shape a weight gives a GEMM: (op, dtype, N, K). The same weight meets many token counts M,
/// so problems sharing it are common in real models.
std::string weightShapeKey(const GemmProblem &problem);
/// The kind the selection spreads over: "op dtype".
std::string problemKind(const GemmProblem &problem);

/// A pool problem with what the selection reads of it.
struct ScoredProblem {
    size_t pool = 0; ///< index into Pool::problems
    Disagreement disagreement;
    int64_t commonness = 0; ///< pool problems with the same weightShapeKey, itself included
    double score = 0;       ///< disagreement.mean x commonness
};
/// Every pool problem scored with the start package.
std::vector<ScoredProblem> scorePool(const Pool &pool, const ModelPackage &start);

struct SelectionOptions {
    size_t count = 200;
    uint64_t seed = 1; ///< breaks ties between equal scores, the same way for the same seed
    /// Each kind (op, dtype) of the pool gets at least this share of `count` divided among the
    /// kinds (at least one problem each, as far as `count` allows), so a model unsure of one kind
    /// does not have every measurement spent on it.
    double minKindShare = 0.25;
};

/// One chosen problem and why.
struct Choice {
    ScoredProblem scored;
    std::string why; ///< "score 0.031 (disagreement 0.012 x 3 shapes alike)", "spread: ..."
};

/// The chosen problems, highest score first (so a deadline cuts the least informative), each
/// pool problem at most once. Deterministic for the same scores and seed. Throws InvalidInput
/// when nothing can be chosen (count 0, an empty pool).
std::vector<Choice> chooseProblems(const Pool &pool, const std::vector<ScoredProblem> &scored,
                                   const SelectionOptions &options);

/// The sweep plan that measures the chosen problems in their order with `backend` ("cpu",
/// "inductor"), in the plan format (docs/PLANS.md) so a resumed run reads it back from the
/// store like any other. Throws InvalidInput for a cpu sweep of a pool without a tile grid.
SweepPlan characterisePlan(const Pool &pool, const std::vector<Choice> &chosen, const std::string &backend);

} // namespace diode

namespace diode {

/// The package `diode characterise` starts from on a GPU when none is named: the plugin's own
/// choice (packagechoice.h defaultPackage, warm regime) among the user's installed packages
/// (pluginModelDirectory) and the shipped ones. `why` is one line: which package and why it
/// serves (the same GPU, or the nearest of a similar one), or why there is none.
struct StartPackage {
    std::string path; ///< empty when none serves
    std::string why;
};
StartPackage nearestStartPackage(const std::string &gpu, int smCount = 0);

} // namespace diode
