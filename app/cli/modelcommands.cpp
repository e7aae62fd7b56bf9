#include "modelcommands.h"
#include "terminal.h"
#include "validators.h"

#include "diode/analysis/calibration.h"
#include "diode/analysis/dataset.h"
#include "diode/analysis/datasplit.h"
#include "diode/analysis/decisionevaluation.h"
#include "diode/analysis/evaluation.h"
#include "diode/analysis/evaluationjob.h"
#include "diode/analysis/metrics.h"
#include "diode/analysis/policytable.h"
#include "diode/analysis/wording.h"
#include "diode/config.h"
#include "diode/infer/atomicfile.h"
#include "diode/infer/gemmproblem.h"
#include "diode/infer/gputable.h"
#include "diode/infer/modelpackage.h"
#include "diode/infer/outputpath.h"
#include "diode/infer/problemjson.h"
#include "diode/infer/ranking.h"
#include "diode/infer/shippeddata.h"
#include "diode/infer/timingmethod.h"
#include "diode/store/store.h"
#include "diode/sweep/hardware.h"
#include "diode/train/trainoptions.h"
#if DIODE_HAVE_TORCH && !DIODE_CLI_EXECS_TRAIN // `diode` hands train to diode-train (app/CMakeLists.txt)
#include "diode/train/trainer.h"
#include "diode/train/trainingjob.h"
#endif

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>

namespace diode::cli {

namespace {

struct Options {
    std::string db, out, package, input;
    std::string init;              ///< train: a package to fine-tune
    std::string method;            ///< empty: the data's default (defaultTimingMethod)
    bool all = false;              ///< eval --db: every problem, not only those the model never saw
    bool storePredictions = false; ///< eval --db: write the predictions into the database
    bool allowMixedData = false;   ///< eval --store-predictions: into data of another GPU or method
    bool json = false;             ///< inspect: the raw manifest, not the summary
    std::vector<std::string>
        gpus; ///< inspect: GPUs to say whether the package serves (default: this machine's)
    std::vector<std::string> ops, dtypes;
    TrainOptions train;
    bool table = false;    ///< eval --input: the held-out table of docs/MODELS.md
    double marginArg = -1; ///< eval --margin; negative: the package's
    std::optional<double> margin() const {
        return marginArg >= 0 ? std::optional<double>(marginArg) : std::nullopt;
    }
    std::string searchSpace{kSearchSpaces[0]}; ///< eval --table: lines of this search space
    std::vector<std::string> decisionLines; ///< eval: kernel and site lines for the package's decision models
};

// The baselines of test-split metrics in the pages' order (plain torch.compile's first, max-autotune's
// second), then any other; `fn(name, metrics)` each. One order for `train`, `eval` and `inspect`.
void forEachBaseline(const nlohmann::json &baselines,
                     const std::function<void(const std::string &, const nlohmann::json &)> &fn) {
    if (!baselines.is_object())
        return;
    for (const char *k : kBaselineOrder)
        if (baselines.contains(k))
            fn(k, baselines[k]);
    for (const auto &[k, v] : baselines.items())
        if (std::find(std::begin(kBaselineOrder), std::end(kBaselineOrder), k) == std::end(kBaselineOrder))
            fn(k, v);
}

// The selectors' table of `train` and `eval`, baselines named as every face names them (wording.h):
// on cpu data (`cpuData`) the plan's first tile once, never "aten". `heldOut` problems less than
// kFewHeldOutProblems get the warning that goes with them. `shown` counts what the table is
// measured on ("769 problems in 789 lines"; wording.h), `problems` the distinct problems among them.
void printTable(const nlohmann::json &cmp, bool cpuData, const std::string &shown, size_t problems) {
    static constexpr int kName = 30;
    show("{:<{}} {:>9} {:>8} {:>8} {:>9} {:>9} {:>7} {:>9}\n", "selector", kName, "top1 mean", "top1 p10",
         "top1 min", "top3 mean", "top5 mean", "hit@1", "spearman");
    auto row = [](const std::string &name, const nlohmann::json &m) {
        show("{:<{}} {:>9.4f} {:>8.4f} {:>8.4f} {:>9.4f} {:>9.4f} {:>7.3f} {:>9.3f}\n", name, kName,
             m["top1_efficiency"]["mean"].get<double>(), m["top1_efficiency"]["p10"].get<double>(),
             m["top1_efficiency"]["min"].get<double>(), m["top3_efficiency"]["mean"].get<double>(),
             m["top5_efficiency"]["mean"].get<double>(), m["top1_hit"].get<double>(),
             m["spearman"].get<double>());
    };
    row("model", cmp["model"]["all"]);
    if (cmp.contains("policy") && !cpuData) // cpu data: no ATen kernel to keep, the policy is the arg-min
        row("model policy", cmp["policy"]);
    const auto all = cmp["model"]["all"].value("problems", nlohmann::json());
    forEachBaseline(cmp["baselines"], [&](const std::string &k, const nlohmann::json &v) {
        if (!baselineShown(k, cpuData))
            return;
        row(baselineName(k, cpuData), v);
        if (v.value("problems", nlohmann::json()) != all) // max-autotune: where Inductor's benchmark ran
            show("{:<{}} (on the {} problem lines where it ran)\n", "", kName, v.value("problems", 0));
    });
    show("model on {}; MAPE {:.3f}, RMSE of ln(time) {:.3f}\n", shown,
         cmp["model"]["all"]["mape"].get<double>(), cmp["model"]["all"]["rmse_log"].get<double>());
    if (const auto few = fewProblemsWarning(problems); !few.empty())
        show("warning: {}\n", few);
    for (const auto &[k, v] : cmp["model"]["by"].items())
        show("  {:<12} {:>4} lines  top1 mean {:.4f} p10 {:.4f}  top3 mean {:.4f}\n", k,
             v["problems"].get<int>(), v["top1_efficiency"]["mean"].get<double>(),
             v["top1_efficiency"]["p10"].get<double>(), v["top3_efficiency"]["mean"].get<double>());
}

// "training on graph_warm times (default: the data has in-graph times)"
void printMethod(const char *doing, const MethodChoice &m) {
    say("{} on {}\n", doing,
        m.byDefault ? m.describe() : fmt::format("{} times (--method)", toString(m.method)));
}

// Without --out the package is named after the database, in the current directory (never
// beside the database: the shipped data's folder is not the user's).
[[maybe_unused]] std::string packagePathFor(const Options &o) {
    if (!o.out.empty())
        return o.out;
    return std::filesystem::path(o.db).stem().string() + ".diode";
}

int runTrain(const Options &o) {
#if DIODE_HAVE_TORCH && !DIODE_CLI_EXECS_TRAIN // `diode` hands train to diode-train (app/CMakeLists.txt)
    // The same job as the workbench's Train page (core/train/trainingjob.h); this face prints.
    TrainingJob job;
    job.db = o.db;
    job.out = packagePathFor(o);
    refuseOutputPath(job.out, {o.db, o.init}, "--out");
    job.filter = DatasetFilter{o.ops, o.dtypes};
    job.method = o.method.empty() ? std::nullopt : parseTimingMethod(o.method);
    job.options = o.train;
    job.initPackage = o.init;
    job.options.progress = [](const EpochReport &r) {
        if (r.epoch % 25 == 0 || r.epoch == 1)
            say("member {}/{}  epoch {:4}  loss {:.5f}  validation top-1 {:.4f}{}\n", r.member + 1, r.members,
                r.epoch, r.loss, r.valTop1, r.improved ? " *" : "");
    };
    job.loaded = [](size_t, const MethodChoice &m) { printMethod("training", m); };
    const auto res = runTrainingJob(job);
    say("wrote {} ({} network{}, best epochs {}; {} epochs in all)\n", job.out, res.train.members.size(),
        res.train.members.size() == 1 ? "" : "s", fmt::join(res.train.bestEpochs, ", "), res.train.epochsRun);
    if (res.method.method == TimingMethod::Cpu)
        say("a cpu model: it ranks the cpu backend's tiles and is never offered to the Inductor "
            "plugin\n");
    // The trainer splits problem lines (a problem measured in two runs is two lines).
    const size_t test = res.train.split.test.size();
    show("held-out test problem lines ({} of {}, split by problem, seed {}):\n", test, res.problems,
         job.options.seed);
    printTable(res.train.testMetrics, res.method.method == TimingMethod::Cpu,
               fmt::format("{} test problem line{}", test, test == 1 ? "" : "s"), test);
    return 0;
#else
    (void)o;
    say("error: this diode was built without LibTorch; install libtorch-dev and reconfigure to train\n");
    return 3;
#endif
}

// The same evaluation as the Validate page (core/analysis/diode/analysis/evaluationjob.h); this face prints.
// Of a database it measures on the problems the package never trained on when it can tell them apart (the
// database is its training data): numbers on training problems flatter a model. The package's kernel-config
// and small-M form models, with the package's margins, on measured kernel and site lines (docs/FORMATS.md):
// the figures train-decisions prints held out, for lines of the user's own.
int runEvalDecisions(const Options &o) {
    const auto pkg = ModelPackage::load(o.package);
    const DecisionModels models = DecisionModels::fromManifest(pkg.manifest());
    if (!models.kernelConfig && !models.smallMForm)
        throw InvalidInput(fmt::format("{}: the package carries no decision models (manifest \"decisions\"); "
                                       "diode train-decisions writes them",
                                       o.package));
    const DecisionData data = readDecisionData(o.decisionLines);
    for (const auto &caveat : decisionLinesCaveats(pkg.manifest(), data))
        say("note: {}\n", caveat);
    show("{}\n", jsonText(evaluateDecisionLines(models, data).toJson(), 1));
    return 0;
}

int runEval(const Options &o) {
    EvaluationJob job;
    job.db = o.db;
    job.problemsFile = o.input;
    job.packages = {o.package};
    job.method = o.method.empty() ? std::nullopt : parseTimingMethod(o.method);
    job.heldOutOnly = !o.all;
    job.margin = o.margin();
    job.storePredictions = o.storePredictions;
    job.allowMixedData = o.allowMixedData;
    const auto res = runEvaluationJob(job);
    const auto &model = res.models.front();
    printMethod("evaluating", res.method);
    if (model.trainedOn != res.method.method)
        say("note: the model was trained on {} times\n", toString(model.trainedOn));
    // Counted as every face counts: distinct problems, and the problem lines they are in (wording.h).
    const size_t distinct = distinctProblems(res.table->problems);
    const std::string shown = problemCount(distinct, res.table->problems.size());
    if (!o.db.empty()) {
        const size_t all = res.problemsBeforeCut;
        if (!res.heldOut.known)
            say("measuring on all {} of {} ({})\n", shown, o.db, res.heldOut.why);
        else if (!res.heldOutOnly)
            say("measuring on all {} of {}, including the {} the model trained on (--all)\n", shown, o.db,
                res.heldOut.trainedOn);
        else
            say("measuring on the {} of {} the model never saw (its test split, less problems also "
                "measured in a training line; --all for all {} problem lines)\n",
                shown, o.db, all);
    } else {
        say("measuring on the {} of {}\n", shown, o.input);
    }
    const nlohmann::json cmp{{"model", model.breakdown},
                             {"policy", model.policyMetrics.toJson()},
                             {"baselines",
                              {{"aten", res.aten.toJson()},
                               {"first-config", res.firstConfig.toJson()},
                               {"random", res.random.toJson()}}}};
    nlohmann::json withAutotune = cmp;
    if (res.maxAutotune.problems > 0) // as the Validate page: where Inductor's own benchmark ran
        withAutotune["baselines"]["max-autotune"] = res.maxAutotune.toJson();
    printTable(withAutotune, res.method.method == TimingMethod::Cpu, shown, distinct);
    // "model" is the arg-min (the candidate predicted fastest); "model policy" what a compile with the
    // package runs (core/infer/diode/infer/selectionpolicy.h): the same rule as the plugin and the Validate
    // page.
    if (res.method.method == TimingMethod::Cpu)
        show("model policy: the arg-min (cpu data has no ATen kernel to keep)\n");
    else
        show("model policy: ATen unless another kernel is predicted faster by more than {:.2f} (margin {})\n",
             model.policy.margin, o.margin() ? "from --margin" : "of the package for its regime");
    if (res.storedModelId)
        say("predictions stored in {} as model {}\n", o.db, res.storedModelId);
    else if (!o.db.empty() && shipped::isShippedPath(o.db))
        say("predictions not stored: {} is shipped data, only read (to keep them for the Validate page, "
            "copy it and use --store-predictions on the copy)\n",
            o.db);
    else if (!o.db.empty())
        say("predictions not stored (--store-predictions keeps them in {} for the Validate page)\n", o.db);
    return 0;
}

// The held-out table of docs/MODELS.md: the policy's pick beside plain torch.compile, max-autotune,
// the best ATen kernel and a random one, per op, dtype, M band and held-out family.
int runEvalTable(const Options &o) {
    if (o.input.empty())
        throw InvalidInput("eval --table reads problem lines with their baselines: give --input FILE.jsonl");
    const auto pkg = ModelPackage::load(o.package);
    const TimingMethod method = o.method.empty() ? pkg.timingMethod() : *parseTimingMethod(o.method);
    SelectorOptions options;
    options.margin = o.margin();
    Selector selector(pkg, options); // the plugin's decision, as a compile with the package makes it
    const auto records = readProblemFile(o.input);
    const auto table = policyTable(selector, pkg, records, method, o.searchSpace);
    say("policy: top-1, margin {:.2f} ({}); {} lines of another search space skipped\n",
        selector.policy().margin, o.margin() ? "--margin" : "the package's for its regime",
        table.skippedOtherSpace);
    show("{}", formatPolicyTable(table));
    if (!o.out.empty()) {
        // One line per problem judged: the plugin's decision on it, as a compile on the package's GPU makes
        // it.
        writeFileAtomically<InvalidInput>(o.out, [&](std::ostream &os) {
            for (const auto &d : table.decisions)
                os << nlohmann::json{{"record", d.record},
                                     {"problem", records[d.record].problem.label()},
                                     {"pick", d.pick ? d.pick->toJson() : nlohmann::json(nullptr)},
                                     {"not_selected", d.notSelected}}
                          .dump()
                   << '\n';
        });
        say("{} decisions written to {}\n", table.decisions.size(), o.out);
    }
    return 0;
}

// Calibrates the selection policy's margin on the package's own validation and test problems
// and, with --out, writes a copy of the package carrying it (only the manifest changes).
int runCalibrate(const Options &o) {
    if (o.db.empty() == o.input.empty())
        throw InvalidInput("calibrate needs the package's training data: --db DB or --input FILE.jsonl");
    if (!o.out.empty()) // before the work, not after it
        refuseOutputPath(o.out, {o.package, o.db, o.input}, "--out");
    std::ifstream file(o.package, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    const auto pkg = ModelPackage::fromBytes(bytes);
    const DatasetFilter filter = packageFilter(pkg.manifest());
    Dataset data, benchmarked;
    if (!o.db.empty()) {
        Store store(o.db, Store::Mode::ReadOnly);
        data = loadDataset(store, pkg.timingMethod(), filter);
        benchmarked = inductorBenchmarkData(store, filter);
    } else {
        data = loadDatasetJsonl(o.input, pkg.timingMethod(), filter);
    }
    const Calibration c = calibrate(pkg, data);
    say("{} ({} regime): margin {:.2f}, chosen on {} validation and test problems; the redrawn "
        "test split's arg-min top-1 {:.4f} (the trainer recorded {:.4f})\n",
        manifestText(pkg.manifest(), nlohmann::json::json_pointer("/name")), toString(c.regime), c.margin,
        c.problems, c.testTop1Redrawn, c.testTop1Trainer);
    std::cout << jsonText(c.toJson(), 1) << '\n';
    if (o.out.empty()) {
        say("nothing written (--out FILE.diode writes the package with this margin)\n");
        return 0;
    }
    nlohmann::json manifest = pkg.manifest();
    manifest[kSelectionPolicyKey] = c.toJson();
    // Packages trained before the trainer recorded max-autotune's baseline get it here, on the
    // same test split, so the Export page lists it beside plain torch.compile's.
    const nlohmann::json::json_pointer testSplit("/metrics/test_split");
    if (manifest.contains(testSplit) && manifest[testSplit].is_object() &&
        !manifest[testSplit].contains(nlohmann::json::json_pointer("/baselines/max-autotune")))
        addMaxAutotuneBaseline(manifest[testSplit], c.test, benchmarked);
    ModelPackage::writeFile(o.out, ModelPackage::withManifest(bytes, manifest));
    say("wrote {}\n", o.out);
    return 0;
}

int runRank(const Options &o) {
    const auto pkg = ModelPackage::load(o.package);
    std::ifstream file;
    std::istream *in = &std::cin;
    if (o.input != "-") {
        file.open(o.input);
        if (!file)
            throw InvalidInput(fmt::format("cannot read '{}'", o.input));
        in = &file;
    }
    // Each answer names its input line, so a reader can pair them even past a refused line; any
    // refused line makes the exit code 2. A line over the limit ends the run: the input may
    // never reach another newline (/dev/zero).
    std::string line;
    bool refused = false;
    for (int n = 1;; ++n) {
        const LineRead got = readProblemLine(*in, line);
        if (got == LineRead::End)
            break;
        if (got == LineRead::TooLong) {
            const nlohmann::json out = {
                {"line", n},
                {"error", fmt::format("line {}: longer than {} bytes; a problem line may hold "
                                      "at most that (docs/FORMATS.md, Limits)",
                                      n, kProblemJsonLimits.maxBytes)}};
            std::cout << jsonText(out, -1) << '\n';
            say("error: {}\n", out["error"].get<std::string>());
            return 2;
        }
        if (line.find_first_not_of(" \t\r") == std::string::npos)
            continue;
        nlohmann::json out = {{"line", n}};
        out.update(rankProblemLine(pkg, line, fmt::format("line {}", n)));
        std::cout << jsonText(out, -1) << '\n';
        // Said on stderr too: a person reading the terminal sees which lines got no ranking.
        if (out.contains("error")) {
            refused = true;
            std::cout.flush();
            say("error: {}\n", out["error"].get<std::string>());
        }
    }
    if (in->bad())
        throw InvalidInput(fmt::format("cannot read '{}'", o.input));
    return refused ? 2 : 0;
}

// One selector's row of the test-split table; n/a where a metric was not recorded.
void printInspectRow(const std::string &name, const nlohmann::json &m) {
    auto num = [&](const char *metric, const char *stat) {
        const auto p = nlohmann::json::json_pointer(fmt::format("/{}/{}", metric, stat));
        return m.contains(p) && m.at(p).is_number() ? fmt::format("{:.4f}", m.at(p).get<double>())
                                                    : std::string("n/a");
    };
    show("  {:<28} {:>9} {:>9} {:>9}\n", name, num("top1_efficiency", "mean"), num("top1_efficiency", "p10"),
         num("top3_efficiency", "mean"));
}

/// Whether the plugin would load the package on each GPU (core's one rule, gpuTransfer): on the
/// GPUs named, else on this machine's.
void printServes(const ModelPackage &pkg, const std::vector<std::string> &named, bool cpuModel) {
    if (cpuModel)
        return;
    const nlohmann::json::json_pointer gpuAt("/hardware/gpu");
    const auto &m = pkg.manifest();
    const std::string trainedOn =
        m.contains(gpuAt) && m.at(gpuAt).is_string() ? m.at(gpuAt).get<std::string>() : "";
    struct Device {
        std::string name;
        int sms = 0;
    };
    std::vector<Device> devices;
    for (const auto &n : named)
        devices.push_back({n});
    if (named.empty())
        for (const auto &g : HardwareMonitor().report().gpus)
            devices.push_back({g.name, g.smCount});
    if (devices.empty())
        show("  serves        no GPU on this machine (--gpu NAME asks about another)\n");
    for (const auto &d : devices) {
        const GpuTransfer t = gpuTransfer(trainedOn, d.name, {}, d.sms);
        const std::string verdict =
            t.kind == GpuTransfer::Same ? "yes"
            : t.kind == GpuTransfer::Similar
                ? fmt::format("where no package of its own is found (transferred, distance {:.2f})",
                              t.distance)
                : "no";
        show("  {:<14}{}: {}; {}\n", "serves", printable(d.name), verdict, printable(t.why));
    }
}

// What a person asks of a package: what it is for, what it learnt from, and how well it ranks
// the problems it never saw against the baselines. --json prints the manifest itself.
// The decisions beside the GEMM kernel (the manifest's "decisions", docs/PACKAGE.md): what each model
// was built from, and its figures with each model family held out, as train-decisions judged them.
void printDecisions(const nlohmann::json &m) {
    const auto summary = decisionModelsSummary(m);
    if (summary.empty()) {
        show("\nNo decisions beside the GEMM kernel: the plugin keeps Inductor's kernel configurations and "
             "GEMM forms (diode train-decisions adds them).\n");
        return;
    }
    show("\nDecisions beside the GEMM kernel, {}:\n", summary.at(0)); // its fields escaped
    for (size_t i = 1; i < summary.size(); ++i)
        show("  {}\n", summary[i]);
    const auto figures = heldOutFigures(m);
    if (figures.empty())
        return;
    show("Held out by model family (each judged by the models built from the other families' lines):\n");
    show("  {:<15} {:<13} {:>6} {:>7} {:>6} {:>11} {:>9} {:>9} {:>11}\n", "decision", "held out", "judged",
         "changed", "good", ">10% slower", "pick/base", "best/base", "tuned kept");
    for (const auto &f : figures) {
        const bool kernels = f.kind == DecisionKind::KernelConfig;
        show("  {:<15} {:<13} {:>6} {:>7} {:>5.1f}% {:>11} {:>8.3f}x {:>8.3f}x {:>11}\n",
             kernels ? "kernel config" : "small-M form", f.scope, f.judged, f.changed, 100.0 * f.goodShare,
             f.muchSlower, f.pickOverDefault, f.bestOverDefault,
             kernels ? fmt::format("{}/{}", f.tunedKept, f.defaultTuned) : std::string("-"));
    }
    show(
        "  good: a kernel config within 3 % of the fastest measured, the faster of a site's two forms; base: "
        "Inductor's default config, the library kernel; tuned kept: kernels whose default Inductor "
        "benchmarks at first run, kept at it, of those judged\n");
}

int runInspect(const Options &o) {
    const auto pkg = ModelPackage::load(o.package);
    nlohmann::json m = pkg.manifest();
    m.erase("tensors");
    m.erase("feature_names");
    if (o.json) {
        show("{}\n", jsonText(m, 2));
        return 0;
    }
    using P = nlohmann::json::json_pointer;
    const TimingMethod method = pkg.timingMethod();
    const bool cpuModel = method == TimingMethod::Cpu;
    // Called by its file, as the workbench lists it (wording.h); the manifest's own name beside it.
    const std::string manifestName = manifestText(m, P("/name"));
    show("{}{}{}\n", packageName(o.package), cpuModel ? " (cpu model)" : "",
         manifestName != "n/a" && manifestName != packageName(o.package)
             ? fmt::format(" (its manifest calls it \"{}\")", manifestName)
             : std::string());
    show("  file          {} ({} bytes)\n", o.package, std::filesystem::file_size(o.package));
    // A cpu model was measured on a CPU: it has no SMs, whatever its feature inputs say.
    if (cpuModel)
        show("  hardware      {} (a CPU: the cpu backend's tiles)\n", manifestText(m, P("/hardware/gpu")));
    else
        show("  GPU           {} ({} SMs)\n", manifestText(m, P("/hardware/gpu")),
             manifestText(m, P("/hardware/sm_count")));
    printServes(pkg, o.gpus, cpuModel);
    show("  timing method {}{}\n", toString(method),
         !m.contains("timing_method") ? " (not recorded: packages before timing methods)"
         : cpuModel ? " (ranks the cpu backend's tiles, not GPU kernels: never used by the plugin)"
                    : "");
    show("  ops / dtypes  {} / {}\n", manifestText(m, P("/ops")), manifestText(m, P("/dtypes")));
    // The ATen guard the plugin, diode eval and Validate use with this package (selectionpolicy.h);
    // cpu data has no ATen kernel to guard.
    if (cpuModel)
        show("  selection     the tile predicted fastest (cpu data: no ATen kernel to keep)\n");
    else
        show("  ATen guard    margin {:.2f} warm, {:.2f} cold ({})\n", packageMargin(m, Regime::Warm),
             packageMargin(m, Regime::Cold),
             m.contains(kSelectionPolicyKey)
                 ? "calibrated by diode calibrate for its regime, else the default"
                 : "the defaults: no calibrated margin");
    show("  created       {} by diode {}\n", manifestText(m, P("/created_at")),
         manifestText(m, P("/tool_version")));
    // The trainer counts problem lines: a problem measured in two runs of the store is two lines
    // (loadDataset); eval and the workbench count distinct problems.
    show("  training data {} problem lines ({} rows) from {}\n",
         manifestText(m, P("/training_data/problems")), manifestText(m, P("/training_data/rows")),
         manifestText(m, P("/training_data/source")));
    show("  split         {} train, {} validation, {} test problem lines (a problem measured in n runs is n "
         "lines)\n",
         manifestText(m, P("/training_data/split/train")),
         manifestText(m, P("/training_data/split/validation")),
         manifestText(m, P("/training_data/split/test")));
    show("  architecture  {} {} ({}), {} member(s), {}; feature schema {}\n",
         manifestText(m, P("/architecture/type")), manifestText(m, P("/architecture/layers")),
         manifestText(m, P("/architecture/activation")), manifestText(m, P("/architecture/members")),
         manifestText(m, P("/architecture/combine")), manifestText(m, P("/feature_schema_version")));
    const P test("/metrics/test_split");
    if (!m.contains(test / "model" / "all")) {
        show("No test-split metrics recorded.\n");
        printDecisions(m);
        show("--json prints the whole manifest.\n");
        return 0;
    }
    const auto &t = m.at(test);
    show("\nOn the test split ({} problem lines it never trained on), top-k efficiency:\n",
         manifestText(t, P("/model/all/problems")));
    show("  {:<28} {:>9} {:>9} {:>9}\n", "selector", "top1 mean", "top1 p10", "top3 mean");
    printInspectRow("model", t.at(P("/model/all")));
    // Baselines in the pages' order and words (wording.h); one computed on fewer problems
    // (max-autotune where Inductor's benchmark ran) says on how many.
    const auto all = t.at(P("/model/all")).value("problems", nlohmann::json());
    forEachBaseline(t.value("baselines", nlohmann::json::object()), [&](const std::string &k,
                                                                        const nlohmann::json &v) {
        if (!baselineShown(k, cpuModel))
            return;
        printInspectRow(baselineName(k, cpuModel), v);
        if (v.is_object() && v.contains("problems") && v["problems"] != all)
            show("  {:<28} (on the {} test problems where it ran)\n", "", manifestText(v, P("/problems")));
    });
    if (all.is_number_integer())
        if (const auto few = fewProblemsWarning(all.get<size_t>()); !few.empty())
            show("warning: {}\n", few);
    printDecisions(m);
    show("--json prints the whole manifest.\n");
    return 0;
}

} // namespace

std::function<int()> addModelCommands(CLI::App &app) {
    auto o = std::make_shared<Options>();
    auto *train =
        app.add_subcommand("train", "Train a runtime model on a database and write a .diode package");
    train->add_option("--db", o->db, "SQLite database with measurements")
        ->required()
        ->check(CLI::ExistingFile);
    train->add_option("--out", o->out,
                      "package to write (default: the database's name with .diode, in the "
                      "current directory)");
    // The choices are core's names (gemmproblem.h, timingmethod.h), so a new op or method is
    // accepted here without touching this list.
    train->add_option("--ops", o->ops, fmt::format("only these ops ({})", opNames()))
        ->check(CLI::IsMember(opNameList()));
    train
        ->add_option("--dtypes", o->dtypes,
                     fmt::format("only these dtypes ({})", fmt::join(dtypeNameList(), ", ")))
        ->check(CLI::IsMember(dtypeNameList()));
    const auto methods = CLI::IsMember(timingMethodNameList());
    const std::string methodHelp = timingMethodNames() +
                                   " (default: graph_warm when the data has in-graph times, else cpu for cpu "
                                   "data, else inductor_autotune)";
    train->add_option("--method", o->method, "timing method to train on: " + methodHelp)->check(methods);
    train
        ->add_option("--init", o->init,
                     "fine-tune this package on the data instead of training from random weights (e.g. "
                     "another GPU's model; its timing method must be the data's; a lower --lr suits)")
        ->check(CLI::ExistingFile);
    train->add_option("--epochs", o->train.epochs, "most epochs (early stopping may end sooner)")
        ->check(integerIn(1, 100000))
        ->capture_default_str();
    train->add_option("--seed", o->train.seed, "seed of the split and the initial weights")
        ->capture_default_str();
    train->add_option("--hidden", o->train.hidden, "width of the hidden layers")
        ->check(integerIn(4, 1024))
        ->capture_default_str();
    train->add_option("--lr", o->train.learningRate, "Adam learning rate")
        ->check(numberIn(0, std::numeric_limits<double>::infinity(), true))
        ->capture_default_str();
    train
        ->add_option("--rank-weight", o->train.rankWeight,
                     "weight of the pairwise ranking term against the MSE")
        ->capture_default_str();
    train->add_option("--weight-decay", o->train.weightDecay, "L2 weight decay")
        ->check(numberIn(0))
        ->capture_default_str();
    train->add_option("--list-weight", o->train.listWeight, "weight of the listwise (softmax) ranking term")
        ->check(numberIn(0))
        ->capture_default_str();
    train
        ->add_option("--list-temperature", o->train.listTemperature,
                     "temperature of the listwise term, in ln(time)")
        ->check(numberIn(0, std::numeric_limits<double>::infinity(), true))
        ->capture_default_str();
    train
        ->add_option("--members", o->train.members,
                     "networks in the ensemble (their ln-time predictions are averaged)")
        ->check(integerIn(1, 64))
        ->capture_default_str();
    train->add_option("--batch-problems", o->train.batchProblems, "problems per optimiser step (0: all)")
        ->check(integerIn(0))
        ->capture_default_str();
    train
        ->add_option("--patience", o->train.patience,
                     "epochs without a better validation top-1 before stopping")
        ->check(integerIn(1))
        ->capture_default_str();
    train
        ->add_option("--threads", o->train.threads,
                     "LibTorch intra-op threads (0: the cores this process may run on, its CPU affinity)")
        ->check(integerIn(0, 1024))
        ->capture_default_str();

    auto *eval = app.add_subcommand("eval", "Evaluate a package against the baselines");
    eval->add_option("--package", o->package, ".diode package")->required()->check(CLI::ExistingFile);
    auto *evalDb = eval->add_option("--db", o->db, "SQLite database with measurements (read only)");
    auto *evalIn =
        eval->add_option("--input", o->input, "problem JSON lines with timings (e.g. held-out problems)")
            ->check(CLI::ExistingFile);
    evalDb->excludes(evalIn);
    eval->add_flag("--store-predictions", o->storePredictions,
                   "with --db: store the model's predictions for every problem in the database, for the "
                   "workbench's Validate page (the database must be writable; shipped data never is)")
        ->needs(evalDb);
    eval->add_flag("--allow-mixed-data", o->allowMixedData,
                   "with --store-predictions: store them even where the model's GPU or timing method is not "
                   "the database's (refused without it, naming what would mix)")
        ->needs("--store-predictions");
    eval->add_flag("--all", o->all,
                   "with --db: measure on every problem, including those the model trained on (default: only "
                   "the problems of its test split when the database is its training data)");
    eval->add_option("--method", o->method, "timing method to evaluate against: " + methodHelp)
        ->check(methods);
    eval->add_option("--margin", o->marginArg,
                     "the selection policy's ATen-guard margin (default: the package's for the regime of its "
                     "timing method; 0: the arg-min)")
        ->check(numberIn(0));
    eval->add_flag(
            "--table", o->table,
            "with --input: print the held-out table (Markdown): the policy's pick, plain torch.compile, "
            "max-autotune's pick, the best ATen kernel and a random one, per op, dtype, M band and "
            "held-out family (--method default: the package's timing method)")
        ->needs(evalIn);
    eval->add_option(
            "--decision-lines", o->decisionLines,
            "kernel and site lines (diode sweep-kernels): the package's kernel-config and small-M form "
            "models judged on them (pick against the fastest measured and against Inductor's default; "
            "the faster form), as JSON")
        ->check(CLI::ExistingFile);
    eval->add_option("--search-space", o->searchSpace,
                     "with --table: only problem lines of this search space")
        ->capture_default_str();
    eval->add_option("--decisions", o->out,
                     "with --table: write each problem's decision here as a JSON line ({\"record\": its "
                     "index among the input's problems, \"problem\", \"pick\": the candidate or null, "
                     "\"not_selected\": why the model did not decide, or \"\"})")
        ->needs("--table");

    auto *calib = app.add_subcommand(
        "calibrate",
        "Calibrate the selection policy's ATen-guard margin on a package's own validation and test "
        "problems (its training data, split redrawn); --out writes the package with it");
    calib->add_option("package", o->package, ".diode package")->required()->check(CLI::ExistingFile);
    auto *calibDb = calib->add_option("--db", o->db, "the package's training database (read only)");
    auto *calibIn =
        calib->add_option("--input", o->input, "its training data as problem JSON lines (diode export)")
            ->check(CLI::ExistingFile);
    calibDb->excludes(calibIn);
    calib->add_option("--out", o->out,
                      "write the package with the calibrated margin here (only its manifest changes)");

    auto *rank = app.add_subcommand("rank", "Rank each problem's candidates: one JSON line out per line in");
    rank->add_option("--package", o->package, ".diode package")->required()->check(CLI::ExistingFile);
    rank->add_option("--input", o->input, "problem JSON lines, or - for standard input")->required();

    auto *inspect = app.add_subcommand(
        "inspect",
        "Summarise a package: what it was trained on and its test-split metrics against the baselines");
    // One option under two names: CLI11 would mark each REQUIRED in --help though one is enough,
    // so the check that one was given is below.
    inspect
        ->add_option("package,--package", o->package,
                     ".diode package: as the argument or --package (one is needed)")
        ->check(CLI::ExistingFile);
    inspect->add_flag("--json", o->json, "print the whole manifest as JSON instead of the summary");
    inspect->add_option("--gpu", o->gpus,
                        "say whether the plugin would use the package on this GPU (a device name, e.g. "
                        "\"NVIDIA H100 80GB HBM3\"; repeatable; default: the GPUs of this machine)");

    return [=]() -> int {
        if (*train)
            return runTrain(*o);
        if (*eval) {
            if (!o->decisionLines.empty())
                return runEvalDecisions(*o);
            if (o->db.empty() && o->input.empty())
                throw InvalidInput("eval needs --db, --input or --decision-lines");
            return o->table ? runEvalTable(*o) : runEval(*o);
        }
        if (*rank)
            return runRank(*o);
        if (*calib)
            return runCalibrate(*o);
        if (*inspect) {
            if (o->package.empty())
                throw InvalidInput(
                    "inspect needs a package: diode inspect FILE.diode (or --package FILE.diode)");
            return runInspect(*o);
        }
        return -1;
    };
}

} // namespace diode::cli
