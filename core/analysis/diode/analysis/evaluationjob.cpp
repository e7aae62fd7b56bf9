#include "evaluationjob.h"
#include "diode/analysis/wording.h"

#include "diode/analysis/dataset.h"
#include "diode/analysis/evaluation.h"
#include "diode/infer/shippeddata.h"
#include "diode/store/datamix.h"
#include "diode/store/sqlstatement.h"
#include "diode/store/store.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <numeric>
#include <unistd.h>

namespace diode {

namespace {

std::vector<double> sortedTop1(const std::vector<RankedProblem> &ranked) {
    std::vector<double> e;
    e.reserve(ranked.size());
    for (const auto &r : ranked)
        e.push_back(topKEfficiency(r, 1));
    std::sort(e.begin(), e.end());
    return e;
}

// Inductor's own autotune time of every candidate of `t` (NaN where it has none): what
// max-autotune's benchmark saw, so the candidate it picks. From the store (the first run's time,
// as PredictionTable::fromStore keeps) or from the same problem file.
std::vector<double> autotuneTimes(const PredictionTable &t, Store *store, const std::string &problemsFile) {
    constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> out(t.candidates(), kNaN);
    if (store) {
        if (store->methodCounts()[TimingMethod::InductorAutotune] == 0 || t.problemIds.empty())
            return out;
        std::map<std::pair<int64_t, int64_t>, double> times;
        SqlStatement q(*store, "SELECT problem_id, config_id, time_ms FROM measurements WHERE method = "
                               "'inductor_autotune' AND status = 'ok' AND time_ms IS NOT NULL "
                               "ORDER BY problem_id, config_id, run_id");
        while (q.step())
            times.try_emplace({q.integer(0), q.integer(1)}, q.real(2));
        for (size_t p = 0; p < t.problems.size(); ++p)
            for (uint32_t c = t.start[p]; c < t.start[p + 1]; ++c)
                if (auto it = times.find({t.problemIds[p], t.configIds[size_t(t.configOf[c])]});
                    it != times.end())
                    out[c] = it->second;
        return out;
    }
    Dataset autotuned;
    try {
        autotuned = loadDatasetJsonl(problemsFile, TimingMethod::InductorAutotune);
    } catch (const InvalidInput &) { // no Inductor timings in the file: max-autotune did not run
        return out;
    }
    const auto times = firstTimes(autotuned);
    for (size_t p = 0; p < t.problems.size(); ++p) {
        const std::string label = t.problems[p].label();
        for (uint32_t c = t.start[p]; c < t.start[p + 1]; ++c)
            if (auto it = times.find({label, t.configs[size_t(t.configOf[c])].key()}); it != times.end())
                out[c] = it->second;
    }
    return out;
}

// max-autotune's pick on the problems where its benchmark timed candidates: the candidate with
// the smallest Inductor time, judged by the table's measured times. `problemOf` gets the table's
// index of each problem returned.
std::vector<RankedProblem> rankByAutotune(const PredictionTable &t, const std::vector<double> &autotuneMs,
                                          std::vector<size_t> &problemOf) {
    std::vector<RankedProblem> all = rankTable(t, autotuneMs, false), out;
    for (size_t p = 0; p < t.problems.size(); ++p)
        if (std::any_of(autotuneMs.begin() + t.start[p], autotuneMs.begin() + t.start[p + 1],
                        [](double ms) { return !std::isnan(ms); })) {
            out.push_back(std::move(all[p]));
            problemOf.push_back(p);
        }
    return out;
}

// Speed-up × of `model`'s picks over `baseline`'s (higher is better): per problem the baseline
// pick's time over the model pick's, which is the ratio of their top-1 efficiencies, then the
// geometric mean. `baseline[i]` is problem `problemOf[i]` of `model`.
double geomeanSpeedup(const std::vector<RankedProblem> &model, const std::vector<RankedProblem> &baseline,
                      const std::vector<size_t> &problemOf) {
    double logSum = 0;
    int n = 0;
    for (size_t i = 0; i < baseline.size(); ++i) {
        const double mine = topKEfficiency(model[problemOf[i]], 1), theirs = topKEfficiency(baseline[i], 1);
        if (mine > 0 && theirs > 0) {
            logSum += std::log(mine / theirs);
            ++n;
        }
    }
    return n ? std::exp(logSum / n) : std::numeric_limits<double>::quiet_NaN();
}

// The table with only the problems whose label is in `keep`, candidates and configs as they were.
PredictionTable onlyProblems(const PredictionTable &t, const std::set<std::string> &keep) {
    PredictionTable out;
    out.configs = t.configs;
    out.configIds = t.configIds;
    for (size_t p = 0; p < t.problems.size(); ++p) {
        if (!keep.count(t.problems[p].label()))
            continue;
        out.problems.push_back(t.problems[p]);
        if (!t.problemIds.empty())
            out.problemIds.push_back(t.problemIds[p]);
        for (uint32_t c = t.start[p]; c < t.start[p + 1]; ++c) {
            out.configOf.push_back(t.configOf[c]);
            out.measuredMs.push_back(t.measuredMs[c]);
        }
        out.start.push_back(uint32_t(out.configOf.size()));
    }
    return out;
}

// Refused before any work: a read-only file or folder would only fail at the end.
void checkStoreWritable(const std::string &db) {
    namespace fs = std::filesystem;
    shipped::refuseWritingShipped(db, "database");
    const fs::path p(db);
    const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    if (::access(db.c_str(), W_OK) != 0 || ::access(dir.c_str(), W_OK) != 0)
        throw InvalidInput(fmt::format("cannot store predictions in '{}': it (or its folder) is read-only; "
                                       "copy the database somewhere writable, or evaluate without "
                                       "--store-predictions",
                                       db));
}

int64_t storeTablePredictions(Store &store, const std::string &packagePath, const nlohmann::json &manifest,
                              const PredictionTable &table, const std::vector<double> &predictedMs) {
    Store::Transaction tx(store);
    const int64_t model = store.addModel(manifest.value("name", ""), packagePath, manifest);
    for (size_t i = 0; i < table.problems.size(); ++i)
        for (uint32_t c = table.start[i]; c < table.start[i + 1]; ++c)
            store.insertPrediction(model, table.problems[i], table.configs[size_t(table.configOf[c])],
                                   predictedMs[c]);
    tx.commit();
    return model;
}

// A model's predictions beside data of another GPU or timing method would be read by Validate
// as if they were made for it.
void refuseMixedPredictions(Store &store, const ModelPackage &pkg, const std::string &db) {
    DataOrigin added;
    const auto &manifest = pkg.manifest();
    if (const auto hw = manifest.find("hardware"); hw != manifest.end() && hw->is_object())
        if (const auto gpu = hw->find("gpu"); gpu != hw->end() && gpu->is_string() && !gpu->empty())
            added.gpus = {gpu->get<std::string>()};
    added.methods = {pkg.timingMethod()};
    const std::string mix = describeMix(dataOrigin(store), added);
    if (!mix.empty())
        throw DataMixRefused(fmt::format("storing {}'s predictions would mix data in {}: {}",
                                         pkg.manifest().value("name", "the model"), db, mix));
}

} // namespace

EvaluationResult runEvaluationJob(const EvaluationJob &job) {
    const auto began = std::chrono::steady_clock::now();
    auto seconds = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    };
    auto status = [&](const std::string &s) {
        if (job.status)
            job.status(s);
    };
    auto stopped = [&] { return job.cancel && job.cancel->load(); };
    EvaluationResult res;
    std::vector<ModelPackage> packages;
    for (const auto &p : job.packages) {
        if (p.empty())
            continue;
        try {
            packages.push_back(ModelPackage::load(p));
        } catch (const PackageError &e) {
            throw PackageError(fmt::format("cannot load model {}: {}", p, e.what()));
        }
    }
    if (packages.empty())
        throw InvalidInput("no model package chosen");
    const bool fromFile = !job.problemsFile.empty();
    if (job.storePredictions && fromFile)
        throw InvalidInput("predictions are stored only in a database, not beside a problem file");
    if (!fromFile && !std::filesystem::exists(job.db))
        throw InvalidInput(fmt::format("database '{}' does not exist", job.db));
    if (job.storePredictions)
        checkStoreWritable(job.db);

    auto table = std::make_shared<PredictionTable>();
    std::unique_ptr<Store> store;
    std::vector<HeldOutProblems> held; // per package, of a database
    PredictionTable full;              // of a database, before the held-out cut (what is stored)
    if (fromFile) {
        status(fmt::format("Reading problems from {}…", job.problemsFile));
        auto data = loadDatasetJsonl(job.problemsFile, job.method);
        res.method = data.method;
        *table = PredictionTable::fromProblems(data.problems);
        res.problemsBeforeCut = table->problems.size();
        res.heldOut.why = "problems from a file";
    } else {
        status(fmt::format("Reading measurements from {}…", job.db));
        store = std::make_unique<Store>(job.db, Store::Mode::ReadOnly);
        if (job.storePredictions && !job.allowMixedData)
            refuseMixedPredictions(*store, packages.front(), job.db);
        res.method = chooseTimingMethod(job.method, store->methodCounts());
        *table = PredictionTable::fromStore(*store, res.method.method);
        for (const auto &pkg : packages)
            held.push_back(heldOutProblems(*store, pkg.manifest()));
        res.heldOut = held.front();
        res.problemsBeforeCut = table->problems.size();
        if (job.storePredictions)
            full = *table;
        if (job.heldOutOnly && held.front().known) {
            *table = onlyProblems(*table, held.front().labels);
            res.heldOutOnly = true;
        }
    }
    const std::string firstName = packages.front().manifest().value("name", "the model");
    if (table->problems.empty() && res.heldOutOnly)
        throw InvalidInput(
            fmt::format("none of the problems {} never trained on has {} here; measure on every "
                        "problem of the database instead (diode eval --all; 'all problems' on "
                        "the Validate page)",
                        firstName, res.method.describe()));
    if (table->problems.empty())
        throw InvalidInput(fmt::format("no problems with {} to evaluate", res.method.describe()));
    res.table = table;
    if (stopped())
        return res.cancelled = true, res;
    for (uint32_t i = 0; i < table->candidates(); ++i)
        if (!std::isnan(table->measuredMs[i]))
            res.byMeasured.push_back(i);
    std::sort(res.byMeasured.begin(), res.byMeasured.end(),
              [&](uint32_t a, uint32_t b) { return table->measuredMs[a] < table->measuredMs[b]; });

    const int steps = int(packages.size()) + 2;
    std::vector<std::unique_ptr<Selector>> selectors; // per package: the decision the plugin makes
    for (size_t k = 0; k < packages.size(); ++k) {
        ModelEvaluation m;
        const auto &pkg = packages[k];
        m.packagePath = job.packages[k];
        m.name = packageName(m.packagePath); // as every list names it (wording.h)
        m.trainedOn = pkg.timingMethod();
        SelectorOptions options;
        options.margin = job.margin;
        selectors.push_back(std::make_unique<Selector>(pkg, options));
        m.policy = selectors.back()->policy();
        const int64_t stored = store ? findStoredModel(*store, pkg.manifest()) : 0;
        if (stored) {
            status(fmt::format("Reading {}'s predictions from the database…", m.name));
            m.predictedMs = storedPredictions(*store, stored, *table);
            m.source = fmt::format("predictions stored in the database (model {})", stored);
        } else {
            status(fmt::format("Predicting with {}…", m.name));
            m.predictedMs = computePredictions(pkg, *table, job.cancel);
            m.source = "predicted with the package";
        }
        if (stopped())
            return res.cancelled = true, res;
        if (k < held.size() && held[k].known) {
            m.trainedOnShown = 0;
            for (const auto &p : table->problems)
                m.trainedOnShown += held[k].labels.count(p.label()) ? 0 : 1;
        } else {
            m.unknownWhy = k < held.size() ? held[k].why : std::string("problems from a file");
        }
        res.models.push_back(std::move(m));
        if (job.progress)
            job.progress(int(k) + 1, steps);
    }
    res.seconds = seconds();
    if (job.predicted)
        job.predicted(res);
    status("Ranking against the baselines…");
    const auto aten = rankTableWithBaseline(*table, "aten");
    res.aten = evaluate(aten);
    res.atenTop1 = sortedTop1(aten);
    std::vector<size_t> autotunedOf, every(table->problems.size());
    std::iota(every.begin(), every.end(), size_t(0));
    const auto autotuned =
        rankByAutotune(*table, autotuneTimes(*table, store.get(), job.problemsFile), autotunedOf);
    if (!autotuned.empty()) {
        res.maxAutotune = evaluate(autotuned);
        res.maxAutotuneTop1 = sortedTop1(autotuned);
    }
    for (size_t k = 0; k < res.models.size(); ++k) {
        auto &m = res.models[k];
        const auto ranked = rankTable(*table, m.predictedMs, true);
        m.metrics = evaluate(ranked);
        m.breakdown = evaluateWithBreakdown(ranked);
        m.top1 = sortedTop1(ranked);
        const auto byPolicy = rankByDecision(*table, ranked, *selectors[k]);
        m.policyMetrics = evaluate(byPolicy);
        m.policyTop1 = sortedTop1(byPolicy);
        m.speedupVsPlain = geomeanSpeedup(ranked, aten, every);
        m.speedupVsMaxAutotune = geomeanSpeedup(ranked, autotuned, autotunedOf);
        if (stopped())
            return res.cancelled = true, res;
    }
    const auto first = rankTableWithBaseline(*table, "first-config");
    res.firstConfig = evaluate(first);
    res.defaultTop1 = sortedTop1(first);
    res.random = evaluate(rankTableWithBaseline(*table, "random"));
    if (stopped())
        return res.cancelled = true, res;

    if (job.storePredictions) {
        status(fmt::format("Storing {}'s predictions in {}…", firstName, job.db));
        const auto &pkg = packages.front();
        const bool cut = res.heldOutOnly;
        const std::vector<double> predicted =
            cut ? computePredictions(pkg, full, job.cancel) : res.models[0].predictedMs;
        if (stopped())
            return res.cancelled = true, res;
        store.reset(); // the read-only connection goes before the writer opens the file
        Store writer(job.db);
        res.storedModelId = storeTablePredictions(writer, job.packages.front(), pkg.manifest(),
                                                  cut ? full : *table, predicted);
    }
    if (job.progress)
        job.progress(steps, steps);
    res.complete = true;
    res.seconds = seconds();
    return res;
}

} // namespace diode
