// Benchmark (not a test): a store of about a million measurements, opened on the Validate page;
// prints the seconds until the predicted-against-measured scatter is drawn, and the time of a
// replot while zooming and panning it. Usage:
//   bench_validate DB PACKAGE [--store-predictions]
// DB is built from the shipped H200 dataset (82 copies of its problems with M shifted by multiples of 10,000)
// when it does not exist; --store-predictions runs `diode eval --db --store-predictions` on it first, as
// after a training run.
#include "testutil.h"

#include "common/workbenchstate.h"
#include "validate/predictionscatter.h"
#include "validate/validatepage.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QSignalSpy>

#include <algorithm>
#include <cstdio>

namespace {

bool build(const QString &path, const QString &shipped, int copies) {
    { diode::Store store(path.toStdString()); } // creates the schema
    sqlite3 *db = nullptr;
    if (sqlite3_open(path.toStdString().c_str(), &db) != SQLITE_OK)
        return false;
    const QString sql = QStringLiteral(R"sql(
ATTACH '%1' AS s;
BEGIN;
INSERT INTO runs(id, created_at, status, backend, plan_name, gpu_name, sm_count)
  VALUES(1, '2026-11-22T00:00:00Z', 'finished', 'import', 'million', 'NVIDIA H200', 132);
INSERT INTO kernel_configs SELECT * FROM s.kernel_configs;
WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM i WHERE x + 1 < %2)
INSERT INTO problems(id, op, dtype, b, m, n, k, a_transposed, b_transposed)
  SELECT x * 100000 + p.id, p.op, p.dtype, p.b, p.m + x * 10000, p.n, p.k, p.a_transposed, p.b_transposed FROM i, s.problems p;
INSERT INTO run_problems(run_id, problem_id, status, seconds) SELECT 1, id, 'ok', 1.0 FROM problems;
WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM i WHERE x + 1 < %2)
INSERT INTO measurements(problem_id, config_id, run_id, method, time_ms, status, error)
  SELECT x * 100000 + m.problem_id, m.config_id, 1, 'inductor_autotune', m.time_ms * (1 + 0.001 * x), m.status, m.error
  FROM i, s.measurements m;
COMMIT;
)sql")
                            .arg(shipped)
                            .arg(copies);
    char *err = nullptr;
    const int rc = sqlite3_exec(db, sql.toUtf8().constData(), nullptr, nullptr, &err);
    if (rc != SQLITE_OK)
        std::fprintf(stderr, "cannot build %s: %s\n", qPrintable(path), err ? err : "?");
    sqlite3_free(err);
    sqlite3_close(db);
    return rc == SQLITE_OK;
}

} // namespace

int main(int argc, char **argv) {
    QApplication app(argc, argv);
    const QStringList args = app.arguments();
    if (args.size() < 3) {
        std::fprintf(stderr, "usage: bench_validate DB PACKAGE [--store-predictions]\n");
        return 2;
    }
    const QString db = args[1], package = args[2];
    QElapsedTimer t;
    if (!QFileInfo::exists(db)) {
        t.start();
        if (!build(db, testutil::sourcePath("trained_models/h200/h200-dataset.db"), 82))
            return 1;
        std::printf("built %s: %lld measurements in %.1f s\n", qPrintable(db),
                    (long long)testutil::scalar(db, "SELECT count(*) FROM measurements"),
                    t.elapsed() / 1000.0);
    }
    if (args.contains("--store-predictions")) {
        t.start();
        QString out, err;
        if (testutil::runCli({"eval", "--package", package, "--db", db, "--store-predictions"}, &out, &err,
                             3600000) != 0) {
            std::fprintf(stderr, "diode eval failed: %s\n", qPrintable(err));
            return 1;
        }
        std::printf("diode eval --db stored the predictions in %.1f s\n", t.elapsed() / 1000.0);
    }
    const long long rows = testutil::scalar(db, "SELECT count(*) FROM measurements");
    WorkbenchState state;
    state.setPackage(package);
    state.setDatabase(db, true);
    ValidatePage page(&state);
    page.resize(1280, 760);
    QSignalSpy shown(&page, &ValidatePage::scatterShown);
    t.start();
    page.show(); // validates on first show
    if (!shown.wait(600000)) {
        std::fprintf(stderr, "no scatter within 10 minutes\n");
        return 1;
    }
    std::printf("%lld measurements: scatter drawn %.2f s after validate() (%.2f s after show)\n", rows,
                shown.at(0).at(0).toDouble(), t.elapsed() / 1000.0);
    PredictionScatter *plot = nullptr; // the first model's scatter (the second is hidden with one model)
    for (auto *p : page.findChildren<PredictionScatter *>())
        if (p->isVisible() && p->graphCount() > 0)
            plot = p;
    if (!plot)
        return 1;
    int points = 0;
    for (int g = 0; g < plot->graphCount(); ++g)
        points += plot->graph(g)->dataCount();
    std::printf("scatter: %d points in %d groups, widget %dx%d\n", points, plot->graphCount(), plot->width(),
                plot->height());
    std::vector<double> ms;
    const QCPRange full = plot->xAxis->range();
    for (int i = 0; i < 20; ++i) { // full view, zoom in 4 wheel steps, pan twice, zoom back out, pan back
        const int s = i % 10;
        const QCPRange r = plot->xAxis->range();
        if (s == 0)
            plot->xAxis->setRange(full);
        else if (s <= 4)
            plot->xAxis->setRange(r.lower * 2, r.upper / 2); // log axis: zoom in about the centre
        else if (s <= 6)
            plot->xAxis->setRange(r.lower * 1.5, r.upper * 1.5);
        else
            plot->xAxis->setRange(r.lower / 2, r.upper * 2);
        t.start();
        plot->replot(QCustomPlot::rpImmediateRefresh);
        ms.push_back(double(t.nsecsElapsed()) / 1e6);
        if (qEnvironmentVariableIsSet("BENCH_VERBOSE"))
            std::printf("  frame %d: x %.3g..%.3g, %.1f ms\n", i, plot->xAxis->range().lower,
                        plot->xAxis->range().upper, ms.back());
    }
    std::sort(ms.begin(), ms.end());
    std::printf("replot while zooming and panning: median %.1f ms, worst %.1f ms over %zu frames\n",
                ms[ms.size() / 2], ms.back(), ms.size());
    return 0;
}
