#include "diode/analysis/decisionevaluation.h"

#include "diode/infer/modelpackage.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

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

// The fields of the figures as JSON (diode eval, train-decisions' report, a package's manifest):
// written and read here only.
constexpr const char *kKernels = "kernels", *kFixed = "fixed", *kWithin3 = "within_3_percent_of_fastest",
                     *kSlowerThanDefault = "over_10_percent_slower_than_default",
                     *kFailedChosen = "failed_configs_chosen", *kNotMeasuredPicks = "picks_not_measured",
                     *kDefaultTuned = "default_tuned_at_first_run", *kTunedKept = "tuned_default_kept",
                     *kPickOverDefault = "geomean_pick_over_default",
                     *kFastestOverDefault = "geomean_fastest_over_default";
constexpr const char *kSites = "sites", *kDecomposed = "decomposed", *kFasterForm = "faster_form_chosen",
                     *kSlowerThanLibrary = "over_10_percent_slower_than_library",
                     *kPickOverLibrary = "geomean_pick_over_library",
                     *kFasterOverLibrary = "geomean_faster_over_library";
constexpr const char *kAllFamilies = "all"; // the pooled figures beside each family's
constexpr const char *kNotMeasured = "sites_of_ops_not_measured";
constexpr const char *kHeldOut = "held_out_by_family"; // in each model of the manifest's "decisions"

int countField(const nlohmann::json &j, const char *key, const std::string &where) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer() || it->get<long long>() < 0)
        throw InvalidInput(fmt::format("{}: \"{}\" must be a count", where, key));
    return int(it->get<long long>());
}

double ratioField(const nlohmann::json &j, const char *key, const std::string &where) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0)
        throw InvalidInput(fmt::format("{}: \"{}\" must be a non-negative number", where, key));
    return it->get<double>();
}

// The model families the lines come from, kernels' and sites' together.
std::set<std::string> familiesOf(const DecisionData &data) {
    std::set<std::string> families;
    for (const auto &k : data.kernels)
        families.insert(k.family);
    for (const auto &s : data.sites)
        families.insert(s.family);
    return families;
}

// Each family held out in turn, as JSON (family -> figures, "all" -> pooled) and the pooled figures.
struct HeldOut {
    nlohmann::json json;
    KernelConfigEvaluation kernels;
    FormEvaluation forms;
};
HeldOut heldOutByFamily(const DecisionData &data, const DecisionTrainOptions &o);

} // namespace

nlohmann::json KernelConfigEvaluation::toJson() const {
    return {{kKernels, kernels},
            {kFixed, fixed},
            {kWithin3, kernels ? double(withinThreePercent) / kernels : 0.0},
            {kSlowerThanDefault, slowerThanDefault},
            {kFailedChosen, failedChosen},
            {kNotMeasuredPicks, notMeasured},
            {kDefaultTuned, defaultTuned},
            {kTunedKept, tunedKept},
            {kPickOverDefault, geomeanPickOverDefault},
            {kFastestOverDefault, geomeanBestOverDefault}};
}

KernelConfigEvaluation KernelConfigEvaluation::fromJson(const nlohmann::json &j, const std::string &where) {
    if (!j.is_object())
        throw InvalidInput(fmt::format("{}: must be an object", where));
    KernelConfigEvaluation e;
    e.kernels = countField(j, kKernels, where);
    e.fixed = countField(j, kFixed, where);
    e.withinThreePercent = int(std::lround(ratioField(j, kWithin3, where) * e.kernels));
    e.slowerThanDefault = countField(j, kSlowerThanDefault, where);
    e.failedChosen = countField(j, kFailedChosen, where);
    e.notMeasured = j.contains(kNotMeasuredPicks) ? countField(j, kNotMeasuredPicks, where) : 0;
    e.defaultTuned = j.contains(kDefaultTuned) ? countField(j, kDefaultTuned, where) : 0; // older figures
    e.tunedKept = j.contains(kTunedKept) ? countField(j, kTunedKept, where) : 0;
    e.geomeanPickOverDefault = ratioField(j, kPickOverDefault, where);
    e.geomeanBestOverDefault = ratioField(j, kFastestOverDefault, where);
    return e;
}

nlohmann::json FormEvaluation::toJson() const {
    return {{kSites, sites},
            {kDecomposed, decomposed},
            {kFasterForm, sites ? double(faster) / sites : 0.0},
            {kSlowerThanLibrary, slowerThanLibrary},
            {kPickOverLibrary, geomeanPickOverLibrary},
            {kFasterOverLibrary, geomeanBestOverLibrary}};
}

FormEvaluation FormEvaluation::fromJson(const nlohmann::json &j, const std::string &where) {
    if (!j.is_object())
        throw InvalidInput(fmt::format("{}: must be an object", where));
    FormEvaluation e;
    e.sites = countField(j, kSites, where);
    e.decomposed = countField(j, kDecomposed, where);
    e.faster = int(std::lround(ratioField(j, kFasterForm, where) * e.sites));
    e.slowerThanLibrary = countField(j, kSlowerThanLibrary, where);
    e.geomeanPickOverLibrary = ratioField(j, kPickOverLibrary, where);
    e.geomeanBestOverLibrary = ratioField(j, kFasterOverLibrary, where);
    return e;
}

KernelConfigEvaluation evaluateKernelConfigs(const KernelConfigModel &model,
                                             const std::vector<MeasuredKernel> &kernels, double margin) {
    KernelConfigEvaluation e;
    double pickLog = 0, bestLog = 0;
    for (const auto &k : kernels) {
        if (k.defaultMs <= 0 || k.configs.empty())
            continue;
        // The plugin's decision, among the kernel's portfolio, judged by the line's time of its pick.
        const KernelConfigDecision d = decideKernelConfig(model, k.shape, margin);
        double pick = k.defaultMs;
        if (d.fixed) {
            const auto at = std::find(k.configs.begin(), k.configs.end(), d.config);
            if (at == k.configs.end()) {
                ++e.notMeasured;
                continue;
            }
            ++e.fixed;
            if (const auto &t = k.timesMs[size_t(at - k.configs.begin())])
                pick = *t;
            else
                ++e.failedChosen; // counted as the default's time: Inductor would have refused it
        }
        double best = k.defaultMs;
        for (const auto &t : k.timesMs)
            if (t)
                best = std::min(best, *t);
        ++e.kernels;
        e.defaultTuned += k.shape.defaultTuned;
        e.tunedKept += k.shape.defaultTuned && !d.fixed;
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
        if (!model.timesItsLibraryForm(s))
            continue; // its library time is of another library form than the decision writes
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

namespace {

HeldOut heldOutByFamily(const DecisionData &data, const DecisionTrainOptions &o) {
    const auto &formOps = o.formOps;
    nlohmann::json kernels = nlohmann::json::object(), forms = nlohmann::json::object();
    // Pooled over families: each kernel judged by the model that did not see its family.
    KernelConfigEvaluation pooledK;
    FormEvaluation pooledF;
    double kPick = 0, kBest = 0, fPick = 0, fBest = 0;
    for (const auto &family : familiesOf(data)) {
        std::vector<MeasuredKernel> trainK, heldK;
        for (const auto &k : data.kernels)
            (k.family == family ? heldK : trainK).push_back(k);
        std::vector<MeasuredSite> trainS, heldS;
        for (const auto &s : data.sites)
            if (formOps.empty() || std::find(formOps.begin(), formOps.end(), s.site.op) != formOps.end())
                (s.family == family ? heldS : trainS).push_back(s);
        if (!heldK.empty() && !trainK.empty()) {
            const auto e = evaluateKernelConfigs(
                KernelConfigModel::build(trainK, o.kernelNeighbours, o.kernelWeightPower), heldK,
                o.kernelMargin);
            kernels[family] = e.toJson();
            pooledK.kernels += e.kernels, pooledK.fixed += e.fixed,
                pooledK.withinThreePercent += e.withinThreePercent;
            pooledK.slowerThanDefault += e.slowerThanDefault, pooledK.failedChosen += e.failedChosen;
            pooledK.notMeasured += e.notMeasured;
            pooledK.defaultTuned += e.defaultTuned, pooledK.tunedKept += e.tunedKept;
            kPick += std::log(e.geomeanPickOverDefault) * e.kernels;
            kBest += std::log(e.geomeanBestOverDefault) * e.kernels;
        }
        if (!heldS.empty() && !trainS.empty()) {
            const auto e = evaluateForms(
                SmallMFormModel::build(trainS, SmallMFormModel::kNeighbours, formOps), heldS, o.formMargin);
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
    kernels[kAllFamilies] = pooledK.toJson();
    forms[kAllFamilies] = pooledF.toJson();
    return {{{std::string(toString(DecisionKind::KernelConfig)), kernels},
             {std::string(toString(DecisionKind::SmallMForm)), forms}},
            pooledK,
            pooledF};
}

} // namespace

namespace {

// The one GPU a kind of line was measured on: a kernel-config model reads its configurations' waves
// with one SM count, and a form model's ratios are of one GPU's kernels. A line's GPU name and SM
// count are each compared where both lines have them; two GPUs are refused, naming a line of each.
template <typename Line> std::string oneGpu(const std::vector<Line> &lines, const char *what) {
    const Line *named = nullptr, *counted = nullptr;
    for (const Line &l : lines) {
        const Line *other = !l.gpu.empty() && named && l.gpu != named->gpu              ? named
                            : l.smCount > 0 && counted && l.smCount != counted->smCount ? counted
                                                                                        : nullptr;
        if (other)
            throw InvalidInput(fmt::format(
                "{} lines of two GPUs: {} ({} SMs, '{}') and {} ({} SMs, '{}'); a model is of one GPU: train "
                "each GPU's lines apart (from their own files, or stores each GPU's lines were imported "
                "into)",
                what, other->gpu, other->smCount, other->name, l.gpu, l.smCount, l.name));
        if (!named && !l.gpu.empty())
            named = &l;
        if (!counted && l.smCount > 0)
            counted = &l;
    }
    return named ? named->gpu : std::string();
}

} // namespace

TrainedDecisions trainDecisions(const DecisionData &data, const DecisionTrainOptions &o) {
    const std::string kernelGpu = oneGpu(data.kernels, "kernel"), siteGpu = oneGpu(data.sites, "site");
    HeldOut held = heldOutByFamily(data, o);
    TrainedDecisions t{KernelConfigModel::build(data.kernels, o.kernelNeighbours, o.kernelWeightPower),
                       SmallMFormModel::build(data.sites, SmallMFormModel::kNeighbours, o.formOps),
                       std::move(held.json),
                       held.kernels,
                       held.forms,
                       nlohmann::json::object()};
    const std::string kernelKey(toString(DecisionKind::KernelConfig)),
        formKey(toString(DecisionKind::SmallMForm));
    if (t.kernelConfig.kernels() > 0) {
        auto &k = t.section[kernelKey] = t.kernelConfig.toJson();
        k["margin"] = o.kernelMargin;
        k[kHeldOut] = t.heldOut[kernelKey];
    }
    if (t.smallMForm.sites() > 0) {
        auto &f = t.section[formKey] = t.smallMForm.toJson();
        f["margin"] = o.formMargin;
        f[kHeldOut] = t.heldOut[formKey];
    }
    const std::set<std::string> families = familiesOf(data);
    t.section["trained_on"] = {{"gpu", kernelGpu.empty() ? siteGpu : kernelGpu},
                               {"families", families},
                               {"kernels", data.kernels.size()},
                               {"sites", data.sites.size()}};
    if (!kernelGpu.empty() && !siteGpu.empty() && siteGpu != kernelGpu)
        t.section["trained_on"]["sites_gpu"] = siteGpu;
    return t;
}

std::string withDecisions(const std::string &packageBytes, const nlohmann::json &section) {
    nlohmann::json manifest = ModelPackage::fromBytes(packageBytes).manifest();
    manifest["decisions"] = section;
    return ModelPackage::withManifest(packageBytes, manifest);
}

std::vector<std::string> decisionModelsSummary(const nlohmann::json &manifest) {
    if (!manifest.is_object() || !manifest.contains("decisions") || !manifest.at("decisions").is_object())
        return {};
    const auto &d = manifest.at("decisions");
    auto text = [&](const char *pointer) { return manifestText(d, nlohmann::json::json_pointer(pointer)); };
    auto rows = [&](const char *pointer) { // a model's table: a row a measured kernel or site
        const nlohmann::json::json_pointer at(pointer);
        return d.contains(at) && d.at(at).is_array() ? std::to_string(d.at(at).size()) : std::string("n/a");
    };
    std::vector<std::string> lines;
    lines.push_back(fmt::format("from lines of {}{} (model families {})", text("/trained_on/gpu"),
                                d.contains(nlohmann::json::json_pointer("/trained_on/sites_gpu"))
                                    ? ", sites of " + text("/trained_on/sites_gpu")
                                    : std::string(),
                                text("/trained_on/families")));
    if (d.contains("kernel_config")) {
        const nlohmann::json::json_pointer extra("/kernel_config/extra_configs");
        const bool widened = d.contains(extra) && d.at(extra).is_array() && !d.at(extra).empty();
        const nlohmann::json::json_pointer power("/kernel_config/weight_power");
        // Absent: a package written before the field, weighed by plain inverse distance; anything
        // but a number is shown as written (the model refuses it when read).
        const std::string p = !d.contains(power) ? fmt::format("{}", KernelConfigModel::kUnwrittenWeightPower)
                              : d.at(power).is_number() ? fmt::format("{}", d.at(power).get<double>())
                                                        : text("/kernel_config/weight_power");
        lines.push_back(
            fmt::format("kernel configs: {} measured kernels; a prediction of the {} nearest "
                        "measured rows (each weighing 1 / (0.25 + distance)^{}), margin {}{}",
                        rows("/kernel_config/kernels"), text("/kernel_config/neighbours"), p,
                        text("/kernel_config/margin"),
                        widened ? fmt::format("; {} configurations beyond the portfolios, measured on "
                                              "every kernel whose grid holds them",
                                              d.at(extra).size())
                                : std::string()));
    }
    if (d.contains("small_m_form"))
        lines.push_back(fmt::format("small-M forms: {} measured sites of {}; a prediction of the {} nearest, "
                                    "margin {}",
                                    rows("/small_m_form/sites"), text("/small_m_form/ops"),
                                    text("/small_m_form/neighbours"), text("/small_m_form/margin")));
    return lines;
}

std::vector<std::string> decisionLinesCaveats(const nlohmann::json &manifest, const DecisionData &data) {
    std::vector<std::string> caveats;
    if (!manifest.is_object() || !manifest.contains("decisions"))
        return caveats;
    const auto trainedOn = manifest.at("decisions").value("trained_on", nlohmann::json::object());
    if (!trainedOn.is_object())
        return caveats;
    const std::string modelGpu = trainedOn.value("gpu", std::string());
    std::set<std::string> trainedFamilies, gpus, shared;
    if (trainedOn.contains("families") && trainedOn.at("families").is_array())
        for (const auto &f : trainedOn.at("families"))
            if (f.is_string())
                trainedFamilies.insert(f.get<std::string>());
    for (const auto &k : data.kernels) {
        if (!k.gpu.empty())
            gpus.insert(k.gpu);
        if (trainedFamilies.count(k.family))
            shared.insert(k.family);
    }
    const bool otherGpu =
        !modelGpu.empty() && !gpus.empty() && (gpus.size() > 1 || *gpus.begin() != modelGpu);
    if (otherGpu)
        caveats.push_back(
            fmt::format("the kernel lines are of {}; this package's kernel-config model is of {}: "
                        "the figures judge its picks on another GPU",
                        fmt::join(gpus, ", "), modelGpu));
    else if (!shared.empty())
        caveats.push_back(
            fmt::format("the kernel lines are of model families the kernel-config model was built "
                        "from ({}): its figures on them are not held out (diode inspect shows "
                        "each family held out)",
                        fmt::join(shared, ", ")));
    return caveats;
}

std::string heldOutLine(const TrainedDecisions &t) {
    const DecisionFigures k = figuresOf(t.kernelConfigHeldOut, ""), f = figuresOf(t.smallMFormHeldOut, "");
    std::vector<std::string> parts; // a kind without lines says nothing
    if (k.judged || k.notMeasured)
        parts.push_back(
            fmt::format("kernel configs within 3 % of the fastest measured on {:.1f} % of {} kernels, {} "
                        "over 10 % slower than Inductor's default, pick {:.3f}x the default's time "
                        "(fastest {:.3f}x)",
                        100.0 * k.goodShare, k.judged, k.muchSlower, k.pickOverDefault, k.bestOverDefault) +
            (k.defaultTuned
                 ? fmt::format(", {} of the {} whose default Inductor tunes at first run kept at it",
                               k.tunedKept, k.defaultTuned)
                 : std::string()));
    if (f.judged)
        parts.push_back(
            fmt::format("small-M forms: the faster form on {:.1f} % of {} sites, pick {:.3f}x the "
                        "library's time (faster {:.3f}x)",
                        100.0 * f.goodShare, f.judged, f.pickOverDefault, f.bestOverDefault));
    return parts.empty()
               ? std::string("held out by family: nothing to judge (one family, or no measured line)")
               : fmt::format("held out by family: {}", fmt::join(parts, "; "));
}

nlohmann::json DecisionLinesEvaluation::toJson() const {
    nlohmann::json out = nlohmann::json::object();
    if (kernelConfig)
        out[std::string(toString(DecisionKind::KernelConfig))] = kernelConfig->toJson();
    if (smallMForm) {
        auto &f = out[std::string(toString(DecisionKind::SmallMForm))] = smallMForm->toJson();
        f[kNotMeasured] = sitesOfOpsNotMeasured;
        if (sitesOfAnotherLibraryForm)
            f["sites_of_another_library_form"] = sitesOfAnotherLibraryForm;
    }
    return out;
}

DecisionLinesEvaluation evaluateDecisionLines(const DecisionModels &models, const DecisionData &data) {
    DecisionLinesEvaluation out;
    if (models.kernelConfig && !data.kernels.empty())
        out.kernelConfig =
            evaluateKernelConfigs(*models.kernelConfig, data.kernels, models.kernelConfigMargin);
    if (models.smallMForm && !data.sites.empty()) {
        std::vector<MeasuredSite> covered;
        for (const auto &s : data.sites) {
            if (!models.smallMForm->covers(s.site.op))
                ++out.sitesOfOpsNotMeasured;
            else if (!models.smallMForm->timesItsLibraryForm(s))
                ++out.sitesOfAnotherLibraryForm;
            else
                covered.push_back(s);
        }
        out.smallMForm = evaluateForms(*models.smallMForm, covered, models.formMargin);
    }
    return out;
}

DecisionFigures figuresOf(const KernelConfigEvaluation &e, std::string scope) {
    DecisionFigures f;
    f.kind = DecisionKind::KernelConfig;
    f.scope = std::move(scope);
    f.judged = e.kernels;
    f.changed = e.fixed;
    f.goodShare = e.kernels ? double(e.withinThreePercent) / e.kernels : 0.0;
    f.muchSlower = e.slowerThanDefault;
    f.failedChosen = e.failedChosen;
    f.notMeasured = e.notMeasured;
    f.defaultTuned = e.defaultTuned;
    f.tunedKept = e.tunedKept;
    f.pickOverDefault = e.geomeanPickOverDefault;
    f.bestOverDefault = e.geomeanBestOverDefault;
    return f;
}

std::string notMeasuredNote(int notMeasured) {
    if (notMeasured <= 0)
        return {};
    return fmt::format(
        "{} kernel{} left out: the configuration picked for {} has no time in its line (a sample "
        "of the grid was measured, or the GPU's memory stopped that configuration)",
        notMeasured, notMeasured == 1 ? "" : "s", notMeasured == 1 ? "it" : "each");
}

DecisionFigures figuresOf(const FormEvaluation &e, std::string scope) {
    DecisionFigures f;
    f.kind = DecisionKind::SmallMForm;
    f.scope = std::move(scope);
    f.judged = e.sites;
    f.changed = e.decomposed;
    f.goodShare = e.sites ? double(e.faster) / e.sites : 0.0;
    f.muchSlower = e.slowerThanLibrary;
    f.pickOverDefault = e.geomeanPickOverLibrary;
    f.bestOverDefault = e.geomeanBestOverLibrary;
    return f;
}

std::vector<DecisionFigures> heldOutFigures(const nlohmann::json &manifest) {
    std::vector<DecisionFigures> out;
    const auto d = manifest.find("decisions");
    if (d == manifest.end())
        return out;
    // Families in the manifest's (alphabetical) order, the pooled figures last.
    auto add = [&](DecisionKind kind, auto read) {
        const std::string name(toString(kind));
        const auto model = d->find(name);
        if (model == d->end())
            return;
        const auto held = model->find(kHeldOut);
        if (held == model->end())
            return;
        const std::string where = fmt::format("manifest decisions.{}.{}", name, kHeldOut);
        if (!held->is_object())
            throw InvalidInput(fmt::format("{}: must be an object", where));
        for (const auto &[family, figures] : held->items())
            if (family != kAllFamilies)
                out.push_back(figuresOf(read(figures, where + "." + family), family));
        if (held->contains(kAllFamilies))
            out.push_back(figuresOf(read(held->at(kAllFamilies), where + "." + kAllFamilies),
                                    std::string("all families")));
    };
    add(DecisionKind::KernelConfig, KernelConfigEvaluation::fromJson);
    add(DecisionKind::SmallMForm, FormEvaluation::fromJson);
    return out;
}

} // namespace diode
