#include "trainingjob.h"

#include "diode/analysis/evaluation.h"
#include "diode/analysis/predictiontable.h"
#include "diode/config.h"
#include "diode/infer/gputable.h"
#include "diode/infer/modelpackage.h"
#include "diode/infer/shippeddata.h"
#include "diode/store/store.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <set>

namespace diode {

nlohmann::json trainingManifest(const Dataset &data, const TrainResult &res, const TrainOptions &t,
                                const std::string &name, const std::string &source) {
    const auto &problems = data.problems;
    std::set<std::string> ops, dtypes;
    size_t rows = 0;
    for (const auto &p : problems) {
        ops.insert(std::string(toString(p.problem.op)));
        dtypes.insert(std::string(toString(p.problem.dtype)));
        rows += p.configs.size();
    }
    const nlohmann::json split{{"train", res.split.train.size()},
                               {"validation", res.split.validation.size()},
                               {"test", res.split.test.size()}};
    return {
        {"name", name},
        {"hardware", res.hardware},
        {"ops", ops},
        {"dtypes", dtypes},
        {"timing_method", toString(data.method.method)},
        {"training_data",
         {{"fingerprint", fingerprint(problems)},
          {"source", source},
          {"problems", problems.size()},
          {"rows", rows},
          {"split", split}}},
        {"training",
         {{"seed", t.seed},
          {"members", res.members.size()},
          {"max_epochs", t.epochs},
          {"patience", t.patience},
          {"hidden", t.hidden},
          {"learning_rate", t.learningRate},
          {"batch_problems", t.batchProblems},
          {"rank_weight", t.rankWeight},
          {"list_weight", t.listWeight},
          {"list_temperature", t.listTemperature},
          {"weight_decay", t.weightDecay},
          {"epochs_run", res.epochsRun},
          {"best_epochs", res.bestEpochs},
          {"loss", "MSE of ln(ms) + pairwise logistic + listwise softmax ranking within each problem"}}},
        {"metrics", {{"test_split", res.testMetrics}}},
        {"unsafe_candidates", unsafeCandidates(data.wrongResults)},
        {"created_at", utcNow()},
        {"tool_version", DIODE_VERSION},
    };
}

namespace {

// The oldest feature schema whose networks fine-tuning widens to the current inputs.
constexpr int kWidenableFeatureSchema = 2;

// A network of feature schema `schema` as one of the current schema: each of its inputs moves to
// its current index; an input it did not have gets zero weights, mean 0 and deviation 1, so the
// network predicts exactly what it did until training moves those weights.
void widenInputs(MlpWeights &w, int schema) {
    const auto to = FeatureSchema::currentIndices(schema);
    const int in = w.layerSizes.front(), width = FeatureSchema::size(), hidden = w.layerSizes[1];
    if (in != int(to.size()))
        throw InvalidInput(
            fmt::format("a network of feature schema {} takes {} features, not {}", schema, to.size(), in));
    std::vector<float> mean(size_t(width), 0.f), sd(size_t(width), 1.f),
        w0(size_t(hidden) * size_t(width), 0.f);
    for (int i = 0; i < in; ++i) {
        mean[size_t(to[size_t(i)])] = w.inputMean[size_t(i)];
        sd[size_t(to[size_t(i)])] = w.inputStd[size_t(i)];
        for (int o = 0; o < hidden; ++o)
            w0[size_t(o) * size_t(width) + size_t(to[size_t(i)])] =
                w.weights[0][size_t(o) * size_t(in) + size_t(i)];
    }
    w.inputMean = std::move(mean), w.inputStd = std::move(sd), w.weights[0] = std::move(w0);
    w.layerSizes.front() = width;
}

// Minutes of training must not end in "cannot write": the package is written beside its target
// and renamed (ModelPackage::save), so that is what is tried first.
void checkWritable(const std::string &out) {
    namespace fs = std::filesystem;
    shipped::refuseWritingShipped(out, "package");
    std::error_code ec;
    if (fs::is_directory(out, ec))
        throw InvalidInput(fmt::format("--out '{}' is a directory; name the package file to write", out));
    const std::string probe = out + ".partial";
    const bool existed = fs::exists(probe, ec);
    {
        std::ofstream f(probe, std::ios::app | std::ios::binary);
        if (!f) {
            const fs::path parent = fs::path(out).parent_path();
            throw InvalidInput(fmt::format("cannot write the package '{}': {}", out,
                                           parent.empty()            ? "the current directory is not writable"
                                           : !fs::exists(parent, ec) ? parent.string() + " does not exist"
                                           : !fs::is_directory(parent, ec)
                                               ? parent.string() + " is not a directory"
                                               : parent.string() + " is not writable"));
        }
    }
    if (!existed)
        fs::remove(probe, ec);
}

// The manifest's hardware (docs/PACKAGE.md): the GPU and SM count the features are computed for,
// with what the store's runs on that GPU recorded (drivers, torch and Triton versions, memory) and
// what the GPU table knows of it (architecture, L2, memory bandwidth), so a package says what it
// was trained on without its database.
nlohmann::json describeHardware(nlohmann::json hw, const std::vector<RunInfo> &runs) {
    const std::string gpu = hw.value("gpu", "");
    std::set<std::string> drivers, torch, triton;
    int64_t memoryMb = 0;
    for (const auto &r : runs) {
        if (r.gpuName != gpu)
            continue;
        if (!r.driver.empty())
            drivers.insert(r.driver);
        if (!r.torchVersion.empty())
            torch.insert(r.torchVersion);
        if (!r.tritonVersion.empty())
            triton.insert(r.tritonVersion);
        memoryMb = std::max(memoryMb, r.gpuMemoryMb);
    }
    hw["drivers"] = drivers;
    hw["torch"] = torch;
    hw["triton"] = triton;
    if (memoryMb > 0)
        hw["memory_mb"] = memoryMb;
    if (const GpuSpec *g = findGpu(gpu)) {
        hw["arch"] = g->arch;
        hw["memory_bandwidth_tbs"] = g->bandwidthTBs;
        if (g->l2MB > 0)
            hw["l2_mb"] = g->l2MB;
    }
    return hw;
}

} // namespace

TrainingJobResult runTrainingJob(const TrainingJob &job) {
    if (!std::filesystem::exists(job.db))
        throw InvalidInput(fmt::format("database '{}' does not exist", job.db));
    checkWritable(job.out);
    if (job.storePredictions)
        shipped::refuseWritingShipped(job.db, "database");
    Dataset data, benchmarked;
    std::vector<RunInfo> runs;
    {
        Store store(job.db, Store::Mode::ReadOnly);
        data = loadDataset(store, job.method, job.filter);
        runs = store.runs();
        benchmarked = inductorBenchmarkData(store, job.filter);
    }
    if (!job.exclude.empty())
        std::erase_if(data.problems,
                      [&](const TrainingProblem &p) { return job.exclude.count(p.problem.label()) > 0; });
    const auto &problems = data.problems;
    TrainingJobResult out;
    out.problems = problems.size();
    out.method = data.method;
    if (job.loaded)
        job.loaded(problems.size(), data.method);
    std::vector<MlpWeights> start;
    nlohmann::json startFrom;
    if (!job.initPackage.empty()) {
        const auto base = ModelPackage::load(job.initPackage);
        if (base.timingMethod() != data.method.method)
            throw InvalidInput(fmt::format("--init {} was trained on {} times; the data's are {} (--method)",
                                           job.initPackage, toString(base.timingMethod()),
                                           toString(data.method.method)));
        const int schema = base.featureSchema();
        // Schema 3 only added op_baddbmm to schema 2's inputs: a schema-2 network reads them with
        // that input at zero weight and predicts what it did. Schema 1 computed other hardware inputs.
        if (schema < kWidenableFeatureSchema)
            throw InvalidInput(fmt::format("--init {} was trained on feature schema {}; fine-tuning computes "
                                           "schema {}, so its networks would read other inputs",
                                           job.initPackage, schema, FeatureSchema::kVersion));
        start = packageWeights(job.initPackage);
        if (schema != FeatureSchema::kVersion)
            for (auto &w : start)
                widenInputs(w, schema);
        startFrom = {{"package", std::filesystem::path(job.initPackage).filename().string()},
                     {"name", base.manifest().value("name", "")},
                     {"hardware", base.manifest().value("hardware", nlohmann::json::object())}};
    }
    out.train = train(problems, job.options, start.empty() ? nullptr : &start);
    // max-autotune beside the other baselines on the test split, where Inductor's benchmark ran.
    // The split indexes the problems with times, which are all a store's dataset holds.
    std::vector<TrainingProblem> test;
    for (size_t i : out.train.split.test)
        test.push_back(problems.at(i));
    addMaxAutotuneBaseline(out.train.testMetrics, test, benchmarked);
    out.manifest = trainingManifest(data, out.train, job.options,
                                    std::filesystem::path(job.out).stem().string(), job.db);
    out.manifest["hardware"] = describeHardware(out.train.hardware, runs);
    if (!startFrom.is_null())
        out.manifest["fine_tuned_from"] = startFrom;
    ModelPackage::save(job.out, out.manifest, out.train.members);
    if (job.storePredictions) {
        const auto pkg = ModelPackage::load(job.out); // the written file, so the store matches it exactly
        std::vector<std::vector<double>> predicted;
        predicted.reserve(problems.size());
        for (const auto &p : problems)
            predicted.push_back(pkg.predictMs(p.problem, p.configs));
        Store store(job.db);
        out.modelId = storePredictions(store, job.out, pkg.manifest(), problems, predicted);
    }
    return out;
}

} // namespace diode
