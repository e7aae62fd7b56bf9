#include "decisionstore.h"

#include "diode/store/sqlstatement.h"

#include <fmt/format.h>

#include <map>
#include <optional>

namespace diode {

namespace {

using json = nlohmann::json;

std::string kernelKey(const std::string &gpu, const std::string &name) {
    return fmt::format("kernel\x1f{}\x1f{}", gpu, name);
}
std::string siteKey(const std::string &gpu, const std::string &name, const std::string &configsFrom) {
    return fmt::format("site\x1f{}\x1f{}\x1f{}", gpu, name, configsFrom);
}
std::string keyOf(const SkippedCase &c) {
    return c.kind == "kernel" ? kernelKey(c.gpu, c.name) : siteKey(c.gpu, c.name, "");
}

void bindOptional(SqlStatement &s, int i, const std::optional<double> &v) {
    if (v)
        s.bind(i, *v);
    else
        s.bindNull(i);
}

json storedJson(const SqlStatement &s, int col, const std::string &where) {
    json j = json::parse(s.text(col), nullptr, false);
    if (j.is_discarded())
        throw StoreError(fmt::format("{}: not JSON", where));
    return j;
}

std::optional<double> optionalReal(const SqlStatement &s, int col) {
    return s.isNull(col) ? std::nullopt : std::optional<double>(s.real(col));
}

// One of `k` (measured) and `skipped` is given.
void putKernel(Store &store, const MeasuredKernel *k, const SkippedCase *skipped, const std::string &source) {
    SqlStatement s(
        store,
        "INSERT INTO measured_kernels(gpu, name, family, sm_count, shape_json, default_ms, grid, skipped, "
        "seconds, source, imported_at) VALUES(?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(gpu, name) DO UPDATE "
        "SET family=excluded.family, sm_count=excluded.sm_count, shape_json=excluded.shape_json, "
        "default_ms=excluded.default_ms, grid=excluded.grid, skipped=excluded.skipped, "
        "seconds=excluded.seconds, source=excluded.source, imported_at=excluded.imported_at RETURNING id",
        SqlStatement::Cached{});
    if (k) {
        s.bind(1, k->gpu).bind(2, k->name).bind(3, k->family).bind(4, k->smCount);
        s.bind(5, k->shape.toJson().dump())
            .bind(6, k->defaultMs)
            .bind(7, k->grid)
            .bindNull(8)
            .bind(9, k->seconds);
    } else {
        s.bind(1, skipped->gpu).bind(2, skipped->name).bind(3, skipped->family).bind(4, skipped->smCount);
        s.bindNull(5).bindNull(6).bind(7, 0).bind(8, skipped->reason).bind(9, skipped->seconds);
    }
    s.bind(10, source).bind(11, utcNow());
    const std::string name = k ? k->name : skipped->name;
    s.stepRow(fmt::format("cannot store kernel line '{}'", name));
    const int64_t id = s.integer(0);
    while (s.step()) {
    }
    SqlStatement clear(store, "DELETE FROM measured_kernel_configs WHERE kernel_id=?",
                       SqlStatement::Cached{});
    clear.bind(1, id).run(fmt::format("cannot replace kernel line '{}'", name));
    for (size_t c = 0; k && c < k->configs.size(); ++c) {
        SqlStatement ins(
            store,
            "INSERT INTO measured_kernel_configs(kernel_id, position, config_json, time_ms, error) "
            "VALUES(?,?,?,?,?)",
            SqlStatement::Cached{});
        ins.bind(1, id).bind(2, int64_t(c)).bind(3, k->configs[c].toJson().dump());
        bindOptional(ins, 4, k->timesMs[c]);
        if (c < k->errors.size() && !k->errors[c].empty())
            ins.bind(5, k->errors[c]);
        ins.run(fmt::format("cannot store kernel line '{}'", name));
    }
}

void putSite(Store &store, const MeasuredSite *m, const SkippedCase *skipped, const std::string &source) {
    SqlStatement s(
        store,
        "INSERT INTO measured_sites(gpu, name, configs_from, family, sm_count, site_json, library_ms, "
        "decomposed_default_ms, decomposed_tuned_ms, decomposed_ms, skipped, seconds, source, "
        "imported_at, library_over_cache) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(gpu, name, "
        "configs_from) DO "
        "UPDATE SET family=excluded.family, sm_count=excluded.sm_count, site_json=excluded.site_json, "
        "library_ms=excluded.library_ms, decomposed_default_ms=excluded.decomposed_default_ms, "
        "decomposed_tuned_ms=excluded.decomposed_tuned_ms, decomposed_ms=excluded.decomposed_ms, "
        "skipped=excluded.skipped, seconds=excluded.seconds, source=excluded.source, "
        "imported_at=excluded.imported_at, library_over_cache=excluded.library_over_cache",
        SqlStatement::Cached{});
    if (m) {
        s.bind(1, m->gpu).bind(2, m->name).bind(3, m->configsFrom).bind(4, m->family).bind(5, m->smCount);
        s.bind(6, m->site.toJson().dump()).bind(7, m->libraryMs);
        bindOptional(s, 8, m->decomposedDefaultMs);
        bindOptional(s, 9, m->decomposedTunedMs);
        s.bind(10, m->decomposedMs).bindNull(11).bind(12, m->seconds);
    } else {
        s.bind(1, skipped->gpu).bind(2, skipped->name).bind(3, "").bind(4, skipped->family);
        s.bind(5, skipped->smCount).bindNull(6).bindNull(7).bindNull(8).bindNull(9).bindNull(10);
        s.bind(11, skipped->reason).bind(12, skipped->seconds);
    }
    s.bind(13, source).bind(14, utcNow()).bind(15, int64_t(m && m->libraryOverCache));
    s.run(fmt::format("cannot store site line '{}'", m ? m->name : skipped->name));
}

} // namespace

std::map<std::string, MeasuredCase> measuredCases(const DecisionData &d) {
    std::map<std::string, MeasuredCase> out;
    for (const auto &k : d.kernels)
        out[kernelKey(k.gpu, k.name)] = {toJson(k).dump(), fmt::format("kernel '{}' of {}", k.name, k.gpu)};
    for (const auto &m : d.sites)
        out[siteKey(m.gpu, m.name, m.configsFrom)] = {
            toJson(m).dump(),
            fmt::format("site '{}' of {}{}", m.name, m.gpu,
                        m.configsFrom.empty() ? "" : fmt::format(" (configs from {})", m.configsFrom))};
    return out;
}

std::string describe(const DecisionImport &d) {
    return fmt::format("{} kernels, {} sites, {} skipped cases: {} added, {} replaced, {} unchanged",
                       d.kernels, d.sites, d.skipped, d.added, d.replaced, d.unchanged);
}

DecisionImport storeDecisionData(Store &store, const DecisionData &data, const std::string &source) {
    // Each case's line as the store holds it, to tell the same line from a re-measurement.
    std::map<std::string, std::pair<std::string, bool>> held; // key -> (line, measured)
    {
        const DecisionData had = storedDecisionData(store);
        for (auto &[key, c] : measuredCases(had))
            held[key] = {std::move(c.line), true};
        for (const auto &c : had.skipped)
            held[keyOf(c)] = {toJson(c).dump(), false};
    }
    DecisionImport res;
    res.kernels = int64_t(data.kernels.size());
    res.sites = int64_t(data.sites.size());
    res.skipped = int64_t(data.skipped.size());
    // True when the line is to be written: counted as added or replacing.
    auto take = [&](const std::string &key, const std::string &line, bool measured) {
        const auto it = held.find(key);
        if (it == held.end()) {
            ++res.added;
        } else if (it->second.first == line || (!measured && it->second.second)) {
            ++res.unchanged;
            return false;
        } else {
            ++res.replaced;
        }
        held[key] = {line, measured};
        return true;
    };
    for (const auto &k : data.kernels)
        if (take(kernelKey(k.gpu, k.name), toJson(k).dump(), true))
            putKernel(store, &k, nullptr, source);
    for (const auto &s : data.sites)
        if (take(siteKey(s.gpu, s.name, s.configsFrom), toJson(s).dump(), true))
            putSite(store, &s, nullptr, source);
    for (const auto &c : data.skipped) {
        if (!take(keyOf(c), toJson(c).dump(), false))
            continue;
        if (c.kind == "site")
            putSite(store, nullptr, &c, source);
        else
            putKernel(store, nullptr, &c, source);
    }
    return res;
}

DecisionData storedDecisionData(Store &store) {
    DecisionData data;
    std::map<int64_t, size_t> kernelAt; // row id -> index into data.kernels
    {
        SqlStatement s(store,
                       "SELECT id, gpu, name, family, sm_count, shape_json, default_ms, grid, skipped, "
                       "seconds FROM measured_kernels ORDER BY id");
        while (s.step("cannot read kernel lines")) {
            const std::string where =
                fmt::format("database '{}': measured_kernels row {}", store.path(), s.integer(0));
            if (!s.isNull(8)) {
                data.skipped.push_back(
                    {"kernel", s.text(3), s.text(2), s.text(1), int(s.integer(4)), s.text(8), s.real(9)});
                continue;
            }
            MeasuredKernel k;
            k.gpu = s.text(1), k.name = s.text(2), k.family = s.text(3), k.smCount = int(s.integer(4));
            k.shape =
                TritonKernelShape::fromJson(storedJson(s, 5, where + ": shape_json"), where + ": shape_json");
            k.defaultMs = s.real(6);
            k.grid = int(s.integer(7));
            k.seconds = s.real(9);
            kernelAt[s.integer(0)] = data.kernels.size();
            data.kernels.push_back(std::move(k));
        }
    }
    {
        SqlStatement s(store,
                       "SELECT kernel_id, position, config_json, time_ms, error FROM measured_kernel_configs "
                       "ORDER BY kernel_id, position");
        while (s.step("cannot read kernel lines' configs")) {
            const auto it = kernelAt.find(s.integer(0));
            if (it == kernelAt.end())
                continue; // a skipped kernel has none
            const std::string where =
                fmt::format("database '{}': measured_kernel_configs of kernel {} position {}", store.path(),
                            s.integer(0), s.integer(1));
            MeasuredKernel &k = data.kernels[it->second];
            k.configs.push_back(TritonConfig::fromJson(storedJson(s, 2, where), where));
            k.timesMs.push_back(optionalReal(s, 3));
            k.errors.push_back(s.isNull(4) ? std::string() : s.text(4));
        }
    }
    SqlStatement s(
        store,
        "SELECT id, gpu, name, configs_from, family, sm_count, site_json, library_ms, "
        "decomposed_default_ms, decomposed_tuned_ms, decomposed_ms, skipped, seconds, library_over_cache "
        "FROM measured_sites ORDER BY id");
    while (s.step("cannot read site lines")) {
        const std::string where =
            fmt::format("database '{}': measured_sites row {}", store.path(), s.integer(0));
        if (!s.isNull(11)) {
            data.skipped.push_back(
                {"site", s.text(4), s.text(2), s.text(1), int(s.integer(5)), s.text(11), s.real(12)});
            continue;
        }
        MeasuredSite m;
        m.gpu = s.text(1), m.name = s.text(2), m.configsFrom = s.text(3), m.family = s.text(4);
        m.smCount = int(s.integer(5));
        m.site = SmallMSite::fromJson(storedJson(s, 6, where + ": site_json"), where + ": site_json");
        m.libraryMs = s.real(7);
        m.decomposedDefaultMs = optionalReal(s, 8);
        m.decomposedTunedMs = optionalReal(s, 9);
        m.decomposedMs = s.real(10);
        m.seconds = s.real(12);
        m.libraryOverCache = s.integer(13) != 0;
        data.sites.push_back(std::move(m));
    }
    return data;
}

DecisionData storedDecisionData(const std::vector<std::string> &paths) {
    DecisionData data;
    for (const auto &path : paths) {
        Store store(path, Store::Mode::ReadOnly);
        data.append(storedDecisionData(store));
    }
    return data;
}

} // namespace diode
