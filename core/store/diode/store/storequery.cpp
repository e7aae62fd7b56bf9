#include "storequery.h"

#include "diode/store/sqlstatement.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace diode {

namespace {

struct ColumnSpec {
    std::string header;
    std::string sql; ///< expression; also what ORDER BY uses, so sorting never takes user text
};

struct TableSpec {
    std::string from;
    std::string naturalOrder; ///< also the tie-breaker that keeps pages stable under OFFSET
    std::vector<ColumnSpec> columns;
};

const std::string kTflops = "2.0 * p.b * p.m * p.n * p.k / ({} * 1e9)";
// The best successful time of one timing method, the method chosen per problem by the rule of
// defaultTimingMethod(): graph_warm, else cpu, else inductor_autotune (else any). Never a
// minimum over methods: Inductor's numbers are slower than in-graph ones for the same kernel.
const std::string kBestByMethodRule = "COALESCE(MIN(CASE WHEN {0}method = 'graph_warm' THEN {0}time_ms END), "
                                      "MIN(CASE WHEN {0}method = 'cpu' THEN {0}time_ms END), "
                                      "MIN(CASE WHEN {0}method = 'inductor_autotune' THEN {0}time_ms END), "
                                      "MIN({0}time_ms))";
const std::string kBestOfRunProblem =
    fmt::format("(SELECT {} FROM measurements x WHERE x.problem_id = rp.problem_id "
                "AND x.run_id = rp.run_id AND x.status = 'ok')",
                fmt::format(fmt::runtime(kBestByMethodRule), "x."));

std::vector<ColumnSpec> problemColumns(const std::string &runExpr) {
    return {{"Run", runExpr},
            {"Op", "p.op"},
            {"DType", "p.dtype"},
            {"B", "p.b"},
            {"M", "p.m"},
            {"N", "p.n"},
            {"K", "p.k"},
            {"A layout", "CASE p.a_transposed WHEN 1 THEN 'transposed' ELSE 'row-major' END"},
            {"B layout", "CASE p.b_transposed WHEN 1 THEN 'column-major' ELSE 'row-major' END"}};
}

const TableSpec &spec(DataTable table) {
    static const TableSpec runs{"runs r",
                                "r.id",
                                {{"Run", "r.id"},
                                 {"Created", "r.created_at"},
                                 {"Finished", "r.finished_at"},
                                 {"Status", "r.status"},
                                 {"Backend", "r.backend"},
                                 {"Plan", "r.plan_name"},
                                 {"GPU", "r.gpu_name"},
                                 {"SMs", "r.sm_count"},
                                 {"Memory (MB)", "r.gpu_memory_mb"},
                                 {"Driver", "r.driver"},
                                 {"Torch", "r.torch_version"},
                                 {"Triton", "r.triton_version"},
                                 {"Planned", "r.problems_planned"},
                                 {"Done", "(SELECT count(*) FROM run_problems x WHERE x.run_id = r.id)"}}};
    static const TableSpec problems = [] {
        TableSpec t{"run_problems rp JOIN problems p ON p.id = rp.problem_id", "rp.run_id, rp.problem_id",
                    problemColumns("rp.run_id")};
        t.columns.push_back({"Status", "rp.status"});
        t.columns.push_back({"Best ms", kBestOfRunProblem});
        t.columns.push_back({"Best TFLOP/s", fmt::format(fmt::runtime(kTflops), kBestOfRunProblem)});
        t.columns.push_back({"Seconds", "rp.seconds"});
        t.columns.push_back({"Error", "rp.error"});
        return t;
    }();
    static const TableSpec measurements = [] {
        TableSpec t{"measurements m JOIN problems p ON p.id = m.problem_id JOIN kernel_configs c ON c.id = "
                    "m.config_id",
                    "m.problem_id, m.config_id, m.run_id", problemColumns("m.run_id")};
        for (ColumnSpec c :
             std::vector<ColumnSpec>{{"Kind", "c.kind"},
                                     {"Kernel", "c.name"},
                                     {"BLOCK_M", "c.block_m"},
                                     {"BLOCK_N", "c.block_n"},
                                     {"BLOCK_K", "c.block_k"},
                                     {"Warps", "c.num_warps"},
                                     {"Stages", "c.num_stages"},
                                     {"Threads", "c.threads"},
                                     {"Method", "m.method"},
                                     {"Time ms", "m.time_ms"},
                                     {"TFLOP/s", fmt::format(fmt::runtime(kTflops), "m.time_ms")},
                                     {"Status", "m.status"},
                                     {"Error", "m.error"}})
            t.columns.push_back(std::move(c));
        return t;
    }();
    // Kernel and site lines: one row a case, skipped ones with their reason (beside the case's name)
    // and no times; what the kernel or site is, and the configuration that measured fastest.
    static const std::string kBestConfig =
        "(SELECT MIN(x.time_ms) FROM measured_kernel_configs x WHERE x.kernel_id = k.id)";
    static const std::string kShape =
        "CASE WHEN k.shape_json IS NULL THEN NULL ELSE 'x ' || json_extract(k.shape_json, '$.x') || "
        "CASE WHEN json_extract(k.shape_json, '$.y') > 1 THEN ', y ' || json_extract(k.shape_json, '$.y') "
        "ELSE '' END || CASE WHEN json_extract(k.shape_json, '$.reduction') THEN ', r ' || "
        "json_extract(k.shape_json, '$.r') || ', ' || json_extract(k.shape_json, '$.hint') ELSE '' END || "
        "', loads ' || json_extract(k.shape_json, '$.loads') END";
    static const std::string kSite =
        "CASE WHEN s.site_json IS NULL THEN NULL ELSE json_extract(s.site_json, '$.op') || ' B ' || "
        "json_extract(s.site_json, '$.B') || ' M ' || json_extract(s.site_json, '$.M') || ' N ' || "
        "json_extract(s.site_json, '$.N') || ' K ' || json_extract(s.site_json, '$.K') END";
    static const TableSpec kernels{
        "measured_kernels k",
        "k.gpu, k.name",
        {{"GPU", "k.gpu"},
         {"Family", "k.family"},
         {"Kernel case", "k.name"},
         {"Skipped", "k.skipped"},
         {"Kernel", kShape},
         {"Default ms", "k.default_ms"},
         {"Fastest config ms", kBestConfig},
         {"Fastest / default", fmt::format("{} / k.default_ms", kBestConfig)},
         {"Fastest config", "(SELECT x.config_json FROM measured_kernel_configs x WHERE x.kernel_id = k.id "
                            "AND x.time_ms IS NOT NULL ORDER BY x.time_ms, x.position LIMIT 1)"},
         {"Configs timed", "(SELECT count(*) FROM measured_kernel_configs x WHERE "
                           "x.kernel_id = k.id AND x.time_ms IS NOT NULL)"},
         {"Configs failed", "(SELECT count(*) FROM measured_kernel_configs x "
                            "WHERE x.kernel_id = k.id AND x.error IS NOT NULL)"},
         {"Source", "k.source"}}};
    static const TableSpec sites{"measured_sites s",
                                 "s.gpu, s.name, s.configs_from",
                                 {{"GPU", "s.gpu"},
                                  {"Family", "s.family"},
                                  {"Site case", "s.name"},
                                  {"Skipped", "s.skipped"},
                                  {"Site", kSite},
                                  {"Configs from", "s.configs_from"},
                                  {"Library ms", "s.library_ms"},
                                  {"Decomposed ms", "s.decomposed_ms"},
                                  {"Decomposed / library", "s.decomposed_ms / s.library_ms"},
                                  {"Source", "s.source"}}};
    switch (table) {
    case DataTable::Runs:
        return runs;
    case DataTable::Problems:
        return problems;
    case DataTable::Kernels:
        return kernels;
    case DataTable::Sites:
        return sites;
    case DataTable::Measurements:
        break;
    }
    return measurements;
}

bool isLinesTable(DataTable table) {
    return table == DataTable::Kernels || table == DataTable::Sites;
}

std::string likePattern(const std::string &text) {
    std::string out = "%";
    for (char ch : text) {
        if (ch == '%' || ch == '_' || ch == '\\')
            out += '\\';
        out += ch;
    }
    return out + "%";
}

/// A WHERE clause with `?` placeholders and the values to bind to them, in order.
struct Where {
    std::string sql;
    std::vector<Cell> args;
    void add(const std::string &cond, std::vector<Cell> values) {
        sql += sql.empty() ? " WHERE " : " AND ";
        sql += cond;
        for (auto &v : values)
            args.push_back(std::move(v));
    }
};

Where whereOf(DataTable table, const DataFilter &f) {
    Where w;
    if (isLinesTable(table)) { // no run, problem or status: the text finds a case, family or GPU
        const char *t = table == DataTable::Kernels ? "k" : "s";
        if (!f.text.empty()) {
            const Cell like = likePattern(f.text);
            w.add(
                fmt::format("({0}.name LIKE ? ESCAPE '\\' OR {0}.family LIKE ? ESCAPE '\\' OR {0}.gpu LIKE ? "
                            "ESCAPE '\\')",
                            t),
                {like, like, like});
        }
        return w;
    }
    const char *run = table == DataTable::Runs       ? "r.id"
                      : table == DataTable::Problems ? "rp.run_id"
                                                     : "m.run_id";
    if (f.runId)
        w.add(fmt::format("{} = ?", run), {*f.runId});
    if (table != DataTable::Runs) {
        if (!f.op.empty())
            w.add("p.op = ?", {f.op});
        if (!f.dtype.empty())
            w.add("p.dtype = ?", {f.dtype});
        if (const auto &p = f.problem)
            w.add("p.op = ? AND p.dtype = ? AND p.b = ? AND p.m = ? AND p.n = ? AND p.k = ? AND "
                  "p.a_transposed = ? "
                  "AND p.b_transposed = ?",
                  {std::string(toString(p->op)), std::string(toString(p->dtype)), p->batch, p->m, p->n, p->k,
                   int64_t(p->aTransposed), int64_t(p->bTransposed)});
    }
    const char *status = table == DataTable::Runs       ? "r.status"
                         : table == DataTable::Problems ? "rp.status"
                                                        : "m.status";
    if (!f.status.empty())
        w.add(fmt::format("{} = ?", status), {f.status});
    if (table == DataTable::Measurements && !f.method.empty())
        w.add("m.method = ?", {f.method});
    if (!f.text.empty()) {
        const Cell like = likePattern(f.text);
        switch (table) {
        case DataTable::Runs:
            w.add("(r.plan_name LIKE ? ESCAPE '\\' OR r.gpu_name LIKE ? ESCAPE '\\' OR r.backend LIKE ? "
                  "ESCAPE '\\')",
                  {like, like, like});
            break;
        case DataTable::Problems:
            w.add("rp.error LIKE ? ESCAPE '\\'", {like});
            break;
        case DataTable::Measurements:
            w.add("(c.config_key LIKE ? ESCAPE '\\' OR m.error LIKE ? ESCAPE '\\')", {like, like});
            break;
        case DataTable::Kernels:
        case DataTable::Sites:
            break;
        }
    }
    return w;
}

// The table views' cells on the one statement class (sqlstatement.h).
void bindCell(SqlStatement &s, int i, const Cell &v) {
    if (auto *n = std::get_if<int64_t>(&v))
        s.bind(i, *n);
    else if (auto *d = std::get_if<double>(&v))
        s.bind(i, *d);
    else if (auto *t = std::get_if<std::string>(&v))
        s.bind(i, std::string_view(*t));
    else
        s.bindNull(i);
}
void bindAll(SqlStatement &s, const std::vector<Cell> &args) {
    for (size_t i = 0; i < args.size(); ++i)
        bindCell(s, int(i + 1), args[i]);
}
Cell cellOf(const SqlStatement &s, int col) {
    switch (s.type(col)) {
    case SQLITE_INTEGER:
        return s.integer(col);
    case SQLITE_FLOAT:
        return s.real(col);
    case SQLITE_TEXT:
        return s.text(col);
    default:
        return std::monostate{};
    }
}

} // namespace

const std::vector<std::string> &columns(DataTable table) {
    static const auto headers = [] {
        std::map<DataTable, std::vector<std::string>> out;
        for (auto t : kDataTables)
            for (const auto &c : spec(t).columns)
                out[t].push_back(c.header);
        return out;
    }();
    return headers.at(table);
}

StoreQuery::StoreQuery(const std::string &path)
    : m_store(path, Store::Mode::ReadOnly) {}

int64_t StoreQuery::count(DataTable table, const DataFilter &filter) {
    const auto &t = spec(table);
    const Where w = whereOf(table, filter);
    SqlStatement s(m_store, fmt::format("SELECT count(*) FROM {}{}", t.from, w.sql));
    bindAll(s, w.args);
    return s.step() ? s.integer(0) : 0;
}

namespace {

std::string selectSql(DataTable table, const Where &w, const DataSort &sort, bool paged) {
    const auto &t = spec(table);
    std::string select;
    for (const auto &c : t.columns)
        select += (select.empty() ? "" : ", ") + c.sql;
    std::string order = t.naturalOrder;
    if (sort.column >= 0 && size_t(sort.column) < t.columns.size())
        order = fmt::format("{} {} NULLS LAST, {}", t.columns[sort.column].sql,
                            sort.ascending ? "ASC" : "DESC", t.naturalOrder);
    return fmt::format("SELECT {} FROM {}{} ORDER BY {}{}", select, t.from, w.sql, order,
                       paged ? " LIMIT ? OFFSET ?" : "");
}

} // namespace

TablePage StoreQuery::page(DataTable table, const DataFilter &filter, const DataSort &sort, int64_t offset,
                           int64_t limit) {
    const auto &t = spec(table);
    const Where w = whereOf(table, filter);
    SqlStatement s(m_store, selectSql(table, w, sort, true));
    bindAll(s, w.args);
    s.bind(int(w.args.size() + 1), limit);
    s.bind(int(w.args.size() + 2), offset);
    TablePage page;
    page.offset = offset;
    while (s.step()) {
        std::vector<Cell> row;
        row.reserve(t.columns.size());
        for (int c = 0; c < int(t.columns.size()); ++c)
            row.push_back(cellOf(s, c));
        page.rows.push_back(std::move(row));
    }
    page.total = count(table, filter);
    return page;
}

void StoreQuery::forEachRow(DataTable table, const DataFilter &filter, const DataSort &sort,
                            const std::function<bool(const std::vector<Cell> &)> &fn) {
    const Where w = whereOf(table, filter);
    SqlStatement s(m_store, selectSql(table, w, sort, false));
    bindAll(s, w.args);
    const int n = int(spec(table).columns.size());
    std::vector<Cell> row(static_cast<size_t>(n));
    while (s.step()) {
        for (int c = 0; c < n; ++c)
            row[size_t(c)] = cellOf(s, c);
        if (!fn(row))
            return;
    }
}

int64_t writeCsv(StoreQuery &query, DataTable table, const DataFilter &filter, const DataSort &sort,
                 std::ostream &out, const std::atomic<bool> *cancel) {
    auto field = [&out](const std::string &v) {
        if (v.find_first_of(",\"\n") == std::string::npos) {
            out << v;
            return;
        }
        out << '"';
        for (char ch : v)
            out << (ch == '"' ? "\"\"" : std::string(1, ch));
        out << '"';
    };
    const auto &headers = columns(table);
    for (size_t i = 0; i < headers.size(); ++i) {
        if (i)
            out << ',';
        field(headers[i]);
    }
    out << '\n';
    int64_t rows = 0;
    query.forEachRow(table, filter, sort, [&](const std::vector<Cell> &row) {
        for (size_t i = 0; i < row.size(); ++i) {
            if (i)
                out << ',';
            if (auto *n = std::get_if<int64_t>(&row[i]))
                out << *n;
            else if (auto *d = std::get_if<double>(&row[i]))
                out << fmt::format("{}", *d);
            else if (auto *t = std::get_if<std::string>(&row[i]))
                field(*t);
        }
        out << '\n';
        ++rows;
        return !(cancel && *cancel) && bool(out);
    });
    return rows;
}

std::vector<ProblemBest> StoreQuery::bestPerProblem(std::optional<int64_t> runId,
                                                    std::optional<TimingMethod> method) {
    static const std::string sql =
        fmt::format("SELECT m.run_id, p.op, p.dtype, p.b, p.m, p.n, p.k, p.a_transposed, p.b_transposed, "
                    "CASE WHEN ?2 IS NULL THEN {} ELSE MIN(m.time_ms) END FROM measurements m "
                    "JOIN problems p ON p.id = m.problem_id WHERE m.status = 'ok' AND m.time_ms > 0 "
                    "AND (?1 IS NULL OR m.run_id = ?1) AND (?2 IS NULL OR m.method = ?2) "
                    "GROUP BY m.run_id, m.problem_id",
                    fmt::format(fmt::runtime(kBestByMethodRule), "m."));
    SqlStatement s(m_store, sql);
    if (runId)
        s.bind(1, *runId);
    if (method)
        s.bind(2, toString(*method));
    std::vector<ProblemBest> out;
    while (s.step()) {
        ProblemBest b;
        b.runId = s.integer(0);
        b.problem = s.problem(1);
        b.bestMs = s.real(9);
        out.push_back(b);
    }
    return out;
}

std::vector<HeatCell> heatmapCells(const std::vector<ProblemBest> &best, GemmOp op, DType dtype) {
    std::map<std::pair<int, int>, HeatCell> bins;
    for (const auto &b : best) {
        if (b.problem.op != op || b.problem.dtype != dtype)
            continue;
        const int lm = int(std::floor(std::log2(double(b.problem.m))));
        const int ln = int(std::floor(std::log2(double(b.problem.n))));
        auto &cell = bins[{lm, ln}];
        cell.log2M = lm;
        cell.log2N = ln;
        cell.tflops = std::max(cell.tflops, b.tflops());
        ++cell.problems;
    }
    std::vector<HeatCell> out;
    for (auto &[k, c] : bins)
        out.push_back(c);
    return out;
}

} // namespace diode
