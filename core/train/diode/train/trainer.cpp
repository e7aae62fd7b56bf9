#include "trainer.h"

#include "diode/infer/splitmix64.h"
#include "diode/sweep/hardware.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <numeric>
#include <sstream>

namespace diode {

namespace {

// A candidate that produced no timing (out of shared memory, failed to compile) must rank last:
// it is trained as ten times slower than the slowest timed candidate of its problem.
constexpr float kFailedPenalty = 2.302585f; // ln(10)

struct Rows {
    std::vector<float> x; // [rows, F]
    std::vector<float> y; // ln(ms); failed candidates get the penalty label
    std::vector<char> failed;
    std::vector<int64_t> problem; // index into the problem list
    std::vector<int64_t> candidate;
};

Rows buildRows(const std::vector<TrainingProblem> &problems, const std::vector<size_t> &which) {
    Rows r;
    for (size_t pi : which) {
        const auto &p = problems[pi];
        const auto hw = HardwareFeatures::forGpu(p.gpu, p.smCount);
        double slowest = 0;
        for (const auto &t : p.timesMs)
            if (t)
                slowest = std::max(slowest, *t);
        for (size_t c = 0; c < p.configs.size(); ++c) {
            FeatureSchema::compute(p.problem, p.configs[c], hw, r.x);
            r.failed.push_back(!p.timesMs[c]);
            r.y.push_back(p.timesMs[c] ? float(std::log(*p.timesMs[c]))
                                       : float(std::log(slowest)) + kFailedPenalty);
            r.problem.push_back(int64_t(pi));
            r.candidate.push_back(int64_t(c));
        }
    }
    return r;
}

struct Net : torch::nn::Module {
    std::vector<torch::nn::Linear> layers;
    explicit Net(const std::vector<int> &sizes) {
        for (size_t i = 0; i + 1 < sizes.size(); ++i)
            layers.push_back(
                register_module(fmt::format("l{}", i), torch::nn::Linear(sizes[i], sizes[i + 1])));
    }
    torch::Tensor forward(torch::Tensor x) {
        for (size_t i = 0; i < layers.size(); ++i) {
            x = layers[i]->forward(x);
            if (i + 1 < layers.size())
                x = torch::relu(x);
        }
        return x.squeeze(-1);
    }
};

// Top-1 efficiency on `which` problems with the current network: best measured over the
// measured time of the candidate predicted fastest.
double top1(const Rows &rows, const torch::Tensor &pred) {
    auto acc = pred.accessor<float, 1>();
    std::map<int64_t, std::pair<float, size_t>> bestPred; // problem -> (pred, row)
    std::map<int64_t, double> bestTime;
    for (size_t i = 0; i < rows.y.size(); ++i) {
        const int64_t p = rows.problem[i];
        auto it = bestPred.find(p);
        if (it == bestPred.end() || acc[long(i)] < it->second.first)
            bestPred[p] = {acc[long(i)], i};
        if (rows.failed[i])
            continue;
        const double t = std::exp(double(rows.y[i]));
        auto bt = bestTime.find(p);
        if (bt == bestTime.end() || t < bt->second)
            bestTime[p] = t;
    }
    double sum = 0;
    for (const auto &[p, bp] : bestPred)
        if (!rows.failed[bp.second])
            sum += bestTime[p] / std::exp(double(rows.y[bp.second]));
    return bestPred.empty() ? 0 : sum / double(bestPred.size());
}

// Rows of problems order[b0..b1) as a [problems, most candidates] matrix of row indices, -1 where
// a problem has fewer candidates: the ranking terms work on it densely.
torch::Tensor problemBatch(const std::vector<std::pair<int64_t, int64_t>> &spans,
                           const std::vector<size_t> &order, size_t b0, size_t b1,
                           const torch::Device &device) {
    int64_t width = 0;
    for (size_t i = b0; i < b1; ++i)
        width = std::max(width, spans[order[i]].second);
    std::vector<int64_t> idx(size_t(int64_t(b1 - b0) * width), -1);
    for (size_t i = b0; i < b1; ++i) {
        const auto [start, count] = spans[order[i]];
        for (int64_t c = 0; c < count; ++c)
            idx[size_t(int64_t(i - b0) * width + c)] = start + c;
    }
    return torch::tensor(idx, torch::kLong).view({int64_t(b1 - b0), width}).to(device);
}

// The loss of one batch. `predFlat` holds the network's output for batch.flatten() (padding
// slots computed on row 0 and masked out here). MSE on ln(time) keeps predictions calibrated
// (the plugin's threshold compares predicted times); the pairwise term orders every pair of a
// problem's candidates whose times differ by more than 2 %, weighted by how much they differ;
// the listwise term is a cross-entropy between softmax(-prediction / T) and softmax(-ln t / T),
// which puts the weight on the few fastest candidates, where top-1 is decided.
torch::Tensor batchLoss(const torch::Tensor &predFlat, const torch::Tensor &y, const torch::Tensor &batch,
                        const TrainOptions &opt) {
    const torch::Tensor mask = batch >= 0;
    const torch::Tensor pred = predFlat.view(batch.sizes());
    const torch::Tensor target = y.index_select(0, batch.flatten().clamp_min(0)).view(batch.sizes());
    const torch::Tensor fmask = mask.to(torch::kFloat32);
    torch::Tensor loss = ((pred - target).pow(2) * fmask).sum() / fmask.sum();
    if (opt.rankWeight > 0) {
        // [P, C, C]: entry (i, j) compares candidate i (faster) with j.
        const torch::Tensor d = target.unsqueeze(1) - target.unsqueeze(2); // t_j - t_i
        const torch::Tensor pairMask = (d > 0.02f) & mask.unsqueeze(1) & mask.unsqueeze(2);
        const torch::Tensor w = d.clamp_max(1.0f) * pairMask.to(torch::kFloat32);
        const torch::Tensor pd = pred.unsqueeze(1) - pred.unsqueeze(2); // should be > 0
        const torch::Tensor pairs = pairMask.sum().clamp_min(1).to(torch::kFloat32);
        loss = loss + opt.rankWeight * (torch::softplus(-8.0 * pd) * w).sum() / pairs;
    }
    if (opt.listWeight > 0) {
        const double T = opt.listTemperature;
        const torch::Tensor minusInf = torch::full_like(pred, -1e9);
        const torch::Tensor want = torch::softmax(torch::where(mask, -target / T, minusInf), 1);
        const torch::Tensor logq = torch::log_softmax(torch::where(mask, -pred / T, minusInf), 1);
        loss = loss + opt.listWeight * -(want * logq * fmask).sum(1).mean();
    }
    return loss;
}

// A copy of `v` as a float tensor of `shape` (on the CPU).
torch::Tensor floatTensor(const std::vector<float> &v, std::vector<int64_t> shape) {
    return torch::from_blob(const_cast<float *>(v.data()), shape, torch::kFloat32).clone();
}

torch::Tensor rowsTensor(const Rows &r, const torch::Device &device) {
    return floatTensor(r.x, {int64_t(r.y.size()), FeatureSchema::size()}).to(device);
}

std::vector<float> toVector(const torch::Tensor &t) {
    const torch::Tensor c = t.detach().cpu().contiguous().to(torch::kFloat32);
    return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

struct MemberResult {
    MlpWeights weights;
    std::shared_ptr<Net> net; ///< with the best epoch's parameters, in eval mode
    torch::Tensor mean, sd;
    int epochsRun = 0, bestEpoch = 0;
    bool cancelled = false;
};

// One network of the ensemble on its own train/validation problems, keeping the epoch with the
// best validation top-1.
MemberResult trainMember(const std::vector<TrainingProblem> &problems, const std::vector<size_t> &trainIdx,
                         const std::vector<size_t> &valIdx, const TrainOptions &opt, int member, int &step,
                         const torch::Device &device, const MlpWeights *start) {
    torch::manual_seed(opt.seed + uint64_t(member) * 1000003ull);
    const Rows tr = buildRows(problems, trainIdx), va = buildRows(problems, valIdx);
    const torch::Tensor xtr = rowsTensor(tr, device), xva = rowsTensor(va, device);
    const torch::Tensor ytr = floatTensor(tr.y, {int64_t(tr.y.size())}).to(device);
    MemberResult res;
    res.mean = xtr.mean(0);
    // Flags that never vary in training get std 1, so a new value at inference stays finite.
    const torch::Tensor sd = xtr.std(0, /*unbiased=*/false);
    res.sd = torch::where(sd < 1e-6, torch::ones_like(sd), sd.clamp_min(1e-3));
    const int F = FeatureSchema::size();
    if (start) {
        // The start's normalisation, so its weights see the inputs they were trained on; where it
        // saw a feature constant (std exactly 1: the GPU it was trained on), the new data's mean,
        // so the new GPU's constant reads as what the network knew, not as an input never seen.
        // An input the start's network has no weight for (one a newer feature schema added:
        // FeatureSchema::currentIndices) takes the new data's normalisation, which changes no
        // prediction of the start and lets a flag the data varies read as seen.
        const torch::Tensor mean = floatTensor(start->inputMean, {F}).to(device);
        const torch::Tensor sdStart = floatTensor(start->inputStd, {F}).to(device);
        const torch::Tensor unused =
            floatTensor(start->weights[0], {start->layerSizes[1], F}).abs().sum(0).eq(0).to(device);
        res.mean = torch::where(sdStart == 1.0f, res.mean, mean);
        res.sd = torch::where(unused, res.sd, sdStart);
    }

    // Each training problem's rows are contiguous: [start, start + count).
    std::vector<std::pair<int64_t, int64_t>> spans;
    for (size_t r = 0; r < tr.y.size(); ++r) {
        if (r == 0 || tr.problem[r] != tr.problem[r - 1])
            spans.push_back({int64_t(r), 0});
        ++spans.back().second;
    }

    const std::vector<int> sizes =
        start ? start->layerSizes : std::vector<int>{F, opt.hidden, opt.hidden, opt.hidden / 2, 1};
    auto net = std::make_shared<Net>(sizes);
    if (start) {
        torch::NoGradGuard ng;
        for (size_t l = 0; l < net->layers.size(); ++l) {
            net->layers[l]->weight.copy_(floatTensor(start->weights[l], {sizes[l + 1], sizes[l]}));
            net->layers[l]->bias.copy_(floatTensor(start->biases[l], {sizes[l + 1]}));
        }
    }
    net->to(device);
    torch::optim::Adam optim(net->parameters(),
                             torch::optim::AdamOptions(opt.learningRate).weight_decay(opt.weightDecay));
    const torch::Tensor ntr = (xtr - res.mean) / res.sd, nva = (xva - res.mean) / res.sd;

    const size_t perBatch = opt.batchProblems > 0 ? size_t(opt.batchProblems) : spans.size();
    SplitMix64 shuffle(opt.seed ^ (0x9e3779b97f4a7c15ull + uint64_t(member)));
    std::vector<size_t> problemOrder(spans.size());
    std::iota(problemOrder.begin(), problemOrder.end(), 0);

    double best = -1;
    std::vector<torch::Tensor> bestParams;
    if (start) { // the network it starts from is a candidate result, as an epoch 0
        torch::NoGradGuard ng;
        net->eval();
        best = top1(va, net->forward(nva).cpu().contiguous());
        for (const auto &p : net->parameters())
            bestParams.push_back(p.detach().clone());
    }
    int sinceBest = 0;
    for (int epoch = 1; epoch <= opt.epochs; ++epoch) {
        net->train();
        if (perBatch < spans.size())
            for (size_t i = problemOrder.size() - 1; i > 0; --i)
                std::swap(problemOrder[i], problemOrder[shuffle.next() % (i + 1)]);
        double lossSum = 0;
        int steps = 0;
        for (size_t b0 = 0; b0 < problemOrder.size(); b0 += perBatch) {
            const size_t b1 = std::min(problemOrder.size(), b0 + perBatch);
            const torch::Tensor batch = problemBatch(spans, problemOrder, b0, b1, device);
            optim.zero_grad();
            const torch::Tensor loss =
                batchLoss(net->forward(ntr.index_select(0, batch.flatten().clamp_min(0))), ytr, batch, opt);
            loss.backward();
            optim.step();
            lossSum += loss.item<double>();
            ++steps;
        }
        net->eval();
        torch::NoGradGuard ng;
        const double v = top1(va, net->forward(nva).cpu().contiguous());
        EpochReport rep{member, opt.members, ++step, epoch, lossSum / std::max(1, steps), v, v > best + 1e-6};
        if (rep.improved) {
            best = v;
            res.bestEpoch = epoch;
            sinceBest = 0;
            bestParams.clear();
            for (const auto &p : net->parameters())
                bestParams.push_back(p.detach().clone());
        } else {
            ++sinceBest;
        }
        res.epochsRun = epoch;
        if (opt.progress)
            opt.progress(rep);
        if (sinceBest >= opt.patience)
            break;
        if (opt.cancel && opt.cancel->load()) {
            res.cancelled = true;
            break;
        }
    }
    {
        torch::NoGradGuard ng;
        auto params = net->parameters();
        for (size_t i = 0; i < params.size(); ++i)
            params[i].copy_(bestParams[i]);
    }
    net->eval();
    res.weights.layerSizes = sizes;
    for (auto &l : net->layers) {
        res.weights.weights.push_back(toVector(l->weight));
        res.weights.biases.push_back(toVector(l->bias));
    }
    res.weights.inputMean = toVector(res.mean);
    res.weights.inputStd = toVector(res.sd);
    res.net = net;
    return res;
}

} // namespace

TrainResult train(const std::vector<TrainingProblem> &all, const TrainOptions &opt,
                  const std::vector<MlpWeights> *start) {
    std::vector<TrainingProblem> problems;
    for (const auto &p : all)
        if (p.hasTiming())
            problems.push_back(p);
    if (int(problems.size()) < kMinTrainingProblems)
        throw InvalidInput(fmt::format("training needs at least {} problems with timings; the data has {}",
                                       kMinTrainingProblems, problems.size()));
    if (opt.members < 1)
        throw InvalidInput(fmt::format("an ensemble needs at least 1 member, not {}", opt.members));
    if (start && start->empty())
        throw InvalidInput("fine-tuning needs a package with at least one network");
    if (start)
        for (const auto &w : *start)
            if (w.layerSizes.size() < 2 || w.layerSizes.front() != FeatureSchema::size())
                throw InvalidInput(
                    fmt::format("the package to fine-tune takes {} features; this build's feature "
                                "schema has {}",
                                w.layerSizes.empty() ? 0 : w.layerSizes.front(), FeatureSchema::size()));
    torch::set_num_threads(opt.threads > 0 ? opt.threads : availableCores());
    // CUDA when this LibTorch has it and a GPU is present; the exported weights are the same either way.
    const torch::Device device =
        torch::cuda::is_available() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);

    TrainResult res;
    res.split = DataSplit::byProblem(problems.size(), opt.validationFraction, opt.testFraction, opt.seed);
    // Member 0 uses the split as drawn; the others redraw validation from train + validation.
    std::vector<size_t> pool = res.split.train;
    pool.insert(pool.end(), res.split.validation.begin(), res.split.validation.end());
    std::sort(pool.begin(), pool.end());
    const Rows te = buildRows(problems, res.split.test);
    const torch::Tensor xte = rowsTensor(te, device);
    torch::Tensor ensembleOut;
    int step = 0;
    for (int m = 0; m < opt.members; ++m) {
        std::vector<size_t> trainIdx = res.split.train, valIdx = res.split.validation;
        if (m > 0) {
            const auto s = DataSplit::byProblem(pool.size(), double(valIdx.size()) / double(pool.size()), 0,
                                                opt.seed + uint64_t(m));
            trainIdx.clear();
            valIdx.clear();
            for (size_t i : s.train)
                trainIdx.push_back(pool[i]);
            for (size_t i : s.validation)
                valIdx.push_back(pool[i]);
            for (size_t i : s.test)
                trainIdx.push_back(pool[i]); // byProblem keeps at least one test problem
            std::sort(trainIdx.begin(), trainIdx.end());
        }
        MemberResult mr = trainMember(problems, trainIdx, valIdx, opt, m, step, device,
                                      start ? &(*start)[size_t(m) % start->size()] : nullptr);
        {
            torch::NoGradGuard ng;
            const torch::Tensor out = mr.net->forward((xte - mr.mean) / mr.sd);
            ensembleOut = m == 0 ? out : ensembleOut + out;
        }
        res.members.push_back(std::move(mr.weights));
        res.bestEpochs.push_back(mr.bestEpoch);
        res.epochsRun += mr.epochsRun;
        if (mr.cancelled) {
            res.cancelled = true;
            break;
        }
    }
    res.testTorchOutput = toVector(ensembleOut / double(res.members.size()));
    const int F = FeatureSchema::size();
    for (size_t r = 0; r < te.y.size(); ++r)
        res.testFeatures.emplace_back(te.x.begin() + long(r * size_t(F)),
                                      te.x.begin() + long((r + 1) * size_t(F)));

    // Held-out metrics of the trained package against the baselines, on the test problems.
    res.hardware = {{"gpu", problems.front().gpu}, {"sm_count", problems.front().smCount}};
    const auto pkg =
        ModelPackage::fromBytes(ModelPackage::toBytes({{"hardware", res.hardware}}, res.members));
    std::vector<TrainingProblem> test;
    for (size_t i : res.split.test)
        test.push_back(problems[i]);
    res.testMetrics = compareWithBaselines(rankWith(pkg, test), test);
    return res;
}

std::vector<MlpWeights> packageWeights(const std::string &path) {
    // load() checks the whole file (sizes, checksums, value bounds); the tensors are the last
    // data_bytes of it, in the manifest's order (docs/PACKAGE.md).
    const ModelPackage pkg = ModelPackage::load(path);
    const auto &m = pkg.manifest();
    std::ifstream f(path, std::ios::binary);
    std::ostringstream ss;
    ss << f.rdbuf();
    const std::string bytes = ss.str();
    const size_t dataBytes = m.at("data_bytes").get<size_t>();
    if (!f || bytes.size() < dataBytes)
        throw PackageError(fmt::format("{}: changed while it was read", path));
    const char *data = bytes.data() + (bytes.size() - dataBytes);
    const auto &table = m.at("tensors");
    const auto sizes = m.at("architecture").at("layers").get<std::vector<int>>();
    auto tensor = [&](size_t i) {
        std::vector<float> v(table[i].at("nbytes").get<size_t>() / sizeof(float));
        std::memcpy(v.data(), data + table[i].at("offset").get<size_t>(), v.size() * sizeof(float));
        return v;
    };
    std::vector<MlpWeights> out(size_t(pkg.members()));
    size_t i = 0;
    for (auto &w : out) {
        w.layerSizes = sizes;
        w.inputMean = tensor(i++);
        w.inputStd = tensor(i++);
        for (size_t l = 0; l + 1 < sizes.size(); ++l) {
            w.weights.push_back(tensor(i++));
            w.biases.push_back(tensor(i++));
        }
    }
    return out;
}

} // namespace diode
