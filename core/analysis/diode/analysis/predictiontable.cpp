#include "predictiontable.h"

#include "diode/infer/datafile.h"

#include "diode/store/sqlstatement.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <future>
#include <limits>
#include <thread>
#include <unordered_map>

namespace diode {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

} // namespace

std::vector<KernelConfig> PredictionTable::configsOf(size_t i) const {
    std::vector<KernelConfig> out;
    out.reserve(start[i + 1] - start[i]);
    for (uint32_t c = start[i]; c < start[i + 1]; ++c)
        out.push_back(configs[size_t(configOf[c])]);
    return out;
}

PredictionTable PredictionTable::fromStore(Store &store, TimingMethod method, const DatasetFilter &filter) {
    PredictionTable t;
    std::unordered_map<int64_t, int32_t> configIndex; // store id -> index, -1 for unmodelled
    {
        SqlStatement q(store, "SELECT id, config_key FROM kernel_configs");
        while (q.step()) {
            auto c = KernelConfig::fromJson(parseJsonBounded(q.text(1), "stored config", kProblemJsonLimits),
                                            "stored config");
            if (!FeatureSchema::describes(c)) {
                configIndex.emplace(q.integer(0), -1);
                continue;
            }
            configIndex.emplace(q.integer(0), int32_t(t.configs.size()));
            t.configs.push_back(std::move(c));
            t.configIds.push_back(q.integer(0));
        }
    }
    std::unordered_map<int64_t, GemmProblem> problems;
    {
        SqlStatement q(store, "SELECT id, " + problemColumns() + " FROM problems");
        while (q.step()) {
            const GemmProblem p = q.problem(1);
            if (filter.accepts(p))
                problems.emplace(q.integer(0), p);
        }
    }
    // The primary key order (problem, config, run, method): one pass, no sort. Every candidate
    // of the problem is kept; only `method`'s successful times count.
    SqlStatement q(store, "SELECT problem_id, config_id, time_ms, status, method FROM measurements "
                          "ORDER BY problem_id, config_id");
    const std::string methodName(toString(method));
    int64_t curProblem = -1, lastConfig = -1;
    bool timed = false;
    auto close = [&] {
        if (curProblem < 0)
            return;
        if (!timed) { // a problem without any timing says nothing about a model: drop it
            t.configOf.resize(t.start.back());
            t.measuredMs.resize(t.start.back());
            t.problems.pop_back();
            t.problemIds.pop_back();
            return;
        }
        t.start.push_back(uint32_t(t.configOf.size()));
    };
    while (q.step()) {
        const int64_t pid = q.integer(0), cid = q.integer(1);
        if (pid != curProblem) {
            close();
            curProblem = -1;
            auto it = problems.find(pid);
            if (it == problems.end())
                continue;
            curProblem = pid;
            lastConfig = -1;
            timed = false;
            t.problems.push_back(it->second);
            t.problemIds.push_back(pid);
        }
        auto c = configIndex.find(cid);
        if (c == configIndex.end() || c->second < 0)
            continue;
        if (cid != lastConfig) { // the config's first row (of any run or method)
            lastConfig = cid;
            t.configOf.push_back(c->second);
            t.measuredMs.push_back(kNaN);
        }
        // Runs come in order: the first run's successful time of the method is kept.
        const bool ok = !q.isNull(2) && q.text(3) == "ok" && q.text(4) == methodName;
        if (ok && std::isnan(t.measuredMs.back()))
            t.measuredMs.back() = q.real(2);
        timed = timed || ok;
    }
    close();
    return t;
}

PredictionTable PredictionTable::fromProblems(const std::vector<TrainingProblem> &problems) {
    PredictionTable t;
    std::unordered_map<std::string, int32_t> index;
    for (const auto &p : problems) {
        t.problems.push_back(p.problem);
        for (size_t i = 0; i < p.configs.size(); ++i) {
            auto [it, added] = index.emplace(p.configs[i].key(), int32_t(t.configs.size()));
            if (added)
                t.configs.push_back(p.configs[i]);
            t.configOf.push_back(it->second);
            t.measuredMs.push_back(p.timesMs[i] ? *p.timesMs[i] : kNaN);
        }
        t.start.push_back(uint32_t(t.configOf.size()));
    }
    return t;
}

std::vector<StoredModel> storedModels(Store &store) {
    std::vector<StoredModel> out;
    SqlStatement q(store,
                   "SELECT m.id, m.name, m.path, m.created_at, m.manifest_json, "
                   "(SELECT count(*) FROM predictions p WHERE p.model_id=m.id) FROM models m ORDER BY m.id");
    while (q.step()) {
        StoredModel m;
        m.id = q.integer(0);
        m.name = q.text(1);
        m.path = q.text(2);
        m.createdAt = q.text(3);
        try {
            m.manifest = parseJsonBounded(q.text(4), "stored manifest", kDocumentLimits);
        } catch (const InvalidInput &) {
            m.manifest = nlohmann::json(nlohmann::json::value_t::discarded);
        }
        m.predictions = q.integer(5);
        out.push_back(std::move(m));
    }
    return out;
}

int64_t findStoredModel(Store &store, const nlohmann::json &manifest) {
    int64_t found = 0;
    for (const auto &m : storedModels(store)) {
        if (m.predictions == 0 || !m.manifest.is_object())
            continue;
        if (m.manifest.value("name", "") == manifest.value("name", "") &&
            m.manifest.value("created_at", "") == manifest.value("created_at", ""))
            found = m.id; // the newest wins
    }
    return found;
}

std::vector<double> storedPredictions(Store &store, int64_t modelId, const PredictionTable &table) {
    std::vector<double> out(table.candidates(), kNaN);
    if (table.problemIds.size() != table.problems.size())
        return out;
    std::unordered_map<int64_t, uint32_t> problemRow;
    for (size_t i = 0; i < table.problemIds.size(); ++i)
        problemRow.emplace(table.problemIds[i], uint32_t(i));
    std::unordered_map<int64_t, int32_t> configIndex;
    for (size_t i = 0; i < table.configIds.size(); ++i)
        configIndex.emplace(table.configIds[i], int32_t(i));
    SqlStatement q(store, "SELECT problem_id, config_id, predicted_ms FROM predictions WHERE model_id=? "
                          "ORDER BY problem_id, config_id");
    q.bind(1, modelId);
    while (q.step()) {
        auto p = problemRow.find(q.integer(0));
        auto c = configIndex.find(q.integer(1));
        if (p == problemRow.end() || c == configIndex.end())
            continue;
        for (uint32_t i = table.start[p->second]; i < table.start[p->second + 1]; ++i) {
            if (table.configOf[i] == c->second) {
                out[i] = q.real(2);
                break;
            }
        }
    }
    return out;
}

std::vector<double> computePredictions(const ModelPackage &pkg, const PredictionTable &table,
                                       const std::atomic<bool> *cancel) {
    std::vector<double> out(table.candidates(), kNaN);
    // Problems are split over the cores in interleaved order (sizes vary along the table); each
    // thread writes only its problems' slots, and the reader keeps its scratch per thread.
    const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 16);
    std::atomic<bool> stop{false};
    auto work = [&](size_t t) {
        std::vector<double> ms;
        for (size_t i = t; i < table.problems.size(); i += threads) {
            if (stop || (cancel && cancel->load()))
                return;
            try {
                pkg.predictMs(table.problems[i], table.configsOf(i), ms);
            } catch (...) {
                stop = true;
                throw;
            }
            std::copy(ms.begin(), ms.end(), out.begin() + table.start[i]);
        }
    };
    std::vector<std::future<void>> jobs;
    for (size_t t = 1; t < threads; ++t)
        jobs.push_back(std::async(std::launch::async, work, t));
    std::exception_ptr error;
    try {
        work(0);
    } catch (...) {
        error = std::current_exception();
    }
    for (auto &j : jobs) {
        try {
            j.get();
        } catch (...) {
            if (!error)
                error = std::current_exception();
        }
    }
    if (error)
        std::rethrow_exception(error);
    if (cancel && cancel->load())
        return {};
    return out;
}

int64_t storePredictions(Store &store, const std::string &packagePath, const nlohmann::json &manifest,
                         const std::vector<TrainingProblem> &problems,
                         const std::vector<std::vector<double>> &predictedMs) {
    Store::Transaction tx(store);
    const int64_t model = store.addModel(manifest.value("name", ""), packagePath, manifest);
    for (size_t i = 0; i < problems.size(); ++i)
        for (size_t c = 0; c < problems[i].configs.size(); ++c)
            store.insertPrediction(model, problems[i].problem, problems[i].configs[c], predictedMs[i][c]);
    tx.commit();
    return model;
}

std::vector<RankedProblem> rankTable(const PredictionTable &table, const std::vector<double> &scores,
                                     bool scoresArePredictions) {
    std::vector<RankedProblem> out;
    out.reserve(table.problems.size());
    for (size_t i = 0; i < table.problems.size(); ++i) {
        RankedProblem r;
        r.problem = table.problems[i];
        bool complete = true;
        for (uint32_t c = table.start[i]; c < table.start[i + 1]; ++c) {
            const double m = table.measuredMs[c];
            r.measuredMs.push_back(std::isnan(m) ? std::nullopt : std::optional<double>(m));
            // A candidate without a prediction is ranked last rather than dropped.
            r.score.push_back(std::isnan(scores[c]) ? std::numeric_limits<double>::max() : scores[c]);
            complete = complete && !std::isnan(scores[c]);
        }
        if (scoresArePredictions && complete)
            r.predictedMs = r.score; // errors only where all are predicted
        out.push_back(std::move(r));
    }
    return out;
}

std::vector<RankedProblem> rankByDecision(const PredictionTable &table, std::vector<RankedProblem> ranked,
                                          Selector &selector) {
    const GemmContext gpu = selector.onPackageGpu();
    for (size_t p = 0; p < ranked.size(); ++p) {
        auto &r = ranked[p];
        // rankTable() gave a candidate without a prediction the largest score: predicted slowest.
        if (const auto pick = selector.decide(r.problem, table.configsOf(p), gpu, &r.score).pick())
            r.score[*pick] = -std::numeric_limits<double>::infinity();
        r.predictedMs.clear();
    }
    return ranked;
}

std::vector<RankedProblem> rankTableWithBaseline(const PredictionTable &table, const std::string &baseline) {
    std::vector<double> scores(table.candidates());
    uint64_t seed = 7; // as rankWithBaseline(), so the numbers match `diode eval`
    for (size_t i = 0; i < table.problems.size(); ++i) {
        const auto s = baselineScores(baseline, table.configsOf(i), seed++);
        std::copy(s.begin(), s.end(), scores.begin() + table.start[i]);
    }
    return rankTable(table, scores, false);
}

} // namespace diode
