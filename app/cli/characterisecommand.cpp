// `diode characterise`: the CLI face of CharacteriseJob (core/train/characterisejob.h).

#include "characterisecommand.h"
#include "progressbar.h"
#include "terminal.h"
#include "validators.h"
#include "workeroptions.h"

#include "diode/analysis/characterise.h"
#include "diode/config.h"
#include "diode/sweep/backend.h"
#include "diode/sweep/hardware.h"
#include "diode/sweep/kernelsweep.h"
#include "diode/train/trainoptions.h"
#if DIODE_HAVE_TORCH && !DIODE_CLI_EXECS_TRAIN // `diode` hands characterise to diode-train
#include "diode/train/characterisejob.h"
#endif

#include <fmt/format.h>

#include <atomic>
#include <csignal>
#include <memory>
#include <optional>

namespace diode::cli {

namespace {

struct Options {
    std::string package, pool, backend = "inductor", python, db, out, chosen, heldout, installDir,
                               kernelLines, steps;
    double heldoutFraction = 0.2, deadlineS = 0;
    cli::WorkerOptions workers;
    size_t count = 200;
    uint64_t seed = 1;
    bool retrain = false, force = false, install = false, explain = false, noKernelSweep = false;
    std::optional<double> lr;
    int epochs = 400, threads = 0, members = 6, kernelWorkers = KernelSweepRequest{}.workers;
};

#if DIODE_HAVE_TORCH && !DIODE_CLI_EXECS_TRAIN
std::atomic<CharacteriseJob *> g_job{nullptr};

// Ctrl-C and SIGTERM cancel as for `diode sweep`: the sweep stops within one configuration (a
// worker still starting is stopped), its run stays resumable, and a second signal ends the process
// at once, its workers with it.
void onInterrupt(int sig) {
    if (auto *j = g_job.load())
        j->cancel();
    onSecondSignal(sig);
}

std::string efficiency(const std::optional<double> &v) {
    return v ? fmt::format("{:.4f}", *v) : std::string("n/a");
}

int run(const Options &o) {
    CharacteriseRequest r;
    r.package = o.package;
    if (r.package.empty()) {
        if (o.backend == "cpu")
            throw InvalidInput("the cpu backend has no GPU to find a package for: name the start package "
                               "with --package (a cpu model, from diode train on a cpu sweep)");
        const auto gpus = HardwareMonitor().report().gpus;
        // The machine cannot run the backend (exit 3), whatever package is found.
        if (gpus.empty() && o.backend == "inductor")
            throw BackendUnavailable(
                "no GPU found on this machine (NVML or ROCm SMI): the inductor backend measures on one. "
                "Characterise on a GPU host, or use --backend cpu with a cpu model as --package");
        const auto start = nearestStartPackage(gpus[0].name, gpus[0].smCount);
        if (start.path.empty())
            throw InvalidInput(start.why);
        say("{}\n", start.why);
        r.package = start.path;
    }
    r.pool = o.pool;
    r.backend = o.backend;
    r.python = o.python;
    r.db = o.db;
    r.out = o.out;
    r.chosen = o.chosen;
    r.heldout = o.heldout;
    r.heldoutFraction = o.heldoutFraction;
    r.selection.count = o.count;
    r.selection.seed = o.seed;
    r.deadlineS = o.deadlineS;
    o.workers.apply(r.workersPerGpu, r.gpus);
    r.retrain = o.retrain;
    r.train.seed = o.seed;
    r.train.epochs = o.epochs;
    r.train.threads = o.threads;
    r.train.members = o.members;
    r.train.learningRate = o.lr.value_or(CharacteriseRequest::defaultLearningRate(o.retrain));
    r.kernelLines = o.kernelLines;
    r.kernelSweep = !o.noKernelSweep;
    r.kernelWorkers = o.kernelWorkers;
    r.steps = o.steps;
    r.force = o.force;
    r.install = o.install;
    r.installDir = o.installDir;

    CharacteriseJob job(r);
    ProgressBar bar(stderr);
    job.status = [](const std::string &s) { say("{}\n", s); };
    job.selected = [&](const CharacteriseResult &res) {
        say("start package {}\n", res.startWhy);
        say("{} of {} pool problems chosen ({} held out); problem lines in {}\n", res.chosen.size(),
            res.pool.problems.size(), res.heldOutLabels.size(), r.chosenPath());
        if (!o.explain)
            return;
        show("{:>4}  {:<34} {}\n", "rank", "problem", "why chosen");
        for (size_t i = 0; i < res.chosen.size(); ++i) {
            const auto &p = res.pool.problems[res.chosen[i].scored.pool].problem;
            show("{:>4}  {:<34} {}{}\n", i + 1, p.label(), res.chosen[i].why,
                 res.heldOutLabels.count(p.label()) ? " [held out]" : "");
        }
    };
    job.sweepStarted = [](bool resumed, const std::string &runLine) {
        say("{} {}\n", resumed ? "resuming" : "sweep", runLine);
    };
    job.sweepProgress = [&](const SweepProgress &p) { bar.update(p); };
    job.epoch = [](const EpochReport &e) {
        if (e.epoch % 25 == 0 || e.epoch == 1)
            say("member {}/{}  epoch {:4}  loss {:.5f}  validation top-1 {:.4f}{}\n", e.member + 1, e.members,
                e.epoch, e.loss, e.valTop1, e.improved ? " *" : "");
    };
    g_job = &job;
    std::signal(SIGINT, onInterrupt);
    std::signal(SIGTERM, onInterrupt);
    CharacteriseResult res;
    try {
        res = job.run();
    } catch (...) {
        g_job = nullptr;
        throw;
    }
    g_job = nullptr;
    bar.finish();
    if (res.cancelled) {
        say("cancelled: nothing trained or kept; run the same command again to continue the "
            "sweep (nothing measured twice)\n");
        return 1;
    }
    if (res.sweepStatus == "deadline")
        say("deadline of {} s reached: trained on what was measured; the same command again "
            "measures the rest\n",
            o.deadlineS);
    if (!res.kernelSweepStatus.empty())
        say("kernel sweep: {}\n", res.kernelSweepStatus);
    if (!res.stepSweepStatus.empty())
        say("step sweep: {}\n", res.stepSweepStatus);
    show("{}\n", res.decisions);
    // Lines, as the trainer counts them: a problem measured in two runs of the store is two (wording.h).
    show("trained on {} problem lines measured here; held out: {}\n", res.trainingProblems,
         res.heldOutSource);
    show("{:<14} {:>8} {:>9} {:>9}  {}\n", "selector", "problems", "top1 mean", "top1 p10", "");
    for (const auto &row : res.table)
        show("{:<14} {:>8} {:>9} {:>9}  {}\n", row.selector, row.problems, efficiency(row.mean),
             efficiency(row.p10), row.note);
    std::string fate =
        res.kept.empty() ? "; dropped (--force keeps it)" : fmt::format("; kept as {}", res.kept);
    if (!res.installed.empty())
        fate += fmt::format(", installed as {}", res.installed);
    else if (o.install && !res.kept.empty())
        fate += ", not installed";
    else if (o.install)
        fate += "; not installed";
    show("{}{}\n", res.verdict, fate);
    return 0;
}
#else
int run(const Options &) {
    say("error: this diode was built without LibTorch, which characterise needs to train; "
        "install libtorch-dev and reconfigure\n");
    return 3;
}
#endif

} // namespace

std::function<int()> addCharacteriseCommand(CLI::App &app) {
    auto o = std::make_shared<Options>();
    auto *c = app.add_subcommand(
        "characterise",
        "Characterise this GPU: from the nearest package, measure the problems it is least sure of, "
        "fine-tune it, and keep the result only if it ranks held-out problems better");
    c->footer(
        "What it does, in order:\n"
        "  1. start from --package, or the package the plugin would load on this GPU (its own, else the\n"
        "     nearest of a similar GPU), and say which;\n"
        "  2. score every problem of --pool by how much the package's networks disagree on its fastest\n"
        "     candidate, times how often its weight shape (op, dtype, N, K) occurs in the pool; choose the\n"
        "     --count best, with every op/dtype of the pool represented (--explain lists why each);\n"
        "  3. measure them into --db (progress and ETA on stderr; Ctrl-C, or --deadline, stops it and the\n"
        "     same command again continues, measuring nothing twice);\n"
        "  4. with the inductor backend, measure this GPU's pointwise and reduction kernels and small-M\n"
        "     sites into --kernel-lines (diode sweep-kernels; within what is left of --deadline), then\n"
        "     the kernels and small-M sites of the --steps model steps inside each step (diode\n"
        "     sweep-kernels --steps);\n"
        "  5. fine-tune the package on what was measured (--retrain: train from scratch), keeping\n"
        "     --heldout-fraction of the chosen problems aside, or using --heldout; train its decision\n"
        "     models beside the GEMM kernel on the kernel and site lines (else keep the start's);\n"
        "  6. print the transferred package, the new one, plain torch.compile and the best ATen kernel\n"
        "     on the held-out problems (top-1 efficiency: the fastest candidate's time over the pick's),\n"
        "     and one line saying whether the new package is better; keep it as --out only if it is\n"
        "     (higher mean; P10 breaks a tie), and --install it for the plugin.\n"
        "Example: diode characterise --pool trained_models/h200/h200-ingraph.db --db h100.db --out "
        "h100.diode "
        "--deadline 3600");
    c->add_option(
         "--pool", o->pool,
         "problems to choose from, with their candidates: a store (.db), problem JSON lines (.jsonl), "
         "or a cpu sweep plan (.json)")
        ->required()
        ->check(CLI::ExistingFile);
    c->add_option("--db", o->db,
                  "SQLite database the sweep measures into (created if missing; resumed if unfinished)")
        ->required();
    c->add_option("--out", o->out, "the new package, written only when it is better (or with --force)")
        ->required();
    c->add_option(
         "--package", o->package,
         "start package (default: the one the plugin loads on this GPU; required with --backend cpu)")
        ->check(CLI::ExistingFile);
    c->add_option("--backend", o->backend,
                  "inductor (this GPU, via the Python worker) or cpu (reference GEMM)")
        ->check(CLI::IsMember({"inductor", "cpu"}))
        ->capture_default_str();
    c->add_option("--python", o->python,
                  "interpreter for the inductor worker (default $DIODE_PYTHON or python3)");
    c->add_option("--count", o->count, "problems to choose and measure")
        ->check(integerIn(1, planlimits::kMaxProblems))
        ->capture_default_str();
    c->add_option("--seed", o->seed, "seed of ties in the selection, the held-out part and training")
        ->capture_default_str();
    o->workers.addTo(c);
    c->add_option("--deadline", o->deadlineS,
                  "seconds: start no problem after this long, then train on what was measured")
        ->check(numberIn(0, std::numeric_limits<double>::infinity(), true));
    c->add_option("--heldout", o->heldout,
                  "held-out problems measured on this GPU (problem JSON lines or a store); never chosen or "
                  "trained on")
        ->check(CLI::ExistingFile);
    c->add_option("--heldout-fraction", o->heldoutFraction,
                  "without --heldout: the share of the chosen problems kept aside to compare on")
        ->check(numberIn(0.01, 0.9))
        ->capture_default_str();
    c->add_option("--chosen", o->chosen, "write the chosen problems here (default: DB.chosen.jsonl)");
    c->add_flag("--explain", o->explain, "list the chosen problems and why each was chosen");
    c->add_flag("--retrain", o->retrain,
                "train from random weights instead of fine-tuning the start package");
    c->add_option("--lr", o->lr, "Adam learning rate (default 3e-4 fine-tuning, 1e-3 with --retrain)")
        ->check(numberIn(0, std::numeric_limits<double>::infinity(), true));
    c->add_option("--epochs", o->epochs, "most epochs per network")
        ->check(integerIn(1, 100000))
        ->capture_default_str();
    c->add_option("--members", o->members,
                  "with --retrain: networks in the ensemble (fine-tuning keeps the start's)")
        ->check(integerIn(1, 64))
        ->capture_default_str();
    c->add_option("--threads", o->threads, "LibTorch threads (0: the cores this process may use)")
        ->check(integerIn(0, 1024));
    c->add_flag("--install", o->install,
                "install the kept package where the plugin finds user models ($TORCH_DIODE_MODEL_PATH, else "
                "~/.local/share/torch_diode/models)");
    c->add_option("--install-dir", o->installDir, "with --install: install into this folder instead")
        ->needs("--install");
    c->add_option("--kernel-lines", o->kernelLines,
                  "kernel and site lines of this GPU the new package's kernel-config and small-M form models "
                  "are trained on; the kernel sweep appends to it (default: DB.kernels.jsonl)");
    c->add_flag("--no-kernel-sweep", o->noKernelSweep,
                "measure no kernel or site lines (lines already in --kernel-lines are still trained on)");
    c->add_option(
        "--steps", o->steps,
        "after the kernel sweep, measure the kernels and small-M sites of these model steps (diode demo "
        "--models names, comma-separated) inside each step, with the start package's GEMM and form "
        "decisions");
    c->add_option("--kernel-workers", o->kernelWorkers, "the kernel sweep's cases compiled and timed at once")
        ->check(integerIn(1, KernelSweepRequest::kMaxWorkers))
        ->capture_default_str();
    c->add_flag("--force", o->force, "keep (and install) the new package even when it is not better");
    return [=]() -> int { return *c ? run(*o) : -1; };
}

} // namespace diode::cli
