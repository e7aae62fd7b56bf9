#include "diode/infer/decisionmodel.h"

#include "diode/infer/datafile.h"
#include "diode/infer/jsonlimits.h"
#include "diode/infer/problemjson.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>

namespace diode {

namespace {

// A configuration that failed to compile or run on a measured kernel is stored as this log2
// ratio (1,024x slower): the same configuration on a similar kernel is then never chosen.
constexpr float kFailedLog2Ratio = 10.0f;
// A configuration's distance to a measured one reads its block, warp and stage features
// (configFeatureNames' first six): the same launch on a similar kernel, whatever grid the
// kernel's size makes of it.
constexpr size_t kConfigMatchFeatures = 6;
// The prior a prediction is pulled towards, as a neighbour of this weight saying "the same as
// Inductor's default": a configuration no similar kernel measured is not chosen on a guess.
constexpr double kPriorWeight = 0.5;
// Kernels whose measured rows a prediction looks among (the nearest by kernel features).
constexpr int kCandidateKernels = 24;

double number(const nlohmann::json &j, const char *key, const std::string &where) {
    if (!j.contains(key) || !j.at(key).is_number() || !std::isfinite(j.at(key).get<double>()) ||
        j.at(key).get<double>() <= 0)
        throw InvalidInput(fmt::format("{}: \"{}\" must be a positive number of milliseconds", where, key));
    return j.at(key).get<double>();
}

std::vector<float> spreadScale(const std::vector<std::vector<float>> &rows, size_t width) {
    std::vector<float> scale(width, 0.0f);
    if (rows.empty())
        return scale;
    for (size_t f = 0; f < width; ++f) {
        double mean = 0, sq = 0;
        for (const auto &r : rows)
            mean += r[f];
        mean /= double(rows.size());
        for (const auto &r : rows)
            sq += (r[f] - mean) * (r[f] - mean);
        const double sd = std::sqrt(sq / double(rows.size()));
        scale[f] = sd > 1e-6 ? float(1.0 / sd) : 0.0f;
    }
    return scale;
}

double scaledDistance(const std::vector<float> &a, const std::vector<float> &b,
                      const std::vector<float> &scale) {
    double d = 0;
    for (size_t f = 0; f < scale.size(); ++f) {
        const double v = (double(a[f]) - b[f]) * scale[f];
        d += v * v;
    }
    return std::sqrt(d);
}

// Indices of the `k` rows nearest `query`, nearest first, with their distances.
std::vector<std::pair<double, size_t>> nearest(const std::vector<float> &query,
                                               const std::vector<std::vector<float>> &rows,
                                               const std::vector<float> &scale, int k) {
    std::vector<std::pair<double, size_t>> d;
    d.reserve(rows.size());
    for (size_t i = 0; i < rows.size(); ++i)
        d.emplace_back(scaledDistance(query, rows[i], scale), i);
    const size_t n = std::min(d.size(), size_t(std::max(k, 1)));
    std::partial_sort(d.begin(), d.begin() + n, d.end());
    d.resize(n);
    return d;
}

nlohmann::json floats(const std::vector<float> &v) {
    nlohmann::json a = nlohmann::json::array();
    for (float x : v)
        a.push_back(std::round(double(x) * 1e4) / 1e4);
    return a;
}

std::vector<float> readFloats(const nlohmann::json &j, size_t width, const std::string &where) {
    if (!j.is_array() || j.size() != width)
        throw InvalidInput(fmt::format("{}: expected an array of {} numbers", where, width));
    std::vector<float> v;
    v.reserve(width);
    for (const auto &x : j) {
        if (!x.is_number() || !std::isfinite(x.get<double>()))
            throw InvalidInput(fmt::format("{}: every value must be a finite number", where));
        v.push_back(x.get<float>());
    }
    return v;
}

void checkNames(const nlohmann::json &j, const std::vector<std::string> &names, const std::string &where) {
    if (j.value("features", nlohmann::json()) != nlohmann::json(names))
        throw InvalidInput(fmt::format("{}: its features are not the ones this build computes ({}); "
                                       "retrain it with this diode",
                                       where, fmt::join(names, ", ")));
}

int neighbours(const nlohmann::json &j, const std::string &where) {
    const auto &k = j.value("neighbours", nlohmann::json());
    if (!k.is_number_integer() || k.get<int>() < 1 || k.get<int>() > kMaxNeighbours)
        throw InvalidInput(
            fmt::format("{}: \"neighbours\" must be an integer from 1 to {}", where, kMaxNeighbours));
    return k.get<int>();
}

double checkedWeightPower(double p, const std::string &what) {
    if (!std::isfinite(p) || p < kMinWeightPower || p > kMaxWeightPower)
        throw InvalidInput(fmt::format("{} must be a number from {} to {}, not {}", what, kMinWeightPower,
                                       kMaxWeightPower, p));
    return p;
}

std::vector<float> kernelRow(const TritonKernelShape &s) {
    std::vector<float> f;
    kernelFeatures(s, f);
    return f;
}

std::vector<float> configRow(const TritonKernelShape &s, const TritonConfig &c, int smCount) {
    std::vector<float> f;
    configFeatures(s, c, smCount, f);
    return f;
}

std::vector<float> siteRow(const SmallMSite &s) {
    std::vector<float> f;
    siteFeatures(s, f);
    return f;
}

// The indices of the rows `marked` says, as a package stores a set of rows.
nlohmann::json markedRows(const std::vector<bool> &marked) {
    nlohmann::json out = nlohmann::json::array();
    for (size_t i = 0; i < marked.size(); ++i)
        if (marked[i])
            out.push_back(i);
    return out;
}

// A set of rows stored as their indices (`key`, absent: none) of `rows` rows; InvalidInput where it is
// not an array of such indices.
std::vector<bool> readMarkedRows(const nlohmann::json &j, const char *key, size_t rows,
                                 const std::string &where) {
    std::vector<bool> marked(rows, false);
    const auto &indices = j.value(key, nlohmann::json::array());
    if (!indices.is_array())
        throw InvalidInput(fmt::format("{}: \"{}\" must be an array of row indices", where, key));
    for (const auto &i : indices) {
        if (!i.is_number_unsigned() || i.get<size_t>() >= rows)
            throw InvalidInput(fmt::format("{}: \"{}\" holds {}, not the index of one of its {} sites", where,
                                           key, i.dump(), rows));
        marked[i.get<size_t>()] = true;
    }
    return marked;
}

// Whether two site rows are of one op: its one-hot features lead a row (siteFeatures).
bool sameOp(const std::vector<float> &a, const std::vector<float> &b) {
    return std::equal(a.begin(), a.begin() + smallMOps().size(), b.begin());
}

std::string textField(const nlohmann::json &j, const char *key, const std::string &where) {
    const auto it = j.find(key);
    if (it == j.end())
        return {};
    if (!it->is_string())
        throw InvalidInput(fmt::format("{}: \"{}\" must be a string", where, key));
    return it->get<std::string>();
}

// An optional count (0 when absent); `what` names what is counted in the message.
int countField(const nlohmann::json &j, const char *key, const char *what, const std::string &where) {
    const auto it = j.find(key);
    if (it == j.end())
        return 0;
    if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > (1 << 20))
        throw InvalidInput(fmt::format("{}: \"{}\" must be a count of {}", where, key, what));
    return it->get<int>();
}

double secondsField(const nlohmann::json &j, const std::string &where) {
    const auto it = j.find("seconds");
    if (it == j.end())
        return 0;
    if (!it->is_number() || !(it->get<double>() >= 0) || !std::isfinite(it->get<double>()))
        throw InvalidInput(fmt::format("{}: \"seconds\" must be a number >= 0", where));
    return it->get<double>();
}

std::optional<double> optionalMs(const nlohmann::json &j, const char *key, const std::string &where) {
    if (!j.contains(key))
        return std::nullopt;
    return number(j, key, where);
}

void readDecisionLine(const std::string &line, const std::string &where, DecisionData &data) {
    const nlohmann::json j = parseJsonBounded(line, where, kProblemJsonLimits);
    if (!j.is_object())
        throw InvalidInput(fmt::format("{}: a line must be a JSON object", where));
    const std::string kind = textField(j, "kind", where);
    if (!j.contains("kind"))
        throw InvalidInput(
            fmt::format("{}: not a kernel or site line: it has no \"kind\" (GEMM problem lines have "
                        "none); diode sweep-kernels writes kernel and site lines",
                        where));
    if (!isDecisionLine(j))
        throw InvalidInput(fmt::format("{}: \"kind\" must be \"kernel\" or \"site\", got '{}'", where, kind));
    const std::string family = textField(j, "family", where), name = textField(j, "name", where);
    const std::string gpu = textField(j, "gpu", where);
    const int sms = countField(j, "sm_count", "multiprocessors", where);
    const double seconds = secondsField(j, where);
    if (j.contains("skipped")) { // a case the sweep could not measure, with its reason
        data.skipped.push_back({kind, family, name, gpu, sms, textField(j, "skipped", where), seconds});
        return;
    }
    if (kind == "kernel") {
        MeasuredKernel k;
        k.family = family, k.name = name, k.gpu = gpu, k.smCount = sms, k.seconds = seconds;
        k.shape = TritonKernelShape::fromJson(j.value("shape", nlohmann::json()), where + ": shape");
        k.defaultMs = number(j, "default_ms", where);
        k.grid = countField(j, "grid", "configurations", where);
        const auto &configs = j.value("configs", nlohmann::json::array());
        if (!configs.is_array())
            throw InvalidInput(fmt::format("{}: \"configs\" must be an array", where));
        for (size_t c = 0; c < configs.size(); ++c) {
            const std::string at = fmt::format("{}: configs[{}]", where, c);
            if (!configs[c].is_object())
                throw InvalidInput(fmt::format("{}: must be an object with \"config\"", at));
            k.configs.push_back(TritonConfig::fromJson(configs[c].value("config", nlohmann::json()), at));
            if (configs[c].contains("time_ms") && configs[c]["time_ms"].is_number())
                k.timesMs.push_back(number(configs[c], "time_ms", at));
            else
                k.timesMs.push_back(std::nullopt);
            k.errors.push_back(textField(configs[c], "error", at));
        }
        data.kernels.push_back(std::move(k));
    } else {
        MeasuredSite s;
        s.family = family, s.name = name, s.gpu = gpu, s.smCount = sms, s.seconds = seconds;
        s.site = SmallMSite::fromJson(j.value("site", nlohmann::json()), where + ": site");
        s.libraryMs = number(j, "library_ms", where);
        s.decomposedMs = number(j, "decomposed_ms", where);
        s.decomposedDefaultMs = optionalMs(j, "decomposed_default_ms", where);
        s.decomposedTunedMs = optionalMs(j, "decomposed_tuned_ms", where);
        s.configsFrom = textField(j, "configs_from", where);
        s.libraryOverCache = optionalFlag(j, "library_over_cache", where);
        data.sites.push_back(std::move(s));
    }
}

// The fields every line has; gpu and sm_count only where the sweep knew them.
nlohmann::json lineHead(const std::string &kind, const std::string &name, const std::string &family,
                        const std::string &gpu, int smCount, double seconds) {
    nlohmann::json j{{"kind", kind}, {"name", name}, {"family", family}};
    if (!gpu.empty())
        j["gpu"] = gpu;
    if (smCount)
        j["sm_count"] = smCount;
    j["seconds"] = seconds;
    return j;
}

} // namespace

bool isDecisionLine(const nlohmann::json &j) {
    const auto it = j.is_object() ? j.find("kind") : j.end();
    return it != j.end() && it->is_string() && (*it == "kernel" || *it == "site");
}

DecisionData readDecisionData(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw InvalidInput(fmt::format("{}: cannot be read", path));
    DecisionData data;
    forEachDataLine(in, path, [&](int n, const std::string &line) {
        readDecisionLine(line, fmt::format("{}:{}", path, n), data);
    });
    return data;
}

DecisionData readDecisionLines(std::string_view text, const std::string &source) {
    DecisionData data;
    forEachDataLine(text, source, [&](int n, const std::string &line) {
        readDecisionLine(line, fmt::format("{}:{}", source, n), data);
    });
    return data;
}

nlohmann::json toJson(const MeasuredKernel &k) {
    nlohmann::json j = lineHead("kernel", k.name, k.family, k.gpu, k.smCount, k.seconds);
    j["shape"] = k.shape.toJson();
    j["default_ms"] = k.defaultMs;
    nlohmann::json configs = nlohmann::json::array();
    for (size_t c = 0; c < k.configs.size(); ++c) {
        nlohmann::json e{{"config", k.configs[c].toJson()}};
        if (k.timesMs[c])
            e["time_ms"] = *k.timesMs[c];
        if (c < k.errors.size() && !k.errors[c].empty())
            e["error"] = k.errors[c];
        configs.push_back(std::move(e));
    }
    j["configs"] = std::move(configs);
    if (k.grid)
        j["grid"] = k.grid;
    return j;
}

nlohmann::json toJson(const MeasuredSite &s) {
    nlohmann::json j = lineHead("site", s.name, s.family, s.gpu, s.smCount, s.seconds);
    j["site"] = s.site.toJson();
    j["library_ms"] = s.libraryMs;
    if (s.decomposedDefaultMs)
        j["decomposed_default_ms"] = *s.decomposedDefaultMs;
    if (s.decomposedTunedMs)
        j["decomposed_tuned_ms"] = *s.decomposedTunedMs;
    j["decomposed_ms"] = s.decomposedMs;
    if (!s.configsFrom.empty())
        j["configs_from"] = s.configsFrom;
    if (s.libraryOverCache)
        j["library_over_cache"] = true;
    return j;
}

nlohmann::json toJson(const SkippedCase &c) {
    nlohmann::json j = lineHead(c.kind, c.name, c.family, c.gpu, c.smCount, c.seconds);
    j["skipped"] = c.reason;
    return j;
}

void DecisionData::append(DecisionData &&more) {
    kernels.insert(kernels.end(), std::make_move_iterator(more.kernels.begin()),
                   std::make_move_iterator(more.kernels.end()));
    sites.insert(sites.end(), std::make_move_iterator(more.sites.begin()),
                 std::make_move_iterator(more.sites.end()));
    skipped.insert(skipped.end(), std::make_move_iterator(more.skipped.begin()),
                   std::make_move_iterator(more.skipped.end()));
}

DecisionData readDecisionData(const std::vector<std::string> &paths) {
    DecisionData data;
    for (const auto &path : paths)
        data.append(readDecisionData(path));
    return data;
}

namespace {

bool inModel(const MeasuredKernel &k) {
    return k.defaultMs > 0 &&
           std::count_if(k.timesMs.begin(), k.timesMs.end(), [](auto t) { return bool(t); }) >= 2;
}

// Whether a line holds every configuration its sweep tried: the GPU's memory stops some configurations of
// the largest kernels when workers share it, and those are left out of the line, not measured slow.
bool complete(const MeasuredKernel &k) {
    return k.grid == 0 || int(k.configs.size()) >= k.grid;
}

// KernelConfigModel::extraConfigs' rule over the kernels a model is built from.
std::vector<TritonConfig> measuredEverywhere(const std::vector<MeasuredKernel> &kernels) {
    std::vector<const MeasuredKernel *> measured;
    std::vector<std::vector<TritonConfig>> grids;
    std::vector<TritonConfig> beyond;
    for (const auto &k : kernels)
        if (inModel(k)) {
            measured.push_back(&k);
            grids.push_back(candidateConfigs(k.shape));
            const auto portfolio = portfolioOf(grids.back());
            for (const auto &c : k.configs)
                if (!holds(portfolio, c) && !holds(beyond, c))
                    beyond.push_back(c);
        }
    if (beyond.empty())
        return {};
    std::vector<int> on(beyond.size(), 0);
    std::vector<bool> missed(beyond.size(), false);
    for (size_t i = 0; i < measured.size(); ++i) {
        const MeasuredKernel &k = *measured[i];
        for (size_t c = 0; c < beyond.size(); ++c) {
            if (missed[c] || !holds(grids[i], beyond[c]))
                continue;
            if (holds(k.configs, beyond[c]))
                ++on[c];
            else if (complete(k))
                missed[c] = true;
        }
    }
    std::vector<TritonConfig> out;
    for (size_t c = 0; c < beyond.size(); ++c)
        if (!missed[c] && on[c] >= KernelConfigModel::kMinExtraKernels)
            out.push_back(beyond[c]);
    return out;
}

} // namespace

std::vector<TritonConfig> fastestBeyondPortfolio(const std::vector<MeasuredKernel> &kernels) {
    std::vector<TritonConfig> out;
    for (const auto &k : kernels) {
        if (!inModel(k))
            continue;
        std::optional<size_t> best;
        for (size_t c = 0; c < k.configs.size(); ++c)
            if (k.timesMs[c] && (!best || *k.timesMs[c] < *k.timesMs[*best]))
                best = c;
        if (best && !holds(portfolioConfigs(k.shape), k.configs[*best]) && !holds(out, k.configs[*best]))
            out.push_back(k.configs[*best]);
    }
    return out;
}

KernelConfigModel KernelConfigModel::build(const std::vector<MeasuredKernel> &kernels, int k,
                                           double weightPower) {
    if (k < 1 || k > kMaxNeighbours)
        throw InvalidInput(
            fmt::format("a kernel-config model averages 1 to {} measured rows, not {}", kMaxNeighbours, k));
    KernelConfigModel m;
    m.m_neighbours = k;
    m.m_weightPower = checkedWeightPower(weightPower, "a kernel-config model's weight power");
    for (const auto &mk : kernels)
        if (mk.smCount > 0) {
            m.m_smCount = mk.smCount;
            break;
        }
    std::vector<std::vector<float>> rows;
    for (const auto &mk : kernels) {
        if (!inModel(mk))
            continue;
        Kernel kernel;
        kernel.features = kernelRow(mk.shape);
        for (size_t c = 0; c < mk.configs.size(); ++c) {
            kernel.configs.push_back(configRow(mk.shape, mk.configs[c], m.m_smCount));
            kernel.log2Ratio.push_back(mk.timesMs[c] ? float(std::log2(*mk.timesMs[c] / mk.defaultMs))
                                                     : kFailedLog2Ratio);
        }
        rows.push_back(kernel.features);
        m.m_kernels.push_back(std::move(kernel));
    }
    m.m_scale = spreadScale(rows, kernelFeatureNames().size());
    m.m_extra = measuredEverywhere(kernels);
    return m;
}

std::vector<double> KernelConfigModel::predictLog2Ratio(const TritonKernelShape &shape,
                                                        const std::vector<TritonConfig> &configs,
                                                        std::vector<bool> *triedNearby) const {
    std::vector<double> out(configs.size(), 0.0);
    if (triedNearby)
        triedNearby->assign(configs.size(), false);
    if (m_kernels.empty())
        return out;
    const std::vector<float> q = kernelRow(shape);
    std::vector<std::vector<float>> rows;
    rows.reserve(m_kernels.size());
    for (const auto &k : m_kernels)
        rows.push_back(k.features);
    // The measured rows of the nearest kernels are the only ones near enough to count: a row's
    // distance is its kernel's and its configuration's together.
    const auto near = nearest(q, rows, m_scale, kCandidateKernels);
    std::vector<std::pair<double, float>> dist;
    for (size_t c = 0; c < configs.size(); ++c) {
        const std::vector<float> cf = configRow(shape, configs[c], m_smCount);
        dist.clear();
        for (const auto &[dk, i] : near) {
            const Kernel &k = m_kernels[i];
            for (size_t j = 0; j < k.configs.size(); ++j) {
                double dc = 0;
                for (size_t f = 0; f < kConfigMatchFeatures; ++f)
                    dc += (double(cf[f]) - k.configs[j][f]) * (double(cf[f]) - k.configs[j][f]);
                if (triedNearby && dc == 0)
                    (*triedNearby)[c] = true;
                dist.emplace_back(std::sqrt(dk * dk + dc), k.log2Ratio[j]);
            }
        }
        const size_t n = std::min(dist.size(), size_t(m_neighbours));
        std::partial_sort(dist.begin(), dist.begin() + n, dist.end(),
                          [](const auto &a, const auto &b) { return a.first < b.first; });
        double sum = 0, weight = kPriorWeight;
        for (size_t j = 0; j < n; ++j) {
            const double w = std::pow(0.25 + dist[j].first, -m_weightPower);
            sum += w * dist[j].second;
            weight += w;
        }
        out[c] = sum / weight;
    }
    return out;
}

std::string KernelConfigModel::unmeasuredFeature(const TritonKernelShape &shape) const {
    if (m_kernels.empty())
        return {};
    const std::vector<float> q = kernelRow(shape);
    std::string differs;
    for (size_t f = 0; f < m_scale.size(); ++f)
        if (m_scale[f] == 0.0f && std::abs(q[f] - m_kernels.front().features[f]) > 1e-4f) {
            // Named by what the kernel has (its layout, of a one-hot pair), not by what it lacks.
            if (q[f] != 0.0f)
                return kernelFeatureNames()[f];
            if (differs.empty())
                differs = kernelFeatureNames()[f];
        }
    return differs;
}

nlohmann::json KernelConfigModel::toJson() const {
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto &k : m_kernels) {
        nlohmann::json configs = nlohmann::json::array();
        for (size_t j = 0; j < k.configs.size(); ++j) {
            std::vector<float> row = k.configs[j];
            row.push_back(k.log2Ratio[j]);
            configs.push_back(floats(row));
        }
        kernels.push_back({{"features", floats(k.features)}, {"configs", configs}});
    }
    nlohmann::json j{{"version", kVersion},
                     {"features", kernelFeatureNames()},
                     {"config_features", configFeatureNames()},
                     {"neighbours", m_neighbours},
                     {"weight_power", m_weightPower},
                     {"sm_count", m_smCount},
                     {"scale", floats(m_scale)},
                     {"kernels", kernels}};
    if (!m_extra.empty()) {
        j["extra_configs"] = nlohmann::json::array();
        for (const auto &c : m_extra)
            j["extra_configs"].push_back(c.toJson());
    }
    return j;
}

KernelConfigModel KernelConfigModel::fromJson(const nlohmann::json &j) {
    const std::string where = "decisions.kernel_config";
    if (!j.is_object() || j.value("version", 0) != kVersion)
        throw InvalidInput(fmt::format("{}: version {} is not the {} this build reads", where,
                                       j.is_object() ? j.value("version", nlohmann::json()).dump() : "?",
                                       kVersion));
    checkNames(j, kernelFeatureNames(), where);
    if (j.value("config_features", nlohmann::json()) != nlohmann::json(configFeatureNames()))
        throw InvalidInput(
            fmt::format("{}: its config features are not the ones this build computes", where));
    KernelConfigModel m;
    m.m_neighbours = neighbours(j, where);
    const auto &power = j.value("weight_power", nlohmann::json(kUnwrittenWeightPower));
    if (!power.is_number())
        throw InvalidInput(fmt::format("{}: \"weight_power\" must be a number from {} to {}", where,
                                       kMinWeightPower, kMaxWeightPower));
    m.m_weightPower = checkedWeightPower(power.get<double>(), where + ".weight_power");
    m.m_smCount = j.value("sm_count", 132);
    const size_t kw = kernelFeatureNames().size(), cw = configFeatureNames().size() + 1;
    m.m_scale = readFloats(j.value("scale", nlohmann::json()), kw, where + ".scale");
    const auto &kernels = j.value("kernels", nlohmann::json());
    if (!kernels.is_array())
        throw InvalidInput(fmt::format("{}: \"kernels\" must be an array", where));
    for (size_t i = 0; i < kernels.size(); ++i) {
        const std::string at = fmt::format("{}.kernels[{}]", where, i);
        Kernel k;
        k.features = readFloats(kernels[i].value("features", nlohmann::json()), kw, at + ".features");
        const auto &configs = kernels[i].value("configs", nlohmann::json());
        if (!configs.is_array() || configs.empty())
            throw InvalidInput(fmt::format("{}.configs: must be a non-empty array", at));
        for (size_t c = 0; c < configs.size(); ++c) {
            std::vector<float> row = readFloats(configs[c], cw, fmt::format("{}.configs[{}]", at, c));
            k.log2Ratio.push_back(row.back());
            row.pop_back();
            k.configs.push_back(std::move(row));
        }
        m.m_kernels.push_back(std::move(k));
    }
    const auto &extra = j.value("extra_configs", nlohmann::json::array());
    if (!extra.is_array())
        throw InvalidInput(fmt::format("{}: \"extra_configs\" must be an array of kernel configs", where));
    for (size_t i = 0; i < extra.size(); ++i)
        m.m_extra.push_back(TritonConfig::fromJson(extra[i], fmt::format("{}.extra_configs[{}]", where, i)));
    return m;
}

SmallMFormModel SmallMFormModel::build(const std::vector<MeasuredSite> &sites, int k,
                                       const std::vector<std::string> &ops) {
    SmallMFormModel m;
    m.m_neighbours = k;
    auto usable = [&](const MeasuredSite &s) {
        return s.libraryMs > 0 && s.decomposedMs > 0 &&
               (ops.empty() || std::find(ops.begin(), ops.end(), s.site.op) != ops.end());
    };
    m.m_libraryOverCache = std::any_of(sites.begin(), sites.end(), [&](const auto &s) {
        return usable(s) && s.libraryOverCache && readsCacheAsStored(s.site);
    });
    for (const auto &s : sites) {
        if (!usable(s) || !m.timesItsLibraryForm(s))
            continue; // a library time of another library form describes another decision
        if (std::find(m.m_ops.begin(), m.m_ops.end(), s.site.op) == m.m_ops.end())
            m.m_ops.push_back(s.site.op);
        m.m_rows.push_back(siteRow(s.site));
        m.m_log2Ratio.push_back(float(std::log2(s.decomposedMs / s.libraryMs)));
        m.m_inStep.push_back(s.inStep());
        m.m_overCache.push_back(s.libraryOverCache);
    }
    m.m_scale = spreadScale(m.m_rows, siteFeatureNames().size());
    // The sites measured alone that a site measured inside a step describes again are left out.
    SmallMFormModel kept = m;
    kept.m_rows.clear(), kept.m_log2Ratio.clear(), kept.m_inStep.clear(), kept.m_overCache.clear();
    for (size_t i = 0; i < m.m_rows.size(); ++i) {
        bool superseded = false;
        for (size_t j = 0; j < m.m_rows.size() && !m.m_inStep[i] && !superseded; ++j)
            superseded = m.m_inStep[j] && sameOp(m.m_rows[i], m.m_rows[j]) &&
                         scaledDistance(m.m_rows[i], m.m_rows[j], m.m_scale) < kSameSite;
        if (!superseded) {
            kept.m_rows.push_back(m.m_rows[i]);
            kept.m_log2Ratio.push_back(m.m_log2Ratio[i]);
            kept.m_inStep.push_back(m.m_inStep[i]);
            kept.m_overCache.push_back(m.m_overCache[i]);
        }
    }
    return kept;
}

bool readsCacheAsStored(const SmallMSite &site) {
    return site.op == "attention" && site.kvGroup > 1 && site.storedCache;
}

bool SmallMFormModel::libraryReadsCacheAsStored(const SmallMSite &site) const {
    return m_libraryOverCache && readsCacheAsStored(site);
}

bool SmallMFormModel::timesItsLibraryForm(const MeasuredSite &s) const {
    return s.libraryOverCache == libraryReadsCacheAsStored(s.site);
}

bool SmallMFormModel::covers(const std::string &op) const {
    return std::find(m_ops.begin(), m_ops.end(), op) != m_ops.end();
}

double SmallMFormModel::predictLog2Ratio(const SmallMSite &site) const {
    if (m_rows.empty() || !covers(site.op))
        return 0.0;
    const std::vector<float> query = siteRow(site);
    // The nearest rows among those timed with the library form the site's decision writes: a ratio
    // to another library form is another decision's.
    const bool overCache = libraryReadsCacheAsStored(site);
    auto nearestWhere = [&](auto &&keep) {
        std::vector<std::vector<float>> rows;
        std::vector<size_t> index;
        for (size_t i = 0; i < m_rows.size(); ++i)
            if (m_overCache[i] == overCache && keep(i))
                rows.push_back(m_rows[i]), index.push_back(i);
        auto near = nearest(query, rows, m_scale, m_neighbours);
        for (auto &n : near)
            n.second = index[n.second];
        return near;
    };
    auto near = nearestWhere([](size_t) { return true; });
    if (near.empty())
        return 0.0;
    // Sites of its op measured inside steps, where one is among its nearest, predict it alone (their
    // nearest); the nearest of them, within kSameSite, is the site itself measured there.
    auto fromStep = [&](size_t i) { return m_inStep[i] && sameOp(query, m_rows[i]); };
    if (std::any_of(near.begin(), near.end(), [&](const auto &n) { return fromStep(n.second); })) {
        near = nearestWhere(fromStep);
        // Measured there (in several steps, perhaps): the mean of those measurements.
        double same = 0;
        int count = 0;
        for (const auto &[d, i] : near)
            if (d < kSameSite)
                same += m_log2Ratio[i], ++count;
        if (count)
            return same / count;
    }
    double sum = 0, weight = 0;
    for (const auto &[d, i] : near) {
        const double w = 1.0 / (0.25 + d);
        sum += w * m_log2Ratio[i];
        weight += w;
    }
    return sum / weight;
}

nlohmann::json SmallMFormModel::toJson() const {
    nlohmann::json rows = nlohmann::json::array();
    for (size_t i = 0; i < m_rows.size(); ++i) {
        std::vector<float> r = m_rows[i];
        r.push_back(m_log2Ratio[i]);
        rows.push_back(floats(r));
    }
    nlohmann::json j{{"version", kVersion}, {"features", siteFeatureNames()}, {"neighbours", m_neighbours},
                     {"ops", m_ops},        {"scale", floats(m_scale)},       {"sites", rows}};
    // The rows measured inside a model step (absent: none, as in packages older than them).
    if (auto inStep = markedRows(m_inStep); !inStep.empty())
        j["in_step"] = std::move(inStep);
    if (m_libraryOverCache) { // absent: the attention as written, as in packages older than the field
        j["library_over_cache"] = true;
        j["over_cache"] = markedRows(m_overCache); // the rows timed so
    }
    return j;
}

SmallMFormModel SmallMFormModel::fromJson(const nlohmann::json &j) {
    const std::string where = "decisions.small_m_form";
    if (!j.is_object() || j.value("version", 0) != kVersion)
        throw InvalidInput(fmt::format("{}: not a version {} section", where, kVersion));
    checkNames(j, siteFeatureNames(), where);
    SmallMFormModel m;
    m.m_neighbours = neighbours(j, where);
    const auto &ops = j.value("ops", nlohmann::json());
    if (!ops.is_array())
        throw InvalidInput(fmt::format("{}: \"ops\" must be an array of op names", where));
    for (const auto &op : ops) {
        const auto &known = smallMOps();
        if (!op.is_string() || std::find(known.begin(), known.end(), op.get<std::string>()) == known.end())
            throw InvalidInput(
                fmt::format("{}: \"ops\" holds {}, not one of attention, bmm, mm, addmm", where, op.dump()));
        m.m_ops.push_back(op.get<std::string>());
    }
    const size_t w = siteFeatureNames().size();
    m.m_scale = readFloats(j.value("scale", nlohmann::json()), w, where + ".scale");
    const auto &rows = j.value("sites", nlohmann::json());
    if (!rows.is_array())
        throw InvalidInput(fmt::format("{}: \"sites\" must be an array", where));
    for (size_t i = 0; i < rows.size(); ++i) {
        std::vector<float> r = readFloats(rows[i], w + 1, fmt::format("{}.sites[{}]", where, i));
        m.m_log2Ratio.push_back(r.back());
        r.pop_back();
        m.m_rows.push_back(std::move(r));
    }
    m.m_inStep = readMarkedRows(j, "in_step", m.m_rows.size(), where);
    m.m_libraryOverCache = optionalFlag(j, "library_over_cache", where);
    m.m_overCache = readMarkedRows(j, "over_cache", m.m_rows.size(), where);
    if (!m.m_libraryOverCache &&
        std::find(m.m_overCache.begin(), m.m_overCache.end(), true) != m.m_overCache.end())
        throw InvalidInput(
            fmt::format("{}: \"over_cache\" marks sites without \"library_over_cache\" true", where));
    return m;
}

KernelConfigDecision decideKernelConfig(const KernelConfigModel &model, const TritonKernelShape &shape,
                                        double margin) {
    KernelConfigDecision d;
    const std::vector<TritonConfig> configs = decisionCandidates(shape, model.extraConfigs());
    d.candidates = int(configs.size());
    if (configs.empty()) {
        d.reason = "no_candidates";
        return d;
    }
    d.unmeasured = model.unmeasuredFeature(shape);
    if (!d.unmeasured.empty()) {
        d.reason = "feature_not_measured";
        return d;
    }
    // Only a configuration a similar kernel was measured with: the prediction of any other is a guess
    // between measured neighbours, and the arg-min of guesses over a grid finds the worst of them.
    std::vector<bool> tried;
    const std::vector<double> pred = model.predictLog2Ratio(shape, configs, &tried);
    size_t best = configs.size();
    for (size_t c = 0; c < configs.size(); ++c)
        if (tried[c] && (best == configs.size() || pred[c] < pred[best]))
            best = c;
    if (best == configs.size()) {
        d.reason = "none_tried_nearby";
        return d;
    }
    d.predictedRatio = std::exp2(pred[best]);
    // Another configuration replaces the default where it is predicted faster by the margin. A default
    // Inductor tunes at the kernel's first run is not free: the benchmark runs in every compile that
    // misses Inductor's autotune cache, and the default's measured time is the best of that benchmark.
    // One predicted within the margin of it replaces it too, so that fewer kernels are benchmarked.
    const bool faster = d.predictedRatio * (1.0 + margin) < 1.0;
    if (faster || (shape.defaultTuned && d.predictedRatio < 1.0 + margin)) {
        d.fixed = true;
        d.config = configs[best];
        d.reason = faster ? "predicted_faster" : "replaces_first_run_tuning";
    } else {
        d.reason = "default_predicted_best";
    }
    return d;
}

bool materialisesOperand(const SmallMSite &site) {
    // A projection's input is often computed (SwiGLU's silu(gate) * up before a down projection, a
    // norm before the next): fused into the multiply-and-sum, every program of it computes the whole
    // input again. Written out once (Inductor's own decomposition of memory-bound mm does the same,
    // fx_passes/decompose_mem_bound_mm.py), the batch-1 Llama decode step ran 1.5 % faster on an H200;
    // bmm and attention operands (scores, probabilities, a concatenated cache) stay fused, where
    // writing them out measured no faster (docs/MODELS.md, "Kernel configs and small-M forms").
    return site.op == "mm" || site.op == "addmm";
}

FormDecision decideForm(const SmallMFormModel &model, const SmallMSite &site, double margin) {
    FormDecision d;
    d.materialiseOperand = materialisesOperand(site);
    d.libraryOverCache = model.covers(site.op) && model.libraryReadsCacheAsStored(site);
    if (!model.covers(site.op)) {
        d.reason = "op_not_measured";
        return d;
    }
    d.predictedRatio = std::exp2(model.predictLog2Ratio(site));
    d.decompose = model.sites() > 0 && d.predictedRatio * (1.0 + margin) < 1.0;
    d.reason = d.decompose ? "decomposed_predicted_faster" : "library_predicted_faster";
    return d;
}

DecisionModels DecisionModels::fromManifest(const nlohmann::json &manifest) {
    DecisionModels m;
    if (!manifest.is_object() || !manifest.contains("decisions"))
        return m;
    const auto &d = manifest.at("decisions");
    if (!d.is_object())
        throw InvalidInput("decisions: must be a JSON object");
    auto margin = [&](const nlohmann::json &section, const char *name, double fallback) {
        if (!section.contains("margin"))
            return fallback;
        const auto &v = section.at("margin");
        if (!v.is_number() || !(v.get<double>() >= 0.0) || v.get<double>() > 1.0)
            throw InvalidInput(fmt::format("decisions.{}.margin: must be a number from 0 to 1", name));
        return v.get<double>();
    };
    if (d.contains("kernel_config")) {
        m.kernelConfig = KernelConfigModel::fromJson(d.at("kernel_config"));
        m.kernelConfigMargin = margin(d.at("kernel_config"), "kernel_config", kDefaultKernelConfigMargin);
    }
    if (d.contains("small_m_form")) {
        m.smallMForm = SmallMFormModel::fromJson(d.at("small_m_form"));
        m.formMargin = margin(d.at("small_m_form"), "small_m_form", kDefaultFormMargin);
    }
    return m;
}

} // namespace diode
