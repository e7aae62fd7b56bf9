#include "diode/infer/tritonkernel.h"

#include "diode/infer/gemmproblem.h"
#include "diode/infer/stablehash.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace diode {

namespace {

constexpr int kMaxXBlock = 4096;        // Inductor's TRITON_MAX_BLOCK["X"] (CUDA)
constexpr int kMaxYBlock = 1024;        // ["Y"]
constexpr int kMaxRBlock = 4096;        // a looped reduction's block (larger ones are multi-kernel only)
constexpr int kMaxTile2D = 4096;        // a 2-D pointwise tile
constexpr int64_t kMaxGridY = 65535;    // CUDA's largest grid y dimension (Inductor's get_max_y_grid)
constexpr int64_t kMinYBlockTiled = 16; // a y-tiled reduction's smallest YBLOCK (candidateConfigs)
constexpr int kWarpThreads = 32;
constexpr int kWarpChoices[] = {1, 2, 4, 8, 16};

int64_t nextPow2(int64_t v) {
    int64_t p = 1;
    while (p < v)
        p <<= 1;
    return p;
}

float lg(double v) {
    return float(std::log2(std::max(v, 1.0)));
}

// Inductor lets a reduction be persistent when its whole reduction fits one block: up to 1,024
// elements for an inner reduction, 64 otherwise (choices.py should_use_persistent_reduction).
bool persistentAllowed(const TritonKernelShape &s) {
    if (!s.reduction || !s.persistentPossible)
        return false;
    const int64_t limit = s.hint == ReductionHint::Inner ? 1024 : 64;
    return s.persistentDefault || nextPow2(s.r) <= limit;
}

// Threads that have work: at least one element of the tile each, at most kMaxElementsPerThread.
bool threadsFit(int64_t tile, int warps) {
    const int64_t threads = int64_t(warps) * kWarpThreads;
    const int64_t perThread = tile / threads;
    if (perThread > kMaxElementsPerThread)
        return false;
    return tile >= threads || warps == 1;
}

const ReductionHint kHints[] = {ReductionHint::Inner, ReductionHint::Outer, ReductionHint::OuterTiny,
                                ReductionHint::Default};

std::optional<ReductionHint> parseHint(std::string_view text) {
    for (ReductionHint h : {ReductionHint::None, ReductionHint::Inner, ReductionHint::Outer,
                            ReductionHint::OuterTiny, ReductionHint::Default})
        if (toString(h) == text)
            return h;
    return std::nullopt;
}

int64_t positive(const nlohmann::json &j, const char *key, const std::string &where, int64_t fallback = -1) {
    if (!j.contains(key)) {
        if (fallback >= 0)
            return fallback;
        throw InvalidInput(fmt::format("{}: \"{}\" is missing", where, key));
    }
    const auto &v = j.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > kMaxProblemSize)
        throw InvalidInput(fmt::format("{}: \"{}\" must be an integer from 1 to {}, got {}", where, key,
                                       kMaxProblemSize, v.dump()));
    return v.get<int64_t>();
}

int count(const nlohmann::json &j, const char *key, const std::string &where) {
    if (!j.contains(key))
        return 0;
    const auto &v = j.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1'000'000)
        throw InvalidInput(
            fmt::format("{}: \"{}\" must be a count from 0 to 1000000, got {}", where, key, v.dump()));
    return v.get<int>();
}

double bytes(const nlohmann::json &j, const char *key, const std::string &where) {
    if (!j.contains(key))
        return 0;
    const auto &v = j.at(key);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
        throw InvalidInput(
            fmt::format("{}: \"{}\" must be a number of bytes >= 0, got {}", where, key, v.dump()));
    return v.get<double>();
}

int block(const nlohmann::json &j, const char *key, const std::string &where, int limit) {
    if (!j.contains(key))
        return 0;
    const auto &v = j.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > limit ||
        (v.get<int64_t>() & (v.get<int64_t>() - 1)) != 0)
        throw InvalidInput(fmt::format("{}: \"{}\" must be a power of two from 1 to {}, got {}", where, key,
                                       limit, v.dump()));
    return v.get<int>();
}

} // namespace

bool optionalFlag(const nlohmann::json &j, const char *key, const std::string &where) {
    if (!j.contains(key))
        return false;
    if (!j.at(key).is_boolean())
        throw InvalidInput(fmt::format("{}: \"{}\" must be true or false", where, key));
    return j.at(key).get<bool>();
}

std::string_view toString(ReductionHint hint) {
    switch (hint) {
    case ReductionHint::None:
        return "none";
    case ReductionHint::Inner:
        return "inner";
    case ReductionHint::Outer:
        return "outer";
    case ReductionHint::OuterTiny:
        return "outer_tiny";
    case ReductionHint::Default:
        return "default";
    }
    return "none";
}

TritonKernelShape TritonKernelShape::fromJson(const nlohmann::json &j, const std::string &where) {
    if (!j.is_object())
        throw InvalidInput(fmt::format("{}: a kernel shape must be a JSON object", where));
    TritonKernelShape s;
    s.reduction = optionalFlag(j, "reduction", where);
    s.x = positive(j, "x", where);
    s.y = positive(j, "y", where, 1);
    s.r = positive(j, "r", where, 1);
    const std::string hint = j.value("hint", std::string(s.reduction ? "default" : "none"));
    const auto h = parseHint(hint);
    if (!h)
        throw InvalidInput(fmt::format(
            "{}: \"hint\" '{}' is not one of none, inner, outer, outer_tiny, default", where, hint));
    s.hint = *h;
    if (s.reduction == (s.hint == ReductionHint::None))
        throw InvalidInput(fmt::format("{}: a {} kernel cannot have reduction hint '{}'", where,
                                       s.reduction ? "reduction" : "pointwise", hint));
    if (!s.reduction && s.r != 1)
        throw InvalidInput(fmt::format("{}: a pointwise kernel has \"r\" 1, got {}", where, s.r));
    s.persistentDefault = optionalFlag(j, "persistent_default", where);
    s.persistentPossible =
        !j.contains("persistent_possible") || optionalFlag(j, "persistent_possible", where);
    s.defaultTuned = optionalFlag(j, "default_tuned", where); // absent in lines older than the field
    s.loads = count(j, "loads", where);
    s.stores = count(j, "stores", where);
    s.reductions = count(j, "reductions", where);
    s.otherOps = count(j, "other_ops", where);
    s.bytesRead = bytes(j, "bytes_read", where);
    s.bytesWritten = bytes(j, "bytes_written", where);
    if (j.contains("contiguity")) {
        const auto &c = j.at("contiguity");
        if (!c.is_number() || !std::isfinite(c.get<double>()))
            throw InvalidInput(fmt::format("{}: \"contiguity\" must be a finite number", where));
        s.contiguity = std::clamp(c.get<double>(), -20.0, 20.0);
    }
    s.itemsize = int(positive(j, "itemsize", where, 4));
    if (s.itemsize > 8)
        throw InvalidInput(fmt::format("{}: \"itemsize\" must be 1 to 8 bytes, got {}", where, s.itemsize));
    return s;
}

nlohmann::json TritonKernelShape::toJson() const {
    return {{"reduction", reduction},
            {"x", x},
            {"y", y},
            {"r", r},
            {"hint", toString(hint)},
            {"persistent_default", persistentDefault},
            {"persistent_possible", persistentPossible},
            {"default_tuned", defaultTuned},
            {"loads", loads},
            {"stores", stores},
            {"reductions", reductions},
            {"other_ops", otherOps},
            {"bytes_read", bytesRead},
            {"bytes_written", bytesWritten},
            {"contiguity", contiguity},
            {"itemsize", itemsize}};
}

nlohmann::json TritonConfig::toJson() const {
    nlohmann::json j{
        {"persistent", persistent}, {"XBLOCK", xBlock}, {"num_warps", numWarps}, {"num_stages", numStages}};
    if (yBlock > 0)
        j["YBLOCK"] = yBlock;
    if (rBlock > 0)
        j["R0_BLOCK"] = rBlock;
    return j;
}

TritonConfig TritonConfig::fromJson(const nlohmann::json &j, const std::string &where) {
    if (!j.is_object())
        throw InvalidInput(fmt::format("{}: a kernel config must be a JSON object", where));
    TritonConfig c;
    c.persistent = optionalFlag(j, "persistent", where);
    c.xBlock = block(j, "XBLOCK", where, kMaxXBlock);
    if (c.xBlock == 0)
        throw InvalidInput(fmt::format("{}: \"XBLOCK\" is missing", where));
    c.yBlock = block(j, "YBLOCK", where, kMaxYBlock);
    c.rBlock = block(j, "R0_BLOCK", where, kMaxRBlock);
    c.numWarps = block(j, "num_warps", where, 32);
    if (c.numWarps == 0)
        throw InvalidInput(fmt::format("{}: \"num_warps\" is missing", where));
    c.numStages = j.contains("num_stages") ? int(positive(j, "num_stages", where)) : 1;
    if (c.persistent && c.rBlock)
        throw InvalidInput(fmt::format("{}: a persistent config has no \"R0_BLOCK\"", where));
    return c;
}

std::vector<TritonConfig> candidateConfigs(const TritonKernelShape &s) {
    std::vector<TritonConfig> out;
    const int64_t px = nextPow2(s.x), py = nextPow2(s.y), pr = nextPow2(s.r);
    auto add = [&](TritonConfig c, int64_t tile) {
        for (int w : kWarpChoices) {
            if (!threadsFit(tile, w))
                continue;
            c.numWarps = w;
            out.push_back(c);
        }
    };
    if (!s.reduction && s.y == 1) {
        const int64_t top = std::min<int64_t>(kMaxXBlock, px);
        for (int64_t xb = std::min<int64_t>(32, top); xb <= top; xb *= 2)
            add(TritonConfig{false, int(xb), 0, 0, 4, 1}, xb);
        return out;
    }
    if (!s.reduction) {
        for (int64_t yb = 1; yb <= std::min<int64_t>(kMaxYBlock, py); yb *= 2)
            for (int64_t xb = 1; xb <= std::min<int64_t>(kMaxXBlock, px); xb *= 2) {
                const int64_t tile = xb * yb;
                if (tile > kMaxTile2D || (tile < 128 && tile < px * py))
                    continue;
                add(TritonConfig{false, int(xb), int(yb), 0, 4, 1}, tile);
            }
        return out;
    }
    const int64_t topX = std::min<int64_t>(1024, px);
    // A reduction tiled in y too (Inductor tiles one whose loads are contiguous along an output
    // dimension other than x: attention's probabilities times values at one query token, split over
    // the cache) takes a YBLOCK of kMinYBlockTiled or more along it (y itself where y is smaller), so
    // that each row of a tile is read in one transaction or more, and no more programs along y than a
    // grid's y dimension holds. It is offered looped configurations only: a persistent one tiled in y
    // was never measured, and a configuration Inductor's code generation fails on fails the compile.
    std::vector<int> yBlocks{0};
    if (s.y > 1) {
        yBlocks.clear();
        for (int64_t yb = std::min(kMinYBlockTiled, py); yb <= std::min<int64_t>(kMaxYBlock, py); yb *= 2)
            if ((s.y + yb - 1) / yb <= kMaxGridY)
                yBlocks.push_back(int(yb));
    }
    for (int yb : yBlocks) {
        const int64_t rows = std::max(yb, 1);
        const bool persistent = yb == 0 && persistentAllowed(s);
        // Not XBLOCK 1 for a persistent reduction: Inductor then drops the x dimension (no_x_dim), and
        // its code generation failed on such kernels with a concatenation fused in (torch 2.11).
        if (persistent)
            for (int64_t xb = 2; xb <= std::max<int64_t>(2, topX); xb *= 2)
                add(TritonConfig{true, int(xb), 0, 0, 4, 1}, xb * pr);
        for (int64_t xb = 1; xb <= topX; xb *= 2)
            for (int64_t rb = std::min<int64_t>(4, pr); rb <= std::min<int64_t>(kMaxRBlock, pr); rb *= 2) {
                if (rb == pr && persistent)
                    continue; // the persistent kernel of the same tile does the same work without the loop
                add(TritonConfig{false, int(xb), yb, int(rb), 4, 1}, rows * xb * rb);
            }
    }
    return out;
}

std::vector<TritonConfig> portfolioOf(const std::vector<TritonConfig> &grid) {
    if (grid.size() <= kPortfolioSize)
        return grid;
    std::vector<std::pair<uint64_t, size_t>> order;
    order.reserve(grid.size());
    for (size_t i = 0; i < grid.size(); ++i)
        order.emplace_back(fnv1a64(grid[i].toJson().dump()), i);
    std::partial_sort(order.begin(), order.begin() + kPortfolioSize, order.end());
    order.resize(kPortfolioSize);
    std::sort(order.begin(), order.end(), [](const auto &a, const auto &b) { return a.second < b.second; });
    std::vector<TritonConfig> out;
    out.reserve(kPortfolioSize);
    for (const auto &[hash, i] : order)
        out.push_back(grid[i]);
    return out;
}

bool holds(const std::vector<TritonConfig> &configs, const TritonConfig &config) {
    return std::find(configs.begin(), configs.end(), config) != configs.end();
}

std::vector<TritonConfig> portfolioConfigs(const TritonKernelShape &s) {
    return portfolioOf(candidateConfigs(s));
}

std::vector<TritonConfig> decisionCandidates(const TritonKernelShape &s,
                                             const std::vector<TritonConfig> &extra) {
    const std::vector<TritonConfig> grid = candidateConfigs(s);
    std::vector<TritonConfig> out = portfolioOf(grid);
    for (const auto &c : extra)
        if (!holds(out, c) && holds(grid, c))
            out.push_back(c);
    return out;
}

std::vector<TritonConfig> neighbourConfigs(const TritonKernelShape &s, const TritonConfig &c) {
    const std::vector<TritonConfig> grid = candidateConfigs(s);
    std::vector<TritonConfig> out;
    for (int TritonConfig::*field :
         {&TritonConfig::xBlock, &TritonConfig::yBlock, &TritonConfig::rBlock, &TritonConfig::numWarps})
        for (bool up : {false, true}) {
            TritonConfig n = c;
            n.*field = up ? n.*field * 2 : n.*field / 2;
            if (n.*field != c.*field && holds(grid, n))
                out.push_back(n);
        }
    return out;
}

const std::vector<std::string> &kernelFeatureNames() {
    static const std::vector<std::string> names = {"is_reduction",    "log2_x",          "log2_y",
                                                   "log2_r",          "hint_inner",      "hint_outer",
                                                   "hint_outer_tiny", "hint_default",    "persistent_default",
                                                   "log2_loads",      "log2_stores",     "log2_reductions",
                                                   "log2_other_ops",  "log2_bytes_read", "log2_bytes_written",
                                                   "contiguity",      "itemsize"};
    return names;
}

const std::vector<std::string> &configFeatureNames() {
    static const std::vector<std::string> names = {"persistent",  "log2_xblock",    "log2_yblock",
                                                   "log2_rblock", "log2_warps",     "num_stages",
                                                   "log2_waves",  "log2_per_thread"};
    return names;
}

void kernelFeatures(const TritonKernelShape &s, std::vector<float> &out) {
    out.push_back(float(s.reduction));
    out.push_back(lg(double(s.x)));
    out.push_back(lg(double(s.y)));
    out.push_back(lg(double(s.r)));
    for (ReductionHint h : kHints)
        out.push_back(float(s.hint == h));
    out.push_back(float(s.persistentDefault));
    out.push_back(lg(1.0 + s.loads));
    out.push_back(lg(1.0 + s.stores));
    out.push_back(lg(1.0 + s.reductions));
    out.push_back(lg(1.0 + s.otherOps));
    out.push_back(lg(1.0 + s.bytesRead));
    out.push_back(lg(1.0 + s.bytesWritten));
    out.push_back(float(s.contiguity));
    out.push_back(float(s.itemsize));
}

void configFeatures(const TritonKernelShape &s, const TritonConfig &c, int smCount, std::vector<float> &out) {
    const double rTile = c.persistent ? double(nextPow2(s.r)) : double(std::max(c.rBlock, 1));
    const double tile = double(c.xBlock) * std::max(c.yBlock, 1) * rTile;
    const double programs =
        std::ceil(double(s.x) / c.xBlock) * (c.yBlock ? std::ceil(double(s.y) / c.yBlock) : 1.0);
    out.push_back(float(c.persistent));
    out.push_back(lg(c.xBlock));
    out.push_back(lg(std::max(c.yBlock, 1)));
    out.push_back(float(std::log2(rTile)));
    out.push_back(lg(c.numWarps));
    out.push_back(float(c.numStages));
    out.push_back(float(std::log2(programs / std::max(smCount, 1))));
    out.push_back(float(std::log2(tile / (double(c.numWarps) * kWarpThreads))));
}

const std::vector<std::string> &smallMOps() {
    static const std::vector<std::string> ops = {"attention", "bmm", "mm", "addmm"};
    return ops;
}

SmallMSite SmallMSite::fromJson(const nlohmann::json &j, const std::string &where) {
    if (!j.is_object())
        throw InvalidInput(fmt::format("{}: a small-M site must be a JSON object", where));
    SmallMSite s;
    s.op = j.value("op", std::string());
    const auto &ops = smallMOps();
    if (std::find(ops.begin(), ops.end(), s.op) == ops.end())
        throw InvalidInput(
            fmt::format("{}: \"op\" '{}' is not one of attention, bmm, mm, addmm", where, s.op));
    const auto dtype = parseDType(j.value("dtype", std::string()));
    if (!dtype)
        throw InvalidInput(
            fmt::format("{}: \"dtype\" must be one of {}", where, fmt::join(dtypeNameList(), ", ")));
    s.dtype = *dtype;
    s.batch = positive(j, "B", where, 1);
    s.m = positive(j, "M", where);
    s.n = positive(j, "N", where);
    s.k = positive(j, "K", where);
    s.kvGroup = int(positive(j, "kv_group", where, 1));
    s.concat = optionalFlag(j, "concat", where);
    s.storedCache = optionalFlag(j, "stored_cache", where);
    return s;
}

nlohmann::json SmallMSite::toJson() const {
    nlohmann::json j{{"op", op}, {"dtype", toString(dtype)}, {"B", batch},      {"M", m}, {"N", n},
                     {"K", k},   {"kv_group", kvGroup},      {"concat", concat}};
    if (storedCache)
        j["stored_cache"] = true;
    return j;
}

const std::vector<std::string> &siteFeatureNames() {
    static const std::vector<std::string> names = {"op_attention", "op_bmm",        "op_mm",  "op_addmm",
                                                   "itemsize",     "log2_b",        "log2_m", "log2_n",
                                                   "log2_k",       "log2_kv_group", "concat", "log2_bytes"};
    return names;
}

void siteFeatures(const SmallMSite &s, std::vector<float> &out) {
    for (const auto &op : smallMOps())
        out.push_back(float(s.op == op));
    out.push_back(float(elementBytes(s.dtype)));
    out.push_back(lg(double(s.batch)));
    out.push_back(lg(double(s.m)));
    out.push_back(lg(double(s.n)));
    out.push_back(lg(double(s.k)));
    out.push_back(lg(s.kvGroup));
    out.push_back(float(s.concat));
    // The operand the site streams: the GEMM's B (K x N a batch), the attention's keys and values.
    const double streamed =
        double(s.batch) * double(s.n) * double(s.k) * elementBytes(s.dtype) / std::max(s.kvGroup, 1);
    out.push_back(lg(streamed));
}

} // namespace diode
