#include "evaluation.h"
#include "diode/store/store.h"

#include <limits>

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

Dataset inductorBenchmarkData(Store &store, const DatasetFilter &filter) {
    if (store.methodCounts()[TimingMethod::InductorAutotune] == 0)
        return {};
    return loadDataset(store, TimingMethod::InductorAutotune, filter);
}

std::map<std::pair<std::string, std::string>, double> firstTimes(const Dataset &data) {
    std::map<std::pair<std::string, std::string>, double> times;
    for (const auto &p : data.problems)
        for (size_t i = 0; i < p.configs.size(); ++i)
            if (p.timesMs[i])
                times.try_emplace({p.problem.label(), p.configs[i].key()}, *p.timesMs[i]);
    return times;
}

std::vector<RankedProblem> rankByInductorBenchmark(const std::vector<TrainingProblem> &problems,
                                                   const Dataset &benchmarked) {
    const auto times = firstTimes(benchmarked); // as the Validate page's max-autotune row keeps
    std::vector<RankedProblem> out;
    for (const auto &p : problems) {
        const std::string label = p.problem.label();
        RankedProblem r{p.problem, p.timesMs, {}, {}};
        bool ran = false;
        for (const auto &c : p.configs) {
            const auto it = times.find({label, c.key()});
            ran = ran || it != times.end();
            // A candidate the benchmark did not time is ranked last, as rankTable ranks it.
            r.score.push_back(it != times.end() ? it->second : std::numeric_limits<double>::max());
        }
        if (ran)
            out.push_back(std::move(r));
    }
    return out;
}

void addMaxAutotuneBaseline(nlohmann::json &metrics, const std::vector<TrainingProblem> &problems,
                            const Dataset &benchmarked) {
    const auto ranked = rankByInductorBenchmark(problems, benchmarked);
    if (!ranked.empty())
        metrics["baselines"]["max-autotune"] = evaluate(ranked).toJson();
}

} // namespace diode
