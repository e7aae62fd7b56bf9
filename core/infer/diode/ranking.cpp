#include "ranking.h"

#include "diode/problemjson.h"

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
    if (rec.candidates.empty())
        return {
            {"error", fmt::format("{}: the problem has no candidates to rank; give it a 'candidates' list "
                                  "of the kernels to order (docs/FORMATS.md)",
                                  where)}};
    std::vector<KernelConfig> configs;
    configs.reserve(rec.candidates.size());
    for (const auto &m : rec.candidates)
        configs.push_back(m.config);
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
                                 where, i, std::isnan(ms[i]) ? "NaN" : fmt::format("{}", ms[i]))}};
    return {{"problem", rec.problem.label()}, {"predicted_ms", ms}, {"order", orderByPrediction(ms)}};
}

} // namespace diode
