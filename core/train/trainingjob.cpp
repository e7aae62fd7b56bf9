#include "trainingjob.h"

#include "diode/config.h"
#include "diode/evaluation.h"
#include "diode/modelpackage.h"
#include "diode/predictiontable.h"
#include "diode/shippeddata.h"
#include "diode/store.h"

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

} // namespace

TrainingJobResult runTrainingJob(const TrainingJob &job) {
    if (!std::filesystem::exists(job.db))
        throw InvalidInput(fmt::format("database '{}' does not exist", job.db));
    checkWritable(job.out);
    if (job.storePredictions)
        shipped::refuseWritingShipped(job.db, "database");
    Dataset data;
    {
        Store store(job.db, Store::Mode::ReadOnly);
        data = loadDataset(store, job.method, job.filter);
    }
    const auto &problems = data.problems;
    TrainingJobResult out;
    out.problems = problems.size();
    out.method = data.method;
    if (job.loaded)
        job.loaded(problems.size(), data.method);
    out.train = train(problems, job.options);
    out.manifest = trainingManifest(data, out.train, job.options,
                                    std::filesystem::path(job.out).stem().string(), job.db);
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
