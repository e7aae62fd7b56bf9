#include "characterise.h"

#include "diode/analysis/dataset.h"
#include "diode/config.h"
#include "diode/infer/features.h"
#include "diode/infer/gputable.h"
#include "diode/infer/modelinstall.h"
#include "diode/infer/packagechoice.h"
#include "diode/infer/problemjson.h"
#include "diode/infer/shippeddata.h"
#include "diode/infer/splitmix64.h"
#include "diode/store/store.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>
#include <set>

namespace diode {

namespace {

std::vector<KernelConfig> describable(const std::vector<KernelConfig> &configs) {
    std::vector<KernelConfig> out;
    for (const auto &c : configs)
        if (FeatureSchema::describes(c))
            out.push_back(c);
    return out;
}

// The tile grid of cpu candidates as a plan's "cpu" object (docs/PLANS.md): the axes the
// candidates use. A cpu sweep's candidates are such a grid, so this gives the same tiles back.
nlohmann::json cpuGridOf(const std::vector<PoolProblem> &problems) {
    std::set<int> bm, bn, bk, th;
    for (const auto &p : problems)
        for (const auto &c : p.candidates)
            if (c.kind == "cpu") {
                bm.insert(c.blockM);
                bn.insert(c.blockN);
                bk.insert(c.blockK);
                th.insert(c.threads);
            }
    if (bm.empty())
        return nullptr;
    return {{"block_m", bm}, {"block_n", bn}, {"block_k", bk}, {"threads", th}};
}

} // namespace

Pool loadPool(const std::string &path) {
    if (!std::filesystem::exists(path))
        throw InvalidInput(fmt::format("pool '{}' does not exist", path));
    Pool pool;
    pool.source = path;
    std::set<GemmProblem> seen;
    size_t read = 0;
    auto add = [&](const GemmProblem &problem, const std::vector<KernelConfig> &candidates) {
        ++read;
        if (!seen.insert(problem).second)
            return;
        pool.problems.push_back({problem, describable(candidates)});
    };
    auto configsOf = [](const ProblemRecord &r) {
        std::vector<KernelConfig> out;
        for (const auto &c : r.candidates)
            out.push_back(c.config);
        return out;
    };
    const std::string ext = lowerExtension(path);
    if (ext == ".json") {
        const SweepPlan plan = SweepPlan::load(path);
        pool.searchSpace = plan.searchSpace;
        pool.repeats = plan.repeats;
        pool.timeoutS = plan.timeoutS;
        for (const auto &p : plan.problems)
            add(p, plan.cpuConfigs);
        if (plan.source.is_object() && plan.source.contains("cpu"))
            pool.cpuGrid = plan.source["cpu"];
    } else if (isProblemLinesName(path)) {
        for (const auto &r : readProblemFile(path)) {
            if (const auto s = r.extra.find("search_space"); s != r.extra.end() && s->is_string())
                pool.searchSpace = s->get<std::string>();
            add(r.problem, configsOf(r));
        }
    } else {
        Store store(path, Store::Mode::ReadOnly);
        store.forEachRecord([&](const RunInfo &run, const ProblemRecord &r) {
            if (!run.searchSpace.empty())
                pool.searchSpace = run.searchSpace;
            add(r.problem, configsOf(r));
        });
    }
    if (pool.cpuGrid.is_null())
        pool.cpuGrid = cpuGridOf(pool.problems);
    const size_t problems = pool.problems.size();
    std::erase_if(pool.problems, [](const PoolProblem &p) { return p.candidates.size() < 2; });
    if (pool.problems.empty())
        throw InvalidInput(fmt::format(
            "pool '{}' has no problem with two or more candidates the model can describe ({} problems in {} "
            "records): selection ranks each problem's candidates, so a pool needs them: a store or problem "
            "lines measured by a sweep (with their candidates), or a cpu sweep plan",
            path, problems, read));
    return pool;
}

Disagreement disagreement(const ModelPackage &ensemble, const std::vector<ModelPackage> &members,
                          const GemmProblem &problem, const std::vector<KernelConfig> &candidates) {
    Disagreement d;
    if (candidates.size() < 2 || members.empty())
        return d;
    const auto mean = ensemble.predictMs(problem, candidates);
    const size_t pick = size_t(std::min_element(mean.begin(), mean.end()) - mean.begin());
    std::vector<double> ms;
    for (const auto &m : members) {
        m.predictMs(problem, candidates, ms);
        const double best = *std::min_element(ms.begin(), ms.end());
        const double regret = best > 0 ? std::log(ms[pick] / best) : 0.0;
        d.mean += regret;
        d.max = std::max(d.max, regret);
    }
    d.mean /= double(members.size());
    return d;
}

std::string weightShapeKey(const GemmProblem &p) {
    return fmt::format("{} {} N={} K={}", toString(p.op), toString(p.dtype), p.n, p.k);
}

std::string problemKind(const GemmProblem &p) {
    return fmt::format("{} {}", toString(p.op), toString(p.dtype));
}

std::vector<ScoredProblem> scorePool(const Pool &pool, const ModelPackage &start) {
    std::vector<ModelPackage> members;
    for (int m = 0; m < start.members(); ++m)
        members.push_back(start.member(m));
    std::map<std::string, int64_t> shapes;
    for (const auto &p : pool.problems)
        ++shapes[weightShapeKey(p.problem)];
    std::vector<ScoredProblem> out;
    out.reserve(pool.problems.size());
    for (size_t i = 0; i < pool.problems.size(); ++i) {
        const auto &p = pool.problems[i];
        ScoredProblem s;
        s.pool = i;
        s.disagreement = disagreement(start, members, p.problem, p.candidates);
        s.commonness = shapes[weightShapeKey(p.problem)];
        s.score = s.disagreement.mean * double(s.commonness);
        out.push_back(s);
    }
    return out;
}

std::vector<Choice> chooseProblems(const Pool &pool, const std::vector<ScoredProblem> &scored,
                                   const SelectionOptions &o) {
    if (o.count == 0)
        throw InvalidInput("nothing to choose: --count is 0");
    if (scored.empty())
        throw InvalidInput(
            fmt::format("nothing to choose: the pool '{}' has no problem to score", pool.source));
    // Highest score first; equal scores (a one-network package disagrees with nobody) by
    // commonness, then in an order drawn from the seed, not the pool's file order.
    std::vector<uint64_t> tie(scored.size());
    SplitMix64 rng(o.seed);
    for (auto &t : tie)
        t = rng.next();
    std::vector<size_t> order(scored.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const auto &x = scored[a], &y = scored[b];
        if (x.score != y.score)
            return x.score > y.score;
        if (x.commonness != y.commonness)
            return x.commonness > y.commonness;
        return tie[a] < tie[b];
    });
    const size_t count = std::min(o.count, scored.size());
    std::map<std::string, std::vector<size_t>> byKind; // each kind's problems, best first
    for (size_t i : order)
        byKind[problemKind(pool.problems[scored[i].pool].problem)].push_back(i);
    const size_t perKind =
        std::max<size_t>(1, size_t(std::floor(o.minKindShare * double(count) / double(byKind.size()))));
    std::vector<bool> taken(scored.size(), false);
    std::vector<std::string> why(scored.size());
    size_t chosen = 0;
    // The spread first, best of each kind, round by round so a small count still reaches every kind.
    for (size_t round = 0; round < perKind && chosen < count; ++round)
        for (const auto &[kind, members] : byKind)
            if (round < members.size() && chosen < count) {
                const size_t i = members[round];
                taken[i] = true;
                ++chosen;
                why[i] = fmt::format("spread: the {} of {} (each op/dtype of the pool gets at least {})",
                                     round == 0 ? std::string("best") : fmt::format("#{} best", round + 1),
                                     kind, perKind);
            }
    for (size_t rank = 0; rank < order.size(); ++rank) {
        const size_t i = order[rank];
        if (rank < count)
            why[i].clear(); // its score alone chose it
        if (chosen < count && !taken[i]) {
            taken[i] = true;
            ++chosen;
        }
    }
    std::vector<Choice> out;
    for (size_t i : order)
        if (taken[i]) {
            const auto &s = scored[i];
            std::string reason =
                fmt::format("score {:.4f}: disagreement {:.4f} (max {:.4f}) x {} problem{} of "
                            "weight shape {}",
                            s.score, s.disagreement.mean, s.disagreement.max, s.commonness,
                            s.commonness == 1 ? "" : "s", weightShapeKey(pool.problems[s.pool].problem));
            if (!why[i].empty())
                reason += "; " + why[i];
            out.push_back({s, std::move(reason)});
        }
    return out;
}

SweepPlan characterisePlan(const Pool &pool, const std::vector<Choice> &chosen, const std::string &backend) {
    nlohmann::json problems = nlohmann::json::array();
    for (const auto &c : chosen)
        problems.push_back(problemToJson(pool.problems[c.scored.pool].problem));
    nlohmann::json plan{{"name", "characterise"},
                        {"version", 1},
                        {"description", fmt::format("diode characterise: {} problems chosen from {}",
                                                    chosen.size(), pool.source)},
                        {"search_space", pool.searchSpace},
                        {"timeout_s", pool.timeoutS},
                        {"repeats", pool.repeats},
                        {"entries", nlohmann::json::array({{{"name", "chosen"}, {"problems", problems}}})}};
    // The in-graph times are what the model learns; Inductor's own benchmark (two thirds of a
    // problem's GPU time) is kept on a tenth of the problems as a reference, and an EXHAUSTIVE
    // space is sampled as the shipped data was.
    plan["inductor_every"] = 10;
    plan["exhaustive_configs"] = 100;
    if (backend == "cpu") {
        if (pool.cpuGrid.is_null())
            throw InvalidInput(fmt::format("the cpu backend measures cpu tiles, and the pool '{}' has no cpu "
                                           "candidates; give a pool of cpu data or a cpu plan",
                                           pool.source));
        plan["cpu"] = pool.cpuGrid;
    }
    return SweepPlan::fromJson(plan, ".");
}

} // namespace diode

namespace diode {

StartPackage nearestStartPackage(const std::string &gpu, int smCount) {
    std::vector<PackageFacts> packages;
    std::vector<std::filesystem::path> places{pluginModelDirectory()};
    for (const char *root : {DIODE_SOURCE_DIR, DIODE_INSTALL_DATADIR})
        places.push_back(std::filesystem::path(root) / shipped::kModelDirectory);
    std::vector<std::string> searched;
    for (size_t rank = 0; rank < places.size(); ++rank) {
        std::error_code ec;
        if (!std::filesystem::is_directory(places[rank], ec))
            continue;
        searched.push_back(places[rank].string());
        for (auto &f : packagesUnder(places[rank])) {
            f.sourceRank = int(rank); // the user's folder before the shipped packages, as the plugin
            packages.push_back(std::move(f));
        }
    }
    StartPackage out;
    if (gpu.empty()) {
        out.why = "no GPU detected on this machine: name the start package with --package";
        return out;
    }
    const auto choice = choosePackage(packages, DeviceGpu{gpu, {}, smCount});
    if (!choice) {
        out.why = fmt::format("no package in {} serves {} (none of its GPU, none that transfers): name "
                              "one with --package",
                              searched.empty() ? std::string("any model folder")
                                               : fmt::format("{}", fmt::join(searched, ", ")),
                              gpu);
        return out;
    }
    const PackageFacts &chosen = packages[choice->index];
    const GpuTransfer &t = choice->transfer;
    out.path = chosen.path;
    out.why =
        t.kind == GpuTransfer::Same
            ? fmt::format("start package: {} ({}), made on this GPU model ({})", chosen.name, out.path, gpu)
            : fmt::format("start package: {} ({}), transferred from {} to {}, the nearest package "
                          "(distance {:.2f}): {}",
                          chosen.name, out.path, chosen.gpu, gpu, t.distance, t.why);
    return out;
}

} // namespace diode
