#include "sweepplan.h"

#include "diode/infer/jsonlimits.h"
#include "diode/infer/problemjson.h"
#include "diode/infer/splitmix64.h"
#include "diode/infer/stablehash.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <ostream>
#include <set>
#include <tuple>

namespace diode {

namespace {

using json = nlohmann::json;
namespace lim = planlimits;

/// Plans and their shape sets: small hand-written files.
const JsonLimits kPlanJsonLimits{64, 16ull << 20, true};

/// A value as a message quotes it: short, whatever it holds.
std::string show(const json &v) {
    std::string s = v.dump();
    return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

/// An integer in [lo, hi] (lo >= 0 or hi <= INT64_MAX), else nullopt. nlohmann keeps
/// non-negative integers unsigned: one above INT64_MAX must not be read as an int64.
std::optional<int64_t> intIn(const json &v, int64_t lo, int64_t hi) {
    if (v.is_number_unsigned()) {
        const uint64_t u = v.get<uint64_t>();
        if (u > uint64_t(hi) || int64_t(u) < lo)
            return std::nullopt;
        return int64_t(u);
    }
    if (v.is_number_integer()) {
        const int64_t i = v.get<int64_t>();
        if (i < lo || i > hi)
            return std::nullopt;
        return i;
    }
    return std::nullopt;
}

/// "an integer >= 1 and <= 1000", or "an integer >= 1" without an upper bound worth naming.
std::string intRange(int64_t lo, int64_t hi) {
    return hi == INT64_MAX ? fmt::format("an integer >= {}", lo)
                           : fmt::format("an integer >= {} and <= {}", lo, hi);
}

int64_t intField(const json &spec, const char *key, int64_t lo, int64_t hi, const std::string &where,
                 const std::string &field, std::optional<int64_t> dflt = std::nullopt) {
    auto it = spec.find(key);
    if (it == spec.end() && dflt)
        return *dflt;
    const std::string name = field.empty() ? key : field + "." + key;
    if (it == spec.end())
        throw InvalidInput(
            fmt::format("{}: field '{}' is missing; expected {}", where, name, intRange(lo, hi)));
    auto v = intIn(*it, lo, hi);
    if (!v)
        throw InvalidInput(
            fmt::format("{}: field '{}' must be {}, got {}", where, name, intRange(lo, hi), show(*it)));
    return *v;
}

/// Seeds are unsigned 64-bit: a negative or fractional one would mean different numbers to
/// different readers, so it is refused.
uint64_t seedOf(const json &v, const std::string &where, const std::string &field) {
    if (v.is_number_unsigned())
        return v.get<uint64_t>();
    if (v.is_number_integer() && v.get<int64_t>() == 0)
        return 0;
    throw InvalidInput(
        fmt::format("{}: field '{}' must be an integer >= 0 and < 2^64, got {}", where, field, show(v)));
}

/// One size (B, M, N, K) or CPU tile value, from 1 to `max`.
int64_t sizeValue(const json &x, const std::string &field, const std::string &where,
                  int64_t max = lim::kMaxSize) {
    if (!x.is_number_integer())
        throw InvalidInput(
            fmt::format("{}: field '{}' has {}, which is not an integer", where, field, show(x)));
    if (x.is_number_unsigned() ? x.get<uint64_t>() > uint64_t(max) : x.get<int64_t>() > max)
        throw InvalidInput(
            fmt::format("{}: field '{}' has {}; at most {} is allowed", where, field, show(x), max));
    if (x.get<int64_t>() < 1)
        throw InvalidInput(
            fmt::format("{}: field '{}' has {}; sizes must be at least 1", where, field, x.get<int64_t>()));
    return x.get<int64_t>();
}

std::vector<int64_t> sizeList(const json &value, const std::string &field, const std::string &where,
                              int64_t max = lim::kMaxSize) {
    if (value.is_number_integer())
        return {sizeValue(value, field, where, max)};
    if (!value.is_array() || value.empty())
        throw InvalidInput(
            fmt::format("{}: field '{}' must be a positive integer or a non-empty list of them, got {}",
                        where, field, show(value)));
    std::vector<int64_t> out;
    out.reserve(value.size());
    for (const auto &x : value)
        out.push_back(sizeValue(x, field, where, max));
    return out;
}

template <typename T>
std::vector<T> choiceList(const json &value, const std::string &field,
                          const std::vector<std::string> &allowed, const std::string &where,
                          T (*convert)(const std::string &)) {
    json v = value.is_string() ? json::array({value}) : value;
    if (!v.is_array() || v.empty())
        throw InvalidInput(fmt::format("{}: field '{}' must be a non-empty list", where, field));
    std::vector<T> out;
    for (const auto &x : v) {
        if (!x.is_string() ||
            std::find(allowed.begin(), allowed.end(), x.get<std::string>()) == allowed.end())
            throw InvalidInput(fmt::format("{}: field '{}' has unknown value {}; expected one of {}", where,
                                           field, show(x), fmt::join(allowed, ", ")));
        out.push_back(convert(x.get<std::string>()));
    }
    return out;
}

GemmOp toOp(const std::string &s) {
    return *parseOp(s);
}
DType toDType(const std::string &s) {
    return *parseDType(s);
}

// The GEMMs of a training step for each forward GEMM C = A B (docs/PLANS.md, "passes").
enum class Pass { Forward, GradInput, GradWeight };
const std::vector<std::string> kPasses{"forward", "grad_input", "grad_weight"};
Pass toPass(const std::string &s) {
    return Pass(std::find(kPasses.begin(), kPasses.end(), s) - kPasses.begin());
}

std::vector<bool> boolList(const json &value, const std::string &field, const std::string &where) {
    json v = value.is_boolean() ? json::array({value}) : value;
    if (!v.is_array() || v.empty() ||
        !std::all_of(v.begin(), v.end(), [](const json &x) { return x.is_boolean(); }))
        throw InvalidInput(fmt::format("{}: field '{}' must be true, false or a list of them", where, field));
    std::vector<bool> out;
    for (const auto &x : v)
        out.push_back(x.get<bool>());
    return out;
}

bool boolField(const json &obj, const char *key, bool dflt, const std::string &where) {
    auto it = obj.find(key);
    if (it == obj.end())
        return dflt;
    if (!it->is_boolean())
        throw InvalidInput(
            fmt::format("{}: field '{}' must be true or false, got {}", where, key, show(*it)));
    return it->get<bool>();
}

std::vector<int64_t> logUniform(const json &spec, const std::string &where, const std::string &f) {
    const int64_t lo = intField(spec, "min", 1, lim::kMaxSize, where, f);
    const int64_t hi = intField(spec, "max", 1, lim::kMaxSize, where, f);
    const int64_t count = intField(spec, "count", 1, lim::kMaxLogUniformCount, where, f);
    const int64_t mult = intField(spec, "multiple_of", 1, lim::kMaxSize, where, f, 1);
    uint64_t seed = 0;
    if (auto s = spec.find("seed"); s != spec.end())
        seed = seedOf(*s, where, f + ".seed");
    if (hi < lo)
        throw InvalidInput(fmt::format("{}: field '{}' has max {} < min {}", where, f, hi, lo));
    if (mult > hi)
        throw InvalidInput(
            fmt::format("{}: field '{}.multiple_of' is {}, more than max {}; every size would be above "
                        "max",
                        where, f, mult, hi));
    SplitMix64 rng(seed);
    std::vector<int64_t> out;
    out.reserve(size_t(count));
    for (int64_t i = 0; i < count; ++i) {
        const double u = rng.uniform();
        int64_t v = int64_t(std::floor(
            std::exp(std::log(double(lo)) + u * (std::log(double(hi + 1)) - std::log(double(lo))))));
        v = std::clamp(v, lo, hi);
        if (mult > 1)
            v = std::max(mult, (v / mult) * mult);
        out.push_back(v);
    }
    return out;
}

std::vector<int64_t> sizes(const json &entry, const std::string &field, const std::string &where,
                           std::optional<std::vector<int64_t>> dflt = std::nullopt) {
    auto it = entry.find(field);
    if (it == entry.end()) {
        if (dflt)
            return *dflt;
        throw InvalidInput(fmt::format("{}: field '{}' is missing", where, field));
    }
    if (it->is_object()) {
        auto spec = it->find("log_uniform");
        if (spec == it->end() || !spec->is_object())
            throw InvalidInput(
                fmt::format("{}: field '{}' is an object without 'log_uniform'", where, field));
        return logUniform(*spec, where, field + ".log_uniform");
    }
    return sizeList(*it, field, where);
}

/// How many problems the plan has taken so far, counted before anything is built.
class ProblemBudget {
public:
    void take(double n, const std::string &what, const std::string &where) {
        if (m_used + n <= double(lim::kMaxProblems)) {
            m_used += int64_t(n);
            return;
        }
        auto num = [](double x) { return x < 1e15 ? fmt::format("{:.0f}", x) : fmt::format("{:.3g}", x); };
        throw InvalidInput(
            fmt::format("{}: {} make {} problems{}; a plan may expand to at most {} problems (each "
                        "entry counted before 'sample' and de-duplication)",
                        where, what, num(n),
                        m_used ? fmt::format(", {} with the entries before it", num(m_used + n)) : "",
                        lim::kMaxProblems));
    }

private:
    int64_t m_used = 0;
};

std::vector<std::pair<int64_t, int64_t>> loadShapeSet(const std::string &path, const std::string &baseDir,
                                                      const std::string &where) {
    namespace fs = std::filesystem;
    const fs::path full = fs::path(path).is_absolute() ? fs::path(path) : fs::path(baseDir) / path;
    const std::string what = fmt::format("{}: field 'shape_set' ('{}')", where, path);
    const json doc = readJsonFile(full.string(), what, kPlanJsonLimits);
    const json *layers = doc.is_object() && doc.contains("layers") ? &doc["layers"] : nullptr;
    if (!layers || !layers->is_array() || layers->empty())
        throw InvalidInput(fmt::format("{}: expected an object with a non-empty 'layers' list", what));
    std::vector<std::pair<int64_t, int64_t>> out;
    out.reserve(layers->size());
    for (size_t i = 0; i < layers->size(); ++i) {
        const auto &l = (*layers)[i];
        const std::string w = fmt::format("{} shape set '{}' layers[{}]", where, path, i);
        if (!l.is_object() || !l.contains("N") || !l.contains("K"))
            throw InvalidInput(w + ": expected an object with integers 'N' and 'K'");
        out.emplace_back(sizeValue(l["N"], "N", w), sizeValue(l["K"], "K", w));
    }
    return out;
}

std::vector<GemmProblem> explicitProblems(const json &entry, const std::string &where,
                                          ProblemBudget &budget) {
    const auto &list = entry["problems"];
    if (!list.is_array())
        throw InvalidInput(where + ": field 'problems' must be a list");
    budget.take(double(list.size()), "the 'problems' list would", where);
    std::vector<GemmProblem> out;
    out.reserve(list.size());
    for (size_t j = 0; j < list.size(); ++j) {
        const auto &p = list[j];
        const std::string w = fmt::format("{} problems[{}]", where, j);
        if (!p.is_object())
            throw InvalidInput(w + ": must be an object");
        const auto op = choiceList<GemmOp>(p.value("op", json()), "op", opNameList(), w, toOp)[0];
        const auto dt = choiceList<DType>(p.value("dtype", json()), "dtype", dtypeNameList(), w, toDType)[0];
        int64_t s[4];
        const char *names[4] = {"B", "M", "N", "K"};
        for (int f = 0; f < 4; ++f) {
            if (f == 0 && !p.contains("B")) {
                s[f] = 1;
                continue;
            }
            if (!p.contains(names[f]))
                throw InvalidInput(fmt::format("{}: field '{}' is missing", w, names[f]));
            if (p[names[f]].is_array())
                throw InvalidInput(fmt::format("{}: field '{}' must be one integer", w, names[f]));
            s[f] = sizeValue(p[names[f]], names[f], w);
        }
        const bool at = boolList(p.value("a_transposed", json(false)), "a_transposed", w)[0];
        const bool bt = boolList(p.value("b_transposed", json(false)), "b_transposed", w)[0];
        const GemmProblem problem{op, dt, s[0], s[1], s[2], s[3], at, bt};
        validate(problem, w); // a batch on mm or addmm
        out.push_back(problem);
    }
    return out;
}

std::vector<GemmProblem> generatedProblems(const json &entry, const std::string &where,
                                           const std::string &baseDir, ProblemBudget &budget) {
    const auto ops = choiceList<GemmOp>(entry.value("ops", json()), "ops", opNameList(), where, toOp);
    const auto dtypes =
        choiceList<DType>(entry.value("dtypes", json()), "dtypes", dtypeNameList(), where, toDType);
    const auto aT = boolList(entry.value("a_transposed", json::array({false})), "a_transposed", where);
    const auto bT = boolList(entry.value("b_transposed", json::array({false})), "b_transposed", where);
    const auto passes =
        choiceList<Pass>(entry.value("passes", json::array({"forward"})), "passes", kPasses, where, toPass);
    const auto batches = sizes(entry, "B", where, std::vector<int64_t>{1});
    const bool batched = std::any_of(ops.begin(), ops.end(), isBatched);
    if (!batched)
        for (auto b : batches)
            if (b != 1)
                throw InvalidInput(
                    fmt::format("{}: field 'B' has {} but none of 'ops' is batched; only bmm and "
                                "baddbmm take 'B'",
                                where, b));
    const auto ms = sizes(entry, "M", where);
    const bool zip = boolField(entry, "zip_sizes", false, where);
    std::vector<int64_t> ns, ks;
    std::vector<std::pair<int64_t, int64_t>> layers;
    double nk = 0;
    std::string nkWhat;
    if (entry.contains("shape_set")) {
        if (zip)
            throw InvalidInput(where +
                               ": field 'zip_sizes' pairs M, N and K; it cannot be used with 'shape_set'");
        if (!entry["shape_set"].is_string())
            throw InvalidInput(fmt::format("{}: field 'shape_set' must be a path (a string), got {}", where,
                                           show(entry["shape_set"])));
        layers = loadShapeSet(entry["shape_set"].get<std::string>(), baseDir, where);
        nk = double(layers.size());
        nkWhat = fmt::format("shape_set {}", layers.size());
    } else {
        ns = sizes(entry, "N", where);
        ks = sizes(entry, "K", where);
        if (zip) {
            if (ms.size() != ns.size() || ms.size() != ks.size())
                throw InvalidInput(
                    fmt::format("{}: field 'zip_sizes' needs M, N and K of the same length; they have "
                                "{}, {} and {}",
                                where, ms.size(), ns.size(), ks.size()));
            nk = 1;
            nkWhat = "(zipped)";
        } else {
            nk = double(ns.size()) * double(ks.size());
            nkWhat = fmt::format("N {} x K {}", ns.size(), ks.size());
        }
    }
    // Count the grid before building it: a 1000 x 1000 x 1000 grid is refused, not allocated.
    double perDtype = 0;
    for (auto op : ops)
        perDtype += isBatched(op) ? double(batches.size()) : 1.0;
    const double grid = perDtype * double(dtypes.size()) * double(ms.size()) * nk *
                        double(aT.size() * bT.size()) * double(passes.size());
    budget.take(
        grid,
        fmt::format("fields ops {} x dtypes {} x B {} x M {} x {} x a_transposed {} x b_transposed {}{}",
                    ops.size(), dtypes.size(), batched ? batches.size() : 1, ms.size(), nkWhat, aT.size(),
                    bT.size(), passes.size() > 1 ? fmt::format(" x passes {}", passes.size()) : ""),
        where);
    if (layers.empty() && !zip) {
        layers.reserve(ns.size() * ks.size());
        for (auto n : ns)
            for (auto k : ks)
                layers.emplace_back(n, k);
    }
    std::vector<GemmProblem> out;
    out.reserve(size_t(grid));
    // C = A B is (M, N, K); its backward computes dA = dC B^T, (M, K, N) with B^T's layout
    // flipped, and dB = A^T dC, (K, N, M) with A^T's flipped; dC is row-major. A bias's gradient
    // is a reduction, so addmm's backward GEMMs are mm and baddbmm's are bmm.
    auto emit = [&](GemmOp op, DType dt, int64_t b, int64_t m, int64_t n, int64_t k) {
        const int64_t batch = isBatched(op) ? b : 1;
        const GemmOp grad = op == GemmOp::Addmm ? GemmOp::Mm : op == GemmOp::Baddbmm ? GemmOp::Bmm : op;
        for (bool at : aT)
            for (bool bt : bT)
                for (Pass pass : passes)
                    out.push_back(pass == Pass::Forward ? GemmProblem{op, dt, batch, m, n, k, at, bt}
                                  : pass == Pass::GradInput
                                      ? GemmProblem{grad, dt, batch, m, k, n, false, !bt}
                                      : GemmProblem{grad, dt, batch, k, n, m, !at, false});
    };
    for (auto op : ops)
        for (auto dt : dtypes)
            for (auto b : isBatched(op) ? batches : std::vector<int64_t>{1}) {
                if (zip) {
                    for (size_t i = 0; i < ms.size(); ++i)
                        emit(op, dt, b, ms[i], ns[i], ks[i]);
                    continue;
                }
                for (auto m : ms)
                    for (auto [n, k] : layers)
                        emit(op, dt, b, m, n, k);
            }
    return out;
}

std::vector<GemmProblem> sample(std::vector<GemmProblem> items, const json &spec, const std::string &where) {
    if (!spec.is_object())
        throw InvalidInput(where + ": field 'sample' must be an object with 'count' and 'seed'");
    const int64_t count = intField(spec, "count", 1, INT64_MAX, where, "sample");
    auto seedIt = spec.find("seed");
    const uint64_t seed = seedIt == spec.end() ? 0 : seedOf(*seedIt, where, "sample.seed");
    if (size_t(count) >= items.size())
        return items;
    SplitMix64 rng(seed);
    std::vector<size_t> idx(items.size());
    for (size_t i = 0; i < idx.size(); ++i)
        idx[i] = i;
    for (size_t i = 0; i < size_t(count); ++i)
        std::swap(idx[i], idx[i + rng.next() % (idx.size() - i)]);
    idx.resize(count);
    std::sort(idx.begin(), idx.end());
    std::vector<GemmProblem> out;
    out.reserve(idx.size());
    for (auto i : idx)
        out.push_back(items[i]);
    return out;
}

std::vector<KernelConfig> cpuConfigsOf(const json &plan) {
    auto it = plan.find("cpu");
    json spec = it == plan.end() ? json::object() : *it;
    if (!spec.is_object())
        throw InvalidInput("plan: field 'cpu' must be an object");
    auto axis = [&](const char *k, std::vector<int64_t> dflt, int64_t max) {
        return spec.contains(k) ? sizeList(spec[k], std::string("cpu.") + k, "plan", max) : dflt;
    };
    const auto bm = axis("block_m", {32, 64}, lim::kMaxCpuBlock),
               bn = axis("block_n", {64, 128}, lim::kMaxCpuBlock);
    const auto bk = axis("block_k", {64, 256}, lim::kMaxCpuBlock);
    const auto th = axis("threads", {1, 2}, lim::kMaxCpuThreads);
    const double n = double(bm.size()) * double(bn.size()) * double(bk.size()) * double(th.size());
    if (n > double(lim::kMaxCpuConfigs))
        throw InvalidInput(
            fmt::format("plan: field 'cpu' makes {:.0f} configurations (block_m {} x block_n {} x "
                        "block_k {} x threads {}); at most {} are allowed",
                        n, bm.size(), bn.size(), bk.size(), th.size(), lim::kMaxCpuConfigs));
    std::vector<KernelConfig> out;
    for (auto m : bm)
        for (auto nn : bn)
            for (auto k : bk)
                for (auto t : th) {
                    KernelConfig c;
                    c.kind = "cpu";
                    c.name = "tiled";
                    c.blockM = int(m);
                    c.blockN = int(nn);
                    c.blockK = int(k);
                    c.threads = int(t);
                    out.push_back(c);
                }
    return out;
}

SweepPlan expand(const json &j, const std::string &baseDir) {
    if (!j.is_object())
        throw InvalidInput("plan: must be a JSON object");
    SweepPlan plan;
    if (auto v = j.value("version", json(1)); v != json(1))
        throw InvalidInput(fmt::format("plan: field 'version' is {}; this build reads version 1", show(v)));
    if (auto n = j.find("name"); n != j.end()) {
        if (!n->is_string())
            throw InvalidInput(fmt::format("plan: field 'name' must be a string, got {}", show(*n)));
        plan.name = n->get<std::string>();
    }
    if (auto s = j.find("search_space"); s != j.end()) {
        if (!s->is_string() || std::find(kSearchSpaces.begin(), kSearchSpaces.end(), s->get<std::string>()) ==
                                   kSearchSpaces.end())
            throw InvalidInput(
                fmt::format("plan: field 'search_space' has unknown value {}; expected one of {}", show(*s),
                            fmt::join(kSearchSpaces, ", ")));
        plan.searchSpace = s->get<std::string>();
    }
    if (auto t = j.find("timeout_s"); t != j.end()) {
        if (!t->is_number() || t->get<double>() <= 0 || t->get<double>() > lim::kMaxTimeoutS)
            throw InvalidInput(
                fmt::format("plan: field 'timeout_s' must be a number > 0 and <= {} (a day), got {}",
                            lim::kMaxTimeoutS, show(*t)));
        plan.timeoutS = t->get<double>();
    }
    plan.repeats = int(intField(j, "repeats", 1, lim::kMaxRepeats, "plan", "", plan.repeats));
    plan.inductorEvery =
        int(intField(j, "inductor_every", 0, lim::kMaxInductorEvery, "plan", "", plan.inductorEvery));
    plan.exhaustiveConfigs = int(
        intField(j, "exhaustive_configs", 0, lim::kMaxExhaustiveConfigs, "plan", "", plan.exhaustiveConfigs));
    if (auto a = j.find("aten_only"); a != j.end()) {
        if (!a->is_boolean())
            throw InvalidInput(
                fmt::format("plan: field 'aten_only' must be true or false, got {}", show(*a)));
        plan.atenOnly = a->get<bool>();
    }
    std::optional<uint64_t> shuffleSeed;
    if (auto s = j.find("shuffle_seed"); s != j.end())
        shuffleSeed = seedOf(*s, "plan", "shuffle_seed");
    plan.cpuConfigs = cpuConfigsOf(j);
    auto entries = j.find("entries");
    if (entries == j.end() || !entries->is_array() || entries->empty())
        throw InvalidInput("plan: field 'entries' must be a non-empty list");
    ProblemBudget budget;
    std::set<std::tuple<int, int, int64_t, int64_t, int64_t, int64_t, bool, bool>> seen;
    for (size_t i = 0; i < entries->size(); ++i) {
        const auto &e = (*entries)[i];
        std::string where = fmt::format("entries[{}]", i);
        if (!e.is_object())
            throw InvalidInput(where + ": must be an object");
        if (auto n = e.find("name"); n != e.end()) {
            if (!n->is_string())
                throw InvalidInput(fmt::format("{}: field 'name' must be a string, got {}", where, show(*n)));
            where += fmt::format(" ({})", n->get<std::string>());
        }
        auto batch = e.contains("problems") ? explicitProblems(e, where, budget)
                                            : generatedProblems(e, where, baseDir, budget);
        if (e.contains("sample"))
            batch = sample(std::move(batch), e["sample"], where);
        for (auto &p : batch) {
            auto key = std::make_tuple(int(p.op), int(p.dtype), p.batch, p.m, p.n, p.k, p.aTransposed,
                                       p.bTransposed);
            if (seen.insert(key).second)
                plan.problems.push_back(p);
        }
    }
    if (shuffleSeed) {
        SplitMix64 rng(*shuffleSeed);
        for (size_t i = plan.problems.size() - 1; i > 0; --i)
            std::swap(plan.problems[i], plan.problems[rng.next() % (i + 1)]);
    }
    plan.source = j;
    return plan;
}

} // namespace

uint64_t samplingHash(const GemmProblem &problem) {
    return fnv1a64(problemToJson(problem).dump());
}

bool SweepPlan::inductorBenchmarkFor(const GemmProblem &problem) const {
    if (searchSpace != kSearchSpaces[0] || inductorEvery <= 0)
        return false;
    return inductorEvery == 1 || samplingHash(problem) % uint64_t(inductorEvery) == 0;
}

SweepPlan SweepPlan::fromJson(const json &j, const std::string &baseDir) {
    try {
        return expand(j, baseDir);
    } catch (const json::exception &e) {
        // Every field is checked above; this only keeps a missed check from showing a library message.
        throw InvalidInput(fmt::format("plan: a field has a value of an unexpected type ({})", e.what()));
    }
}

SweepPlan SweepPlan::parse(std::string_view text, const std::string &baseDir) {
    return fromJson(parseJsonBounded(text, "plan", kPlanJsonLimits), baseDir);
}

SweepPlan SweepPlan::load(const std::string &path) {
    const json j = readJsonFile(path, path, kPlanJsonLimits);
    try {
        return fromJson(j, std::filesystem::absolute(path).parent_path().string());
    } catch (const InvalidInput &e) {
        throw InvalidInput(fmt::format("{}: {}", path, e.what()));
    }
}

PlanShard PlanShard::parse(std::string_view text, std::string_view what) {
    PlanShard s;
    const auto slash = text.find('/');
    auto number = [](std::string_view t, int64_t &out) {
        if (t.empty() || t.size() > 10)
            return false;
        out = 0;
        for (char c : t) {
            if (c < '0' || c > '9')
                return false;
            out = out * 10 + (c - '0');
        }
        return true;
    };
    if (slash == std::string_view::npos || !number(text.substr(0, slash), s.index) ||
        !number(text.substr(slash + 1), s.count) || s.count < 1 || s.index >= s.count ||
        s.count > planlimits::kMaxProblems)
        throw InvalidInput(fmt::format("{} '{}': expected i/n with 0 <= i < n <= {}, e.g. 0/4", what, text,
                                       planlimits::kMaxProblems));
    return s;
}

int64_t PlanShard::size(size_t problems) const {
    const auto n = int64_t(problems);
    return n / count + (index < n % count ? 1 : 0);
}

std::string PlanShard::str() const {
    return fmt::format("{}/{}", index, count);
}

json expandedProblemJson(const SweepPlan &plan, const GemmProblem &problem) {
    json j = problemToJson(problem);
    j["search_space"] = plan.searchSpace;
    j["plan"] = plan.name;
    return j;
}

int64_t writeExpandedProblems(const SweepPlan &plan, std::ostream &os) {
    for (const auto &p : plan.problems)
        os << expandedProblemJson(plan, p).dump() << '\n';
    return int64_t(plan.problems.size());
}

} // namespace diode
