#include "evaluation.h"

namespace diode {

std::vector<RankedProblem> rankWith(const ModelPackage &pkg, const std::vector<TrainingProblem> &problems) {
    std::vector<RankedProblem> out;
    for (const auto &p : problems) {
        RankedProblem r{p.problem, p.timesMs, {}, pkg.predictMs(p.problem, p.configs)};
        r.score = r.predictedMs;
        out.push_back(std::move(r));
    }
    return out;
}

std::vector<RankedProblem> rankWithBaseline(const std::string &baseline,
                                            const std::vector<TrainingProblem> &problems) {
    std::vector<RankedProblem> out;
    uint64_t seed = 7;
    for (const auto &p : problems)
        out.push_back({p.problem, p.timesMs, baselineScores(baseline, p.configs, seed++), {}});
    return out;
}

nlohmann::json compareWithBaselines(const std::vector<RankedProblem> &model,
                                    const std::vector<TrainingProblem> &problems) {
    nlohmann::json j{{"model", evaluateWithBreakdown(model)}};
    for (const char *b : {"aten", "first-config", "random"})
        j["baselines"][b] = evaluate(rankWithBaseline(b, problems)).toJson();
    return j;
}

} // namespace diode
