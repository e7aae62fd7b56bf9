#include "slurmsweep.h"

#include "diode/config.h"
#include "diode/infer/atomicfile.h"
#include "diode/infer/jsonlimits.h"
#include "diode/infer/printable.h"
#include "diode/infer/shippeddata.h"
#include "diode/store/store.h"
#include "diode/sweep/backend.h"
#include "diode/sweep/childprocess.h"
#include "diode/sweep/slurmscript.h"
#include "diode/sweep/sweeprunner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace diode {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// Runs a Slurm client (sbatch, squeue, sacct, scancel) with its output captured; no shell, so no
// quoting of paths.
ChildOutput runTool(const std::vector<std::string> &argv) {
    try {
        return runCaptured(argv);
    } catch (const std::runtime_error &e) {
        throw SlurmError(e.what());
    }
}

std::string trimmed(std::string s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.pop_back();
    size_t i = 0;
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
        ++i;
    return s.substr(i);
}

std::string thisExecutable() {
    std::error_code ec;
    const auto self = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string("diode") : self.string();
}

void writeFile(const fs::path &path, const std::string &text) {
    writeFileAtomically<SlurmError>(path.string(), [&](std::ostream &os) { os << text; });
}

std::string shardDb(const fs::path &dir, int64_t i) {
    return (dir / fmt::format("shard-{}.db", i)).string();
}

// sbatch --parsable answers "JOBID" or "JOBID;CLUSTER".
std::string submitScript(const std::vector<std::string> &extra, const fs::path &script,
                         const std::string &what) {
    std::vector<std::string> argv{"sbatch", "--parsable"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(script.string());
    const auto r = runTool(argv);
    if (r.rc == 127)
        throw BackendUnavailable(
            fmt::format("sbatch cannot be started ({}); Slurm's client commands must be on "
                        "the PATH to submit {}",
                        trimmed(r.err), what));
    const std::string id = trimmed(r.out.substr(0, r.out.find(';')));
    if (r.rc != 0 || id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
        throw SlurmError(fmt::format("sbatch refused {} (exit {}): {}; the script is {}", what, r.rc,
                                     trimmed(r.err + r.out), script.string()));
    return id;
}

// The #SBATCH lines both scripts share, each value checked by SlurmScript.
void sbatchHeader(SlurmScript &s, const SlurmOptions &o, bool gres) {
    s.sbatch("partition", o.partition, "--partition");
    s.sbatch("account", o.account, "--account");
    s.sbatch("time", o.timeLimit, "--time");
    if (gres)
        s.sbatch("gres", o.gres, "--gres");
    if (o.cpusPerTask > 0)
        s.sbatch("cpus-per-task", std::to_string(o.cpusPerTask), "--cpus-per-task");
    for (const auto &a : o.sbatchArgs)
        s.sbatchArgument(a, "sbatch_args entry");
}

// `set -eu`, then the setup lines as given (shell by design, one line each).
void setupLines(SlurmScript &s, const SlurmOptions &o) {
    s.command("set -eu");
    for (const auto &l : o.setup)
        s.shellLine(l, "setup line");
}

// "exec [LAUNCHER] 'DIODE'": the launcher is shell words by design (srun --container-image=...).
std::string launch(const SlurmOptions &o) {
    SlurmScript::checkOneLine(o.launcher, "launcher");
    return fmt::format("exec {}{}", o.launcher.empty() ? "" : o.launcher + " ", shellQuote(o.diode));
}

struct QueueEntry {
    std::string job; ///< "12_3"
    std::string state, reason;
};

// The queued and running tasks and jobs among `jobs`, keyed by job id ("12_3", "14").
std::map<std::string, QueueEntry> squeue(const std::vector<std::string> &jobs) {
    std::map<std::string, QueueEntry> out;
    if (jobs.empty())
        return out;
    const auto r =
        runTool({"squeue", "-h", "-r", "-j", fmt::format("{}", fmt::join(jobs, ",")), "-o", "%i|%T|%r"});
    if (r.rc == 127)
        throw BackendUnavailable(
            fmt::format("squeue cannot be started ({}); Slurm's client commands must be on "
                        "the PATH",
                        trimmed(r.err)));
    // An id Slurm forgot (long ended) makes squeue fail with "Invalid job id": then nothing is queued.
    std::istringstream in(r.out);
    for (std::string l; std::getline(in, l);) {
        const auto a = l.find('|'), b = l.rfind('|');
        if (a == std::string::npos || a == b)
            continue;
        QueueEntry e{l.substr(0, a), l.substr(a + 1, b - a - 1), l.substr(b + 1)};
        out[e.job] = e;
    }
    return out;
}

// How ended jobs ended, where Slurm keeps accounting; `note` says why not otherwise.
std::map<std::string, std::string> sacct(const std::vector<std::string> &jobs, std::string &note) {
    std::map<std::string, std::string> out;
    if (jobs.empty())
        return out;
    const auto r = runTool({"sacct", "-n", "-P", "-X", "-j", fmt::format("{}", fmt::join(jobs, ",")), "-o",
                            "JobID,State,ExitCode"});
    if (r.rc != 0) {
        note = fmt::format("sacct: {} (how ended tasks ended is then read from their stores)",
                           trimmed(r.err.empty() ? r.out : r.err));
        return out;
    }
    std::istringstream in(r.out);
    for (std::string l; std::getline(in, l);) {
        const auto a = l.find('|'), b = l.rfind('|');
        if (a != std::string::npos && a != b)
            out[l.substr(0, a)] = fmt::format("{} (exit {})", l.substr(a + 1, b - a - 1), l.substr(b + 1));
    }
    return out;
}

struct StoreState {
    bool exists = false, finished = false;
    std::string text;
};

StoreState shardStore(const std::string &path) {
    StoreState s;
    if (!fs::exists(path)) {
        s.text = "no store yet";
        return s;
    }
    s.exists = true;
    try {
        Store st(path, Store::Mode::ReadOnly);
        const auto runs = st.runs();
        if (runs.empty()) {
            s.text = "store without a run";
            return s;
        }
        const auto &r = runs.back();
        s.finished = r.status == "finished";
        s.text = fmt::format("{}, {}/{} problems", r.status, st.doneProblems(r.id).size(), r.problemsPlanned);
    } catch (const std::exception &e) {
        s.text = fmt::format("unreadable store: {}", e.what());
    }
    return s;
}

struct SweepState {
    fs::path dir;
    json doc;
    int64_t shardCount = 0;
    std::vector<std::string> lastArrayJob; ///< the array job that last ran shard i, e.g. "12"
    int64_t shards() const { return shardCount; }
    json &submissions() { return doc["submissions"]; }
    std::string arrayJobOf(int64_t i) const { return lastArrayJob.at(size_t(i)); }
    std::vector<std::string> jobs() const {
        std::vector<std::string> out;
        for (const auto &s : doc.at("submissions")) {
            out.push_back(s.at("array_job").get<std::string>());
            if (s.contains("merge_job"))
                out.push_back(s.at("merge_job").get<std::string>());
        }
        return out;
    }
    void save() const { writeFile(dir / "slurm.json", doc.dump(1) + "\n"); }
};

bool isJobId(const json &v) {
    return v.is_string() && !v.get_ref<const std::string &>().empty() &&
           v.get_ref<const std::string &>().size() <= 20 &&
           v.get_ref<const std::string &>().find_first_not_of("0123456789") == std::string::npos;
}

// The record is ours but lies in a folder anyone may edit: every field is checked before it sizes
// a loop or becomes an argument of scancel ("--user=..." would cancel every job of that user).
SweepState loadState(const std::string &db) {
    SweepState s;
    s.dir = fs::absolute(SlurmSweep::dirOf(db));
    const auto file = s.dir / "slurm.json";
    if (!fs::exists(file))
        throw InvalidInput(
            fmt::format("{} was not swept on Slurm: '{}' does not exist (start one with diode sweep "
                        "--slurm --plan PLAN --backend B --db {})",
                        db, file.string(), db));
    s.doc = readJsonFile(file.string(), file.string());
    auto bad = [&](const std::string &what) {
        return InvalidInput(fmt::format("{}: not a diode Slurm sweep record: {}", file.string(), what));
    };
    if (!s.doc.is_object())
        throw bad("expected a JSON object");
    const json &shards = s.doc.value("shards", json());
    if (!shards.is_number_integer() || shards.get<int64_t>() < 1 ||
        shards.get<int64_t>() > planlimits::kMaxProblems)
        throw bad(fmt::format("field 'shards' must be an integer from 1 to {}, got {}",
                              planlimits::kMaxProblems, printable(shards.dump())));
    s.shardCount = shards.get<int64_t>();
    if (!s.doc.value("db", json()).is_string())
        throw bad("field 'db' must be the merged store's path");
    const json &subs = s.doc.value("submissions", json());
    if (!subs.is_array() || subs.empty())
        throw bad("field 'submissions' must be a non-empty list");
    s.lastArrayJob.assign(size_t(s.shardCount), std::string());
    for (size_t k = 0; k < subs.size(); ++k) {
        const json &sub = subs[k];
        const std::string at = fmt::format("submissions[{}]", k);
        if (!sub.is_object() || !isJobId(sub.value("array_job", json())))
            throw bad(at + ": field 'array_job' must be a Slurm job id (digits)");
        if (sub.contains("merge_job") && !isJobId(sub["merge_job"]))
            throw bad(at + ": field 'merge_job' must be a Slurm job id (digits)");
        const json &tasks = sub.value("tasks", json());
        if (!tasks.is_array())
            throw bad(at + ": field 'tasks' must be a list of shard numbers");
        for (const auto &t : tasks) {
            if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= s.shardCount)
                throw bad(fmt::format("{}: field 'tasks' holds {}; shards are numbered 0 to {}", at,
                                      printable(t.dump()), s.shardCount - 1));
            s.lastArrayJob[size_t(t.get<int64_t>())] = sub["array_job"].get<std::string>();
        }
    }
    return s;
}

std::string queueText(const std::string &job, const std::map<std::string, QueueEntry> &queue,
                      const std::map<std::string, std::string> &ended) {
    if (auto it = queue.find(job); it != queue.end())
        return it->second.reason != "None" && !it->second.reason.empty()
                   ? fmt::format("job {} {} ({})", job, it->second.state, it->second.reason)
                   : fmt::format("job {} {}", job, it->second.state);
    if (auto it = ended.find(job); it != ended.end())
        return fmt::format("job {} ended: {}", job, it->second);
    return fmt::format("job {} ended (no longer queued)", job);
}

} // namespace

SlurmOptions SlurmOptions::load(const std::string &path) {
    const json j = readJsonFile(path, path, JsonLimits{16, 1 << 20, true});
    if (!j.is_object())
        throw InvalidInput(fmt::format("{}: expected a JSON object of Slurm options", path));
    SlurmOptions o;
    auto str = [&](const char *key, const json &v) {
        if (!v.is_string())
            throw InvalidInput(fmt::format("{}: field '{}' must be a string, got {}", path, key, v.dump()));
        return v.get<std::string>();
    };
    auto list = [&](const char *key, const json &v) {
        std::vector<std::string> out;
        if (!v.is_array())
            throw InvalidInput(fmt::format("{}: field '{}' must be a list of strings", path, key));
        for (const auto &x : v)
            out.push_back(str(key, x));
        return out;
    };
    for (const auto &[key, v] : j.items()) {
        if (key == "partition")
            o.partition = str("partition", v);
        else if (key == "account")
            o.account = str("account", v);
        else if (key == "time")
            o.timeLimit = str("time", v);
        else if (key == "gres")
            o.gres = str("gres", v);
        else if (key == "launcher")
            o.launcher = str("launcher", v);
        else if (key == "diode")
            o.diode = str("diode", v);
        else if (key == "setup")
            o.setup = list("setup", v);
        else if (key == "sbatch_args")
            o.sbatchArgs = list("sbatch_args", v);
        else if (key == "cpus_per_task") {
            if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 4096)
                throw InvalidInput(
                    fmt::format("{}: field 'cpus_per_task' must be an integer from 1 to 4096", path));
            o.cpusPerTask = v.get<int>();
        } else
            throw InvalidInput(fmt::format("{}: unknown field '{}'; expected partition, account, time, gres, "
                                           "cpus_per_task, setup, launcher, sbatch_args or diode",
                                           path, key));
    }
    return o;
}

void SlurmOptions::overrideWith(const SlurmOptions &o) {
    const std::pair<std::string *, const std::string *> fields[] = {
        {&partition, &o.partition}, {&account, &o.account},   {&timeLimit, &o.timeLimit},
        {&gres, &o.gres},           {&launcher, &o.launcher}, {&diode, &o.diode}};
    for (const auto &[mine, theirs] : fields)
        if (!theirs->empty())
            *mine = *theirs;
    if (o.cpusPerTask > 0)
        cpusPerTask = o.cpusPerTask;
    if (!o.setup.empty())
        setup = o.setup;
    if (!o.sbatchArgs.empty())
        sbatchArgs = o.sbatchArgs;
}

SlurmSweep::Scripts SlurmSweep::scripts(const Request &r) {
    const fs::path dir = fs::absolute(dirOf(r.db));
    const int64_t problems = int64_t(r.plan.problems.size());
    SlurmOptions o = r.slurm;
    if (o.diode.empty())
        o.diode = thisExecutable();
    // Quoted, a line break would still be one: each path is one line of the script.
    SlurmScript::checkOneLine(o.diode, "diode");
    SlurmScript::checkOneLine(r.python, "--python");
    if (o.gres.empty() && r.backend == "inductor")
        o.gres = "gpu:1";
    const std::string db = fs::absolute(r.db).string();
    const auto planPath = dir / "plan.json";

    const std::string name = printable(r.plan.name);
    SlurmScript sweepScript;
    sweepScript.comment(
        fmt::format("diode sweep of plan \"{}\" as a Slurm array: {} problems in {} shards, one task a "
                    "shard",
                    name, problems, r.shards));
    sweepScript.comment(
        fmt::format("(written by diode {} on {}; docs/FORMATS.md, \"Slurm sweeps\"). Task i measures the",
                    DIODE_VERSION, utcNow()));
    sweepScript.comment(
        fmt::format("plan's problems whose index is i modulo {} into shard-i.db beside this script, "
                    "continuing what",
                    r.shards));
    sweepScript.comment(
        "an earlier try of it left; a task killed at its time limit is cancelled cleanly and stays");
    sweepScript.comment(
        "resumable. `diode sweep --slurm --resume --db DB` submits the unfinished shards again.");
    sweepScript.sbatch("job-name", "diode-" + SlurmScript::jobName(r.plan.name), "plan name");
    sweepScript.sbatch("array", fmt::format("0-{}", r.shards - 1), "--shards");
    // %a: the array index, which sbatch puts in the file name; a '%' of the path would be read so too.
    if (dir.string().find('%') != std::string::npos)
        throw InvalidInput(fmt::format("--db '{}': a Slurm sweep's directory '{}' may not hold '%' (sbatch "
                                       "reads it as a pattern in the #SBATCH --output line)",
                                       printable(r.db), printable(dir.string())));
    sweepScript.sbatch("output", (dir / "shard-%a.out").string(),
                       fmt::format("--db's directory {}", dir.string()));
    sweepScript.sbatch("open-mode", "append", "--open-mode");
    sbatchHeader(sweepScript, o, true);
    setupLines(sweepScript, o);
    std::string command = fmt::format("{} sweep --backend {} --plan {} --shard \"$SLURM_ARRAY_TASK_ID/{}\" "
                                      "\\\n  --db {}/shard-\"$SLURM_ARRAY_TASK_ID\".db "
                                      "--resume",
                                      launch(o), shellQuote(r.backend), shellQuote(planPath.string()),
                                      r.shards, shellQuote(dir.string()));
    if (!r.python.empty())
        command += " --python " + shellQuote(r.python);
    if (r.workersPerGpu != SweepSession::kAutoWorkers)
        command += fmt::format(" --workers-per-gpu {}", r.workersPerGpu);
    sweepScript.command(command);

    SlurmScript mergeScript;
    mergeScript.comment(
        fmt::format("Merges the {} shard stores of plan \"{}\" into {} once every task of the array",
                    r.shards, name, printable(db)));
    mergeScript.comment(
        fmt::format("succeeded (diode submits it with --dependency=afterok on the array; written by diode "
                    "{}).",
                    DIODE_VERSION));
    mergeScript.sbatch("job-name", "diode-merge-" + SlurmScript::jobName(r.plan.name), "plan name");
    mergeScript.sbatch("output", (dir / "merge.out").string(),
                       fmt::format("--db's directory {}", dir.string()));
    mergeScript.sbatch("open-mode", "append", "--open-mode");
    sbatchHeader(mergeScript, o, false);
    setupLines(mergeScript, o);
    std::vector<std::string> shardFiles;
    for (int64_t i = 0; i < r.shards; ++i)
        shardFiles.push_back(shellQuote(shardDb(dir, i)));
    mergeScript.command(
        fmt::format("{} merge {} \\\n  {}", launch(o), shellQuote(db), fmt::join(shardFiles, " \\\n  ")));

    return {sweepScript.text(), mergeScript.text()};
}

std::vector<std::string> SlurmSweep::submit(const Request &r) {
    // The merged store and DB.shards/ beside it: never inside shipped data.
    shipped::refuseWritingShipped(r.db, "database");
    shipped::refuseWritingShipped(dirOf(r.db), "Slurm sweep folder");
    const int64_t problems = int64_t(r.plan.problems.size());
    if (r.shards < 1 || r.shards > problems)
        throw InvalidInput(fmt::format("--shards {}: plan '{}' has {} problems; give 1 to {} shards",
                                       r.shards, printable(r.plan.name), problems, problems));
    const fs::path dir = fs::absolute(dirOf(r.db));
    if (fs::exists(dir / "slurm.json"))
        throw InvalidInput(
            fmt::format("{} already holds a Slurm sweep of {}; see it with diode sweep --status --db "
                        "{}, submit its unfinished shards again with diode sweep --slurm --resume "
                        "--db {}, or remove the directory to start over",
                        dir.string(), r.db, r.db, r.db));
    const Scripts texts = scripts(r); // every value checked before anything is written
    const std::string db = fs::absolute(r.db).string();
    const auto planPath = dir / "plan.json";
    const std::string name = printable(r.plan.name);
    fs::create_directories(dir);
    SweepPlan whole = r.plan;
    whole.shard = {};
    writeFile(planPath, frozenPlan(whole).dump(1) + "\n");
    writeFile(dir / "sweep.sbatch", texts.sweep);
    writeFile(dir / "merge.sbatch", texts.merge);

    const std::string array =
        submitScript({}, dir / "sweep.sbatch", fmt::format("the array job of {} shards", r.shards));
    SweepState state;
    state.dir = dir;
    auto tasks = json::array();
    for (int64_t i = 0; i < r.shards; ++i)
        tasks.push_back(i);
    state.doc = {
        {"version", 1},
        {"db", db},
        {"plan", "plan.json"},
        {"plan_name", r.plan.name},
        {"problems", problems},
        {"shards", r.shards},
        {"backend", r.backend},
        {"submissions", json::array({{{"array_job", array}, {"tasks", tasks}, {"submitted_at", utcNow()}}})}};
    state.save(); // before the merge: the array runs whatever happens to it
    std::vector<std::string> lines{
        fmt::format("submitted array job {}: {} tasks, one a shard of plan '{}' ({} problems); script {}",
                    array, r.shards, name, problems, (dir / "sweep.sbatch").string())};
    const std::string merge = submitScript({"--dependency=afterok:" + array}, dir / "merge.sbatch",
                                           "the merge job (the array job is submitted and runs)");
    state.submissions().back()["merge_job"] = merge;
    state.save();
    lines.push_back(fmt::format("submitted merge job {}: into {} after the array succeeds; script {}", merge,
                                db, (dir / "merge.sbatch").string()));
    return lines;
}

int64_t SlurmSweep::checkRecord(const std::string &db) {
    return loadState(db).shards();
}

std::vector<SlurmSweep::ShardState> SlurmSweep::status(const std::string &db,
                                                       std::vector<std::string> *notes) {
    SweepState state = loadState(db);
    const auto jobs = state.jobs();
    const auto queue = squeue(jobs);
    std::string note;
    const auto ended = sacct(jobs, note);
    if (notes && !note.empty())
        notes->push_back(note);
    std::vector<ShardState> out;
    for (int64_t i = 0; i < state.shards(); ++i) {
        ShardState s;
        s.name = fmt::format("shard {}/{}", i, state.shards());
        const auto st = shardStore(shardDb(state.dir, i));
        s.store = st.text;
        s.finished = st.finished;
        s.job = queueText(fmt::format("{}_{}", state.arrayJobOf(i), i), queue, ended);
        out.push_back(std::move(s));
    }
    ShardState m;
    m.name = "merge";
    const auto &last = state.doc["submissions"].back();
    const std::string mergeJob = last.value("merge_job", std::string());
    m.job = mergeJob.empty() ? std::string("no merge job submitted") : queueText(mergeJob, queue, ended);
    const bool shardsFinished =
        std::all_of(out.begin(), out.end(), [](const ShardState &s) { return s.finished; });
    if (fs::exists(state.doc["db"].get<std::string>())) {
        Store merged(state.doc["db"].get<std::string>(), Store::Mode::ReadOnly);
        const size_t runs = merged.runs().size();
        m.store = fmt::format("{} runs, {} measurements in {}", runs, merged.measurementCount(),
                              state.doc["db"].get<std::string>());
        // Merged: every shard finished, the last merge job has left the queue without a failure
        // sacct knows of, and the store holds at least a run a shard (merge keeps each shard's).
        const auto how = ended.find(mergeJob);
        m.finished = shardsFinished && !mergeJob.empty() && !queue.count(mergeJob) &&
                     (how == ended.end() || how->second.rfind("COMPLETED", 0) == 0) &&
                     runs >= size_t(state.shards());
    } else {
        m.store = "not merged yet";
    }
    out.push_back(std::move(m));
    return out;
}

std::vector<std::string> SlurmSweep::resubmit(const std::string &db) {
    shipped::refuseWritingShipped(db, "database");
    SweepState state = loadState(db);
    const auto jobs = state.jobs();
    const auto queue = squeue(jobs);
    std::vector<std::string> lines, tasks, waitOn;
    for (int64_t i = 0; i < state.shards(); ++i) {
        const std::string job = fmt::format("{}_{}", state.arrayJobOf(i), i);
        const auto st = shardStore(shardDb(state.dir, i));
        if (st.finished)
            continue;
        if (auto it = queue.find(job); it != queue.end()) {
            lines.push_back(fmt::format("shard {}/{} is {} (job {}): left to run", i, state.shards(),
                                        it->second.state, job));
            waitOn.push_back(job);
            continue;
        }
        tasks.push_back(std::to_string(i));
        lines.push_back(fmt::format("shard {}/{}: {}{}; submitted again", i, state.shards(), st.text,
                                    st.exists ? "" : " (its task never started)"));
    }
    auto &subs = state.submissions();
    if (tasks.empty()) {
        // Every shard finished, yet no merged store and no merge job waiting: the merge failed or
        // was cancelled. It is idempotent, so it simply runs again.
        const bool mergeQueued =
            subs.back().contains("merge_job") && queue.count(subs.back()["merge_job"].get<std::string>());
        if (waitOn.empty() && !mergeQueued && !fs::exists(state.doc["db"].get<std::string>())) {
            const std::string merge = submitScript({}, state.dir / "merge.sbatch", "the merge job");
            subs.back()["merge_job"] = merge;
            state.save();
            lines.push_back(
                fmt::format("every shard is finished but {} was not written: submitted merge job {}",
                            state.doc["db"].get<std::string>(), merge));
            return lines;
        }
        lines.push_back("nothing to submit again: every shard is finished or still in the queue");
        return lines;
    }
    // The earlier merge waits on an array that failed: it would never run.
    if (subs.back().contains("merge_job")) {
        const std::string old = subs.back()["merge_job"].get<std::string>();
        if (queue.count(old)) {
            runTool({"scancel", old});
            lines.push_back(fmt::format("cancelled merge job {}, which waited on the failed tasks", old));
        }
    }
    const std::string array =
        submitScript({fmt::format("--array={}", fmt::join(tasks, ","))}, state.dir / "sweep.sbatch",
                     fmt::format("shards {} of the array again", fmt::join(tasks, ", ")));
    auto taskIds = json::array();
    for (const auto &t : tasks)
        taskIds.push_back(std::stoll(t));
    subs.push_back({{"array_job", array}, {"tasks", taskIds}, {"submitted_at", utcNow()}});
    state.save();
    lines.push_back(fmt::format("submitted array job {}: shards {}", array, fmt::join(tasks, ", ")));
    waitOn.insert(waitOn.begin(), array);
    const std::string merge = submitScript({fmt::format("--dependency=afterok:{}", fmt::join(waitOn, ":"))},
                                           state.dir / "merge.sbatch", "the merge job");
    subs.back()["merge_job"] = merge;
    state.save();
    lines.push_back(fmt::format("submitted merge job {} after {}", merge, fmt::join(waitOn, ", ")));
    return lines;
}

} // namespace diode
