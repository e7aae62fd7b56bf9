#include "metrics.h"

#include "diode/infer/splitmix64.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

namespace diode {

Distribution Distribution::of(std::vector<double> v) {
    Distribution d;
    d.count = int64_t(v.size());
    if (v.empty())
        return d;
    std::sort(v.begin(), v.end());
    d.mean = std::accumulate(v.begin(), v.end(), 0.0) / double(v.size());
    d.p10 = quantileOfSorted(v, 0.1);
    d.min = v.front();
    return d;
}

double quantileOfSorted(const std::vector<double> &sorted, double q) {
    return sorted[size_t(std::floor(q * double(sorted.size() - 1)))];
}

std::optional<double> geomeanOfLogs(const std::vector<double> &logs) {
    if (logs.empty())
        return std::nullopt;
    return std::exp(std::accumulate(logs.begin(), logs.end(), 0.0) / double(logs.size()));
}

namespace {

std::vector<size_t> orderByScore(const std::vector<double> &score) {
    std::vector<size_t> idx(score.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return score[a] < score[b]; });
    return idx;
}

std::vector<double> ranks(const std::vector<double> &v) {
    std::vector<size_t> idx(v.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
    std::vector<double> r(v.size());
    for (size_t i = 0; i < idx.size();) {
        size_t j = i;
        while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]])
            ++j;
        for (size_t t = i; t <= j; ++t)
            r[idx[t]] = 0.5 * double(i + j); // average rank of ties
        i = j + 1;
    }
    return r;
}

double pearson(const std::vector<double> &a, const std::vector<double> &b) {
    const double n = double(a.size());
    const double ma = std::accumulate(a.begin(), a.end(), 0.0) / n,
                 mb = std::accumulate(b.begin(), b.end(), 0.0) / n;
    double num = 0, da = 0, db = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        num += (a[i] - ma) * (b[i] - mb);
        da += (a[i] - ma) * (a[i] - ma);
        db += (b[i] - mb) * (b[i] - mb);
    }
    return da > 0 && db > 0 ? num / std::sqrt(da * db) : 0.0;
}

} // namespace

double topKEfficiency(const RankedProblem &p, int k) {
    double best = INFINITY;
    for (const auto &t : p.measuredMs)
        if (t)
            best = std::min(best, *t);
    if (!std::isfinite(best))
        return 0;
    const auto order = orderByScore(p.score);
    double picked = INFINITY;
    for (size_t i = 0; i < order.size() && int(i) < k; ++i)
        if (p.measuredMs[order[i]])
            picked = std::min(picked, *p.measuredMs[order[i]]);
    return std::isfinite(picked) ? best / picked : 0.0;
}

SelectorMetrics evaluate(const std::vector<RankedProblem> &problems) {
    SelectorMetrics m;
    std::vector<double> e1, e3, e5, rho;
    double absPct = 0, sqLog = 0;
    int64_t timed = 0;
    for (const auto &p : problems) {
        if (std::none_of(p.measuredMs.begin(), p.measuredMs.end(), [](auto &t) { return t.has_value(); }))
            continue;
        ++m.problems;
        e1.push_back(topKEfficiency(p, 1));
        e3.push_back(topKEfficiency(p, 3));
        e5.push_back(topKEfficiency(p, 5));
        m.hit1 += e1.back() >= 1.0;
        m.hit3 += e3.back() >= 1.0;
        m.hit5 += e5.back() >= 1.0;
        std::vector<double> meas, score;
        for (size_t i = 0; i < p.measuredMs.size(); ++i)
            if (p.measuredMs[i]) {
                meas.push_back(*p.measuredMs[i]);
                score.push_back(p.score[i]);
                if (!p.predictedMs.empty()) {
                    absPct += std::abs(p.predictedMs[i] - *p.measuredMs[i]) / *p.measuredMs[i];
                    const double d = std::log(p.predictedMs[i]) - std::log(*p.measuredMs[i]);
                    sqLog += d * d;
                    ++timed;
                }
            }
        if (meas.size() >= 3)
            rho.push_back(pearson(ranks(meas), ranks(score)));
    }
    m.top1 = Distribution::of(e1);
    m.top3 = Distribution::of(e3);
    m.top5 = Distribution::of(e5);
    if (m.problems) {
        m.hit1 /= double(m.problems);
        m.hit3 /= double(m.problems);
        m.hit5 /= double(m.problems);
    }
    m.spearman = rho.empty() ? 0 : std::accumulate(rho.begin(), rho.end(), 0.0) / double(rho.size());
    if (timed) {
        m.mape = absPct / double(timed);
        m.rmseLog = std::sqrt(sqLog / double(timed));
    }
    return m;
}

nlohmann::json SelectorMetrics::toJson() const {
    auto dist = [](const Distribution &d) {
        return nlohmann::json{{"mean", d.mean}, {"p10", d.p10}, {"min", d.min}};
    };
    return {{"problems", problems},
            {"top1_efficiency", dist(top1)},
            {"top3_efficiency", dist(top3)},
            {"top5_efficiency", dist(top5)},
            {"top1_hit", hit1},
            {"top3_hit", hit3},
            {"top5_hit", hit5},
            {"spearman", spearman},
            {"mape", mape},
            {"rmse_log", rmseLog}};
}

nlohmann::json evaluateWithBreakdown(const std::vector<RankedProblem> &problems) {
    std::map<std::string, std::vector<RankedProblem>> groups;
    for (const auto &p : problems) {
        groups[fmt::format("op={}", toString(p.problem.op))].push_back(p);
        groups[fmt::format("dtype={}", toString(p.problem.dtype))].push_back(p);
        groups[p.problem.m <= 32 ? "M<=32" : "M>32"].push_back(p);
    }
    nlohmann::json j{{"all", evaluate(problems).toJson()}};
    for (const auto &[k, v] : groups)
        j["by"][k] = evaluate(v).toJson();
    return j;
}

std::vector<double> baselineScores(const std::string &name, const std::vector<KernelConfig> &c,
                                   uint64_t seed) {
    std::vector<double> s(c.size());
    if (name == "aten") {
        for (size_t i = 0; i < c.size(); ++i)
            s[i] = c[i].kind == "aten" ? double(i) : 1e6 + double(i);
    } else if (name == "first-config") {
        for (size_t i = 0; i < c.size(); ++i)
            s[i] = c[i].kind == "triton" ? double(i) : 1e6 + double(i);
    } else {
        SplitMix64 rng(seed);
        for (auto &x : s)
            x = rng.uniform();
    }
    return s;
}

std::vector<double> policyPredictions(const RankedProblem &p) {
    std::vector<double> predicted = p.predictedMs.empty() ? p.score : p.predictedMs;
    for (double &ms : predicted)
        if (std::isnan(ms))
            ms = std::numeric_limits<double>::max();
    return predicted;
}

double pickEfficiency(const RankedProblem &p, std::optional<size_t> pick) {
    double best = INFINITY;
    for (const auto &t : p.measuredMs)
        if (t && *t > 0)
            best = std::min(best, *t);
    if (!std::isfinite(best) || !pick)
        return 0;
    const auto &t = p.measuredMs[*pick];
    return t && *t > 0 ? best / *t : 0.0;
}

} // namespace diode
