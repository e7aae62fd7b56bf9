#include "selectionpolicy.h"

#include "diode/infer/gemmproblem.h"
#include "diode/infer/modelpackage.h"
#include "diode/infer/ranking.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace diode {

std::string_view toString(Regime r) {
    return r == Regime::Cold ? "cold" : "warm";
}

Regime parseRegime(std::string_view text) {
    if (text == "warm")
        return Regime::Warm;
    if (text == "cold")
        return Regime::Cold;
    throw InvalidInput(fmt::format("regime '{}' is neither 'warm' nor 'cold'", text));
}

Regime regimeOf(TimingMethod method) {
    return method == TimingMethod::GraphCold ? Regime::Cold : Regime::Warm;
}

double defaultMargin(Regime regime) {
    return regime == Regime::Cold ? 0.08 : 0.10;
}

double packageMargin(const nlohmann::json &manifest, Regime regime) {
    const auto it = manifest.find(kSelectionPolicyKey);
    if (it == manifest.end())
        return defaultMargin(regime);
    const auto &p = *it;
    const auto r = p.is_object() ? p.find("regime") : p.end();
    const auto m = p.is_object() ? p.find("margin") : p.end();
    if (!p.is_object() || r == p.end() || !r->is_string() || m == p.end() || !m->is_number() ||
        !(m->get<double>() >= 0))
        throw PackageError(fmt::format("manifest: '{}' must be an object with 'regime' (\"warm\" or "
                                       "\"cold\") and 'margin' (a number >= 0); it is {}",
                                       kSelectionPolicyKey, p.dump()));
    Regime calibrated;
    try {
        calibrated = parseRegime(r->get<std::string>());
    } catch (const InvalidInput &e) {
        throw PackageError(fmt::format("manifest: {}.regime: {}", kSelectionPolicyKey, e.what()));
    }
    return calibrated == regime ? m->get<double>() : defaultMargin(regime);
}

void SelectionPolicy::validate() const {
    if (topK < 1)
        throw InvalidInput(fmt::format("policy: top_k must be at least 1, got {}", topK));
    if (!(margin >= 0))
        throw InvalidInput(
            fmt::format("policy: margin must be at least 0 (0: no ATen guard), got {}", margin));
    if (!(threshold >= 1))
        throw InvalidInput(
            fmt::format("policy: performance threshold must be at least 1.0, got {}", threshold));
}

std::optional<size_t> SelectionPolicy::plainCandidate(const std::vector<KernelConfig> &c,
                                                      const std::vector<double> &predictedMs) const {
    std::optional<size_t> plain;
    for (size_t i = 0; i < c.size(); ++i) {
        if (c[i].kind != "aten")
            continue;
        if (c[i].name == plainName)
            return i;
        if (!plain || (!predictedMs.empty() && predictedMs[i] < predictedMs[*plain]))
            plain = i;
    }
    return plain;
}

std::vector<size_t> SelectionPolicy::select(const std::vector<KernelConfig> &c,
                                            const std::vector<double> &predictedMs) const {
    if (predictedMs.size() != c.size())
        throw InvalidInput(
            fmt::format("policy: {} predicted times for {} candidates", predictedMs.size(), c.size()));
    for (size_t i = 0; i < predictedMs.size(); ++i)
        if (!std::isfinite(predictedMs[i]))
            throw InvalidInput(
                fmt::format("candidates[{}]: predicted {} ms; no decision", i, predictedMs[i]));
    if (c.empty())
        return {};
    const std::vector<size_t> order = orderByPrediction(predictedMs);
    const double best = predictedMs[order.front()];
    const auto plain = plainCandidate(c, predictedMs);
    if (margin > 0 && plain && predictedMs[*plain] <= (1.0 + margin) * best)
        return {*plain};
    const double limit = std::isinf(threshold) ? threshold : best * threshold;
    std::vector<size_t> kept;
    for (size_t i = 0; i < order.size() && int(kept.size()) < topK && int(i) < topK; ++i)
        if (predictedMs[order[i]] <= limit)
            kept.push_back(order[i]);
    bool anyAten = false;
    for (size_t i : kept)
        anyAten = anyAten || c[i].kind == "aten";
    if (kept.size() > 1 && !anyAten && plain)
        kept.push_back(*plain);
    return kept;
}

std::optional<size_t> SelectionPolicy::pick(const std::vector<KernelConfig> &c,
                                            const std::vector<double> &predictedMs) const {
    const auto kept = select(c, predictedMs);
    return kept.empty() ? std::nullopt : std::optional<size_t>(kept.front());
}

nlohmann::json SelectionPolicy::toJson() const {
    return {{"top_k", topK},
            {"margin", margin},
            {"performance_threshold",
             std::isinf(threshold) ? nlohmann::json(nullptr) : nlohmann::json(threshold)},
            {"plain", plainName}};
}

} // namespace diode
