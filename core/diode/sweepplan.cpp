#include "sweepplan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <tuple>

namespace diode {

uint64_t SplitMix64::next()
{
    m_state += 0x9E3779B97F4A7C15ull;
    uint64_t z = m_state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double SplitMix64::uniform() { return double(next() >> 11) * (1.0 / 9007199254740992.0); }

namespace {

using json = nlohmann::json;

bool isInt(const json &v) { return v.is_number_integer(); }

std::vector<int64_t> sizeList(const json &value, const std::string &field, const std::string &where)
{
    json v = value;
    if (isInt(v)) v = json::array({v});
    if (!v.is_array() || v.empty())
        throw InvalidInput(fmt::format("{}: field '{}' must be a positive integer or a non-empty list of them", where,
                                       field));
    std::vector<int64_t> out;
    for (const auto &x : v) {
        if (!isInt(x))
            throw InvalidInput(fmt::format("{}: field '{}' has {}, which is not an integer", where, field, x.dump()));
        if (x.get<int64_t>() < 1)
            throw InvalidInput(fmt::format("{}: field '{}' has {}; sizes must be at least 1", where, field,
                                           x.get<int64_t>()));
        out.push_back(x.get<int64_t>());
    }
    return out;
}

template <typename T>
std::vector<T> choiceList(const json &value, const std::string &field, const std::vector<std::string> &allowed,
                          const std::string &where, T (*convert)(const std::string &))
{
    json v = value.is_string() ? json::array({value}) : value;
    if (!v.is_array() || v.empty())
        throw InvalidInput(fmt::format("{}: field '{}' must be a non-empty list", where, field));
    std::vector<T> out;
    for (const auto &x : v) {
        if (!x.is_string() || std::find(allowed.begin(), allowed.end(), x.get<std::string>()) == allowed.end())
            throw InvalidInput(fmt::format("{}: field '{}' has unknown value {}; expected one of {}", where, field,
                                           x.dump(), fmt::join(allowed, ", ")));
        out.push_back(convert(x.get<std::string>()));
    }
    return out;
}

GemmOp toOp(const std::string &s) { return *parseOp(s); }
DType toDType(const std::string &s) { return *parseDType(s); }
const std::vector<std::string> kOps{"mm", "addmm", "bmm"};
const std::vector<std::string> kDTypes{"bf16", "fp16", "fp32"};

std::vector<bool> boolList(const json &value, const std::string &field, const std::string &where)
{
    json v = value.is_boolean() ? json::array({value}) : value;
    if (!v.is_array() || v.empty() || !std::all_of(v.begin(), v.end(), [](const json &x) { return x.is_boolean(); }))
        throw InvalidInput(fmt::format("{}: field '{}' must be true, false or a list of them", where, field));
    std::vector<bool> out;
    for (const auto &x : v) out.push_back(x.get<bool>());
    return out;
}

int64_t positiveInt(const json &spec, const char *key, const std::string &where, const std::string &field,
                    std::optional<int64_t> dflt = std::nullopt)
{
    auto it = spec.find(key);
    if (it == spec.end() && dflt) return *dflt;
    if (it == spec.end() || !isInt(*it) || it->get<int64_t>() < 1)
        throw InvalidInput(fmt::format("{}: field '{}.{}' must be an integer >= 1", where, field, key));
    return it->get<int64_t>();
}

std::vector<int64_t> sizes(const json &entry, const std::string &field, const std::string &where,
                           std::optional<std::vector<int64_t>> dflt = std::nullopt)
{
    auto it = entry.find(field);
    if (it == entry.end()) {
        if (dflt) return *dflt;
        throw InvalidInput(fmt::format("{}: field '{}' is missing", where, field));
    }
    if (it->is_object()) {
        auto spec = it->find("log_uniform");
        if (spec == it->end() || !spec->is_object())
            throw InvalidInput(fmt::format("{}: field '{}' is an object without 'log_uniform'", where, field));
        const std::string f = field + ".log_uniform";
        const int64_t lo = positiveInt(*spec, "min", where, f), hi = positiveInt(*spec, "max", where, f);
        const int64_t count = positiveInt(*spec, "count", where, f);
        const int64_t mult = positiveInt(*spec, "multiple_of", where, f, 1);
        uint64_t seed = 0;
        if (auto s = spec->find("seed"); s != spec->end()) seed = s->get<uint64_t>();
        if (hi < lo) throw InvalidInput(fmt::format("{}: field '{}' has max {} < min {}", where, f, hi, lo));
        SplitMix64 rng(seed);
        std::vector<int64_t> out;
        for (int64_t i = 0; i < count; ++i) {
            const double u = rng.uniform();
            int64_t v = int64_t(std::floor(std::exp(std::log(double(lo)) +
                                                    u * (std::log(double(hi + 1)) - std::log(double(lo))))));
            v = std::clamp(v, lo, hi);
            if (mult > 1) v = std::max(mult, (v / mult) * mult);
            out.push_back(v);
        }
        return out;
    }
    return sizeList(*it, field, where);
}

GemmProblem makeProblem(GemmOp op, DType dt, int64_t b, int64_t m, int64_t n, int64_t k, bool at, bool bt)
{
    return GemmProblem{op, dt, op == GemmOp::Bmm ? b : 1, m, n, k, at, bt};
}

std::vector<std::pair<int64_t, int64_t>> loadShapeSet(const std::string &path, const std::string &baseDir,
                                                      const std::string &where)
{
    namespace fs = std::filesystem;
    const fs::path full = fs::path(path).is_absolute() ? fs::path(path) : fs::path(baseDir) / path;
    std::ifstream in(full);
    if (!in) throw InvalidInput(fmt::format("{}: cannot read shape set '{}' ({})", where, path, full.string()));
    json doc;
    try {
        doc = json::parse(in);
    } catch (const json::parse_error &e) {
        throw InvalidInput(fmt::format("{}: shape set '{}' is not valid JSON: {}", where, path, e.what()));
    }
    auto layers = doc.find("layers");
    if (!doc.is_object() || layers == doc.end() || !layers->is_array() || layers->empty())
        throw InvalidInput(fmt::format("{}: shape set '{}' has no 'layers' list", where, path));
    std::vector<std::pair<int64_t, int64_t>> out;
    for (size_t i = 0; i < layers->size(); ++i) {
        const auto &l = (*layers)[i];
        const std::string w = fmt::format("{} shape set '{}' layers[{}]", where, path, i);
        if (!l.is_object() || !l.contains("N") || !l.contains("K")) throw InvalidInput(w + ": needs N and K");
        out.emplace_back(sizeList(l["N"], "N", w)[0], sizeList(l["K"], "K", w)[0]);
    }
    return out;
}

std::vector<GemmProblem> explicitProblems(const json &entry, const std::string &where)
{
    const auto &list = entry["problems"];
    if (!list.is_array()) throw InvalidInput(where + ": field 'problems' must be a list");
    std::vector<GemmProblem> out;
    for (size_t j = 0; j < list.size(); ++j) {
        const auto &p = list[j];
        const std::string w = fmt::format("{} problems[{}]", where, j);
        if (!p.is_object()) throw InvalidInput(w + ": must be an object");
        const auto op = choiceList<GemmOp>(p.value("op", json()), "op", kOps, w, toOp)[0];
        const auto dt = choiceList<DType>(p.value("dtype", json()), "dtype", kDTypes, w, toDType)[0];
        int64_t s[4];
        const char *names[4] = {"B", "M", "N", "K"};
        for (int f = 0; f < 4; ++f) {
            if (f == 0 && !p.contains("B")) {
                s[f] = 1;
                continue;
            }
            if (!p.contains(names[f])) throw InvalidInput(fmt::format("{}: field '{}' is missing", w, names[f]));
            if (p[names[f]].is_array()) throw InvalidInput(fmt::format("{}: field '{}' must be one integer", w, names[f]));
            s[f] = sizeList(p[names[f]], names[f], w)[0];
        }
        const bool at = boolList(p.value("a_transposed", json(false)), "a_transposed", w)[0];
        const bool bt = boolList(p.value("b_transposed", json(false)), "b_transposed", w)[0];
        out.push_back(makeProblem(op, dt, s[0], s[1], s[2], s[3], at, bt));
    }
    return out;
}

std::vector<GemmProblem> generatedProblems(const json &entry, const std::string &where, const std::string &baseDir)
{
    const auto ops = choiceList<GemmOp>(entry.value("ops", json()), "ops", kOps, where, toOp);
    const auto dtypes = choiceList<DType>(entry.value("dtypes", json()), "dtypes", kDTypes, where, toDType);
    const auto aT = boolList(entry.value("a_transposed", json::array({false})), "a_transposed", where);
    const auto bT = boolList(entry.value("b_transposed", json::array({false})), "b_transposed", where);
    const auto batches = sizes(entry, "B", where, std::vector<int64_t>{1});
    const auto ms = sizes(entry, "M", where);
    std::vector<std::pair<int64_t, int64_t>> nks;
    std::vector<GemmProblem> out;
    auto emit = [&](GemmOp op, DType dt, int64_t b, int64_t m, int64_t n, int64_t k) {
        for (bool at : aT)
            for (bool bt : bT) out.push_back(makeProblem(op, dt, b, m, n, k, at, bt));
    };
    if (entry.contains("shape_set")) {
        if (!entry["shape_set"].is_string()) throw InvalidInput(where + ": field 'shape_set' must be a path");
        nks = loadShapeSet(entry["shape_set"].get<std::string>(), baseDir, where);
    } else {
        const auto ns = sizes(entry, "N", where);
        const auto ks = sizes(entry, "K", where);
        if (entry.value("zip_sizes", false)) {
            if (ms.size() != ns.size() || ms.size() != ks.size())
                throw InvalidInput(where + ": 'zip_sizes' needs M, N and K of the same length");
            for (auto op : ops)
                for (auto dt : dtypes)
                    for (auto b : op == GemmOp::Bmm ? batches : std::vector<int64_t>{1})
                        for (size_t i = 0; i < ms.size(); ++i) emit(op, dt, b, ms[i], ns[i], ks[i]);
            return out;
        }
        for (auto n : ns)
            for (auto k : ks) nks.emplace_back(n, k);
    }
    for (auto op : ops)
        for (auto dt : dtypes)
            for (auto b : op == GemmOp::Bmm ? batches : std::vector<int64_t>{1})
                for (auto m : ms)
                    for (auto [n, k] : nks) emit(op, dt, b, m, n, k);
    return out;
}

std::vector<GemmProblem> sample(std::vector<GemmProblem> items, const json &spec, const std::string &where)
{
    if (!spec.is_object()) throw InvalidInput(where + ": field 'sample' must be an object with 'count' and 'seed'");
    const int64_t count = positiveInt(spec, "count", where, "sample");
    auto seedIt = spec.find("seed");
    if (seedIt != spec.end() && (!isInt(*seedIt) || seedIt->get<int64_t>() < 0))
        throw InvalidInput(where + ": field 'sample.seed' must be an integer >= 0");
    if (size_t(count) >= items.size()) return items;
    SplitMix64 rng(seedIt == spec.end() ? 0 : seedIt->get<uint64_t>());
    std::vector<size_t> idx(items.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    for (size_t i = 0; i < size_t(count); ++i) std::swap(idx[i], idx[i + rng.next() % (idx.size() - i)]);
    idx.resize(count);
    std::sort(idx.begin(), idx.end());
    std::vector<GemmProblem> out;
    for (auto i : idx) out.push_back(items[i]);
    return out;
}

std::vector<KernelConfig> cpuConfigsOf(const json &plan)
{
    auto it = plan.find("cpu");
    json spec = it == plan.end() ? json::object() : *it;
    if (!spec.is_object()) throw InvalidInput("plan: field 'cpu' must be an object");
    auto axis = [&](const char *k, std::vector<int64_t> dflt) {
        return spec.contains(k) ? sizeList(spec[k], std::string("cpu.") + k, "plan") : dflt;
    };
    const auto bm = axis("block_m", {32, 64}), bn = axis("block_n", {64, 128}), bk = axis("block_k", {64, 256});
    const auto th = axis("threads", {1, 2});
    std::vector<KernelConfig> out;
    for (auto m : bm)
        for (auto n : bn)
            for (auto k : bk)
                for (auto t : th) {
                    KernelConfig c;
                    c.kind = "cpu";
                    c.name = "tiled";
                    c.blockM = int(m);
                    c.blockN = int(n);
                    c.blockK = int(k);
                    c.threads = int(t);
                    out.push_back(c);
                }
    return out;
}

} // namespace

SweepPlan SweepPlan::fromJson(const json &j, const std::string &baseDir)
{
    if (!j.is_object()) throw InvalidInput("plan: must be a JSON object");
    SweepPlan plan;
    plan.source = j;
    if (auto v = j.value("version", json(1)); v != json(1))
        throw InvalidInput(fmt::format("plan: field 'version' is {}; this build reads version 1", v.dump()));
    plan.name = j.value("name", std::string());
    plan.searchSpace = j.value("search_space", std::string("DEFAULT"));
    if (plan.searchSpace != "DEFAULT" && plan.searchSpace != "EXHAUSTIVE")
        throw InvalidInput(fmt::format("plan: field 'search_space' has unknown value \"{}\"; expected one of DEFAULT, "
                                       "EXHAUSTIVE",
                                       plan.searchSpace));
    if (auto t = j.find("timeout_s"); t != j.end()) {
        if (!t->is_number() || t->get<double>() <= 0) throw InvalidInput("plan: field 'timeout_s' must be > 0");
        plan.timeoutS = t->get<double>();
    }
    if (j.contains("repeats")) {
        if (!isInt(j["repeats"]) || j["repeats"].get<int64_t>() < 1)
            throw InvalidInput("plan: field 'repeats' must be an integer >= 1");
        plan.repeats = j["repeats"].get<int>();
    }
    plan.cpuConfigs = cpuConfigsOf(j);
    auto entries = j.find("entries");
    if (entries == j.end() || !entries->is_array() || entries->empty())
        throw InvalidInput("plan: field 'entries' must be a non-empty list");
    std::set<std::tuple<int, int, int64_t, int64_t, int64_t, int64_t, bool, bool>> seen;
    for (size_t i = 0; i < entries->size(); ++i) {
        const auto &e = (*entries)[i];
        std::string where = fmt::format("entries[{}]", i);
        if (e.is_object() && e.contains("name") && e["name"].is_string())
            where += fmt::format(" ({})", e["name"].get<std::string>());
        if (!e.is_object()) throw InvalidInput(where + ": must be an object");
        auto batch = e.contains("problems") ? explicitProblems(e, where) : generatedProblems(e, where, baseDir);
        if (e.contains("sample")) batch = sample(std::move(batch), e["sample"], where);
        for (auto &p : batch) {
            auto key = std::make_tuple(int(p.op), int(p.dtype), p.batch, p.m, p.n, p.k, p.aTransposed, p.bTransposed);
            if (seen.insert(key).second) plan.problems.push_back(p);
        }
    }
    if (auto s = j.find("shuffle_seed"); s != j.end()) {
        if (!isInt(*s) || s->get<int64_t>() < 0) throw InvalidInput("plan: field 'shuffle_seed' must be an integer >= 0");
        SplitMix64 rng(s->get<uint64_t>());
        for (size_t i = plan.problems.size() - 1; i > 0; --i) std::swap(plan.problems[i], plan.problems[rng.next() % (i + 1)]);
    }
    return plan;
}

SweepPlan SweepPlan::load(const std::string &path)
{
    std::ifstream in(path);
    if (!in) throw InvalidInput(fmt::format("cannot read plan '{}'", path));
    json j;
    try {
        j = json::parse(in);
    } catch (const json::parse_error &e) {
        throw InvalidInput(fmt::format("{}: not valid JSON: {}", path, e.what()));
    }
    try {
        return fromJson(j, std::filesystem::absolute(path).parent_path().string());
    } catch (const InvalidInput &e) {
        throw InvalidInput(fmt::format("{}: {}", path, e.what()));
    }
}

} // namespace diode
