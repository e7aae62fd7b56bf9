#include "diode/analysis/decisionevaluation.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace diode {

namespace {

constexpr double kWithin = 1.03; // "within 3 % of the fastest measured"
constexpr double kSlower = 1.10; // "more than 10 % slower"

double geomean(double logSum, int n) {
    return n ? std::exp(logSum / n) : 1.0;
}

} // namespace

nlohmann::json KernelConfigEvaluation::toJson() const {
    return {{"kernels", kernels},
            {"fixed", fixed},
            {"within_3_percent_of_fastest", kernels ? double(withinThreePercent) / kernels : 0.0},
            {"over_10_percent_slower_than_default", slowerThanDefault},
            {"failed_configs_chosen", failedChosen},
            {"geomean_pick_over_default", geomeanPickOverDefault},
            {"geomean_fastest_over_default", geomeanBestOverDefault}};
}

nlohmann::json FormEvaluation::toJson() const {
    return {{"sites", sites},
            {"decomposed", decomposed},
            {"faster_form_chosen", sites ? double(faster) / sites : 0.0},
            {"over_10_percent_slower_than_library", slowerThanLibrary},
            {"geomean_pick_over_library", geomeanPickOverLibrary},
            {"geomean_faster_over_library", geomeanBestOverLibrary}};
}

KernelConfigEvaluation evaluateKernelConfigs(const KernelConfigModel &model,
                                             const std::vector<MeasuredKernel> &kernels, double margin) {
    KernelConfigEvaluation e;
    double pickLog = 0, bestLog = 0;
    for (const auto &k : kernels) {
        if (k.defaultMs <= 0 || k.configs.empty())
            continue;
        const std::vector<double> pred = model.predictLog2Ratio(k.shape, k.configs);
        const size_t at = size_t(std::min_element(pred.begin(), pred.end()) - pred.begin());
        double best = k.defaultMs;
        for (const auto &t : k.timesMs)
            if (t)
                best = std::min(best, *t);
        double pick = k.defaultMs;
        if (std::exp2(pred[at]) * (1.0 + margin) < 1.0) {
            ++e.fixed;
            if (k.timesMs[at])
                pick = *k.timesMs[at];
            else
                ++e.failedChosen; // counted as the default's time: Inductor would have refused it
        }
        ++e.kernels;
        e.withinThreePercent += pick <= best * kWithin;
        e.slowerThanDefault += pick > k.defaultMs * kSlower;
        pickLog += std::log(pick / k.defaultMs);
        bestLog += std::log(best / k.defaultMs);
    }
    e.geomeanPickOverDefault = geomean(pickLog, e.kernels);
    e.geomeanBestOverDefault = geomean(bestLog, e.kernels);
    return e;
}

FormEvaluation evaluateForms(const SmallMFormModel &model, const std::vector<MeasuredSite> &sites,
                             double margin) {
    FormEvaluation e;
    double pickLog = 0, bestLog = 0;
    for (const auto &s : sites) {
        if (s.libraryMs <= 0 || s.decomposedMs <= 0)
            continue;
        const FormDecision d = decideForm(model, s.site, margin);
        const double pick = d.decompose ? s.decomposedMs : s.libraryMs;
        const double best = std::min(s.libraryMs, s.decomposedMs);
        ++e.sites;
        e.decomposed += d.decompose;
        e.faster += pick == best;
        e.slowerThanLibrary += pick > s.libraryMs * kSlower;
        pickLog += std::log(pick / s.libraryMs);
        bestLog += std::log(best / s.libraryMs);
    }
    e.geomeanPickOverLibrary = geomean(pickLog, e.sites);
    e.geomeanBestOverLibrary = geomean(bestLog, e.sites);
    return e;
}

nlohmann::json evaluateByFamily(const DecisionData &data, double kernelMargin, double formMargin,
                                const std::vector<std::string> &formOps) {
    std::set<std::string> families;
    for (const auto &k : data.kernels)
        families.insert(k.family);
    for (const auto &s : data.sites)
        families.insert(s.family);
    nlohmann::json kernels = nlohmann::json::object(), forms = nlohmann::json::object();
    // Pooled over families: each kernel judged by the model that did not see its family.
    KernelConfigEvaluation pooledK;
    FormEvaluation pooledF;
    double kPick = 0, kBest = 0, fPick = 0, fBest = 0;
    for (const auto &family : families) {
        std::vector<MeasuredKernel> trainK, heldK;
        for (const auto &k : data.kernels)
            (k.family == family ? heldK : trainK).push_back(k);
        std::vector<MeasuredSite> trainS, heldS;
        for (const auto &s : data.sites)
            if (formOps.empty() || std::find(formOps.begin(), formOps.end(), s.site.op) != formOps.end())
                (s.family == family ? heldS : trainS).push_back(s);
        if (!heldK.empty() && !trainK.empty()) {
            const auto e = evaluateKernelConfigs(KernelConfigModel::build(trainK), heldK, kernelMargin);
            kernels[family] = e.toJson();
            pooledK.kernels += e.kernels, pooledK.fixed += e.fixed,
                pooledK.withinThreePercent += e.withinThreePercent;
            pooledK.slowerThanDefault += e.slowerThanDefault, pooledK.failedChosen += e.failedChosen;
            kPick += std::log(e.geomeanPickOverDefault) * e.kernels;
            kBest += std::log(e.geomeanBestOverDefault) * e.kernels;
        }
        if (!heldS.empty() && !trainS.empty()) {
            const auto e = evaluateForms(SmallMFormModel::build(trainS, 4, formOps), heldS, formMargin);
            forms[family] = e.toJson();
            pooledF.sites += e.sites, pooledF.decomposed += e.decomposed, pooledF.faster += e.faster;
            pooledF.slowerThanLibrary += e.slowerThanLibrary;
            fPick += std::log(e.geomeanPickOverLibrary) * e.sites;
            fBest += std::log(e.geomeanBestOverLibrary) * e.sites;
        }
    }
    pooledK.geomeanPickOverDefault = geomean(kPick, pooledK.kernels);
    pooledK.geomeanBestOverDefault = geomean(kBest, pooledK.kernels);
    pooledF.geomeanPickOverLibrary = geomean(fPick, pooledF.sites);
    pooledF.geomeanBestOverLibrary = geomean(fBest, pooledF.sites);
    kernels["all"] = pooledK.toJson();
    forms["all"] = pooledF.toJson();
    return {{"kernel_config", kernels}, {"small_m_form", forms}};
}

} // namespace diode
