#include "characterisejob.h"

#include "diode/analysis/bias.h"
#include "diode/analysis/datasplit.h"
#include "diode/analysis/decisionevaluation.h"
#include "diode/analysis/predictiontable.h"
#include "diode/analysis/wording.h"
#include "diode/infer/atomicfile.h"
#include "diode/infer/modelinstall.h"
#include "diode/infer/outputpath.h"
#include "diode/infer/problemjson.h"
#include "diode/infer/removetree.h"
#include "diode/infer/shippeddata.h"
#include "diode/store/decisionstore.h"
#include "diode/store/store.h"
#include "diode/sweep/kernelsweep.h"
#include "diode/sweep/sweepsession.h"
#include "diode/train/trainingjob.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

namespace diode {

namespace fs = std::filesystem;

namespace {

// The backend measures one kind of time; a package trained on another kind would be compared
// with times it never predicted.
void refuseOtherTimes(const std::string &path, TimingMethod trained, const std::string &backend) {
    if (backend == "cpu" && trained != TimingMethod::Cpu)
        throw InvalidInput(fmt::format("package '{}' was trained on {} times; the cpu backend measures cpu "
                                       "times: start from a cpu model (diode train on a cpu sweep)",
                                       path, toString(trained)));
    if (backend == "inductor" && trained != TimingMethod::GraphWarm && trained != TimingMethod::GraphCold)
        throw InvalidInput(
            fmt::format("package '{}' was trained on {} times; the inductor backend's truth is "
                        "kernel time in CUDA graphs (graph_warm, graph_cold): start from a "
                        "package trained on those",
                        path, toString(trained)));
}

// Measured problems and their records, each problem once (the first measurement of it), only
// those `keep` accepts.
struct HeldOutData {
    std::vector<TrainingProblem> problems;
    std::vector<ProblemRecord> records;
};

template <typename Keep> HeldOutData heldOutData(const std::string &path, TimingMethod method, Keep keep) {
    HeldOutData out;
    Dataset data;
    std::vector<ProblemRecord> records;
    if (isProblemLinesName(path)) {
        data = loadDatasetJsonl(path, method);
        records = readProblemFile(path);
    } else {
        if (!fs::exists(path))
            throw InvalidInput(fmt::format("held-out store '{}' does not exist", path));
        Store store(path, Store::Mode::ReadOnly);
        data = loadDataset(store, method);
        store.forEachRecord([&](const RunInfo &, const ProblemRecord &r) { records.push_back(r); });
    }
    std::set<std::string> seen;
    for (auto &p : data.problems)
        if (keep(p.problem) && seen.insert(p.problem.label()).second)
            out.problems.push_back(std::move(p));
    seen.clear();
    for (auto &r : records)
        if (keep(r.problem) && seen.insert(r.problem.label()).second)
            out.records.push_back(std::move(r));
    return out;
}

// A package's row: the plugin's decision (Selector::decide, with the package's margin for the
// regime of the held-out times), as `diode eval` and the Validate page report it.
HeldOutRow packageRow(const std::string &selector, const ModelPackage &pkg, const std::string &path,
                      const PredictionTable &table, TimingMethod method) {
    SelectorOptions options;
    options.regime = regimeOf(method);
    Selector decisions(pkg, options);
    const auto metrics =
        evaluate(rankByDecision(table, rankTable(table, computePredictions(pkg, table), true), decisions));
    return {selector, metrics.problems, metrics.top1.mean, metrics.top1.p10,
            pkg.manifest().value("name", fs::path(path).stem().string())};
}

HeldOutRow biasRow(const std::string &selector, const EfficiencyStat &s, const std::string &none) {
    return {selector, s.count, s.mean, s.p10, s.count ? std::string() : none};
}

// The sweep's chosen problems as problem JSON lines (what `python3 -m torch_diode.tools.worker
// --problems` reads), each with why it was chosen.
void writeChosen(const std::string &path, const CharacteriseResult &res, const SweepPlan &plan) {
    writeFileAtomically<InvalidInput>(path, [&](std::ostream &os) {
        for (const auto &c : res.chosen) {
            const auto &p = res.pool.problems[c.scored.pool].problem;
            auto j = expandedProblemJson(plan, p);
            j["characterise"] = {{"score", c.scored.score},
                                 {"why", c.why},
                                 {"held_out", res.heldOutLabels.count(p.label()) > 0}};
            os << j.dump() << '\n';
        }
    });
}

// The decision models beside the GEMM kernel that the new package `path` carries: trained on the
// kernel and site lines in `lines` (imported into the store first, as `diode import` would, so the
// store holds what the package was built from) and every such line the store held before; else the
// start package's. One line says which.
std::string addDecisions(const std::string &path, const std::string &lines, const std::string &db,
                         const ModelPackage &start) {
    std::string why;
    Store store(db);
    try {
        if (fs::exists(lines)) { // in one transaction, as diode import stores them
            Store::Transaction tx(store);
            storeDecisionData(store, readDecisionData(lines), lines);
            tx.commit();
        }
    } catch (const std::exception &e) { // read before the sweeps, changed since: the store keeps what it had
        why = e.what();
    }
    const DecisionData data = storedDecisionData(store);
    std::ifstream file(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (!data.kernels.empty() || !data.sites.empty()) {
        try {
            const TrainedDecisions t = trainDecisions(data);
            ModelPackage::writeFile(path, withDecisions(bytes, t.section));
            return fmt::format("decision models trained on {} kernel and {} site lines of {} (in {}); {}",
                               data.kernels.size(), data.sites.size(),
                               t.section["trained_on"].value("gpu", std::string("one GPU")), db,
                               heldOutLine(t));
        } catch (const InvalidInput &e) {
            why = e.what();
        }
    } else if (why.empty()) {
        why = fmt::format("no kernel or site lines in {} or {}", lines, db);
    }
    const auto &startManifest = start.manifest();
    const auto carried = startManifest.find("decisions");
    if (carried == startManifest.end() || carried->empty())
        return fmt::format("no decision models beside the GEMM kernel ({}; the start package has none)", why);
    ModelPackage::writeFile(path, withDecisions(bytes, *carried));
    return fmt::format(
        "the start package's decision models, measured on {} ({})",
        carried->value(nlohmann::json::json_pointer("/trained_on/gpu"), std::string("another GPU")), why);
}

// Read-write, as the sweep was: SQLite removes the -wal and -shm files when the last connection
// closes, unless that one is read-only (the trainer's and the held-out reader's are).
struct CloseReadWrite {
    std::string db;
    ~CloseReadWrite() {
        std::error_code ec;
        if (!fs::exists(db, ec))
            return;
        try {
            Store store(db);
        } catch (const std::exception &) { // a read-only copy: its files stay, nothing is lost
        }
    }
};

// The trainer writes into a folder beside --out; the package moves to --out only when kept.
struct ScratchFolder {
    fs::path dir;
    ~ScratchFolder() { removeTree(dir.string()); }
};

} // namespace

CharacteriseJob::CharacteriseJob(CharacteriseRequest request)
    : m_request(std::move(request)) {}

CharacteriseJob::~CharacteriseJob() = default;

void CharacteriseJob::cancel() {
    m_cancel = true;
    if (auto *s = m_session.load())
        s->cancel();
}

size_t minimumCharacteriseCount(double heldoutFraction, bool heldOutGiven) {
    if (heldOutGiven)
        return size_t(kMinTrainingProblems);
    for (int n = kMinTrainingProblems;; ++n)
        if (n - std::max(1, int(std::lround(heldoutFraction * n))) >= kMinTrainingProblems)
            return size_t(n);
}

CharacteriseResult CharacteriseJob::run() {
    const auto &r = m_request;
    auto say = [&](const std::string &s) {
        if (status)
            status(s);
    };
    if (r.backend != "cpu" && r.backend != "inductor")
        throw InvalidInput(fmt::format("unknown backend '{}': expected inductor or cpu", r.backend));
    if (r.package.empty())
        throw InvalidInput("characterise needs a start package (--package)");
    if (r.db.empty() || r.out.empty() || r.pool.empty())
        throw InvalidInput("characterise needs --pool, --db and --out");
    // Nothing is written onto an input, a special file or shipped data, whichever face asked: every
    // output against every input, before the start package is read or a problem chosen. The kernel
    // lines are an output when the kernel sweep appends to them, else an input.
    shipped::refuseWritingShipped(r.out, "package");
    shipped::refuseWritingShipped(r.db, "database");
    const std::string kernelLines = r.kernelLines.empty() ? r.db + ".kernels.jsonl" : r.kernelLines;
    const bool kernelSweep = r.backend == "inductor" && r.kernelSweep;
    const std::string chosenPath = r.chosenPath();
    std::vector<std::string> inputs{r.package, r.pool, r.heldout};
    // The store the sweep writes into is none of what it reads either.
    refuseInputPath(r.db, inputs, "--db",
                    "the sweep would write its measurements into it; name another store");
    inputs.push_back(r.db);
    if (!kernelSweep)
        inputs.push_back(kernelLines);
    refuseOutputPath(r.out, inputs, "--out");
    refuseOutputPath(chosenPath, inputs, "--chosen");
    if (kernelSweep) {
        inputs.insert(inputs.end(), {r.out, chosenPath});
        refuseOutputPath(kernelLines, inputs, "--kernel-lines");
    }
    if (!r.steps.empty()) {
        if (!kernelSweep)
            throw InvalidInput(
                "--steps: the step sweep runs after the kernel sweep, with the inductor backend "
                "and without --no-kernel-sweep");
        // Before any GEMM is swept: the tool itself says whether it takes these steps.
        KernelSweepRequest k;
        k.python = r.python;
        k.out = kernelLines;
        k.steps = r.steps;
        k.package = r.package;
        if (const std::string why = kernelSweepRefusal(k); !why.empty())
            throw InvalidInput(fmt::format("--steps {}: {}; nothing was swept", r.steps, why));
    }
    if (!(r.heldoutFraction > 0 && r.heldoutFraction < 1))
        throw InvalidInput(fmt::format("--heldout-fraction {} must lie between 0 and 1", r.heldoutFraction));
    if (const size_t least = minimumCharacteriseCount(r.heldoutFraction, !r.heldout.empty());
        r.selection.count < least)
        throw InvalidInput(fmt::format(
            "--count {}: a characterisation needs at least {} problems{}, so that training has its {}; "
            "nothing was swept",
            r.selection.count, least,
            r.heldout.empty()
                ? fmt::format(" ({:g} % of them kept aside as held out)", 100 * r.heldoutFraction)
                : std::string(),
            kMinTrainingProblems));
    if (r.install && r.backend == "cpu")
        throw InvalidInput("--install: the cpu backend makes a cpu model, which the Inductor plugin never "
                           "loads; install packages made with the inductor backend");

    CharacteriseResult res;
    const auto start = ModelPackage::load(r.package);
    const TimingMethod method = start.timingMethod();
    refuseOtherTimes(r.package, method, r.backend);
    res.startWhy = fmt::format("{}: {} network{}, trained on {} times", r.package, start.members(),
                               start.members() == 1 ? "" : "s", toString(method));

    // A given held-out set is read first: bad input stops before anything is measured, and its
    // problems are neither chosen nor trained on.
    HeldOutData given;
    std::set<std::string> givenLabels;
    if (!r.heldout.empty()) {
        given = heldOutData(r.heldout, method, [](const GemmProblem &) { return true; });
        if (given.problems.empty())
            throw InvalidInput(
                fmt::format("held-out set '{}' has no problem with {} times", r.heldout, toString(method)));
        for (const auto &p : given.problems)
            givenLabels.insert(p.problem.label());
    }

    // Kernel and site lines already there are read now: a file that holds none stops the run before
    // anything is measured. The kernel sweep appends to it; shipped lines are never written.
    if (fs::exists(kernelLines))
        readDecisionData(kernelLines);

    say(fmt::format("Reading the pool {}…", r.pool));
    res.pool = loadPool(r.pool);
    std::erase_if(res.pool.problems,
                  [&](const PoolProblem &p) { return givenLabels.count(p.problem.label()) > 0; });
    if (res.pool.problems.empty())
        throw InvalidInput(
            fmt::format("every problem of the pool '{}' is in the held-out set '{}'", r.pool, r.heldout));
    say(fmt::format("Scoring {} problems with {} networks…", res.pool.problems.size(), start.members()));
    res.chosen = chooseProblems(res.pool, scorePool(res.pool, start), r.selection);
    if (r.heldout.empty()) {
        if (res.chosen.size() < 2)
            throw InvalidInput(
                fmt::format("only {} problem chosen: a held-out part needs at least two (raise "
                            "--count, or give --heldout)",
                            res.chosen.size()));
        const size_t n = res.chosen.size();
        const size_t kept = std::max<size_t>(1, size_t(std::lround(r.heldoutFraction * double(n))));
        for (size_t i : DataSplit::byCounts(n, 0, kept, r.selection.seed).test)
            res.heldOutLabels.insert(res.pool.problems[res.chosen[i].scored.pool].problem.label());
    }
    const SweepPlan plan = characterisePlan(res.pool, res.chosen, r.backend);
    // Every check has passed: the outputs' folders are made now, for any face that asked, and not
    // before (a refused run leaves nothing behind).
    for (const std::string &out : {r.db, chosenPath, r.out, kernelSweep ? kernelLines : std::string()})
        if (const fs::path dir = fs::path(out).parent_path(); !dir.empty())
            fs::create_directories(dir);
    writeChosen(chosenPath, res, plan);
    if (selected)
        selected(res);
    if (m_cancel)
        return res.cancelled = true, res;

    const CloseReadWrite closing{r.db};
    const auto sweepStart = std::chrono::steady_clock::now();
    // One sweep, as `diode sweep` runs it, in a scope of its own: its workers (each holding a CUDA
    // context on the GPU the trainer is about to use) and telemetry end before training starts.
    {
        // Resume is always asked for: the same command again continues the unfinished run
        // (SweepSession refuses one of another plan).
        SweepSession::Request req;
        req.db = r.db;
        req.backend = r.backend;
        req.plan = plan;
        req.python = r.python;
        req.resume = true;
        req.deadlineS = r.deadlineS;
        req.workersPerGpu = r.workersPerGpu;
        req.gpus = r.gpus;
        SweepSession session(req);
        res.resumed = session.resumed();
        if (!session.nothingToDo().empty()) {
            res.sweepStatus = "measured before";
            res.runId = session.runId();
            say(session.nothingToDo());
        } else {
            if (sweepProgress)
                session.setProgressCallback(sweepProgress);
            m_session = &session;
            if (m_cancel)
                session.cancel();
            try {
                res.sweepStatus = session.run([&](int64_t id) {
                    res.runId = id;
                    if (sweepStarted)
                        sweepStarted(session.resumed(), session.runLine(id));
                });
            } catch (...) {
                m_session = nullptr;
                throw;
            }
            m_session = nullptr;
            if (res.sweepStatus == "cancelled")
                return res.cancelled = true, res;
        }
    }

    // The kernel sweep, after the GEMM sweep's workers are gone, then the step sweep (the kernels of
    // whole model steps, as the plugin meets them): each within what is left of the deadline. Less
    // than a minute left starts the tool and its workers for nothing. False when cancelled.
    const auto sweepKernels = [&](KernelSweepRequest k, const std::string &what, const char *after,
                                  std::string &status) {
        const double spent =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - sweepStart).count();
        if (r.deadlineS > 0 && r.deadlineS - spent < 60) {
            status = fmt::format("not run: less than a minute of --deadline was left after the {} (the same "
                                 "command again runs it)",
                                 after);
            return true;
        }
        say(fmt::format("Measuring {} into {}…", what, kernelLines));
        k.python = r.python;
        k.gpu = r.gpus.empty() ? std::string() : r.gpus.front();
        k.out = kernelLines;
        k.workers = r.kernelWorkers;
        k.deadlineS = r.deadlineS > 0 ? r.deadlineS - spent : 0;
        const int rc = runKernelSweep(k, &m_cancel);
        if (m_cancel)
            return false;
        status = describeKernelSweep(k, rc);
        return true;
    };
    if (kernelSweep && !sweepKernels({}, "this GPU's pointwise and reduction kernels and small-M sites",
                                     "GEMM sweep", res.kernelSweepStatus))
        return res.cancelled = true, res;
    if (kernelSweep && !r.steps.empty() &&
        !sweepKernels({.steps = r.steps, .package = r.package},
                      fmt::format("the kernels and sites of {} inside each step", r.steps), "kernel sweep",
                      res.stepSweepStatus))
        return res.cancelled = true, res;

    ScratchFolder scratch{fs::path(r.out + ".training")};
    fs::create_directories(scratch.dir);
    TrainingJob job;
    job.db = r.db;
    job.out = (scratch.dir / fs::path(r.out).filename()).string();
    job.method = method;
    job.options = r.train;
    job.options.cancel = &m_cancel;
    job.options.progress = epoch;
    if (!r.retrain) {
        job.initPackage = r.package;
        job.options.members = start.members();
    }
    job.exclude = r.heldout.empty() ? res.heldOutLabels : givenLabels;
    job.loaded = [&](size_t problems, const MethodChoice &) { res.trainingProblems = int(problems); };
    say(r.retrain ? "Training a new package from random weights…" : "Fine-tuning the start package…");
    TrainingJobResult trained;
    try {
        trained = runTrainingJob(job);
    } catch (const InvalidInput &e) {
        if (res.trainingProblems > 0 && res.trainingProblems < kMinTrainingProblems &&
            res.sweepStatus != "deadline")
            throw InvalidInput(fmt::format("{} (the {} chosen problems less the {} held out: raise --count)",
                                           e.what(), res.chosen.size(), job.exclude.size()));
        if (res.sweepStatus == "deadline")
            throw InvalidInput(
                fmt::format("{} (the sweep stopped at its deadline: run the same command again "
                            "to measure more)",
                            e.what()));
        throw;
    }
    if (trained.train.cancelled)
        return res.cancelled = true, res;

    res.decisions = addDecisions(job.out, kernelLines, r.db, start);

    say("Measuring both packages on the held-out problems…");
    HeldOutData held;
    if (r.heldout.empty()) {
        held = heldOutData(r.db, method,
                           [&](const GemmProblem &p) { return res.heldOutLabels.count(p.label()) > 0; });
        res.heldOutSource = fmt::format("{} of the {} chosen problems kept aside (seed {}), measured here",
                                        res.heldOutLabels.size(), res.chosen.size(), r.selection.seed);
    } else {
        held = std::move(given);
        res.heldOutSource = r.heldout;
    }
    if (!held.problems.empty()) {
        const auto table = PredictionTable::fromProblems(held.problems);
        res.table.push_back(packageRow("transferred", start, r.package, table, method));
        res.table.push_back(packageRow("new", ModelPackage::load(job.out), job.out, table, method));
        if (method == TimingMethod::GraphWarm || method == TimingMethod::GraphCold) {
            const auto bias = computeBias(held.records, method);
            const auto &all = bias.groups.front();
            res.table.push_back(
                biasRow("torch.compile", all.plainCompile, "no plain torch.compile time recorded"));
            res.table.push_back(biasRow("best ATen", all.bestAten, "no ATen candidate timed"));
        } else {
            res.table.push_back({"torch.compile", 0, {}, {}, "cpu data: no torch.compile baseline"});
            res.table.push_back({"best ATen", 0, {}, {}, "cpu data: no ATen kernels"});
        }
        const auto &before = res.table[0], &after = res.table[1];
        res.compared = before.mean && after.mean && before.p10 && after.p10;
        if (res.compared) {
            res.deltaMeanPoints = (*after.mean - *before.mean) * 100;
            res.deltaP10Points = (*after.p10 - *before.p10) * 100;
            res.better = res.deltaMeanPoints > 0 || (res.deltaMeanPoints == 0 && res.deltaP10Points > 0);
        }
    }
    const std::string name = fs::path(r.out).stem().string();
    res.verdict = res.compared
                      ? fmt::format("new package: {} {} than the transferred one (mean {:+.1f} points, P10 "
                                    "{:+.1f})",
                                    name,
                                    res.better                ? "better"
                                    : res.deltaMeanPoints < 0 ? "worse"
                                                              : "no better",
                                    res.deltaMeanPoints, res.deltaP10Points)
                      : fmt::format("new package: {} not compared: no held-out problem has {} times "
                                    "(the sweep stopped first? run the same command again)",
                                    name, toString(method));
    // Four held-out problems do not make a verdict: the line says how few there were.
    if (const auto few = fewProblemsWarning(res.table.empty() ? 0 : size_t(res.table.front().problems));
        res.compared && !few.empty())
        res.verdict += fmt::format(" (warning: {})", few);
    if (res.better || r.force) {
        fs::rename(job.out, r.out);
        res.kept = r.out;
        if (r.install) {
            const fs::path dir = r.installDir.empty() ? pluginModelDirectory() : fs::path(r.installDir);
            res.installed = installPackage(r.out, dir, true).string();
        }
    }
    return res;
}

} // namespace diode
