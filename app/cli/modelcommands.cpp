#include "modelcommands.h"

#include "diode/config.h"
#include "diode/dataset.h"
#include "diode/datasplit.h"
#include "diode/evaluation.h"
#include "diode/metrics.h"
#include "diode/modelpackage.h"
#include "diode/ranking.h"
#include "diode/problemjson.h"
#include "diode/store.h"
#include "diode/trainoptions.h"
#if DIODE_HAVE_TORCH && !DIODE_CLI_EXECS_TRAIN // `diode` hands train to diode-train (app/CMakeLists.txt)
#include "trainer.h"
#include "trainingjob.h"
#endif

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>

namespace diode::cli {

namespace {

struct Options {
    std::string db, out, package, input;
    std::string method; ///< empty: the data's default (defaultTimingMethod)
    bool all = false;   ///< eval --db: every problem, not only those the model never saw
    std::vector<std::string> ops, dtypes;
    TrainOptions train;
};

void printTable(const nlohmann::json &cmp)
{
    fmt::print("{:<14} {:>9} {:>8} {:>8} {:>9} {:>9} {:>7} {:>9}\n", "selector", "top1 mean", "top1 p10", "top1 min",
               "top3 mean", "top5 mean", "hit@1", "spearman");
    auto row = [](const std::string &name, const nlohmann::json &m) {
        fmt::print("{:<14} {:>9.4f} {:>8.4f} {:>8.4f} {:>9.4f} {:>9.4f} {:>7.3f} {:>9.3f}\n", name,
                   m["top1_efficiency"]["mean"].get<double>(), m["top1_efficiency"]["p10"].get<double>(),
                   m["top1_efficiency"]["min"].get<double>(), m["top3_efficiency"]["mean"].get<double>(),
                   m["top5_efficiency"]["mean"].get<double>(), m["top1_hit"].get<double>(), m["spearman"].get<double>());
    };
    row("model", cmp["model"]["all"]);
    for (const auto &[k, v] : cmp["baselines"].items()) row(k, v);
    fmt::print("model on {} problems; MAPE {:.3f}, RMSE of ln(time) {:.3f}\n", cmp["model"]["all"]["problems"].get<int>(),
               cmp["model"]["all"]["mape"].get<double>(), cmp["model"]["all"]["rmse_log"].get<double>());
    for (const auto &[k, v] : cmp["model"]["by"].items())
        fmt::print("  {:<12} {:>4} problems  top1 mean {:.4f} p10 {:.4f}  top3 mean {:.4f}\n", k, v["problems"].get<int>(),
                   v["top1_efficiency"]["mean"].get<double>(), v["top1_efficiency"]["p10"].get<double>(),
                   v["top3_efficiency"]["mean"].get<double>());
}

Dataset loadProblems(const Options &o) {
    DatasetFilter f{o.ops, o.dtypes};
    const std::optional<TimingMethod> asked = o.method.empty() ? std::nullopt : parseTimingMethod(o.method);
    if (!o.input.empty())
        return loadDatasetJsonl(o.input, asked, f);
    if (!std::filesystem::exists(o.db)) throw InvalidInput(fmt::format("database '{}' does not exist", o.db));
    Store store(o.db, Store::Mode::ReadOnly);
    return loadDataset(store, asked, f);
}

// "training on graph_warm times (default: the data has in-graph times)"
void printMethod(const char *doing, const MethodChoice &m) {
    fmt::print(stderr, "{} on {}\n", doing,
               m.byDefault ? m.describe() : fmt::format("{} times (--method)", toString(m.method)));
}

int runTrain(const Options &o)
{
#if DIODE_HAVE_TORCH && !DIODE_CLI_EXECS_TRAIN // `diode` hands train to diode-train (app/CMakeLists.txt)
    const auto data = loadProblems(o);
    const auto &problems = data.problems;
    printMethod("training", data.method);
    TrainOptions t = o.train;
    t.progress = [](const EpochReport &r) {
        if (r.epoch % 25 == 0 || r.epoch == 1)
            fmt::print(stderr, "member {}/{}  epoch {:4}  loss {:.5f}  validation top-1 {:.4f}{}\n", r.member + 1,
                       r.members, r.epoch, r.loss, r.valTop1, r.improved ? " *" : "");
    };
    const auto res = train(problems, t);
    const auto manifest = trainingManifest(data, res, t, std::filesystem::path(o.out).stem().string(),
                                           o.input.empty() ? o.db : o.input);
    ModelPackage::save(o.out, manifest, res.members);
    fmt::print(stderr, "wrote {} ({} network{}, best epochs {}; {} epochs in all)\n", o.out, res.members.size(),
               res.members.size() == 1 ? "" : "s", fmt::join(res.bestEpochs, ", "), res.epochsRun);
    fmt::print("held-out test problems ({} of {}, split by problem, seed {}):\n", res.split.test.size(), problems.size(), t.seed);
    printTable(res.testMetrics);
    return 0;
#else
    (void)o;
    fmt::print(stderr, "error: this diode was built without LibTorch; install libtorch-dev and reconfigure to train\n");
    return 3;
#endif
}

// Of a database, eval measures on the problems the package never trained on when it can tell
// them apart (the database is its training data): numbers on training problems flatter a model.
std::vector<size_t> problemsToMeasure(const Options &o, const ModelPackage &pkg, const std::vector<TrainingProblem> &problems)
{
    std::vector<size_t> all(problems.size());
    std::iota(all.begin(), all.end(), size_t(0));
    if (o.db.empty()) return all;
    HeldOutProblems held;
    {
        Store store(o.db, Store::Mode::ReadOnly);
        held = heldOutProblems(store, pkg.manifest());
    }
    if (!held.known) {
        fmt::print(stderr, "measuring on all {} problems of {} ({})\n", problems.size(), o.db, held.why);
        return all;
    }
    if (o.all) {
        fmt::print(stderr, "measuring on all {} problems of {}, including the {} the model trained on (--all)\n",
                   problems.size(), o.db, held.trainedOn);
        return all;
    }
    std::vector<size_t> out;
    for (size_t i = 0; i < problems.size(); ++i)
        if (held.labels.count(problems[i].problem.label())) out.push_back(i);
    fmt::print(stderr, "measuring on the {} problems of {} the model never saw (its test split; --all for all {})\n",
               out.size(), o.db, problems.size());
    return out;
}

int runEval(const Options &o)
{
    const auto pkg = ModelPackage::load(o.package);
    const auto data = loadProblems(o);
    const auto &problems = data.problems;
    printMethod("evaluating", data.method);
    if (pkg.timingMethod() != data.method.method)
        fmt::print(stderr, "note: the model was trained on {} times\n", toString(pkg.timingMethod()));
    if (problems.empty()) throw InvalidInput("no problems with timings to evaluate");
    const auto ranked = rankWith(pkg, problems);
    const auto measured = problemsToMeasure(o, pkg, problems);
    if (measured.empty()) throw InvalidInput("none of the model's test problems has timings here; --all measures on every problem");
    std::vector<RankedProblem> rankedPart;
    std::vector<TrainingProblem> part;
    for (size_t i : measured) {
        rankedPart.push_back(ranked[i]);
        part.push_back(problems[i]);
    }
    printTable(compareWithBaselines(rankedPart, part));
    if (!o.db.empty() && o.input.empty()) { // every problem's predictions, for the Validate page
        Store store(o.db);
        Store::Transaction tx(store);
        const int64_t model = store.addModel(pkg.manifest().value("name", ""), o.package, pkg.manifest());
        for (size_t i = 0; i < problems.size(); ++i)
            for (size_t c = 0; c < problems[i].configs.size(); ++c)
                store.insertPrediction(model, problems[i].problem, problems[i].configs[c], ranked[i].predictedMs[c]);
        tx.commit();
        fmt::print(stderr, "predictions stored in {} as model {}\n", o.db, model);
    }
    return 0;
}

int runRank(const Options &o)
{
    const auto pkg = ModelPackage::load(o.package);
    std::ifstream file;
    std::istream *in = &std::cin;
    if (o.input != "-") {
        file.open(o.input);
        if (!file) throw InvalidInput(fmt::format("cannot read '{}'", o.input));
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
            std::cout << out.dump() << '\n';
            return 2;
        }
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        nlohmann::json out = {{"line", n}};
        out.update(rankProblemLine(pkg, line, fmt::format("line {}", n)));
        refused = refused || out.contains("error");
        std::cout << out.dump() << '\n';
    }
    if (in->bad())
        throw InvalidInput(fmt::format("cannot read '{}'", o.input));
    return refused ? 2 : 0;
}

int runInspect(const Options &o)
{
    const auto pkg = ModelPackage::load(o.package);
    nlohmann::json m = pkg.manifest();
    m.erase("tensors");
    m.erase("feature_names");
    fmt::print("{}\n", m.dump(2));
    return 0;
}

} // namespace

std::function<int()> addModelCommands(CLI::App &app)
{
    auto o = std::make_shared<Options>();
    auto *train = app.add_subcommand("train", "Train a runtime model on a database and write a .diode package");
    train->add_option("--db", o->db, "SQLite database with measurements")->required()->check(CLI::ExistingFile);
    train->add_option("--out", o->out, "package to write (.diode)")->required();
    train->add_option("--ops", o->ops, "only these ops (mm addmm bmm)")->check(CLI::IsMember({"mm", "addmm", "bmm"}));
    train->add_option("--dtypes", o->dtypes, "only these dtypes (bf16 fp16 fp32)")->check(CLI::IsMember({"bf16", "fp16", "fp32"}));
    const auto methods = CLI::IsMember({"graph_warm", "graph_cold", "inductor_autotune", "cpu"});
    const std::string methodHelp =
        "graph_warm, graph_cold, inductor_autotune or cpu (default: graph_warm when the "
        "data has in-graph times, else cpu for cpu data, else inductor_autotune)";
    train->add_option("--method", o->method, "timing method to train on: " + methodHelp)->check(methods);
    train->add_option("--epochs", o->train.epochs, "most epochs (early stopping may end sooner)")->check(CLI::Range(1, 100000))->capture_default_str();
    train->add_option("--seed", o->train.seed, "seed of the split and the initial weights")->capture_default_str();
    train->add_option("--hidden", o->train.hidden, "width of the hidden layers")->check(CLI::Range(4, 1024))->capture_default_str();
    train->add_option("--lr", o->train.learningRate, "Adam learning rate")->capture_default_str();
    train->add_option("--rank-weight", o->train.rankWeight, "weight of the pairwise ranking term against the MSE")->capture_default_str();
    train->add_option("--weight-decay", o->train.weightDecay, "L2 weight decay")->capture_default_str();
    train->add_option("--list-weight", o->train.listWeight, "weight of the listwise (softmax) ranking term")->capture_default_str();
    train->add_option("--list-temperature", o->train.listTemperature, "temperature of the listwise term, in ln(time)")
        ->check(CLI::PositiveNumber)->capture_default_str();
    train->add_option("--members", o->train.members, "networks in the ensemble (their ln-time predictions are averaged)")
        ->check(CLI::Range(1, 64))->capture_default_str();
    train->add_option("--batch-problems", o->train.batchProblems, "problems per optimiser step (0: all)")
        ->check(CLI::NonNegativeNumber)->capture_default_str();
    train->add_option("--patience", o->train.patience, "epochs without a better validation top-1 before stopping")
        ->check(CLI::PositiveNumber)->capture_default_str();

    auto *eval = app.add_subcommand("eval", "Evaluate a package against the baselines; store its predictions in --db");
    eval->add_option("--package", o->package, ".diode package")->required()->check(CLI::ExistingFile);
    auto *evalDb = eval->add_option("--db", o->db, "SQLite database (predictions are stored there)");
    auto *evalIn = eval->add_option("--input", o->input, "problem JSON lines with timings (e.g. held-out problems)")->check(CLI::ExistingFile);
    evalDb->excludes(evalIn);
    eval->add_flag("--all", o->all,
                   "with --db: measure on every problem, including those the model trained on (default: only "
                   "the problems of its test split when the database is its training data)");
    eval->add_option("--method", o->method, "timing method to evaluate against: " + methodHelp)
        ->check(methods);

    auto *rank = app.add_subcommand("rank", "Rank each problem's candidates: one JSON line out per line in");
    rank->add_option("--package", o->package, ".diode package")->required()->check(CLI::ExistingFile);
    rank->add_option("--input", o->input, "problem JSON lines, or - for standard input")->required();

    auto *inspect = app.add_subcommand("inspect", "Print a package's manifest and metrics");
    inspect->add_option("package", o->package, ".diode package")->required()->check(CLI::ExistingFile);

    return [=]() -> int {
        if (*train) return runTrain(*o);
        if (*eval) {
            if (o->db.empty() && o->input.empty()) throw InvalidInput("eval needs --db or --input");
            return runEval(*o);
        }
        if (*rank) return runRank(*o);
        if (*inspect) return runInspect(*o);
        return -1;
    };
}

} // namespace diode::cli
