// diode: the command line face of the workbench (docs/CLI.md). Exit codes: 0 success,
// 1 a failure while running, 2 bad input or usage, 3 the backend cannot run on this machine.

#include "characterisecommand.h"
#include "decisioncommands.h"
#include "democommand.h"
#include "modelcommands.h"
#include "progressbar.h"
#include "terminal.h"
#include "validators.h"
#include "workeroptions.h"

#include "diode/analysis/bias.h"
#include "diode/analysis/dataset.h"
#include "diode/analysis/runcomparison.h"
#include "diode/analysis/wording.h"
#include "diode/config.h"
#include "diode/infer/atomicfile.h"
#include "diode/infer/lookuptable.h"
#include "diode/infer/modelpackage.h"
#include "diode/infer/outputpath.h"
#include "diode/infer/problemjson.h"
#include "diode/infer/shippeddata.h"
#include "diode/store/datamix.h"
#include "diode/store/exporter.h"
#include "diode/store/importer.h"
#include "diode/store/store.h"
#include "diode/sweep/hardware.h"
#include "diode/sweep/shardmerge.h"
#include "diode/sweep/slurmsweep.h"
#include "diode/sweep/sweepplan.h"
#include "diode/sweep/sweeprunner.h"
#include "diode/sweep/sweepsession.h"
#include "diode/train/trainoptions.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <unistd.h>

using namespace diode;
using diode::cli::say;
using diode::cli::show;

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitUnavailable = 3;

std::atomic<SweepSession *> g_session{nullptr};

// SIGTERM (kill, systemd, a batch scheduler's timeout) is a cancel like Ctrl-C: the run ends
// `cancelled`, resumable, instead of dying with its status left `running`; a worker still starting
// is stopped too. A second one ends the process at once, its workers with it.
void onInterrupt(int sig) {
    if (auto *s = g_session.load())
        s->cancel();
    cli::onSecondSignal(sig);
}

struct SweepOptions {
    std::string backend;
    std::string plan;
    std::string db;
    std::string python;
    bool resume = false;
    bool adoptForeign = false;
    std::string shard;
    double deadlineS = 0;
    bool slurm = false;
    bool status = false;
    int64_t shards = 0;
    std::string slurmConfig;
    SlurmOptions slurmOptions;
    bool allowMixedData = false;
    cli::WorkerOptions workers;
    std::vector<std::string> skipMeasured;
};

// `diode sweep --slurm` and `--status`: the same plan and backend checks, the sweep itself run
// by Slurm's tasks (each a `diode sweep --shard`), merged by `diode merge`.
int runSlurmSweep(const SweepOptions &o) {
    if (o.status) {
        std::vector<std::string> notes;
        const auto states = SlurmSweep::status(o.db, &notes);
        for (const auto &s : states)
            show("{:<12} {:<34} {}\n", s.name, s.store, s.job);
        for (const auto &n : notes)
            show("note: {}\n", n);
        return 0;
    }
    std::vector<std::string> lines;
    if (o.resume) {
        if (!o.plan.empty() || o.shards || !o.skipMeasured.empty())
            throw InvalidInput(
                "--slurm --resume submits the unfinished shards of the sweep of --db again; it "
                "takes no --plan, --shards or --skip-measured");
        lines = SlurmSweep::resubmit(o.db);
    } else {
        SlurmSweep::Request r;
        if (o.plan.empty() || o.backend.empty() || o.shards < 1)
            throw InvalidInput("sweep --slurm needs --plan, --backend and --shards N (the array's tasks)");
        if (!o.shard.empty() || o.deadlineS > 0)
            throw InvalidInput(
                "sweep --slurm makes the shards itself (--shards N) and its tasks end at Slurm's "
                "time limit (--time); --shard and --deadline are for one task");
        r.plan = SweepPlan::load(o.plan);
        if (removeMeasured(r.plan, o.skipMeasured) && r.plan.problems.empty())
            throw InvalidInput(fmt::format("nothing to submit: every problem of plan '{}' is measured in {}",
                                           r.plan.name, fmt::join(o.skipMeasured, ", ")));
        r.db = o.db;
        r.backend = o.backend;
        r.shards = o.shards;
        r.python = o.python;
        r.workersPerGpu = o.workers.perGpuCount();
        if (!o.workers.gpus.empty())
            throw InvalidInput(
                "--gpus is for a sweep on this host; each Slurm task sweeps on the GPU Slurm gives it");
        if (!o.slurmConfig.empty())
            r.slurm = SlurmOptions::load(o.slurmConfig);
        r.slurm.overrideWith(o.slurmOptions);
        lines = SlurmSweep::submit(r);
    }
    for (const auto &l : lines)
        show("{}\n", l);
    show("follow it with: diode sweep --status --db {}\n", o.db);
    return 0;
}

Store::Foreign foreignPolicy(bool adopt) {
    return adopt ? Store::Foreign::Adopt : Store::Foreign::Refuse;
}

// The same session as the workbench's Sweep page (core/sweep/diode/sweep/sweepsession.h); this face prints.
int runSweep(const SweepOptions &o) {
    if (o.slurm || o.status)
        return runSlurmSweep(o);
    if (o.shards)
        throw InvalidInput("--shards N is for --slurm; one sweep measures one shard with --shard i/n");
    SweepSession::Request req;
    if (!o.plan.empty())
        req.plan = SweepPlan::load(o.plan); // rejects bad plans before anything runs
    // Once adopted (diode's tables added) the database is ours, and every later open reads it.
    if (o.adoptForeign) {
        Store adopted(o.db, Store::Mode::ReadWrite, Store::Foreign::Adopt);
    }
    req.db = o.db;
    req.backend = o.backend;
    req.python = o.python;
    req.resume = o.resume;
    if (!o.shard.empty())
        req.shard = PlanShard::parse(o.shard);
    req.deadlineS = o.deadlineS;
    req.allowMixedData = o.allowMixedData;
    o.workers.apply(req.workersPerGpu, req.gpus);
    req.skipMeasured = o.skipMeasured;
    SweepSession session(req);
    if (!session.nothingToDo().empty()) {
        say("{}\n", session.nothingToDo());
        return 0;
    }
    if (session.resumed())
        say("resuming run {} ({} backend, plan '{}')\n", session.runId(), session.backend(),
            printable(session.plan().name));
    cli::ProgressBar bar(stderr);
    session.setProgressCallback([&](const SweepProgress &p) { bar.update(p); });
    g_session = &session;
    std::signal(SIGINT, onInterrupt);
    std::signal(SIGTERM, onInterrupt);
    std::string status;
    try {
        status = session.run([&](int64_t runId) { say("{}\n", session.runLine(runId)); });
    } catch (const BackendUnavailable &e) {
        g_session = nullptr;
        say("error: {}\n", e.what());
        return kExitUnavailable;
    } catch (...) {
        g_session = nullptr;
        throw;
    }
    g_session = nullptr;
    bar.finish();
    const int64_t runId = session.runId();
    if (runId == 0) { // cancelled while the workers started
        say("cancelled before the run started: nothing was created or changed in {}\n", printable(o.db));
        return kExitFailure;
    }
    // Read-write, as the sweep was: SQLite removes the -wal and -shm files when the last
    // connection closes, unless that one is read-only, and this is the last.
    Store store(o.db);
    say("run {} {}: {} measurements stored\n", runId, status, store.measurementCount(runId));
    if (status == "deadline")
        say("deadline of {} s reached: no problem started after it\n", o.deadlineS);
    if (status == "cancelled" || status == "deadline")
        say("continue it with: diode sweep --resume --db {}\n", o.db);
    return status == "finished" ? 0 : kExitFailure;
}

int runMerge(const std::string &out, const std::vector<std::string> &inputs, const MergeOptions &o) {
    const auto r = mergeShards(out, inputs, o);
    for (const auto &in : r.inputs)
        show("{}: {}\n", in.path, in.what);
    show("{}: {} runs, {} problems, {} measurements, {} kernel and site lines added\n", out, r.runsAdded,
         r.problemsAdded, r.measurementsAdded, r.caseLinesAdded);
    return 0;
}

int runImport(const std::vector<std::string> &files, const std::string &db, bool again, bool adoptForeign,
              bool allowMixedData) {
    for (const auto &f : files) // read whole, then written: the database cannot be its own input
        if (std::error_code ec; std::filesystem::exists(db, ec) && std::filesystem::equivalent(db, f, ec))
            throw InvalidInput(
                fmt::format("'{}' is the database --db '{}' itself; import reads problem JSON lines "
                            "or a torch-diode dataset into it (diode merge joins stores)",
                            f, db));
    // A database this import makes is removed again if a file is refused before anything is stored.
    std::error_code ec;
    const bool made = !std::filesystem::exists(db, ec) || std::filesystem::file_size(db, ec) == 0;
    std::optional<Store> store;
    try {
        store.emplace(db, Store::Mode::ReadWrite, foreignPolicy(adoptForeign));
        for (const auto &f : files) {
            const auto r = importFile(*store, f, again, allowMixedData);
            if (r.format == "kernel-site-lines")
                show("{}: {} ({})\n", f, r.format, describe(r.lines));
            else
                show("{}: {} ({} runs, {} problems, {} measurements)\n", f, r.format, r.runs, r.problems,
                     r.measurements);
        }
    } catch (...) {
        store.reset();
        if (made)
            removeEmptyDatabase(db);
        throw;
    }
    return 0;
}

// Writes `path` through `write` beside it and renames, so a failure (or a reader meanwhile) never
// sees half a file. Returns what `write` returned. An output onto one of `inputs`, onto anything but
// a regular file, or into shipped data is refused before anything is read or written.
template <typename Write>
int64_t writeBesideAndRename(const std::string &path, const std::vector<std::string> &inputs, Write &&write) {
    refuseOutputPath(path, inputs, "--out");
    return writeFileAtomically<std::runtime_error>(path, std::forward<Write>(write));
}

// The format a file's name says: "csv" for .csv, "jsonl" for .jsonl or .ndjson, "" for any other.
std::string formatOfName(const std::string &path) {
    if (lowerExtension(path) == ".csv")
        return "csv";
    if (isProblemLinesName(path))
        return "jsonl";
    return {};
}

// The kind of file a format writes, as formatOfName tells it from a name: CSV, or JSON lines (problem
// lines and kernel and site lines alike).
std::string fileKindOf(const std::string &format) {
    return format == "csv" ? "csv" : "jsonl";
}

// Without --format the file's name decides (jsonl for standard output and other names); a
// --format its name contradicts (JSON lines in x.csv) is refused before anything is written.
int runExport(const std::string &db, std::string format, const std::string &outPath) {
    const bool toFile = !outPath.empty() && outPath != "-";
    const std::string named = toFile ? formatOfName(outPath) : std::string();
    if (format.empty())
        format = named.empty() ? "jsonl" : named;
    else if (!named.empty() && named != fileKindOf(format))
        throw InvalidInput(fmt::format("--format {} does not match --out '{}', whose name says {}; give "
                                       "--format {}, or name the file .{}",
                                       format, outPath, named, named, fileKindOf(format)));
    if (toFile)
        refuseOutputPath(outPath, {db}, "--out"); // before the store is opened
    Store store(db, Store::Mode::ReadOnly);
    auto write = [&](std::ostream &os) {
        return format == "csv"           ? exportCsv(store, os)
               : format == "kernel-site" ? exportDecisionLines(store, os)
                                         : exportJsonl(store, os);
    };
    if (!toFile) {
        write(std::cout);
        return 0;
    }
    const int64_t n = writeBesideAndRename(outPath, {db}, write);
    say("{} rows written to {} ({})\n", n, outPath, format);
    return 0;
}

// Names read from a store (GPUs, backends), each escaped: a name with a line break stays one name.
std::string printableList(const std::vector<std::string> &names) {
    std::vector<std::string> out;
    for (const auto &n : names)
        out.push_back(printable(n));
    return fmt::format("{}", fmt::join(out, ", "));
}

// The shipped dataset is a training store plus held-out problem lines kept out of it; with
// `heldout` files the summary covers both, and says if any held-out problem is in the store.
int runStats(const std::string &db, bool asJson, const std::vector<std::string> &heldout) {
    if (!std::filesystem::exists(db))
        throw InvalidInput(fmt::format("database '{}' does not exist", db));
    Store store(db, Store::Mode::ReadOnly);
    const auto st = store.stats();
    std::optional<ProblemFileStats> held;
    std::map<std::string, std::set<GemmProblem>> all; // the store's problems and the held-out ones
    std::map<std::string, int64_t> totalByGpu;
    int64_t total = 0, overlap = 0;
    if (!heldout.empty()) {
        std::vector<ProblemRecord> records;
        for (const auto &path : heldout) {
            auto r = readProblemFile(path);
            records.insert(records.end(), std::make_move_iterator(r.begin()),
                           std::make_move_iterator(r.end()));
        }
        held = problemFileStats(records);
        all = store.storedProblemsByGpu();
        std::set<GemmProblem> stored;
        for (const auto &[gpu, problems] : all)
            stored.insert(problems.begin(), problems.end());
        for (const auto &[gpu, problems] : held->problemsByGpu)
            all[gpu].insert(problems.begin(), problems.end());
        const auto heldAll = held->problems();
        for (const auto &p : heldAll)
            overlap += stored.count(p);
        stored.insert(heldAll.begin(), heldAll.end());
        total = int64_t(stored.size());
        for (const auto &[gpu, problems] : all)
            totalByGpu[gpu] = int64_t(problems.size());
    }
    if (asJson) {
        auto j = st.toJson();
        if (held) {
            j["heldout"] = held->toJson();
            j["heldout"]["files"] = heldout;
            j["dataset"] = {
                {"problems", total}, {"problems_by_gpu", totalByGpu}, {"heldout_problems_in_db", overlap}};
        }
        show("{}\n", cli::jsonText(j, 2));
        return 0;
    }
    // Problems counted as every face counts them: distinct, in their problem lines (wording.h).
    show("database      {}\nruns          {}\nproblems      {} ({} failed)\nmeasurements  {} ({} failed)\n"
         "kernel configs {}\ngpus          {}\nops           {}\ndtypes        {}\nbackends      {}\n",
         db, st.runs, problemCount(size_t(st.problems), size_t(st.problemLines)), st.failedProblems,
         st.measurements, st.failedMeasurements, st.configs, printableList(st.gpus), fmt::join(st.ops, ", "),
         fmt::join(st.dtypes, ", "), printableList(st.backends));
    for (const auto &[method, n] : st.measurementsByMethod) {
        const auto failed = st.failedByMethod.find(method);
        show("  {:<18} {} measurements ({} failed)\n", method, n,
             failed == st.failedByMethod.end() ? 0 : failed->second);
    }
    for (const auto &[gpu, n] : st.problemsByGpu)
        show("  {:<18} {} problems\n", gpu.empty() ? "(no GPU)" : printable(gpu), n);
    show("baselines     {}\ndefault method {}\n", st.baselines, st.defaultMethod.describe());
    if (const auto note = st.caseLinesNote(); !note.empty())
        show("kernel and site lines {}\n", note);
    if (const auto note = st.warmColdGlitchNote(); !note.empty())
        show("warning: {}\n", note);
    if (held) {
        show("held out      {} ({} failed), {} measurements ({} failed); {}\n",
             problemCount(held->problems().size(), size_t(held->lines)), held->failedProblems,
             held->measurements, held->failedMeasurements, fmt::join(heldout, ", "));
        for (const auto &[tag, n] : held->linesByTag)
            show("  {:<18} {} lines\n", tag.empty() ? "(untagged)" : printable(tag), n);
        show("dataset       {} problems (database and held out)\n", total);
        for (const auto &[gpu, n] : totalByGpu)
            show("  {:<18} {} problems\n", gpu.empty() ? "(no GPU)" : printable(gpu), n);
        if (overlap > 0)
            show("warning: {} held-out problems are also in the database (trained on)\n", overlap);
    }
    return 0;
}

struct BiasOptions {
    std::string db, input, method = "graph_warm";
    bool json = false;
};

int runBias(const BiasOptions &o) {
    const auto method = parseTimingMethod(o.method); // graph_warm or graph_cold: checked by the parser
    BiasReport report;
    if (!o.db.empty()) {
        if (!std::filesystem::exists(o.db))
            throw InvalidInput(fmt::format("database '{}' does not exist", o.db));
        Store store(o.db, Store::Mode::ReadOnly);
        report = computeBias(store, *method);
    } else {
        report = computeBias(readProblemFile(o.input), *method);
    }
    if (report.problems.empty())
        throw InvalidInput(fmt::format("{} holds no problem with {} times: the bias view needs data from the "
                                       "in-graph worker (docs/FORMATS.md)",
                                       o.db.empty() ? o.input : o.db, toString(*method)));
    if (o.json)
        show("{}\n", cli::jsonText(biasToJson(report), 1));
    else
        show("{}", formatBiasTable(report));
    return 0;
}

struct CompareOptions {
    std::string a, b;
    std::optional<int64_t> runA, runB;
    std::vector<std::string> methods;
    bool json = false;
};

// Two measurements of the same problems, candidate by candidate, by each method asked (by default
// each in-graph method both inputs have times of).
int runCompare(const CompareOptions &o) {
    const auto a = readRecords(o.a, o.runA), b = readRecords(o.b, o.runB);
    std::vector<TimingMethod> methods;
    for (const auto &name : o.methods) // names CLI11 checked against timingMethodNameList()
        methods.push_back(*parseTimingMethod(name));
    if (methods.empty()) {
        const auto inA = methodCounts(a), inB = methodCounts(b);
        for (const auto m : {TimingMethod::GraphWarm, TimingMethod::GraphCold})
            if (inA.count(m) && inB.count(m))
                methods.push_back(m);
        if (methods.empty())
            throw InvalidInput(
                fmt::format("{} and {} share no in-graph timing method (graph_warm, graph_cold); "
                            "name one with --method",
                            o.a, o.b));
    }
    nlohmann::json all = nlohmann::json::array();
    for (const auto m : methods) {
        const auto c = compareRuns(a, b, m);
        if (o.json)
            all.push_back(c.toJson());
        else
            show("{}", formatRunComparison(c, "A", "B"));
    }
    if (o.json)
        show("{}\n", cli::jsonText(all, 1));
    else
        show("A: {}{}\nB: {}{}\n", o.a, o.runA ? fmt::format(", run {}", *o.runA) : "", o.b,
             o.runB ? fmt::format(", run {}", *o.runB) : "");
    return 0;
}

int runHw(bool asJson) {
    const auto r = HardwareMonitor().report();
    if (asJson) {
        auto gpus = nlohmann::json::array();
        for (const auto &g : r.gpus)
            gpus.push_back({{"vendor", g.vendor},
                            {"index", g.index},
                            {"name", g.name},
                            {"sm_count", g.smCount},
                            {"memory_mb", g.memoryMb},
                            {"driver", g.driver},
                            {"max_sm_clock_mhz", g.maxSmClockMhz},
                            {"max_mem_clock_mhz", g.maxMemClockMhz},
                            {"uuid", g.uuid}});
        nlohmann::json j{{"host", r.host},
                         {"cpu", r.cpu},
                         {"cpu_threads", r.cpuThreads},
                         {"gpus", gpus},
                         {"notes", r.notes}};
        show("{}\n", cli::jsonText(j, 2));
        return 0;
    }
    show("host   {}\ncpu    {} ({} threads)\n", r.host, r.cpu, r.cpuThreads);
    if (r.gpus.empty())
        show("gpus   none detected\n");
    for (const auto &g : r.gpus)
        show("gpu {}  {} ({}), {} SMs, {} MiB, driver {}, max clocks SM {} MHz / memory {} MHz\n", g.index,
             g.name, g.vendor, g.smCount, g.memoryMb, g.driver, g.maxSmClockMhz, g.maxMemClockMhz);
    for (const auto &n : r.notes)
        show("note   {}\n", n);
    return 0;
}

struct PlanOptions {
    std::string path;
    bool count = false;
    bool expand = false;
    std::string out;
};

int runPlan(const PlanOptions &o) {
    const auto plan = SweepPlan::load(o.path); // refuses a bad plan, naming the entry and field
    if (o.count) {
        show("{}\n", plan.problems.size());
        return 0;
    }
    if (!o.expand) {
        show("{}: {} problems (plan '{}', search space {}, timeout {} s; cpu backend: {} configurations x {} "
             "repeats)\n",
             o.path, plan.problems.size(), printable(plan.name), plan.searchSpace, plan.timeoutS,
             plan.cpuConfigs.size(), plan.repeats);
        return 0;
    }
    if (o.out.empty() || o.out == "-") {
        writeExpandedProblems(plan, std::cout);
        return 0;
    }
    const int64_t n = writeBesideAndRename(o.out, {o.path},
                                           [&](std::ostream &os) { return writeExpandedProblems(plan, os); });
    say("{} problems written to {}\n", n, o.out);
    return 0;
}

int runLookupTable(const std::vector<std::string> &inputs, const std::string &out) {
    refuseOutputPath(out, inputs, "--out");
    LookupTable t;
    for (const auto &path : inputs) {
        std::ifstream in(path);
        if (!in)
            throw InvalidInput(fmt::format("cannot read '{}'", path));
        t.add(in, path);
    }
    if (t.table.empty())
        throw InvalidInput(fmt::format("no decision in {} carries an Inductor lookup entry ({} lines read; "
                                       "record them with torch_diode.record_decisions under torch >= 2.10)",
                                       fmt::join(inputs, ", "), t.lines));
    writeBesideAndRename(out, inputs, [&](std::ostream &os) {
        os << t.table.dump(1) << "\n";
        return int64_t(t.table.size());
    });
    say("{} GEMMs written to {} from {} decision lines ({} repeated, {} without a lookup entry); use with "
        "torch._inductor.config.lookup_table.table and LookupTableChoices (docs/FORMATS.md)\n",
        t.table.size(), out, t.lines, t.repeated, t.withoutEntry);
    return 0;
}

} // namespace

#if DIODE_CLI_EXECS_TRAIN
// `diode train` and `diode characterise` run in diode-train, the one executable that links
// LibTorch (289 shared libraries, 0.5-0.9 s to load): every other command starts without it.
[[noreturn]] void execTrain(char **argv) {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    const auto train = (ec ? std::filesystem::path(argv[0]) : self).parent_path() / "diode-train";
    ::execv(train.c_str(), argv);
    say("error: diode {} runs {}, which cannot be started: {}. It is built with LibTorch "
        "(libtorch-dev) next to diode.\n",
        argv[1], train.string(), std::strerror(errno));
    std::exit(3);
}
#endif

int main(int argc, char **argv) {
    // A file size limit (ulimit -f, a batch scheduler's quota) would end the process with
    // SIGXFSZ in the middle of a write, without a word; ignored, the write fails with EFBIG and
    // the store says which database and why, as for a full disk.
    std::signal(SIGXFSZ, SIG_IGN);
#if DIODE_HAVE_TORCH && !DIODE_CLI_EXECS_TRAIN
    // diode-train run directly: LibTorch's OpenMP read its wait policy before main(), so a policy
    // set now would be too late. Run again with it set (once: the new image finds it set, as it
    // does any value the user chose); if that fails, carry on spinning rather than not at all.
    if (!std::getenv("OMP_WAIT_POLICY")) {
        diode::preferPassiveThreadWaits();
        ::execv("/proc/self/exe", argv);
    }
#endif
    diode::preferPassiveThreadWaits();
#if DIODE_CLI_EXECS_TRAIN
    if (argc > 1 && (std::string_view(argv[1]) == "train" || std::string_view(argv[1]) == "characterise"))
        execTrain(argv);
#endif
    CLI::App app{
        "diode: GEMM benchmark sweeps, measurement store and datasets for torch.compile kernel selection"};
    app.set_version_flag("--version", std::string("diode ") + DIODE_VERSION);
    app.require_subcommand(1);

    SweepOptions sweep;
    auto *cmdSweep =
        app.add_subcommand("sweep", "Measure a sweep plan into a database, or resume an interrupted run");
    cmdSweep
        ->add_option("--backend", sweep.backend,
                     "inductor (GPU, via the Python worker) or cpu (reference GEMM)")
        ->check(CLI::IsMember({"inductor", "cpu"}));
    cmdSweep->add_option("--plan", sweep.plan, "sweep plan JSON (docs/PLANS.md)")->check(CLI::ExistingFile);
    cmdSweep->add_option("--db", sweep.db, "SQLite database (created if missing)")->required();
    cmdSweep->add_flag("--resume", sweep.resume, "continue the newest unfinished run in --db");
    const char *adoptHelp =
        "add diode's tables to a SQLite database that holds another program's tables (refused "
        "without this flag; the database is switched to WAL)";
    cmdSweep->add_flag("--adopt-foreign-db", sweep.adoptForeign, adoptHelp);
    cmdSweep->add_flag("--allow-mixed-data", sweep.allowMixedData,
                       "add the run to a database whose data has another backend, GPU or timing method "
                       "(refused without it, naming what would mix)");
    sweep.workers.addTo(cmdSweep);
    cmdSweep
        ->add_option(
            "--skip-measured", sweep.skipMeasured,
            "stores (.db) or problem JSON lines whose measured problems this new run leaves out: what "
            "another machine or an earlier sweep did (a problem that failed as a whole is measured again)")
        ->check(CLI::ExistingFile);
    cmdSweep->add_option("--python", sweep.python,
                         "interpreter for the inductor worker (default $DIODE_PYTHON or python3)");
    cmdSweep->add_option("--shard", sweep.shard,
                         "i/n: measure only the plan's problems whose index is i modulo n (0 <= i < n); "
                         "shards 0/n .. n-1/n cover the plan once, each in its own --db, for diode merge");
    cmdSweep
        ->add_option("--deadline", sweep.deadlineS,
                     "seconds: start no problem after this long; the run stays resumable (exit 1)")
        ->check(cli::numberIn(0, std::numeric_limits<double>::infinity(), true));
    auto *slurmFlag = cmdSweep->add_flag(
        "--slurm", sweep.slurm,
        "submit the sweep to Slurm as an array job, one task a shard, and a merge job after it into --db "
        "(the scripts, shard stores and logs in DB.shards/); with --resume: submit the failed, timed-out or "
        "never-started shards again");
    cmdSweep
        ->add_flag("--status", sweep.status,
                   "show a Slurm sweep's shards: their stores' progress and squeue/sacct state")
        ->excludes(slurmFlag);
    cmdSweep->add_option("--shards", sweep.shards, "with --slurm: the number of shards (array tasks)")
        ->check(cli::integerIn(1, planlimits::kMaxProblems));
    cmdSweep
        ->add_option("--slurm-config", sweep.slurmConfig,
                     "JSON file of Slurm options (partition, account, time, gres, cpus_per_task, setup, "
                     "launcher, sbatch_args, diode; docs/FORMATS.md); the options below win")
        ->check(CLI::ExistingFile);
    cmdSweep->add_option("--partition", sweep.slurmOptions.partition, "with --slurm: sbatch --partition");
    cmdSweep->add_option("--account", sweep.slurmOptions.account, "with --slurm: sbatch --account");
    cmdSweep->add_option("--time", sweep.slurmOptions.timeLimit,
                         "with --slurm: each task's time limit (sbatch --time, e.g. 02:00:00)");
    cmdSweep->add_option(
        "--gres", sweep.slurmOptions.gres,
        "with --slurm: each task's generic resources (default gpu:1 for inductor, none for cpu)");
    cmdSweep
        ->add_option("--cpus-per-task", sweep.slurmOptions.cpusPerTask,
                     "with --slurm: sbatch --cpus-per-task")
        ->check(cli::integerIn(1, 4096));

    std::string mergeOut;
    std::vector<std::string> mergeInputs;
    MergeOptions mergeOpts;
    auto *cmdMerge = app.add_subcommand(
        "merge",
        "Join shard stores (diode sweep --shard) and problem JSON lines into one store, idempotently");
    cmdMerge->add_option("out", mergeOut, "the merged SQLite database (created if missing)")->required();
    cmdMerge->add_option("shards", mergeInputs, "shard databases and problem JSON lines files")->required();
    cmdMerge->add_flag("--allow-mixed", mergeOpts.allowMixed,
                       "merge runs of different plans, or one plan's shards from different GPUs, backends or "
                       "torch/Triton versions");
    cmdMerge->add_flag("--partial", mergeOpts.partial,
                       "merge although shards are missing or unfinished (resume them and merge again later)");

    std::vector<std::string> importFiles;
    std::string importDb;
    auto *cmdImport =
        app.add_subcommand("import", "Import problem JSON lines or a torch-diode dataset (JSON or msgpack)");
    cmdImport->add_option("files", importFiles, "files to import, each in one transaction")
        ->required()
        ->check(CLI::ExistingFile);
    cmdImport->add_option("--db", importDb, "SQLite database (created if missing)")->required();
    bool importAgain = false, importAdopt = false, importMixed = false;
    cmdImport->add_flag("--again", importAgain,
                        "import a file whose content this database already holds once more");
    cmdImport->add_flag("--allow-mixed-data", importMixed,
                        "import a file of another GPU or timing method into a database that holds data");
    cmdImport->add_flag("--adopt-foreign-db", importAdopt, adoptHelp);

    std::string exportDb, exportFormat, exportOut;
    auto *cmdExport = app.add_subcommand(
        "export", "Write every measurement as problem JSON lines or CSV, or the kernel and site lines");
    cmdExport->add_option("--db", exportDb, "SQLite database")->required()->check(CLI::ExistingFile);
    cmdExport
        ->add_option(
            "--format", exportFormat,
            "jsonl or csv (default: what --out's name says, .csv or .jsonl; else jsonl); one its "
            "name contradicts is refused. kernel-site: the kernel and site lines (diode sweep-kernels)")
        ->check(CLI::IsMember({"jsonl", "csv", "kernel-site"}));
    cmdExport->add_option("--out", exportOut, "output file (default: standard output)");

    std::string statsDb;
    std::vector<std::string> statsHeldout;
    bool statsJson = false;
    auto *cmdStats =
        app.add_subcommand("stats", "Summarise a database: runs, problems, measurements, GPUs, ops, dtypes");
    cmdStats->add_option("--db", statsDb, "SQLite database")->required();
    cmdStats->add_flag("--json", statsJson, "print JSON");
    cmdStats
        ->add_option("--heldout", statsHeldout,
                     "held-out problem JSON lines shipped beside the database: summarised too, with the "
                     "whole dataset's problem count (repeatable)")
        ->check(CLI::ExistingFile);

    BiasOptions biasOpts;
    auto *cmdBias = app.add_subcommand(
        "bias",
        "Where max-autotune's own benchmark misleads it: its picks, plain torch.compile and the best ATen "
        "kernel against the fastest candidate in CUDA graphs, by op, dtype and size");
    auto *biasDb = cmdBias->add_option("--db", biasOpts.db, "SQLite database");
    auto *biasInput = cmdBias->add_option("--input", biasOpts.input, "problem JSON lines (version 2)")
                          ->check(CLI::ExistingFile);
    biasDb->excludes(biasInput);
    cmdBias->add_option("--method", biasOpts.method, "in-graph method")
        ->capture_default_str()
        ->check(CLI::IsMember(std::vector<std::string>{std::string(toString(TimingMethod::GraphWarm)),
                                                       std::string(toString(TimingMethod::GraphCold))}));
    cmdBias->add_flag("--json", biasOpts.json, "print groups and per-problem rows as JSON");

    CompareOptions compareOpts;
    auto *cmdCompare = app.add_subcommand(
        "compare",
        "Compare two measurements of the same problems (runs, machines): per candidate, the fastest of each "
        "problem, and each run's fastest scored on the other run's times (cross-run top-1: a reference for a "
        "model's)");
    cmdCompare->add_option("a", compareOpts.a, "problem JSON lines or a store (A)")
        ->required()
        ->check(CLI::ExistingFile);
    cmdCompare
        ->add_option("b", compareOpts.b,
                     "problem JSON lines or a store (B; the same store as A with --run-a and --run-b "
                     "compares two of its runs)")
        ->required()
        ->check(CLI::ExistingFile);
    cmdCompare->add_option("--run-a", compareOpts.runA, "A is a store: only this run of it")
        ->check(cli::integerIn(1));
    cmdCompare->add_option("--run-b", compareOpts.runB, "B is a store: only this run of it")
        ->check(cli::integerIn(1));
    cmdCompare
        ->add_option("--method", compareOpts.methods,
                     "timing method (repeatable); default: graph_warm and graph_cold where both have them")
        ->check(CLI::IsMember(timingMethodNameList()));
    cmdCompare->add_flag("--json", compareOpts.json, "print JSON");

    bool hwJson = false;
    auto *cmdHw = app.add_subcommand("hw", "Show the detected CPU and GPUs (NVML, ROCm SMI)");
    cmdHw->add_flag("--json", hwJson, "print JSON");

    PlanOptions planOpts;
    auto *cmdPlan =
        app.add_subcommand("plan", "Validate a sweep plan; count or expand its problems (docs/PLANS.md)");
    cmdPlan->add_option("file", planOpts.path, "sweep plan JSON")->required()->check(CLI::ExistingFile);
    auto *planCount = cmdPlan->add_flag("--count", planOpts.count, "print only the number of problems");
    auto *planExpand = cmdPlan->add_flag(
        "--expand", planOpts.expand,
        "print the problems as problem JSON lines with the plan's search_space and name, for "
        "`python3 -m torch_diode.tools.worker --problems`");
    planExpand->excludes(planCount);
    cmdPlan->add_option("--out", planOpts.out, "with --expand: write the lines to this file")
        ->needs(planExpand);

    std::vector<std::string> lookupInputs;
    std::string lookupOut;
    auto *cmdLookup = app.add_subcommand(
        "lookup-table",
        "Turn recorded plugin decisions into Inductor's own lookup table (deploy without the plugin)");
    cmdLookup->add_option("decisions", lookupInputs, "JSON lines from torch_diode.record_decisions(path)")
        ->required()
        ->check(CLI::ExistingFile);
    cmdLookup->add_option("--out", lookupOut, "the table (JSON)")->required();

    const auto runModelCommand = cli::addModelCommands(app);
    const auto runDemoCommand = cli::addDemoCommand(app);
    const auto runCharacteriseCommand = cli::addCharacteriseCommand(app);
    const auto runDecisionCommand = cli::addDecisionCommands(app);

    // CLI11 would answer "A subcommand is required" to a mistyped one.
    if (argc > 1 && argv[1][0] != '-') {
        std::vector<std::string> names;
        for (const auto *c : app.get_subcommands([](CLI::App *) { return true; }))
            names.push_back(c->get_name());
        if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
            say("error: unknown command '{}'; the commands are {} (diode --help says what each does)\n",
                printable(argv[1]), fmt::join(names, ", "));
            return kExitBadInput;
        }
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        // --help and --version end here with 0; a usage error is bad input like any other, said with
        // what the user typed escaped (a file name may hold escape sequences).
        if (e.get_exit_code() == 0)
            return app.exit(e);
        say("{}\nRun with --help for more information.\n", e.what());
        return kExitBadInput;
    }
    const int rc = [&]() -> int {
        try {
            if (const int rc = runModelCommand(); rc >= 0)
                return rc;
            if (const int rc = runDemoCommand(); rc >= 0)
                return rc;
            if (const int rc = runCharacteriseCommand(); rc >= 0)
                return rc;
            if (const int rc = runDecisionCommand(); rc >= 0)
                return rc;
            if (*cmdSweep)
                return runSweep(sweep);
            if (*cmdMerge)
                return runMerge(mergeOut, mergeInputs, mergeOpts);
            if (*cmdImport)
                return runImport(importFiles, importDb, importAgain, importAdopt, importMixed);
            if (*cmdExport)
                return runExport(exportDb, exportFormat, exportOut);
            if (*cmdStats)
                return runStats(statsDb, statsJson, statsHeldout);
            if (*cmdHw)
                return runHw(hwJson);
            if (*cmdCompare)
                return runCompare(compareOpts);
            if (*cmdBias) {
                if (biasOpts.db.empty() && biasOpts.input.empty())
                    throw InvalidInput("bias needs --db or --input");
                return runBias(biasOpts);
            }
            if (*cmdPlan)
                return runPlan(planOpts);
            if (*cmdLookup)
                return runLookupTable(lookupInputs, lookupOut);
        } catch (const DataMixRefused &e) {
            say("error: {}. Nothing was written. Use another database, or pass --allow-mixed-data if it "
                "belongs with the data there\n",
                e.what());
            return kExitBadInput;
        } catch (const InvalidInput &e) {
            say("error: {}\n", e.what());
            return kExitBadInput;
        } catch (const PackageError &e) {
            say("error: {}\n", e.what());
            return kExitBadInput;
        } catch (const StoreUnreadable &e) { // not a database, corrupt, missing: bad input
            say("error: {}\n", e.what());
            return kExitBadInput;
        } catch (const StoreError &e) {
            say("error: {}\n", e.what());
            return kExitFailure;
        } catch (const BackendUnavailable &e) {
            say("error: {}\n", e.what());
            return kExitUnavailable;
        } catch (const std::exception &e) {
            say("error: {}\n", e.what());
            return kExitFailure;
        }
        return 0;
    }();
    // Output cut short (a full disk, a closed pipe) is a failure, not a success with less output.
    if (!cli::finishOutput() && rc == 0)
        return kExitFailure;
    return rc;
}
