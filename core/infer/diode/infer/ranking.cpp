#include "ranking.h"

#include "diode/infer/features.h"
#include "diode/infer/problemjson.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace diode {

std::vector<size_t> orderByPrediction(const std::vector<double> &predictedMs) {
    std::vector<size_t> order(predictedMs.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return predictedMs[a] < predictedMs[b]; });
    return order;
}

nlohmann::json rankProblemLine(const ModelPackage &package, const std::string &line,
                               const std::string &where) {
    ProblemRecord rec;
    try {
        rec = parseProblemLine(line, where); // its messages start with `where`
    } catch (const InvalidInput &e) {
        return {{"error", e.what()}};
    }
    // An empty ranking looks like an answer; a line with nothing to rank is one the caller got wrong.
    if (rec.candidates.empty() && !rec.error.empty()) // a problem the sweep failed to measure
        return {{"error", fmt::format("{}: the problem was not measured (the sweep's error: {}); it has no "
                                      "candidates to rank",
                                      where, rec.error)}};
    if (rec.candidates.empty())
        return {
            {"error", fmt::format("{}: the problem has no candidates to rank; give it a 'candidates' list "
                                  "of the kernels to order (docs/FORMATS.md)",
                                  where)}};
    // A candidate the feature schema cannot describe (FeatureSchema::describes: a decompose-K
    // subgraph has no block sizes) is left out of the order and said so; the others are ranked. A
    // held-out line holding one is still a line the model ranks.
    std::vector<KernelConfig> configs;
    std::vector<size_t> scored;
    auto unscored = nlohmann::json::array();
    for (size_t i = 0; i < rec.candidates.size(); ++i) {
        const auto &c = rec.candidates[i].config;
        if (FeatureSchema::describes(c)) {
            scored.push_back(i);
            configs.push_back(c);
            continue;
        }
        std::string why = "the feature schema cannot describe it";
        try {
            FeatureSchema::check(c, fmt::format("candidates[{}]", i));
        } catch (const InvalidInput &e) {
            why = e.what();
        }
        unscored.push_back({{"candidate", i}, {"why", why}});
    }
    if (configs.empty()) // nothing the model can rank: the first candidate says why
        return {{"error",
                 fmt::format("{}: {}{}", where, unscored.front()["why"].get<std::string>(),
                             unscored.size() > 1
                                 ? fmt::format(" (and the other {} candidates cannot be described either)",
                                               unscored.size() - 1)
                                 : std::string())}};
    std::vector<double> ms;
    try {
        ms = package.predictMs(rec.problem, configs); // names the candidate, not the line
    } catch (const InvalidInput &e) {
        return {{"error", fmt::format("{}: {}", where, e.what())}};
    }
    // JSON has no NaN: it would print as null, an answer that looks like one.
    for (size_t i = 0; i < ms.size(); ++i)
        if (!std::isfinite(ms[i]))
            return {{"error",
                     fmt::format("{}: candidates[{}]: the model predicts {} ms (its sums overflow on this "
                                 "input); no ranking",
                                 where, scored[i], std::isnan(ms[i]) ? "NaN" : fmt::format("{}", ms[i]))}};
    auto predicted = nlohmann::json::array();
    for (size_t i = 0, k = 0; i < rec.candidates.size(); ++i)
        predicted.push_back(k < scored.size() && scored[k] == i ? nlohmann::json(ms[k++])
                                                                : nlohmann::json(nullptr));
    std::vector<size_t> order;
    for (size_t k : orderByPrediction(ms))
        order.push_back(scored[k]);
    nlohmann::json out{{"problem", rec.problem.label()}, {"predicted_ms", predicted}, {"order", order}};
    if (!unscored.empty())
        out["unscored"] = std::move(unscored);
    return out;
}

} // namespace diode
