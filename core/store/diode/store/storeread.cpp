#include "store.h"

#include "diode/infer/jsonlimits.h"
#include "diode/infer/problemjson.h"

#include "diode/infer/timingagreement.h"
#include "diode/store/sqlstatement.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <unordered_map>

// The store's reads for whole-store views: stats, what each run has done, every record (export,
// datasets). store.cpp has the connection, schema and writes.

namespace diode {

std::set<int64_t> Store::doneProblems(int64_t runId) {
    SqlStatement s(*this, "SELECT problem_id FROM run_problems WHERE run_id=?", SqlStatement::Cached{});
    s.bind(1, runId);
    std::set<int64_t> out;
    while (s.step())
        out.insert(s.integer(0));
    return out;
}

int64_t Store::measurementCount(std::optional<int64_t> runId) {
    SqlStatement s(*this,
                   runId ? "SELECT count(*) FROM measurements WHERE run_id=?"
                         : "SELECT count(*) FROM measurements",
                   SqlStatement::Cached{});
    if (runId)
        s.bind(1, *runId);
    s.stepRow("cannot count measurements");
    return s.integer(0);
}

StoreStats Store::stats() {
    StoreStats st;
    auto scalar = [&](const char *sql) {
        SqlStatement s(*this, sql, SqlStatement::Cached{});
        s.stepRow("query failed");
        return s.integer(0);
    };
    auto column = [&](const char *sql) {
        SqlStatement s(*this, sql, SqlStatement::Cached{});
        std::vector<std::string> out;
        while (s.step())
            out.push_back(s.text(0));
        return out;
    };
    st.runs = scalar("SELECT count(*) FROM runs");
    st.problems = scalar("SELECT count(DISTINCT problem_id) FROM run_problems");
    st.problemLines = scalar("SELECT count(*) FROM run_problems");
    st.measurements = scalar("SELECT count(*) FROM measurements");
    st.failedMeasurements = scalar("SELECT count(*) FROM measurements WHERE status != 'ok'");
    st.failedProblems = scalar("SELECT count(*) FROM run_problems WHERE status != 'ok'");
    st.configs = scalar("SELECT count(*) FROM kernel_configs");
    st.gpus =
        column("SELECT DISTINCT gpu_name FROM runs WHERE gpu_name IS NOT NULL AND gpu_name != '' ORDER BY 1");
    st.ops =
        column("SELECT DISTINCT p.op FROM problems p JOIN run_problems r ON r.problem_id=p.id ORDER BY 1");
    st.dtypes =
        column("SELECT DISTINCT p.dtype FROM problems p JOIN run_problems r ON r.problem_id=p.id ORDER BY 1");
    st.backends = column("SELECT DISTINCT backend FROM runs ORDER BY 1");
    auto counts = [&](const char *sql) {
        SqlStatement s(*this, sql, SqlStatement::Cached{});
        std::map<std::string, int64_t> out;
        while (s.step())
            out[s.text(0)] = s.integer(1);
        return out;
    };
    st.measurementsByMethod = counts("SELECT method, count(*) FROM measurements GROUP BY method");
    st.failedByMethod =
        counts("SELECT method, count(*) FROM measurements WHERE status != 'ok' GROUP BY method");
    st.problemsByGpu =
        counts("SELECT coalesce(r.gpu_name, ''), count(DISTINCT rp.problem_id) FROM run_problems rp "
               "JOIN runs r ON r.id = rp.run_id GROUP BY 1");
    st.baselines = scalar("SELECT count(*) FROM problem_baselines");
    st.kernelCases = scalar("SELECT count(*) FROM measured_kernels");
    st.kernelsMeasured = scalar("SELECT count(*) FROM measured_kernels WHERE skipped IS NULL");
    st.siteCases = scalar("SELECT count(*) FROM measured_sites");
    st.sitesMeasured = scalar("SELECT count(*) FROM measured_sites WHERE skipped IS NULL");
    {
        SqlStatement s(
            *this,
            "SELECT count(*) FROM measurements w JOIN measurements c ON c.problem_id = w.problem_id "
            "AND c.config_id = w.config_id AND c.run_id = w.run_id AND c.method = 'graph_cold' "
            "AND c.status = 'ok' AND c.time_ms > 0 WHERE w.method = 'graph_warm' AND w.status = 'ok' "
            "AND diode_warm_cold_glitch(w.time_ms, c.time_ms)",
            SqlStatement::Cached{});
        s.stepRow("query failed");
        st.warmColdGlitches = s.integer(0);
    }
    st.defaultMethod = defaultTimingMethod(methodCounts());
    return st;
}

std::map<std::string, std::set<GemmProblem>> Store::storedProblemsByGpu() {
    SqlStatement s(*this,
                   "SELECT DISTINCT p.op, p.dtype, p.b, p.m, p.n, p.k, p.a_transposed, p.b_transposed, "
                   "coalesce(r.gpu_name, '') FROM problems p JOIN run_problems rp ON rp.problem_id = p.id "
                   "JOIN runs r ON r.id = rp.run_id",
                   SqlStatement::Cached{});
    std::map<std::string, std::set<GemmProblem>> out;
    while (s.step())
        out[s.text(8)].insert(s.problem(0));
    return out;
}

MethodCounts Store::methodCounts() {
    SqlStatement s(
        *this,
        "SELECT method, count(*) FROM measurements WHERE status = 'ok' AND time_ms > 0 GROUP BY method",
        SqlStatement::Cached{});
    MethodCounts out;
    while (s.step())
        if (auto m = parseTimingMethod(s.text(0)))
            out[*m] = s.integer(1);
    return out;
}

nlohmann::json StoreStats::toJson() const {
    return {
        {"runs", runs},
        {"problems", problems},
        {"problem_lines", problemLines},
        {"measurements", measurements},
        {"failed_measurements", failedMeasurements},
        {"failed_problems", failedProblems},
        {"kernel_configs", configs},
        {"gpus", gpus},
        {"ops", ops},
        {"dtypes", dtypes},
        {"backends", backends},
        {"measurements_by_method", measurementsByMethod},
        {"failed_measurements_by_method", failedByMethod},
        {"problems_by_gpu", problemsByGpu},
        {"baselines", baselines},
        {"kernel_lines", {{"cases", kernelCases}, {"measured", kernelsMeasured}}},
        {"site_lines", {{"cases", siteCases}, {"measured", sitesMeasured}}},
        {"warm_cold_glitches", warmColdGlitches},
        {"default_method", {{"method", toString(defaultMethod.method)}, {"reason", defaultMethod.reason}}}};
}

std::string StoreStats::caseLinesNote() const {
    if (kernelCases + siteCases == 0)
        return {};
    return fmt::format("{} kernel cases ({} measured), {} site cases ({} measured)", kernelCases,
                       kernelsMeasured, siteCases, sitesMeasured);
}

std::string StoreStats::warmColdGlitchNote() const {
    if (warmColdGlitches == 0)
        return {};
    return fmt::format("{} candidates have a warm time over {}x their cold time in the same run, which a "
                       "flushed L2 cannot cause: timing glitches (docs/FORMATS.md)",
                       warmColdGlitches, kWarmOverColdGlitch);
}

void Store::forEachRecord(const std::function<void(const RunInfo &, const ProblemRecord &)> &fn,
                          std::optional<int64_t> runId) {
    std::unordered_map<int64_t, RunInfo> runsById;
    for (auto &r : runs())
        runsById.emplace(r.id, std::move(r));
    std::unordered_map<int64_t, KernelConfig> configs; // parsed once per config, not per row
    auto config = [&](int64_t id, const std::string &key) -> const KernelConfig & {
        auto it = configs.find(id);
        if (it == configs.end())
            it = configs
                     .emplace(id, KernelConfig::fromJson(
                                      parseJsonBounded(
                                          key, fmt::format("database '{}': stored config {}", m_path, id),
                                          kProblemJsonLimits),
                                      fmt::format("database '{}': stored config {}", m_path, id)))
                     .first;
        return it->second;
    };
    // Baselines are few (a handful per problem): read them up front, keyed by (run, problem).
    std::map<std::pair<int64_t, int64_t>, std::vector<BaselineTiming>> baselines;
    {
        SqlStatement s(
            *this,
            "SELECT b.run_id, b.problem_id, b.baseline, b.method, b.time_ms, b.compile_s, "
            "b.pick_config_id, c.config_key FROM problem_baselines b "
            "LEFT JOIN kernel_configs c ON c.id = b.pick_config_id "
            "WHERE (?1 IS NULL OR b.run_id = ?1) ORDER BY b.run_id, b.problem_id, b.baseline, b.method",
            SqlStatement::Cached{});
        if (runId)
            s.bind(1, *runId);
        while (s.step()) {
            BaselineTiming b;
            b.baseline = s.text(2);
            auto m = parseTimingMethod(s.text(3));
            if (!m)
                fail(fmt::format("unknown timing method '{}' in problem_baselines", s.text(3)));
            b.method = *m;
            b.timeMs = s.real(4);
            if (!s.isNull(5))
                b.compileS = s.real(5);
            if (!s.isNull(7))
                b.pick = config(s.integer(6), s.text(7));
            baselines[{s.integer(0), s.integer(1)}].push_back(std::move(b));
        }
    }
    const char *sql =
        "SELECT rp.run_id, p.op, p.dtype, p.b, p.m, p.n, p.k, p.a_transposed, p.b_transposed, rp.status, "
        "rp.error, c.config_key, m.time_ms, m.status, m.error, rp.problem_id, m.method, m.config_id "
        "FROM run_problems rp JOIN problems p ON p.id=rp.problem_id "
        "LEFT JOIN measurements m ON m.run_id=rp.run_id AND m.problem_id=rp.problem_id "
        "LEFT JOIN kernel_configs c ON c.id=m.config_id "
        "WHERE (?1 IS NULL OR rp.run_id=?1) ORDER BY rp.run_id, rp.problem_id, m.config_id, m.method";
    SqlStatement s(*this, sql, SqlStatement::Cached{});
    if (runId)
        s.bind(1, *runId);
    ProblemRecord cur;
    int64_t curRun = -1, curProblem = -1, curConfig = -1;
    auto flush = [&] {
        if (curProblem < 0)
            return;
        if (auto it = baselines.find({curRun, curProblem}); it != baselines.end())
            cur.baselines = it->second;
        fn(runsById[curRun], cur);
    };
    while (s.step("export query failed")) {
        const int64_t run = s.integer(0), pid = s.integer(15);
        if (run != curRun || pid != curProblem) {
            flush();
            cur = ProblemRecord{};
            curRun = run;
            curProblem = pid;
            curConfig = -1;
            cur.problem = s.problem(1);
            if (s.text(9) != "ok")
                cur.error = s.text(10);
        }
        if (s.isNull(11))
            continue;
        const int64_t cfg = s.integer(17);
        if (cfg != curConfig) {
            cur.candidates.push_back({config(cfg, s.text(11)), {}});
            curConfig = cfg;
        }
        Timing t;
        auto method = parseTimingMethod(s.text(16));
        if (!method)
            fail(fmt::format("unknown timing method '{}' in measurements", s.text(16)));
        t.method = *method;
        if (!s.isNull(12))
            t.timeMs = s.real(12);
        t.status = parseMeasureStatus(s.text(13));
        t.error = s.text(14);
        cur.candidates.back().timings.push_back(std::move(t));
    }
    flush();
}

} // namespace diode

namespace diode {

RunProgressState runProgressState(Store &store, int64_t runId) {
    RunProgressState st;
    {
        SqlStatement s(store, "SELECT " + problemColumns("p.") +
                                  ", c.config_key FROM measurements m JOIN problems p ON p.id=m.problem_id "
                                  "JOIN kernel_configs c ON c.id=m.config_id WHERE m.run_id=?");
        s.bind(1, runId);
        while (s.step())
            st.measured[s.problem(0)].insert(s.text(kProblemColumnCount));
    }
    SqlStatement s(store, "SELECT " + problemColumns("p.") +
                              " FROM run_problems r JOIN problems p ON p.id=r.problem_id WHERE r.run_id=?");
    s.bind(1, runId);
    while (s.step())
        st.done.insert(s.problem(0));
    return st;
}

} // namespace diode
