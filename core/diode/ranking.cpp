#include "ranking.h"

#include "problemjson.h"

#include <algorithm>
#include <numeric>

namespace diode {

std::vector<size_t> orderByPrediction(const std::vector<double> &predictedMs)
{
    std::vector<size_t> order(predictedMs.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return predictedMs[a] < predictedMs[b]; });
    return order;
}

nlohmann::json rankProblemLine(const ModelPackage &package, const std::string &line, const std::string &where)
{
    try {
        const auto rec = parseProblemLine(line, where);
        std::vector<KernelConfig> configs;
        configs.reserve(rec.candidates.size());
        for (const auto &m : rec.candidates) configs.push_back(m.config);
        const auto ms = package.predictMs(rec.problem, configs);
        return {{"problem", rec.problem.label()}, {"predicted_ms", ms}, {"order", orderByPrediction(ms)}};
    } catch (const InvalidInput &e) {
        return {{"error", e.what()}};
    }
}

} // namespace diode
