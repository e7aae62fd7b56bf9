#include "dataset.h"

#include "diode/infer/datafile.h"

#include "diode/infer/problemjson.h"
#include "diode/infer/stablehash.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

namespace diode {

bool TrainingProblem::hasTiming() const {
    return std::any_of(timesMs.begin(), timesMs.end(), [](const auto &t) { return t.has_value(); });
}

bool DatasetFilter::accepts(const GemmProblem &p) const {
    auto in = [](const std::vector<std::string> &v, std::string_view x) {
        return v.empty() || std::find(v.begin(), v.end(), x) != v.end();
    };
    return in(ops, toString(p.op)) && in(dtypes, toString(p.dtype));
}

namespace {

// Every candidate the model can describe stays, timed or not: which method is read changes the
// times, never the candidate list (a candidate that failed before any time is still one a model
// must not pick).
std::optional<TrainingProblem> fromRecord(const ProblemRecord &r, const std::string &gpu, int sms,
                                          TimingMethod method, const DatasetFilter &f) {
    if (!f.accepts(r.problem))
        return std::nullopt;
    TrainingProblem t;
    t.problem = r.problem;
    t.gpu = gpu;
    t.smCount = sms;
    for (const auto &c : r.candidates) {
        if (!FeatureSchema::describes(c.config))
            continue;
        t.configs.push_back(c.config);
        t.timesMs.push_back(c.timeMs(method));
    }
    if (!t.hasTiming())
        return std::nullopt;
    return t;
}

void collectWrongResults(const ProblemRecord &r, const DatasetFilter &f, std::vector<WrongResult> &out) {
    if (!f.accepts(r.problem))
        return;
    for (const auto &c : r.candidates)
        if (auto error = c.wrongResult(); !error.empty())
            out.push_back({r.problem, c.config, std::move(error)});
}

} // namespace

Dataset loadDataset(Store &store, std::optional<TimingMethod> asked, const DatasetFilter &filter) {
    Dataset out;
    out.method = chooseTimingMethod(asked, store.methodCounts());
    store.forEachRecord([&](const RunInfo &run, const ProblemRecord &r) {
        collectWrongResults(r, filter, out.wrongResults);
        if (auto t = fromRecord(r, run.gpuName, run.smCount, out.method.method, filter))
            out.problems.push_back(std::move(*t));
    });
    return out;
}

nlohmann::json unsafeCandidates(const std::vector<WrongResult> &wrong) {
    // One entry per op, dtype, layout and candidate: the selector never keeps that candidate for a
    // problem of the same op, dtype and layout (the check found it wrong on these shapes; which
    // other shapes are safe it cannot say).
    constexpr size_t kShapesListed = 8;
    std::map<std::pair<std::string, std::string>, nlohmann::json> byKey;
    for (const auto &w : wrong) {
        const auto &p = w.problem;
        const std::string cls = fmt::format("{} {} {} {}", toString(p.op), toString(p.dtype),
                                            int(p.aTransposed), int(p.bTransposed));
        auto [it, fresh] = byKey.try_emplace({cls, w.config.key()});
        auto &e = it->second;
        if (fresh)
            e = {{"op", toString(p.op)},
                 {"dtype", toString(p.dtype)},
                 {"a_transposed", p.aTransposed},
                 {"b_transposed", p.bTransposed},
                 {"candidate", w.config.toJson()},
                 {"error", w.error},
                 {"problems", 0},
                 {"shapes", nlohmann::json::array()}};
        e["problems"] = e["problems"].get<int>() + 1;
        if (e["shapes"].size() < kShapesListed)
            e["shapes"].push_back({{"B", p.batch}, {"M", p.m}, {"N", p.n}, {"K", p.k}});
    }
    auto out = nlohmann::json::array();
    for (auto &[key, e] : byKey)
        out.push_back(std::move(e));
    return out;
}

std::vector<ProblemRecord> readRecords(const std::string &path, std::optional<int64_t> runId) {
    if (!isSqliteFile(path)) {
        if (runId)
            throw InvalidInput(
                fmt::format("'{}' is a file of problem lines, not a store: it has no run {} to "
                            "choose (give a store, or leave the run out)",
                            path, *runId));
        return readProblemFile(path);
    }
    Store store(path, Store::Mode::ReadOnly);
    if (runId) {
        std::vector<int64_t> ids;
        for (const auto &r : store.runs())
            ids.push_back(r.id);
        if (std::find(ids.begin(), ids.end(), *runId) == ids.end())
            throw InvalidInput(
                fmt::format("store '{}' has no run {} (its runs: {})", path, *runId,
                            ids.empty() ? std::string("none") : fmt::format("{}", fmt::join(ids, ", "))));
    }
    std::vector<ProblemRecord> out;
    store.forEachRecord([&](const RunInfo &, const ProblemRecord &r) { out.push_back(r); }, runId);
    return out;
}

MethodCounts methodCounts(const std::vector<ProblemRecord> &records) {
    MethodCounts out;
    for (const auto &r : records)
        for (const auto &c : r.candidates)
            for (const auto &t : c.timings)
                if (t.status == MeasureStatus::Ok && t.timeMs)
                    ++out[t.method];
    return out;
}

Dataset loadDatasetJsonl(const std::string &path, std::optional<TimingMethod> asked,
                         const DatasetFilter &filter) {
    const auto records = readProblemFile(path);
    Dataset out;
    out.method = chooseTimingMethod(asked, methodCounts(records));
    for (const auto &rec : records) {
        const auto hw = rec.extra.value("hardware", nlohmann::json::object());
        collectWrongResults(rec, filter, out.wrongResults);
        if (auto t = fromRecord(rec, hw.value("gpu", ""), hw.value("sm_count", 0), out.method.method, filter))
            out.problems.push_back(std::move(*t));
    }
    return out;
}

ProblemFileStats problemFileStats(const std::vector<ProblemRecord> &records) {
    ProblemFileStats st;
    for (const auto &rec : records) {
        ++st.lines;
        if (!rec.error.empty())
            ++st.failedProblems;
        const auto hw = rec.extra.value("hardware", nlohmann::json::object());
        st.problemsByGpu[hw.is_object() ? hw.value("gpu", "") : ""].insert(rec.problem);
        const auto tag = rec.extra.find("heldout");
        ++st.linesByTag[tag != rec.extra.end() && tag->is_string() ? tag->get<std::string>() : ""];
        const auto space = rec.extra.find("search_space");
        ++st.linesBySearchSpace[space != rec.extra.end() && space->is_string()
                                    ? space->get<std::string>()
                                    : std::string(kSearchSpaces[0])];
        for (const auto &c : rec.candidates)
            for (const auto &t : c.timings) {
                ++st.measurements;
                ++st.measurementsByMethod[std::string(toString(t.method))];
                if (t.status != MeasureStatus::Ok) {
                    ++st.failedMeasurements;
                    ++st.failedByMethod[std::string(toString(t.method))];
                }
            }
    }
    return st;
}

std::set<GemmProblem> ProblemFileStats::problems() const {
    std::set<GemmProblem> all;
    for (const auto &[gpu, problems] : problemsByGpu)
        all.insert(problems.begin(), problems.end());
    return all;
}

nlohmann::json ProblemFileStats::toJson() const {
    std::map<std::string, int64_t> byGpu;
    for (const auto &[gpu, problems] : problemsByGpu)
        byGpu[gpu] = int64_t(problems.size());
    return {{"lines", lines},
            {"problems", int64_t(problems().size())},
            {"failed_problems", failedProblems},
            {"measurements", measurements},
            {"failed_measurements", failedMeasurements},
            {"problems_by_gpu", byGpu},
            {"lines_by_heldout", linesByTag},
            {"lines_by_search_space", linesBySearchSpace},
            {"measurements_by_method", measurementsByMethod},
            {"failed_measurements_by_method", failedByMethod}};
}

std::string fingerprint(const std::vector<TrainingProblem> &problems) {
    // The packages record fingerprints made from this start value (FNV's offset basis missing its
    // last digit); kept, so that their training data still matches.
    Fnv1a64 h(1469598103934665603ull);
    for (const auto &p : problems) {
        h.add(p.problem.label());
        for (size_t i = 0; i < p.configs.size(); ++i)
            h.add(p.configs[i].key() + (p.timesMs[i] ? fmt::format("{:.6g}", *p.timesMs[i]) : "-"));
    }
    return fmt::format("fnv1a64:{:016x}", h.value());
}

} // namespace diode
