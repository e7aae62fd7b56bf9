#pragma once

#include "diode/infer/gemmproblem.h"
#include "diode/store/store.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

namespace diode {

/// One value of a query result: SQL NULL, an integer, a real or text.
using Cell = std::variant<std::monostate, int64_t, double, std::string>;

/// The tables the workbench's Data page browses: a sweep's runs, problems and measurements, and
/// the kernel and site lines (`diode sweep-kernels`, imported) beside them.
enum class DataTable { Runs, Problems, Measurements, Kernels, Sites };
inline constexpr DataTable kDataTables[] = {DataTable::Runs, DataTable::Problems, DataTable::Measurements,
                                            DataTable::Kernels, DataTable::Sites};

/// Row filter; empty fields match everything. Values are bound as SQL parameters, never
/// spliced into the statement text.
struct DataFilter {
    std::optional<int64_t> runId;
    std::string op;     ///< mm, addmm, bmm
    std::string dtype;  ///< bf16, fp16, fp32
    std::string status; ///< ok, failed, timeout (runs: running, finished, ...)
    std::string method; ///< measurements: graph_warm, graph_cold, inductor_autotune, cpu
    std::string
        text; ///< substring of the config key or error text (runs: plan, GPU; lines: name, family, GPU)
    std::optional<GemmProblem> problem; ///< problems and measurements of this one problem (every run)
};

/// Sort by one column of columns(table); column < 0 keeps the table's natural order.
struct DataSort {
    int column = -1;
    bool ascending = true;
};

/// One page of a table: rows [offset, offset + rows.size()) of `total` matching rows.
struct TablePage {
    int64_t offset = 0;
    int64_t total = 0;
    std::vector<std::vector<Cell>> rows;
};

/// The fastest successful measurement of one problem (in one run, or over all runs), of one
/// timing method.
struct ProblemBest {
    int64_t runId = 0;
    GemmProblem problem;
    double bestMs = 0;
    double tflops() const { return problem.flops() / (bestMs * 1e9); }
    /// FLOPs per byte moved, with each operand read once (GemmProblem::minBytes).
    double intensity() const { return problem.flops() / problem.minBytes(); }
};

/// Best achieved TFLOP/s over problems whose M and N fall in one log2 bin.
struct HeatCell {
    int log2M = 0; ///< bin of floor(log2 M)
    int log2N = 0;
    double tflops = 0;
    int problems = 0;
};

/// Column headers of a table, in the order page() returns cells.
const std::vector<std::string> &columns(DataTable table);

/// Read-only queries over a store, on their own connection: one StoreQuery per thread.
class StoreQuery {
public:
    /// Opens `path` read-only; throws StoreError naming the file.
    explicit StoreQuery(const std::string &path);

    int64_t count(DataTable table, const DataFilter &filter);
    /// Rows [offset, offset + limit) in the sort order; `total` counts all matching rows.
    TablePage page(DataTable table, const DataFilter &filter, const DataSort &sort, int64_t offset,
                   int64_t limit);
    /// Per problem (and run) the best successful time of `method`, or without one of the method
    /// the default rule picks for the problem (graph_warm, else cpu, else inductor_autotune);
    /// `runId` restricts to one run.
    std::vector<ProblemBest> bestPerProblem(std::optional<int64_t> runId = std::nullopt,
                                            std::optional<TimingMethod> method = std::nullopt);
    /// Every matching row in the sort order, one at a time (for exports of any size).
    void forEachRow(DataTable table, const DataFilter &filter, const DataSort &sort,
                    const std::function<bool(const std::vector<Cell> &)> &fn);
    std::vector<RunInfo> runs() { return m_store.runs(); }
    std::vector<TelemetrySample> telemetry(int64_t runId) { return m_store.telemetry(runId); }

private:
    Store m_store;
};

/// Writes the matching rows as CSV with a header line; returns the number of rows written.
/// `cancel` is polled between rows.
int64_t writeCsv(StoreQuery &query, DataTable table, const DataFilter &filter, const DataSort &sort,
                 std::ostream &out, const std::atomic<bool> *cancel = nullptr);

/// Bins problems of one op and dtype by floor(log2 M) and floor(log2 N), keeping the best TFLOP/s.
std::vector<HeatCell> heatmapCells(const std::vector<ProblemBest> &best, GemmOp op, DType dtype);

} // namespace diode
