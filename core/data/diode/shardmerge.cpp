#include "shardmerge.h"

#include "diode/importer.h"
#include "diode/problemjson.h"
#include "diode/sqlstatement.h"
#include "diode/store.h"
#include "diode/sweeprunner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

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
    return fmt::format("{}\x1f{}\x1f{}\x1f{}", r.createdAt, r.backend, r.host, r.planJson);
}

SourceRun sourceRun(const std::string &file, const RunInfo &r, int64_t done) {
    SourceRun s;
    s.file = file;
    s.run = r;
    s.identity = identityOf(r);
    s.done = done;
    if (r.backend == "import")
        return s;
    json frozen = json::parse(r.planJson, nullptr, false);
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
                return fmt::format("backend {}, GPU '{}', torch '{}', Triton '{}'", x.backend, x.gpuName,
                                   x.torchVersion, x.tritonVersion);
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
                    r.run.planName));
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
                    first.run.planName, total, which));
}

struct ProblemEnd {
    std::string status;
    double seconds = 0;
};

// Copies what `runId` of `in` has done and `target` of `out` has not: measurements (failed ones
// too), baselines, the problem's done marker with its status and seconds, later telemetry.
MergedInput copyRun(Store &in, int64_t runId, Store &out, int64_t target) {
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
    std::vector<size_t> runStore; // inRuns[i] is in opened[runStore[i]]
    for (const auto &path : stores) {
        auto st = std::make_unique<Store>(path, Store::Mode::ReadOnly);
        for (const auto &r : st->runs()) {
            inRuns.push_back(sourceRun(path, r, int64_t(st->doneProblems(r.id).size())));
            runStore.push_back(opened.size());
        }
        opened.push_back(std::move(st));
    }

    // A refused merge creates no output: it is opened (and made) once the checks pass.
    std::map<std::string, int64_t> outIds;
    std::vector<SourceRun> outRuns;
    if (std::error_code ec; std::filesystem::exists(outPath, ec)) {
        Store existing(outPath);
        for (const auto &r : existing.runs()) {
            outIds[identityOf(r)] = r.id;
            if (r.backend != "import")
                outRuns.push_back(sourceRun({}, r, int64_t(existing.doneProblems(r.id).size())));
        }
    }
    for (auto &s : inRuns)
        if (auto it = outIds.find(s.identity); it != outIds.end())
            s.outRunId = it->second;

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
                        describe(*a, outPath), a->run.planName, a->problems.size(), describe(*b, outPath),
                        b->run.planName, b->problems.size()));
    }
    for (auto &[key, runs] : groups) {
        for (const auto &r : outRuns)
            if (r.planKey == key && !seen.count(r.identity))
                runs.push_back(&r);
        checkPlanGroup(runs, outPath, o);
    }

    MergeResult result;
    Store out(outPath);
    Store::Transaction tx(out);
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
        auto m = copyRun(*opened[runStore[i]], s.run.id, out, target);
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
                                  : s.shard.whole()
                                      ? fmt::format("plan '{}'", s.run.planName)
                                      : fmt::format("shard {} of plan '{}'", s.shard.str(), s.run.planName);
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
    for (const auto &s : stores)
        if (std::none_of(inRuns.begin(), inRuns.end(), [&](const SourceRun &r) { return r.file == s; }))
            result.inputs.push_back({s, "holds no runs", 0, 0, 0});
    for (const auto &path : lines) {
        const auto r = importFileInTransaction(out, path, false, true,
                                               /*allowMixedData=*/true); // merge's own rule checked them
        MergedInput m{path, {}, r.runs, r.problems, r.measurements};
        m.what = r.alreadyImportedRun
                     ? fmt::format("imported before (run {}); nothing new", r.alreadyImportedRun)
                     : fmt::format("{}: {} runs, {} problems, {} measurements", r.format, r.runs, r.problems,
                                   r.measurements);
        result.runsAdded += m.runsAdded;
        result.problemsAdded += m.problemsAdded;
        result.measurementsAdded += m.measurementsAdded;
        result.inputs.push_back(std::move(m));
    }
    tx.commit();
    return result;
}

} // namespace diode
