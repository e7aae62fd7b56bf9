#include "shardmerge.h"

#include "diode/infer/datafile.h"
#include "diode/infer/printable.h"
#include "diode/infer/problemjson.h"
#include "diode/store/decisionstore.h"
#include "diode/store/importer.h"
#include "diode/store/sqlstatement.h"
#include "diode/store/store.h"
#include "diode/sweep/sweeprunner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>

namespace diode {

namespace {

using json = nlohmann::json;

/// One run seen by the merge: in an input store, or already in the output.
struct SourceRun {
    std::string file; ///< the input store; empty for a run already in the output
    RunInfo run;
    std::string identity;
    std::string planKey; ///< the frozen plan without its shard; empty for import runs (not checked)
    PlanShard shard;
    json problems; ///< the frozen plan's problems, for messages
    int64_t done = 0;
    int64_t outRunId = 0; ///< the same run already in the output
};

// What a run is wherever it is copied: the source path and row id change, these do not.
std::string identityOf(const RunInfo &r) {
    return fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", r.createdAt, r.backend, r.host,
                       r.planJson, r.searchSpace, r.gpuName, r.driver, r.torchVersion, r.tritonVersion);
}

// The identity of each of a store's runs, in id order. One import makes a run per GPU, software
// and search space of a file in the same second, with the same plan record: two such runs may agree
// in every field, so the n-th of them is told apart by n, in the input as in the output (which
// keeps the order it copies them in). Without it the second was "merged before" and left out.
std::vector<std::string> identitiesOf(const std::vector<RunInfo> &runs) {
    std::map<std::string, int> seen;
    std::vector<std::string> out;
    for (const auto &r : runs) {
        const std::string id = identityOf(r);
        const int n = seen[id]++;
        out.push_back(n == 0 ? id : fmt::format("{}\x1f#{}", id, n));
    }
    return out;
}

SourceRun sourceRun(const std::string &file, const RunInfo &r, const std::string &identity, int64_t done) {
    SourceRun s;
    s.file = file;
    s.run = r;
    s.identity = identity;
    s.done = done;
    if (r.backend == "import")
        return s;
    json frozen;
    try {
        frozen = parseJsonBounded(r.planJson, "plan", kDocumentLimits);
    } catch (const InvalidInput &) {
        frozen = json(); // said below, naming the file and run
    }
    const json *entries = frozen.is_object() ? &frozen["entries"] : nullptr;
    if (!entries || !entries->is_array() || entries->size() != 1 || !(*entries)[0].contains("problems"))
        throw InvalidInput(
            fmt::format("{}: run {} ({} backend) does not hold a frozen plan; was it written by "
                        "diode sweep?",
                        file.empty() ? "the output" : file, r.id, r.backend));
    s.shard = runShard(frozen);
    s.problems = (*entries)[0]["problems"];
    frozen.erase("shard");
    s.planKey = frozen.dump();
    return s;
}

std::string describe(const SourceRun &s, const std::string &out) {
    const std::string where = s.file.empty() ? fmt::format("{} (already merged)", out) : s.file;
    if (s.shard.whole())
        return fmt::format("run {} of {} (the whole plan)", s.run.id, where);
    return fmt::format("shard {} ({}, run {})", s.shard.str(), where, s.run.id);
}

std::string problemLabel(const SourceRun &s, size_t index) {
    try {
        return problemFromJson(s.problems.at(index), "plan").label();
    } catch (const std::exception &) {
        return fmt::format("problem {}", index);
    }
}

// One plan's runs, from the inputs and the output: one GPU, backend and software unless mixing
// is allowed; no problem in two runs; unless partial, every problem in a finished run.
void checkPlanGroup(const std::vector<const SourceRun *> &runs, const std::string &out,
                    const MergeOptions &o) {
    const SourceRun &first = *runs.front();
    if (!o.allowMixed)
        for (const auto *r : runs) {
            auto what = [](const RunInfo &x) {
                return fmt::format("backend {}, GPU '{}', torch '{}', Triton '{}'", printable(x.backend),
                                   printable(x.gpuName), printable(x.torchVersion),
                                   printable(x.tritonVersion));
            };
            if (what(r->run) != what(first.run))
                throw InvalidInput(
                    fmt::format("{} ran with {}, but {} with {}: shards of one sweep must come from one GPU "
                                "model and one "
                                "software stack; nothing was merged (--allow-mixed merges them anyway)",
                                describe(*r, out), what(r->run), describe(first, out), what(first.run)));
        }
    const size_t total = first.problems.size();
    std::vector<int> owner(total, -1);
    for (size_t j = 0; j < runs.size(); ++j) {
        const auto &r = *runs[j];
        for (size_t k = size_t(r.shard.index); k < total; k += size_t(r.shard.count)) {
            if (owner[k] >= 0)
                throw InvalidInput(fmt::format(
                    "{} and {} overlap: both hold problem {} ({}) of plan '{}'; nothing was merged (a shard "
                    "list must split the plan, e.g. 0/4 1/4 2/4 3/4; merge one of them)",
                    describe(*runs[size_t(owner[k])], out), describe(r, out), k, problemLabel(r, k),
                    printable(r.run.planName)));
            owner[k] = int(j);
        }
    }
    if (o.partial)
        return;
    for (const auto *r : runs)
        if (r->run.status != "finished")
            throw InvalidInput(fmt::format(
                "{} is {} with {} of {} problems done; nothing was merged. Resume it (diode sweep --resume "
                "--db {}), or merge what is there with --partial",
                describe(*r, out), r->run.status, r->done, r->run.problemsPlanned,
                r->file.empty() ? (r->run.source.empty() ? out : r->run.source) : r->file));
    std::vector<size_t> missing;
    for (size_t k = 0; k < total; ++k)
        if (owner[k] < 0)
            missing.push_back(k);
    if (missing.empty())
        return;
    bool oneCount = true;
    for (const auto *r : runs)
        oneCount = oneCount && r->shard.count == first.shard.count;
    std::string which;
    if (oneCount && !first.shard.whole()) {
        std::vector<std::string> shards;
        for (size_t i = 0; i < size_t(first.shard.count) && i < total; ++i)
            if (owner[i] < 0)
                shards.push_back(fmt::format("{}/{}", i, first.shard.count));
        which = fmt::format("shard{} {} {} in none of the stores given", shards.size() == 1 ? "" : "s",
                            fmt::join(shards, ", "), shards.size() == 1 ? "is" : "are");
    } else {
        which = fmt::format("{} problems are in no shard given (the first: problem {}, {})", missing.size(),
                            missing.front(), problemLabel(first, missing.front()));
    }
    throw InvalidInput(
        fmt::format("plan '{}' ({} problems): {}; nothing was merged. Give every shard's store, "
                    "or merge what is there with --partial",
                    printable(first.run.planName), total, which));
}

// A shard is a file from another machine: a page torn by a crash or a copy would lose a problem
// without a word, so SQLite checks the whole file first (b-trees, indexes, free pages).
void checkReadable(Store &store, const std::string &path) {
    SqlStatement s(store, "PRAGMA quick_check");
    std::vector<std::string> problems;
    while (s.step("cannot check it")) {
        if (s.text(0) == "ok")
            continue;
        if (problems.size() < 3)
            problems.push_back(printable(s.text(0)));
    }
    if (!problems.empty())
        throw StoreUnreadable(
            fmt::format("'{}' is damaged (SQLite's quick_check: {}); nothing was merged. Sweep "
                        "that shard again, or merge the others with --partial",
                        path, fmt::join(problems, "; ")));
}

// The rule import applies to a time (problemjson.cpp: a positive, finite number of milliseconds; a
// success has one), applied to a stored record: a store written by another program, or edited,
// must not bring in what no import would.
void refuseImpossibleTimes(const ProblemRecord &rec, const std::string &where) {
    const std::string at = fmt::format("{}: problem {}", where, rec.problem.label());
    auto bad = [](const std::optional<double> &t) { return t && (!std::isfinite(*t) || *t <= 0); };
    for (const auto &c : rec.candidates)
        for (const auto &t : c.timings) {
            if (bad(t.timeMs) || (t.status == MeasureStatus::Ok && !t.timeMs))
                throw InvalidInput(fmt::format("{}, config {}: {} time {} with status {}; a time is a "
                                               "positive number of milliseconds and "
                                               "a success has one. Nothing was merged",
                                               at, printable(c.config.key()), toString(t.method),
                                               t.timeMs ? fmt::format("{}", *t.timeMs) : "NULL",
                                               toString(t.status)));
        }
    for (const auto &b : rec.baselines)
        if (bad(b.timeMs) || (b.compileS && (!std::isfinite(*b.compileS) || *b.compileS < 0)))
            throw InvalidInput(
                fmt::format("{}: baseline {} ({}) has time {} ms, compile {} s; nothing was merged", at,
                            printable(b.baseline), toString(b.method), b.timeMs,
                            b.compileS ? fmt::format("{}", *b.compileS) : "unknown"));
}

struct ProblemEnd {
    std::string status;
    double seconds = 0;
};

// Copies what `runId` of `in` has done and `target` of `out` has not: measurements (failed ones
// too), baselines, the problem's done marker with its status and seconds, later telemetry.
MergedInput copyRun(Store &in, const std::string &inPath, int64_t runId, Store &out, int64_t target) {
    MergedInput m;
    std::map<GemmProblem, ProblemEnd> ends;
    {
        SqlStatement s(in, "SELECT " + problemColumns("p.") +
                               ", rp.status, rp.seconds FROM run_problems rp JOIN problems p ON "
                               "p.id = rp.problem_id WHERE rp.run_id = ?");
        s.bind(1, runId);
        while (s.step())
            ends[s.problem(0)] = {s.text(kProblemColumnCount), s.real(kProblemColumnCount + 1)};
    }
    const auto alreadyDone = out.doneProblems(target);
    in.forEachRecord(
        [&](const RunInfo &, const ProblemRecord &rec) {
            refuseImpossibleTimes(rec, fmt::format("{}, run {}", inPath, runId));
            const int64_t pid = out.problemId(rec.problem);
            if (alreadyDone.count(pid))
                return;
            for (const auto &c : rec.candidates)
                for (const auto &meas : c.measurements()) {
                    out.insertMeasurement(target, pid, meas);
                    ++m.measurementsAdded;
                }
            out.insertBaselines(target, pid, rec.baselines);
            const auto &end = ends[rec.problem];
            out.markProblemDone(target, pid, end.status.empty() ? "ok" : end.status, rec.error, end.seconds);
            ++m.problemsAdded;
        },
        runId);
    double lastT = -1;
    for (const auto &t : out.telemetry(target))
        lastT = std::max(lastT, t.tSeconds);
    for (const auto &t : in.telemetry(runId))
        if (t.tSeconds > lastT)
            out.insertTelemetry(target, t);
    return m;
}

} // namespace

MergeResult mergeShards(const std::string &outPath, const std::vector<std::string> &inputs,
                        const MergeOptions &o) {
    if (inputs.empty())
        throw InvalidInput("merge needs at least one shard store or problem JSON lines file");
    std::vector<std::string> stores, lines;
    for (const auto &path : inputs) {
        std::error_code ec;
        if (!std::filesystem::exists(path, ec))
            throw InvalidInput(
                fmt::format("'{}' does not exist; nothing was merged (a shard whose task never "
                            "started has no store: `diode sweep --status` says why)",
                            path));
        if (!std::filesystem::is_regular_file(path, ec))
            throw InvalidInput(fmt::format("'{}' is not a file; nothing was merged", path));
        if (std::filesystem::exists(outPath, ec) && std::filesystem::equivalent(outPath, path, ec))
            throw InvalidInput(fmt::format("'{}' is the output of the merge; give it once, as OUT", path));
        (isSqliteFile(path) ? stores : lines).push_back(path);
    }

    std::vector<std::unique_ptr<Store>> opened;
    std::vector<SourceRun> inRuns;
    std::vector<size_t> runStore;                                   // inRuns[i] is in opened[runStore[i]]
    std::vector<DecisionData> storedLines;                          // each store's kernel and site lines
    std::map<std::string, std::pair<std::string, size_t>> measured; // case -> (its line, first store)
    for (const auto &path : stores) {
        auto st = std::make_unique<Store>(path, Store::Mode::ReadOnly);
        checkReadable(*st, path);
        storedLines.push_back(storedDecisionData(*st));
        for (auto &[key, c] : measuredCases(storedLines.back())) {
            const auto [it, fresh] = measured.try_emplace(key, std::move(c.line), opened.size());
            if (!fresh && it->second.first != c.line)
                throw InvalidInput(fmt::format(
                    "'{}' and '{}' hold different measurements of the {}; nothing was merged (which one "
                    "is meant is not known: merge one of them, or diode import their lines in the order "
                    "that should win, the later one replacing)",
                    stores[it->second.second], path, c.what));
        }
        const auto runs = st->runs();
        const auto ids = identitiesOf(runs);
        for (size_t k = 0; k < runs.size(); ++k) {
            inRuns.push_back(sourceRun(path, runs[k], ids[k], int64_t(st->doneProblems(runs[k].id).size())));
            runStore.push_back(opened.size());
        }
        opened.push_back(std::move(st));
    }

    // What the output holds decides what is new and what would overlap: read before anything is
    // written (a refused merge creates no output), and again inside the write transaction, where
    // another merge into the same store may have added the same runs meanwhile.
    std::map<std::string, int64_t> outIds;
    std::vector<SourceRun> outRuns;
    auto check = [&](Store *existing) {
        outIds.clear();
        outRuns.clear();
        if (existing) {
            const auto runs = existing->runs();
            const auto ids = identitiesOf(runs);
            for (size_t k = 0; k < runs.size(); ++k) {
                outIds[ids[k]] = runs[k].id;
                if (runs[k].backend != "import")
                    outRuns.push_back(
                        sourceRun({}, runs[k], ids[k], int64_t(existing->doneProblems(runs[k].id).size())));
            }
        }
        for (auto &s : inRuns) {
            const auto it = outIds.find(s.identity);
            s.outRunId = it == outIds.end() ? 0 : it->second;
        }
        // One plan's runs, each once (the same run given twice, or merged before, counts once).
        std::map<std::string, std::vector<const SourceRun *>> groups;
        std::map<std::string, const SourceRun *> seen;
        for (const auto &s : inRuns)
            if (!s.planKey.empty() && seen.emplace(s.identity, &s).second)
                groups[s.planKey].push_back(&s);
        if (groups.size() > 1 && !o.allowMixed) {
            const auto *a = groups.begin()->second.front(), *b = std::next(groups.begin())->second.front();
            throw InvalidInput(
                fmt::format("{} is of plan '{}' ({} problems), {} of plan '{}' ({} problems): these are "
                            "not shards of one plan; nothing was merged (merge them separately, or "
                            "with --allow-mixed)",
                            describe(*a, outPath), printable(a->run.planName), a->problems.size(),
                            describe(*b, outPath), printable(b->run.planName), b->problems.size()));
        }
        for (auto &[key, runs] : groups) {
            for (const auto &r : outRuns)
                if (r.planKey == key && !seen.count(r.identity))
                    runs.push_back(&r);
            checkPlanGroup(runs, outPath, o);
        }
    };
    std::optional<Store> existing;
    if (std::error_code ec;
        std::filesystem::exists(outPath, ec) && std::filesystem::file_size(outPath, ec) > 0) {
        try {
            existing.emplace(outPath, Store::Mode::ReadOnly); // read: a refused merge changes nothing
        } catch (const EmptyDatabase &) {
            // Another merge is setting it up this moment: as new here, checked again once it is locked.
        }
    }
    check(existing ? &*existing : nullptr);
    existing.reset();

    // An output this merge makes is removed again if the merge fails part way (a JSON lines file it
    // refuses, a shard's impossible time): a refused merge leaves no empty database behind.
    std::error_code ec;
    const bool made = !std::filesystem::exists(outPath, ec) || std::filesystem::file_size(outPath, ec) == 0;
    MergeResult result;
    std::optional<Store> outStore;
    try {
        Store &out = outStore.emplace(outPath);
        Store::Transaction tx(out);
        check(&out);
        for (size_t i = 0; i < inRuns.size(); ++i) {
            auto &s = inRuns[i];
            int64_t target = s.outRunId;
            if (!target)
                if (auto it = outIds.find(s.identity); it != outIds.end())
                    target = it->second; // the same run in an earlier input of this merge
            const bool added = !target;
            if (added) {
                RunInfo r = s.run;
                if (r.source.empty())
                    r.source = s.file;
                target = out.createRun(r);
                outIds[s.identity] = target;
            }
            auto m = copyRun(*opened[runStore[i]], s.file, s.run.id, out, target);
            {
                SqlStatement st(out, "UPDATE runs SET status = ?, finished_at = ? WHERE id = ?");
                st.bind(1, s.run.status);
                if (s.run.finishedAt.empty())
                    st.bindNull(2);
                else
                    st.bind(2, s.run.finishedAt);
                st.bind(3, target);
                st.step();
            }
            m.path = s.file;
            m.runsAdded = added ? 1 : 0;
            const std::string shard = s.planKey.empty() ? std::string("an import")
                                      : s.shard.whole() ? fmt::format("plan '{}'", printable(s.run.planName))
                                                        : fmt::format("shard {} of plan '{}'", s.shard.str(),
                                                                      printable(s.run.planName));
            m.what = fmt::format(
                "run {} ({}, {}) -> run {}: {}", s.run.id, shard, s.run.status, target,
                added ? fmt::format("{} problems, {} measurements", m.problemsAdded, m.measurementsAdded)
                : m.problemsAdded ? fmt::format("merged before; {} problems, {} measurements added",
                                                m.problemsAdded, m.measurementsAdded)
                                  : std::string("merged before; nothing new"));
            result.runsAdded += m.runsAdded;
            result.problemsAdded += m.problemsAdded;
            result.measurementsAdded += m.measurementsAdded;
            result.inputs.push_back(std::move(m));
        }
        // Kernel and site lines (diode sweep-kernels) come along, as import keeps them: the same line
        // again changes nothing, a case measured again is replaced by the later input's line.
        for (size_t i = 0; i < stores.size(); ++i) {
            const DecisionData &lines = storedLines[i];
            const bool hasRuns = std::any_of(inRuns.begin(), inRuns.end(),
                                             [&](const SourceRun &r) { return r.file == stores[i]; });
            if (lines.kernels.empty() && lines.sites.empty() && lines.skipped.empty()) {
                if (!hasRuns)
                    result.inputs.push_back({stores[i], "holds no runs", 0, 0, 0});
                continue;
            }
            const DecisionImport d = storeDecisionData(out, lines, stores[i]);
            MergedInput m{stores[i], {}, 0, 0, 0};
            m.caseLinesAdded = d.added + d.replaced;
            m.what = "kernel and site lines: " + describe(d);
            result.caseLinesAdded += m.caseLinesAdded;
            result.inputs.push_back(std::move(m));
        }
        for (const auto &path : lines) {
            const auto r = importFileInTransaction(out, path, false, true,
                                                   /*allowMixedData=*/true); // merge's own rule checked them
            MergedInput m{path, {}, r.runs, r.problems, r.measurements};
            m.caseLinesAdded = r.lines.added + r.lines.replaced;
            m.what = r.format == "kernel-site-lines" ? fmt::format("{}: {}", r.format, describe(r.lines))
                     : r.alreadyImportedRun
                         ? fmt::format("imported before (run {}); nothing new", r.alreadyImportedRun)
                         : fmt::format("{}: {} runs, {} problems, {} measurements", r.format, r.runs,
                                       r.problems, r.measurements);
            result.runsAdded += m.runsAdded;
            result.problemsAdded += m.problemsAdded;
            result.measurementsAdded += m.measurementsAdded;
            result.caseLinesAdded += m.caseLinesAdded;
            result.inputs.push_back(std::move(m));
        }
        tx.commit();
    } catch (...) {
        outStore.reset(); // its transaction rolled back
        if (made)
            removeEmptyDatabase(outPath);
        throw;
    }
    return result;
}

} // namespace diode
