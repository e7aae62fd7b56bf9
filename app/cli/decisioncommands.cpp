// diode sweep-kernels and diode train-decisions: the data and the models of the decisions the
// plugin makes beside the GEMM kernel (docs/MODELS.md, "Kernel configs and small-M forms").

#include "decisioncommands.h"

#include "terminal.h"

#include "diode/analysis/decisionevaluation.h"
#include "diode/infer/atomicfile.h"
#include "diode/infer/modelpackage.h"
#include "diode/infer/outputpath.h"
#include "diode/infer/shippeddata.h"
#include "diode/store/decisionstore.h"
#include "diode/sweep/kernelsweep.h"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>

namespace diode::cli {

namespace {

struct DecisionOptions {
    std::vector<std::string> inputs, dbs;
    std::string package, out, report, python, gpu, families, configsFrom, extraConfigsFrom, match, steps;
    std::string kinds = KernelSweepRequest{}.kinds;
    bool list = false, stepsGiven = false;
    DecisionTrainOptions train;
    int workers = KernelSweepRequest{}.workers, limit = 0;
    double deadline = 0;
};

int runSweepKernels(const DecisionOptions &o) {
    if (o.out.empty())
        throw InvalidInput("sweep-kernels needs --out FILE.jsonl");
    shipped::refuseWritingShipped(o.out, "kernel lines");
    if (o.stepsGiven && o.steps.empty())
        throw InvalidInput("sweep-kernels --steps names no step");
    return runKernelSweep({.python = o.python,
                           .gpu = o.gpu,
                           .out = o.out,
                           .kinds = o.kinds,
                           .workers = o.workers,
                           .families = o.families,
                           .match = o.match,
                           .configsFrom = o.configsFrom,
                           .extraConfigsFrom = o.extraConfigsFrom,
                           .steps = o.steps,
                           .package = o.package,
                           .limit = o.limit,
                           .list = o.list,
                           .deadlineS = o.deadline});
}

int runTrainDecisions(const DecisionOptions &o) {
    if (o.inputs.empty() && o.dbs.empty())
        throw InvalidInput("train-decisions needs kernel and site lines: files, or a store given by --db");
    // The files' lines, then the stores', in the order given.
    DecisionData data = readDecisionData(o.inputs);
    data.append(storedDecisionData(o.dbs));
    if (data.kernels.empty() && data.sites.empty())
        throw InvalidInput("train-decisions: the inputs hold no kernel or site lines");
    std::vector<std::string> inputs = o.inputs;
    inputs.insert(inputs.end(), o.dbs.begin(), o.dbs.end());
    if (!o.package.empty())
        inputs.push_back(o.package);
    if (!o.out.empty())
        refuseOutputPath(o.out, inputs, "--out");
    if (!o.report.empty())
        refuseOutputPath(o.report, inputs, "--report");
    const TrainedDecisions t = trainDecisions(data, o.train);
    say("{} measured kernels ({} in the table), {} small-M sites ({} in the table)\n", data.kernels.size(),
        t.kernelConfig.kernels(), data.sites.size(), t.smallMForm.sites());
    say("{}\n", heldOutLine(t));
    const DecisionFigures k = figuresOf(t.kernelConfigHeldOut, "");
    if (k.notMeasured)
        say("{}\n", notMeasuredNote(k.notMeasured));
    if (!o.report.empty()) {
        writeFileAtomically<InvalidInput>(o.report,
                                          [&](std::ostream &os) { os << t.heldOut.dump(1) << '\n'; });
    }
    if (o.out.empty()) {
        show("{}\n", jsonText(t.heldOut, 1));
        say("nothing written (--package IN.diode --out OUT.diode writes a package with them)\n");
        return 0;
    }
    if (o.package.empty())
        throw InvalidInput("train-decisions --out needs --package IN.diode: the package the decisions join");
    std::ifstream file(o.package, std::ios::binary);
    if (!file)
        throw InvalidInput(fmt::format("{}: cannot be read", o.package));
    const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    ModelPackage::writeFile(o.out, withDecisions(bytes, t.section));
    say("wrote {}\n", o.out);
    return 0;
}

} // namespace

std::function<int()> addDecisionCommands(CLI::App &app) {
    auto o = std::make_shared<DecisionOptions>();
    auto *sweep = app.add_subcommand(
        "sweep-kernels",
        "Measure pointwise and reduction kernels under fixed configs, and small-M GEMMs and one-token "
        "attention in both forms, on the local GPU (kernel and site lines, docs/FORMATS.md)");
    sweep
        ->add_option("--out", o->out,
                     "kernel and site lines are appended here (cases already there are skipped)")
        ->required();
    sweep->add_option("--kinds", o->kinds, "kernel, site, or both")->capture_default_str();
    sweep->add_option("--families", o->families, "model families (default: all the sweep knows)");
    sweep->add_option("--gpu", o->gpu,
                      "the GPU to measure on, as CUDA_VISIBLE_DEVICES names it (default: the "
                      "first the environment gives)");
    sweep->add_option("--workers", o->workers, "processes sharing the GPU")
        ->check(CLI::Range(1, KernelSweepRequest::kMaxWorkers))
        ->capture_default_str();
    sweep->add_option(
        "--match", o->match,
        "only the cases whose name (FAMILY/CASE) this regular expression finds; with --steps, "
        "only the steps' kernels whose name (their fused operations) it finds (not their sites)");
    sweep->add_flag("--list", o->list,
                    "print the cases (FAMILY/CASE) or steps still to measure and measure nothing");
    sweep
        ->add_option("--limit", o->limit,
                     "only the first N cases still to measure; with --steps, the first N configurations of "
                     "each step")
        ->check(CLI::NonNegativeNumber);
    sweep->add_option("--deadline", o->deadline, "start no new case after this many seconds")
        ->check(CLI::NonNegativeNumber);
    sweep->add_option("--python", o->python,
                      "the Python with torch and the plugin (default $DIODE_PYTHON or python3)");
    sweep
        ->add_option(
            "--configs-from", o->configsFrom,
            "sites: time the decomposed form with this package's kernel configurations, as the plugin "
            "runs it (default: the faster of Inductor's own and coordinate descent's)")
        ->check(CLI::ExistingFile);
    auto *steps = sweep->add_option(
        "--steps", o->steps,
        "measure these model steps (diode demo --models names, comma-separated) instead of the kernel and "
        "site cases: their kernels inside each step under each configuration they may be given, their "
        "small-M sites in both forms inside the step (--kinds chooses); needs --package");
    sweep
        ->add_option("--package", o->package,
                     "with --steps: the package whose GEMM and small-M form decisions shape the steps")
        ->check(CLI::ExistingFile)
        ->needs(steps);
    sweep->add_option(
        "--extra-configs-from", o->extraConfigsFrom,
        "kernels: also measure on every kernel the fastest configuration beyond its portfolio of "
        "each kernel of these kernel lines (comma-separated files), which a package trained on "
        "the result then offers its decisions");

    auto *train = app.add_subcommand(
        "train-decisions",
        "Build the kernel-config and small-M form models from kernel and site lines, judge them with each "
        "model family held out, and write them into a package");
    train->add_option("inputs", o->inputs, "kernel and site lines (diode sweep-kernels)")
        ->check(CLI::ExistingFile);
    train
        ->add_option(
            "--db", o->dbs,
            "a store holding kernel and site lines (diode import); repeatable, beside or instead of files")
        ->check(CLI::ExistingFile);
    train->add_option("--package", o->package, "the .diode package the decisions join")
        ->check(CLI::ExistingFile);
    train->add_option("--out", o->out, "write the package with the decisions here");
    train->add_option("--report", o->report, "write the held-out evaluation (JSON) here");
    train
        ->add_option(
            "--form-ops", o->train.formOps,
            "the ops whose sites the form model is built from (repeatable; default: every op measured); "
            "sites of other ops keep their library kernel")
        ->check(CLI::IsMember(smallMOps()));
    train
        ->add_option("--kernel-margin", o->train.kernelMargin,
                     "a config departs from Inductor's default only when predicted faster by this share "
                     "(or, for a default Inductor tunes at first run, predicted within it)")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    train
        ->add_option("--form-margin", o->train.formMargin,
                     "a site is decomposed only when predicted faster than its library kernel by this share")
        ->check(CLI::Range(0.0, 1.0))
        ->capture_default_str();
    train
        ->add_option(
            "--kernel-neighbours", o->train.kernelNeighbours,
            "a config's predicted time: the weighted mean over this many of the nearest measured rows "
            "(docs/MODELS.md compares 1, 2, 4 and 8)")
        ->check(CLI::Range(1, kMaxNeighbours))
        ->capture_default_str();
    train
        ->add_option(
            "--kernel-weight-power", o->train.kernelWeightPower,
            "each of those rows weighs 1 / (0.25 + its distance) to this power: the higher, the more "
            "the nearest decide (docs/MODELS.md compares 1 and 3)")
        ->check(CLI::Range(kMinWeightPower, kMaxWeightPower))
        ->capture_default_str();
    return [=]() -> int {
        if (*sweep) {
            o->stepsGiven = steps->count() > 0; // `--steps ""` names no step; it is not the kernel cases
            return runSweepKernels(*o);
        }
        if (*train)
            return runTrainDecisions(*o);
        return -1;
    };
}

} // namespace diode::cli
