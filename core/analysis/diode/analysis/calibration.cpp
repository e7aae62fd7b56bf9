#include "calibration.h"

#include "diode/analysis/datasplit.h"

#include <fmt/format.h>

#include <cmath>

namespace diode {

nlohmann::json MarginTrial::toJson() const {
    return {{"margin", margin},
            {"problems", top1.count},
            {"top1_mean", top1.mean},
            {"top1_p10", top1.p10},
            {"picked_non_aten", pickedNonAten},
            {"over_3pct_slower_than_plain_kernel", over3PctSlowerThanPlain}};
}

std::vector<MarginTrial> tryMargins(const ModelPackage &package, const std::vector<TrainingProblem> &problems,
                                    const std::vector<double> &margins) {
    struct Scored {
        const TrainingProblem *p;
        RankedProblem ranked;
    };
    std::vector<Scored> scored;
    for (const auto &p : problems)
        if (p.hasTiming())
            scored.push_back({&p, {p.problem, p.timesMs, {}, package.predictMs(p.problem, p.configs)}});
    std::vector<MarginTrial> out;
    for (const double margin : margins) {
        MarginTrial t;
        t.margin = margin;
        // The plugin's decision with this margin, on the package's GPU.
        SelectorOptions options;
        options.margin = margin;
        Selector selector(package, options);
        const GemmContext gpu = selector.onPackageGpu();
        std::vector<double> eff;
        int slower = 0, compared = 0;
        for (const auto &s : scored) {
            const std::vector<double> decidedBy = policyPredictions(s.ranked);
            const Decision d = selector.decide(s.p->problem, s.p->configs, gpu, &decidedBy);
            const auto pick = d.pick();
            eff.push_back(pickEfficiency(s.ranked, pick));
            const auto &ms = pick ? s.p->timesMs[*pick] : std::nullopt;
            if (!ms) { // the pick failed: the worst outcome
                ++slower;
                ++compared;
                continue;
            }
            t.pickedNonAten += s.p->configs[*pick].kind != "aten";
            if (const auto plainMs = d.plain ? s.p->timesMs[*d.plain] : std::nullopt) {
                ++compared;
                slower += *ms / *plainMs > 1.03;
            }
        }
        t.top1 = Distribution::of(std::move(eff));
        t.over3PctSlowerThanPlain = compared ? double(slower) / compared : 0.0;
        out.push_back(t);
    }
    return out;
}

nlohmann::json Calibration::toJson() const {
    nlohmann::json trialsJson = nlohmann::json::array();
    for (const auto &t : trials)
        trialsJson.push_back(t.toJson());
    return {{"regime", toString(regime)},
            {"margin", margin},
            {"calibrated_on", fmt::format("{} validation and test problems of the training data", problems)},
            {"rule", fmt::format("of the margins within {} of the best top-1 mean, the fewest picks over 3 % "
                                 "slower than plain's kernel (at most {}), then the smallest",
                                 kCalibrationTolerance, kCalibrationTarget)},
            {"test_top1_redrawn", testTop1Redrawn},
            {"trials", trialsJson}};
}

Calibration calibrate(const ModelPackage &package, const Dataset &data) {
    const auto &m = package.manifest();
    const auto split = m.value("/training_data/split"_json_pointer, nlohmann::json::object());
    const auto seed = m.value("/training/seed"_json_pointer, nlohmann::json());
    const std::string fp = m.value("/training_data/fingerprint"_json_pointer, std::string());
    if (!split.is_object() || !seed.is_number_unsigned() || fp.empty())
        throw InvalidInput("the package records no training split (training_data.split, training.seed, "
                           "training_data.fingerprint): it cannot be calibrated on its own problems");
    const size_t nVal = split.value("validation", size_t(0)), nTest = split.value("test", size_t(0)),
                 n = split.value("train", size_t(0)) + nVal + nTest;
    if (data.problems.size() != n)
        throw InvalidInput(
            fmt::format("the data holds {} problems of the package's ops and dtypes with {} times; "
                        "the package trained on {}: not its training data",
                        data.problems.size(), toString(data.method.method), n));
    if (fingerprint(data.problems) != fp)
        throw InvalidInput(
            fmt::format("the data's fingerprint is not the package's ({}): not its training data, "
                        "or measured again since",
                        fp));
    if (nVal + nTest == 0)
        throw InvalidInput("the package's split has no validation or test problems to calibrate on");
    const DataSplit s = DataSplit::byCounts(n, nVal, nTest, seed.get<uint64_t>());
    std::vector<TrainingProblem> test, calib;
    for (size_t i : s.test)
        test.push_back(data.problems[i]);
    for (const auto *part : {&s.validation, &s.test})
        for (size_t i : *part)
            calib.push_back(data.problems[i]);
    Calibration c;
    c.regime = Selector(package, {}).regime(); // the package's own, as every caller of the decision
    c.problems = calib.size();
    c.testTop1Redrawn = tryMargins(package, test, {0.0}).front().top1.mean;
    c.test = test;
    c.testTop1Trainer =
        m.value("/metrics/test_split/model/all/top1_efficiency/mean"_json_pointer, std::nan(""));
    c.trials = tryMargins(
        package, calib, std::vector<double>(std::begin(kCalibrationMargins), std::end(kCalibrationMargins)));
    double best = 0;
    for (const auto &t : c.trials)
        best = std::max(best, t.top1.mean);
    const MarginTrial *chosen = nullptr;
    for (const auto &t : c.trials) {
        if (t.top1.mean < best - kCalibrationTolerance || t.over3PctSlowerThanPlain > kCalibrationTarget)
            continue;
        if (!chosen || t.over3PctSlowerThanPlain < chosen->over3PctSlowerThanPlain)
            chosen = &t; // ties keep the smaller margin: the trials go up
    }
    if (!chosen)
        throw InvalidInput(
            fmt::format("no margin up to {} keeps the picks more than 3 % slower than plain's kernel "
                        "within {} of the calibration problems: the model is not fit to ship",
                        kCalibrationMargins[std::size(kCalibrationMargins) - 1], kCalibrationTarget));
    c.margin = chosen->margin;
    return c;
}

} // namespace diode
