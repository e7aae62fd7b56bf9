#include "trainer.h"

#include "diode/sweepplan.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <thread>

namespace diode {

DataSplit DataSplit::byProblem(size_t n, double valFrac, double testFrac, uint64_t seed)
{
    std::vector<size_t> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    SplitMix64 rng(seed);
    for (size_t i = n - 1; i > 0; --i) std::swap(idx[i], idx[rng.next() % (i + 1)]);
    const size_t nTest = std::max<size_t>(1, size_t(std::round(testFrac * double(n))));
    const size_t nVal = std::max<size_t>(1, size_t(std::round(valFrac * double(n))));
    DataSplit s;
    s.test.assign(idx.begin(), idx.begin() + long(nTest));
    s.validation.assign(idx.begin() + long(nTest), idx.begin() + long(nTest + nVal));
    s.train.assign(idx.begin() + long(nTest + nVal), idx.end());
    for (auto *v : {&s.train, &s.validation, &s.test}) std::sort(v->begin(), v->end());
    return s;
}

namespace {

// A candidate that produced no timing (out of shared memory, failed to compile) must rank last:
// it is trained as ten times slower than the slowest timed candidate of its problem.
constexpr float kFailedPenalty = 2.302585f; // ln(10)

struct Rows {
    std::vector<float> x;          // [rows, F]
    std::vector<float> y;          // ln(ms); failed candidates get the penalty label
    std::vector<char> failed;
    std::vector<int64_t> problem;  // index into the problem list
    std::vector<int64_t> candidate;
};

Rows buildRows(const std::vector<TrainingProblem> &problems, const std::vector<size_t> &which)
{
    Rows r;
    for (size_t pi : which) {
        const auto &p = problems[pi];
        const auto hw = HardwareFeatures::forGpu(p.gpu, p.smCount);
        double slowest = 0;
        for (const auto &t : p.timesMs)
            if (t) slowest = std::max(slowest, *t);
        for (size_t c = 0; c < p.configs.size(); ++c) {
            FeatureSchema::compute(p.problem, p.configs[c], hw, r.x);
            r.failed.push_back(!p.timesMs[c]);
            r.y.push_back(p.timesMs[c] ? float(std::log(*p.timesMs[c])) : float(std::log(slowest)) + kFailedPenalty);
            r.problem.push_back(int64_t(pi));
            r.candidate.push_back(int64_t(c));
        }
    }
    return r;
}

struct Net : torch::nn::Module {
    std::vector<torch::nn::Linear> layers;
    explicit Net(const std::vector<int> &sizes)
    {
        for (size_t i = 0; i + 1 < sizes.size(); ++i)
            layers.push_back(register_module(fmt::format("l{}", i), torch::nn::Linear(sizes[i], sizes[i + 1])));
    }
    torch::Tensor forward(torch::Tensor x)
    {
        for (size_t i = 0; i < layers.size(); ++i) {
            x = layers[i]->forward(x);
            if (i + 1 < layers.size()) x = torch::relu(x);
        }
        return x.squeeze(-1);
    }
};

// Top-1 efficiency on `which` problems with the current network: best measured over the
// measured time of the candidate predicted fastest.
double top1(const Rows &rows, const torch::Tensor &pred)
{
    auto acc = pred.accessor<float, 1>();
    std::map<int64_t, std::pair<float, size_t>> bestPred; // problem -> (pred, row)
    std::map<int64_t, double> bestTime;
    for (size_t i = 0; i < rows.y.size(); ++i) {
        const int64_t p = rows.problem[i];
        auto it = bestPred.find(p);
        if (it == bestPred.end() || acc[long(i)] < it->second.first) bestPred[p] = {acc[long(i)], i};
        if (rows.failed[i]) continue;
        const double t = std::exp(double(rows.y[i]));
        auto bt = bestTime.find(p);
        if (bt == bestTime.end() || t < bt->second) bestTime[p] = t;
    }
    double sum = 0;
    for (const auto &[p, bp] : bestPred)
        if (!rows.failed[bp.second]) sum += bestTime[p] / std::exp(double(rows.y[bp.second]));
    return bestPred.empty() ? 0 : sum / double(bestPred.size());
}

} // namespace

TrainResult train(const std::vector<TrainingProblem> &all, const TrainOptions &opt)
{
    std::vector<TrainingProblem> problems;
    for (const auto &p : all)
        if (p.hasTiming()) problems.push_back(p);
    if (int(problems.size()) < kMinTrainingProblems)
        throw InvalidInput(fmt::format("training needs at least {} problems with timings; the data has {}",
                                       kMinTrainingProblems, problems.size()));
    torch::manual_seed(opt.seed);
    torch::set_num_threads(opt.threads > 0 ? opt.threads : int(std::max(1u, std::thread::hardware_concurrency())));

    TrainResult res;
    res.split = DataSplit::byProblem(problems.size(), opt.validationFraction, opt.testFraction, opt.seed);
    const Rows tr = buildRows(problems, res.split.train), va = buildRows(problems, res.split.validation),
               te = buildRows(problems, res.split.test);
    const int F = FeatureSchema::size();
    auto tensor2d = [F](const Rows &r) {
        return torch::from_blob(const_cast<float *>(r.x.data()), {int64_t(r.y.size()), F}, torch::kFloat32).clone();
    };
    // CUDA when this LibTorch has it and a GPU is present; the exported weights are the same either way.
    const torch::Device device = torch::cuda::is_available() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
    torch::Tensor xtr = tensor2d(tr).to(device), xva = tensor2d(va).to(device), xte = tensor2d(te).to(device);
    torch::Tensor ytr =
        torch::from_blob(const_cast<float *>(tr.y.data()), {int64_t(tr.y.size())}, torch::kFloat32).clone().to(device);
    torch::Tensor mean = xtr.mean(0), sd = xtr.std(0, /*unbiased=*/false).clamp_min(1e-3);
    // Flags that never vary in training get std 1, so a new value at inference stays finite.
    sd = torch::where(xtr.std(0, false) < 1e-6, torch::ones_like(sd), sd);

    // Ranking pairs: within each training problem, every pair whose times differ by > 2 %.
    std::vector<int64_t> pi, pj;
    std::vector<float> pw;
    for (size_t a = 0; a < tr.y.size(); ++a)
        for (size_t b = a + 1; b < tr.y.size() && tr.problem[b] == tr.problem[a]; ++b) {
            const float d = tr.y[b] - tr.y[a];
            if (std::abs(d) < 0.02f) continue;
            const bool aFaster = d > 0;
            pi.push_back(int64_t(aFaster ? a : b));
            pj.push_back(int64_t(aFaster ? b : a));
            pw.push_back(std::min(1.f, std::abs(d)));
        }
    torch::Tensor ti = torch::tensor(pi, torch::kLong).to(device), tj = torch::tensor(pj, torch::kLong).to(device),
                  tw = torch::tensor(pw).to(device);

    const std::vector<int> sizes{F, opt.hidden, opt.hidden, opt.hidden / 2, 1};
    auto net = std::make_shared<Net>(sizes);
    net->to(device);
    torch::optim::Adam optim(net->parameters(), torch::optim::AdamOptions(opt.learningRate).weight_decay(opt.weightDecay));
    auto norm = [&](const torch::Tensor &x) { return (x - mean) / sd; };
    const torch::Tensor ntr = norm(xtr), nva = norm(xva);

    double best = -1;
    std::vector<torch::Tensor> bestParams;
    int sinceBest = 0;
    for (int epoch = 1; epoch <= opt.epochs; ++epoch) {
        net->train();
        optim.zero_grad();
        const torch::Tensor pred = net->forward(ntr);
        torch::Tensor loss = torch::mse_loss(pred, ytr);
        if (pi.size() && opt.rankWeight > 0) {
            const torch::Tensor diff = pred.index_select(0, tj) - pred.index_select(0, ti); // should be > 0
            loss = loss + opt.rankWeight * (torch::softplus(-8.0 * diff) * tw).mean();
        }
        loss.backward();
        optim.step();
        net->eval();
        torch::NoGradGuard ng;
        const double v = top1(va, net->forward(nva).cpu().contiguous());
        EpochReport rep{epoch, loss.item<double>(), v, v > best + 1e-6};
        if (rep.improved) {
            best = v;
            res.bestEpoch = epoch;
            sinceBest = 0;
            bestParams.clear();
            for (const auto &p : net->parameters()) bestParams.push_back(p.detach().clone());
        } else {
            ++sinceBest;
        }
        res.epochsRun = epoch;
        if (opt.progress) opt.progress(rep);
        if (sinceBest >= opt.patience) break;
        if (opt.cancel && opt.cancel->load()) {
            res.cancelled = true;
            break;
        }
    }
    {
        torch::NoGradGuard ng;
        auto params = net->parameters();
        for (size_t i = 0; i < params.size(); ++i) params[i].copy_(bestParams[i]);
    }
    net->eval();
    // Export the best network as plain arrays.
    MlpWeights &w = res.weights;
    w.layerSizes = sizes;
    auto vec = [](const torch::Tensor &t) {
        const torch::Tensor c = t.detach().cpu().contiguous().to(torch::kFloat32);
        return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    };
    for (auto &l : net->layers) {
        w.weights.push_back(vec(l->weight));
        w.biases.push_back(vec(l->bias));
    }
    w.inputMean = vec(mean);
    w.inputStd = vec(sd);
    {
        torch::NoGradGuard ng;
        res.testTorchOutput = vec(net->forward(norm(xte)));
    }
    for (size_t r = 0; r < te.y.size(); ++r)
        res.testFeatures.emplace_back(te.x.begin() + long(r * size_t(F)), te.x.begin() + long((r + 1) * size_t(F)));

    // Held-out metrics of the trained package against the baselines, on the test problems.
    res.hardware = {{"gpu", problems.front().gpu}, {"sm_count", problems.front().smCount}};
    const auto pkg = ModelPackage::fromBytes(ModelPackage::toBytes({{"hardware", res.hardware}}, w));
    std::vector<TrainingProblem> test;
    for (size_t i : res.split.test) test.push_back(problems[i]);
    res.testMetrics = compareWithBaselines(rankWith(pkg, test), test);
    return res;
}

} // namespace diode
