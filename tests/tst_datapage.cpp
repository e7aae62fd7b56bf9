#include "testutil.h"

#include "pagecheck.h"

#include "common/plotmessage.h"
#include "common/plotview.h"
#include "common/workbenchstate.h"
#include "data/datapage.h"
#include "data/heatmapview.h"
#include "data/rooflineview.h"
#include "data/storetablemodel.h"
#include "diode/store/storequery.h"

#include <nlohmann/json.hpp>

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QHeaderView>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>

using diode::DataTable;

namespace {

const QString kShipped = testutil::sourcePath("trained_models/h200/h200-dataset.db");

bool waitForPage(StoreTableModel &model, int timeoutMs = 20000) {
    QSignalSpy spy(&model, &StoreTableModel::pageLoaded);
    return model.isLoading() ? spy.wait(timeoutMs) : true;
}

/// A store with `problems` × `configs` measurements written in one transaction of raw SQL.
void generate(const QString &path, int problems, int configs) {
    { diode::Store store(path.toStdString()); } // creates the schema
    sqlite3 *db = nullptr;
    QCOMPARE(sqlite3_open(path.toStdString().c_str(), &db), SQLITE_OK);
    const char *sql = R"sql(
BEGIN;
INSERT INTO runs(id, created_at, status, backend, plan_name, gpu_name) VALUES(1, '2025-01-01T00:00:00Z', 'finished', 'cpu', 'big', 'NVIDIA H200');
WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM i WHERE x + 1 < %1)
INSERT INTO problems(id, op, dtype, b, m, n, k, a_transposed, b_transposed)
  SELECT x + 1, 'mm', CASE x % 3 WHEN 0 THEN 'bf16' WHEN 1 THEN 'fp16' ELSE 'fp32' END, 1, 1 + x * 7 % 8192, 64 + x % 97 * 64, 4096, 0, 1 FROM i;
WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM i WHERE x + 1 < %2)
INSERT INTO kernel_configs(id, config_key, kind, name, block_m, block_n, block_k, threads)
  SELECT x + 1, 'cpu-' || x, 'cpu', 'tiled', 16 << (x % 4), 64, 64, 1 + x % 2 FROM i;
INSERT INTO run_problems(run_id, problem_id, status, seconds) SELECT 1, id, 'ok', 1.0 FROM problems;
INSERT INTO measurements(problem_id, config_id, run_id, method, time_ms, status)
  SELECT p.id, c.id, 1, 'cpu', 0.01 + ((p.id * 131 + c.id * 17) % 1000) / 100.0, 'ok' FROM problems p, kernel_configs c;
COMMIT;
)sql";
    char *err = nullptr;
    const int rc = sqlite3_exec(db, QString::fromLatin1(sql).arg(problems).arg(configs).toUtf8().constData(),
                                nullptr, nullptr, &err);
    const QString msg = err ? QString::fromUtf8(err) : QString();
    sqlite3_free(err);
    sqlite3_close(db);
    QVERIFY2(rc == SQLITE_OK, qPrintable(msg));
}

// Shows the Data page on `db` and waits until its tables and plots are on screen.
bool showOn(DataPage &page, WorkbenchState &state, const QString &db) {
    page.resize(1130, 760);
    page.show();
    QSignalSpy ready(&page, &DataPage::ready);
    state.setDatabase(db, true);
    return ready.wait(30000);
}

// A table's column by its header key (diode::columns), as its model numbers it.
int columnOf(diode::DataTable table, const char *key) {
    const auto &cols = diode::columns(table);
    return int(std::find(cols.begin(), cols.end(), key) - cols.begin());
}

} // namespace

class TestDataPage : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void initTestCase() { testutil::freshSettings("tst_datapage"); }
    void modelsPassTheTesterOnTheShippedDataset() {
        const qint64 expected[] = {2, 624, 12190};
        int i = 0;
        for (auto table : {DataTable::Runs, DataTable::Problems, DataTable::Measurements}) {
            StoreTableModel model(table);
            QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
            model.setDatabase(kShipped);
            QVERIFY(waitForPage(model));
            QCOMPARE(model.totalRows(), expected[i++]);
            QCOMPARE(model.rowCount(), int(std::min<qint64>(model.totalRows(), StoreTableModel::kPageSize)));
            if (model.canFetchMore({})) {
                model.fetchMore({});
                QVERIFY(waitForPage(model));
                QCOMPARE(model.rowCount(),
                         int(std::min<qint64>(model.totalRows(), 2 * StoreTableModel::kPageSize)));
            }
            model.sort(model.columnCount() - 2, Qt::DescendingOrder);
            QVERIFY(waitForPage(model));
            QCOMPARE(model.totalRows(), expected[i - 1]);
        }
    }

    // Unknown is n/a, never 0: the shipped runs were imported, so no problem has sweep seconds.
    void unknownSecondsReadNa() {
        StoreTableModel model(DataTable::Problems);
        model.setDatabase(kShipped);
        QVERIFY(waitForPage(model));
        int col = -1;
        for (int c = 0; c < model.columnCount(); ++c)
            if (model.headerData(c, Qt::Horizontal).toString() == QStringLiteral("Seconds (sweep)"))
                col = c;
        QVERIFY(col >= 0);
        QVERIFY(model.rowCount() > 0);
        for (int r = 0; r < model.rowCount(); ++r)
            QCOMPARE(model.index(r, col).data().toString(), QStringLiteral("n/a"));
    }

    void filterAndSortRunInSql() {
        StoreTableModel model(DataTable::Measurements);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setDatabase(kShipped);
        QVERIFY(waitForPage(model));
        diode::DataFilter f;
        f.op = "bmm";
        f.status = "ok";
        model.setFilter(f);
        QVERIFY(waitForPage(model));
        const qint64 bmmOk = model.totalRows();
        QVERIFY(bmmOk > 0 && bmmOk < 12190);
        for (int r = 0; r < model.rowCount(); ++r)
            QCOMPARE(model.index(r, 1).data().toString(), QString("bmm"));
        const int timeCol = int(diode::columns(DataTable::Measurements).size()) - 4; // Time ms
        QCOMPARE(model.headerData(timeCol, Qt::Horizontal).toString(), QString("Time (µs)"));
        model.sort(timeCol, Qt::AscendingOrder);
        QVERIFY(waitForPage(model));
        double last = 0;
        for (int r = 0; r < model.rowCount(); ++r) {
            const double t = model.index(r, timeCol).data(Qt::EditRole).toDouble();
            QVERIFY(t >= last);
            last = t;
            // Shown in µs with one decimal, whatever the size: 5 µs and 2 s read alike.
            QCOMPARE(model.index(r, timeCol).data().toString(), QLocale().toString(t * 1000, 'f', 1));
        }
        // Filter text is bound, never spliced into SQL: quotes and wildcards are just text.
        f.text = "x' OR 1=1; DROP TABLE runs; --%_";
        model.setFilter(f);
        QVERIFY(waitForPage(model));
        QCOMPARE(model.totalRows(), qint64(0));
        QCOMPARE(testutil::scalar(kShipped, "SELECT count(*) FROM runs"), int64_t(2));
    }

    void csvExportWritesEveryMatchingRow() {
        StoreTableModel model(DataTable::Measurements);
        model.setDatabase(kShipped);
        QVERIFY(waitForPage(model));
        QCOMPARE(model.rowCount(), StoreTableModel::kPageSize); // only the first page is loaded
        const QString path = m_dir.filePath("measurements.csv");
        QSignalSpy exported(&model, &StoreTableModel::exported);
        model.exportCsv(path);
        QVERIFY(exported.wait(20000));
        QVERIFY2(exported.at(0).at(2).toString().isEmpty(), qPrintable(exported.at(0).at(2).toString()));
        QCOMPARE(exported.at(0).at(1).toLongLong(), qlonglong(12190));
        const QList<QByteArray> lines = testutil::fileBytes(path).split('\n');
        QCOMPARE(lines.size(),
                 qsizetype(12190 + 2)); // header, rows, and the empty piece after the last newline
        QVERIFY(lines[0].startsWith("Run,Op,DType,B,M,N,K"));
    }

    void aMillionMeasurementsPageIn() {
        const QString path = m_dir.filePath("million.db");
        QElapsedTimer t;
        t.start();
        generate(path, 1000, 1000);
        qInfo("generated 1,000,000 measurements in %.1f s", t.elapsed() / 1000.0);
        StoreTableModel model(DataTable::Measurements);
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        t.restart();
        model.setDatabase(path);
        QVERIFY(waitForPage(model, 60000));
        qInfo("first page of 1,000,000 rows (with count) in %lld ms", t.elapsed());
        QCOMPARE(model.totalRows(), qint64(1000000));
        QCOMPARE(model.rowCount(), StoreTableModel::kPageSize);
        for (int page = 2; page <= 3; ++page) {
            // The tester may already have asked for the next page itself.
            if (!model.isLoading()) {
                QVERIFY(model.canFetchMore({}));
                model.fetchMore({});
            }
            QVERIFY(waitForPage(model, 60000));
            QVERIFY(model.rowCount() >= page * StoreTableModel::kPageSize);
            QCOMPARE(model.rowCount() % StoreTableModel::kPageSize, 0);
        }
        QVERIFY(model.rowCount() <= 10 * StoreTableModel::kPageSize); // paged, never loaded whole
        const int tflopsCol = int(diode::columns(DataTable::Measurements).size()) - 3;
        t.restart();
        model.sort(tflopsCol, Qt::DescendingOrder);
        QVERIFY(waitForPage(model, 60000));
        qInfo("first page sorted by TFLOP/s over 1,000,000 rows in %lld ms", t.elapsed());
        QCOMPARE(model.rowCount(), StoreTableModel::kPageSize);
        QVERIFY(model.index(0, tflopsCol).data(Qt::EditRole).toDouble() >=
                model.index(999, tflopsCol).data(Qt::EditRole).toDouble());
    }

    void heatmapBinsByLog2() {
        diode::StoreQuery q(kShipped.toStdString());
        const auto best = q.bestPerProblem();
        QVERIFY(best.size() > 300);
        const auto cells = diode::heatmapCells(best, diode::GemmOp::Mm, diode::DType::BF16);
        QVERIFY(cells.size() > 5);
        for (const auto &c : cells) {
            QVERIFY(c.tflops > 0 && c.tflops < 2000);
            QVERIFY(c.log2M >= 0 && c.log2M <= 13);
        }
    }

    void pageRendersTheShippedDataset() {
        WorkbenchState state;
        DataPage page(&state);
        QAbstractItemModelTester tRuns(page.runsModel(),
                                       QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester tp(page.problemsModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester tm(page.measurementsModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        page.resize(1130, 760);
        page.show();
        QSignalSpy shown(&page, &DataPage::analysisShown);
        state.setDatabase(kShipped, true);
        QVERIFY(shown.wait(20000));
        QVERIFY(waitForPage(*page.measurementsModel()));
        auto *tabs = page.findChild<QTabWidget *>();
        QVERIFY(tabs);
        const char *names[] = {"data-runs", "data-problems", "data-measurements", "data-heatmap",
                               "data-roofline"};
        for (int i = 0; i < tabs->count(); ++i) {
            tabs->setCurrentIndex(i);
            QTest::qWait(50);
            pagecheck::checkRendered(&page, names[i], i >= 3 ? 40 : 8);
        }
        auto *peak = page.findChild<QDoubleSpinBox *>("peakTflops");
        QVERIFY(peak);
        QCOMPARE(peak->value(), 989.4); // H200 bf16 datasheet peak

        // Columns as wide as their content: the kernel names are not cut ("extern_kern…").
        auto *view = page.findChild<QTableView *>("measurementsView");
        tabs->setCurrentIndex(2);
        const int kernel = columnOf(DataTable::Measurements, "Kernel");
        int widest = 0;
        for (int r = 0; r < page.measurementsModel()->rowCount(); ++r)
            widest = std::max(widest, view->fontMetrics().horizontalAdvance(
                                          page.measurementsModel()->index(r, kernel).data().toString()));
        QVERIFY2(view->columnWidth(kernel) >= widest,
                 qPrintable(QString("%1 < %2").arg(view->columnWidth(kernel)).arg(widest)));
        // Time and TFLOP/s come right after the run, not behind the problem's columns.
        const int time = columnOf(DataTable::Measurements, "Time ms");
        QCOMPARE(view->horizontalHeader()->visualIndex(time), 1);
    }

    // On in-graph data a candidate has three times (graph_cold, graph_warm, inductor_autotune): they
    // must not appear as three rows, the Method column must be on screen at 1280 px, and "Best (µs)"
    // must say whose times. The page opens on the data's truth, one row per candidate, says
    // which method a time is, and any method can still be chosen.
    void inGraphDataShowsTheTruthOnce() {
        const QString ingraph = testutil::sourcePath("trained_models/h200/h200-ingraph.db");
        diode::Store store(ingraph.toStdString(), diode::Store::Mode::ReadOnly);
        const auto counts = store.stats().measurementsByMethod;
        WorkbenchState state;
        DataPage page(&state);
        page.resize(1280, 760);
        page.show();
        QSignalSpy shown(&page, &DataPage::analysisShown);
        QSignalSpy ready(&page, &DataPage::ready);
        state.setDatabase(ingraph, true);
        QVERIFY(shown.wait(30000));
        // Ready (what a --screenshot waits for) only once the tables hold the truth's rows: the
        // shot of this page showed "Loading…" when taken at the database's arrival.
        QVERIFY(ready.count() > 0 || ready.wait(30000));
        QVERIFY(!page.measurementsModel()->isLoading());
        auto *method = page.findChild<QComboBox *>("methodFilter");
        QVERIFY(method);
        QCOMPARE(method->currentText(), QString("graph_warm"));
        auto &measurements = *page.measurementsModel();
        QVERIFY(waitForPage(measurements, 30000));
        QCOMPARE(measurements.totalRows(), qint64(counts.at("graph_warm")));
        auto *view = page.findChild<QTableView *>("measurementsView");
        const int methodColumn = columnOf(DataTable::Measurements, "Method");
        QCOMPARE(view->horizontalHeader()->visualIndex(methodColumn), 2); // beside the time
        const auto &problemCols = diode::columns(DataTable::Problems);
        const int best =
            int(std::find(problemCols.begin(), problemCols.end(), "Best ms") - problemCols.begin());
        QVERIFY(page.problemsModel()->headerData(best, Qt::Horizontal).toString().contains("one method"));
        QVERIFY(page.problemsModel()
                    ->headerData(best, Qt::Horizontal, Qt::ToolTipRole)
                    .toString()
                    .contains("graph_warm where the problem has it"));
        method->setCurrentIndex(0); // any method: every row again
        QTRY_COMPARE_WITH_TIMEOUT(measurements.totalRows(), qint64(store.stats().measurements), 30000);
    }

    // Empty must look empty: the best cell's colour is far from the background an empty cell shows.
    void heatmapTopIsNotNearWhite() {
        HeatmapView view;
        const QColor top = view.colourAt(1.0), bottom = view.colourAt(0.0);
        QVERIFY2(top.lightness() < 200, qPrintable(top.name()));
        QVERIFY2(bottom.lightness() < 200, qPrintable(bottom.name()));
        view.setCells({}, "No successful mm bf16 measurements");
        QCOMPARE(plotMessage(&view), QString("No successful mm bf16 measurements"));
        // One bin (a single problem, or one M and N bin) is drawn, in the top colour (a one-bin
        // heatmap must not draw nothing).
        view.resize(500, 400);
        view.setCells({diode::HeatCell{10, 12, 500.0, 1}}, "one bin");
        const QImage shot = view.grab().toImage();
        int topColoured = 0;
        for (int y = 0; y < shot.height(); ++y)
            for (int x = 0; x < shot.width(); ++x) {
                const QColor c = shot.pixelColor(x, y);
                topColoured += std::abs(c.red() - top.red()) + std::abs(c.green() - top.green()) +
                                   std::abs(c.blue() - top.blue()) <
                               12;
            }
        // The one cell is drawn as a cell among empty ones (it filled the whole plot, a
        // colour with nothing to compare it with): about a fifth of the axis rect's side each way.
        QVERIFY2(topColoured > 2000 && topColoured < 20000, qPrintable(QString::number(topColoured)));
    }

    // A CPU's rates are written in GFLOP/s on both plots, not as "0.004 TFLOP/s"; a
    // GPU's stay in TFLOP/s.
    void cpuRatesAreInGflops() {
        diode::ProblemBest b;
        b.problem.m = b.problem.n = b.problem.k = 256;
        b.bestMs = 8.0; // 2 * 256^3 FLOP in 8 ms: 4.19 GFLOP/s
        RooflineView roofline;
        roofline.setPoints({b}, 0, 0, "1 problems, fp32");
        QCOMPARE(roofline.yAxis->label(), QString("achieved GFLOP/s (best kernel)"));
        const double gflops = roofline.graph(0)->data()->begin()->value;
        QVERIFY2(std::abs(gflops - b.tflops() * 1000) < 1e-9 && gflops > 4 && gflops < 4.3,
                 qPrintable(QString::number(gflops)));
        b.bestMs = 0.0001; // 336 TFLOP/s
        roofline.setPoints({b}, 989.4, 4.8, "1 problems, bf16");
        QCOMPARE(roofline.yAxis->label(), QString("achieved TFLOP/s (best kernel)"));

        HeatmapView heatmap;
        heatmap.setCells({diode::HeatCell{8, 8, 0.004, 1}}, "cpu");
        const auto *scale = heatmap.findChild<QCPColorScale *>();
        QVERIFY(scale);
        QCOMPARE(scale->axis()->label(), QString("best GFLOP/s"));
        QCOMPARE(scale->dataRange().upper, 4.0);
        heatmap.setCells({diode::HeatCell{8, 8, 500.0, 1}}, "gpu");
        QCOMPARE(scale->axis()->label(), QString("best TFLOP/s"));
    }

    // The tables' rate columns follow the plots' unit: a cpu sweep's read "GFLOP/s", not a column
    // headed "TFLOP/s" of 0.004s; GPU data keeps TFLOP/s.
    void cpuTablesAreInGflops() {
        const QString plan = m_dir.filePath("cpu-rates.json");
        {
            QFile f(plan);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(R"({"name": "cpu-rates", "version": 1, "timeout_s": 60, "repeats": 1,
              "cpu": {"block_m": [32], "block_n": [64], "block_k": [64], "threads": [1]},
              "entries": [{"name": "small", "ops": ["mm"], "dtypes": ["fp32"], "M": [64, 128], "N": [64], "K": [64]}]})");
        }
        const QString db = m_dir.filePath("cpu-rates.db");
        QString out, err;
        QCOMPARE(testutil::runCli({"sweep", "--backend", "cpu", "--plan", plan, "--db", db}, &out, &err), 0);
        WorkbenchState state;
        DataPage page(&state);
        QVERIFY(showOn(page, state, db));
        auto column = [](const StoreTableModel &model, const char *key) {
            return columnOf(model.table(), key);
        };
        const StoreTableModel &problems = *page.problemsModel(), &measurements = *page.measurementsModel();
        QCOMPARE(problems.headerData(column(problems, "Best TFLOP/s"), Qt::Horizontal).toString(),
                 QString("Best GFLOP/s"));
        const int rate = column(measurements, "TFLOP/s");
        QCOMPARE(measurements.headerData(rate, Qt::Horizontal).toString(), QString("GFLOP/s"));
        QCOMPARE(measurements.rowCount(), 2);
        for (int r = 0; r < measurements.rowCount(); ++r) {
            const double tflops = measurements.index(r, rate).data(Qt::EditRole).toDouble();
            const double shown = QLocale().toDouble(measurements.index(r, rate).data().toString());
            QVERIFY2(tflops > 0 && tflops < 1 && std::abs(shown / (tflops * 1000) - 1) < 1e-3,
                     qPrintable(QString("%1 shown for %2 TFLOP/s").arg(shown).arg(tflops)));
        }
        // Its run is described as the CPU it is: hardware and cores, not a GPU and SMs.
        const StoreTableModel &runs = *page.runsModel();
        QStringList headers;
        for (int c = 0; c < runs.columnCount(); ++c)
            headers << runs.headerData(c, Qt::Horizontal).toString();
        QVERIFY2(headers.contains("Hardware") && headers.contains("SMs / cores") && !headers.contains("GPU"),
                 qPrintable(headers.join(", ")));
        // GPU data: TFLOP/s, as stored.
        QSignalSpy again(&page, &DataPage::ready);
        state.setDatabase(kShipped, true);
        QVERIFY(again.wait(30000));
        QCOMPARE(measurements.headerData(rate, Qt::Horizontal).toString(), QString("TFLOP/s"));
        QCOMPARE(problems.headerData(column(problems, "Best TFLOP/s"), Qt::Horizontal).toString(),
                 QString("Best TFLOP/s"));
    }

    // The kernel and site lines imported into a store (diode import) are tables of their own: one
    // row a case, skipped ones with their reason, times in µs, the text filter finding a family.
    void kernelAndSiteLinesHaveTheirTables() {
        const QString db = m_dir.filePath("lines.db");
        for (const char *f : {"h200-kernels.jsonl", "h200-sites.jsonl"})
            QCOMPARE(
                testutil::runCli(
                    {"import", testutil::sourcePath(QStringLiteral("trained_models/h200/") + f), "--db", db}),
                0);
        WorkbenchState state;
        DataPage page(&state);
        QVERIFY(showOn(page, state, db));
        const StoreTableModel &kernels = *page.kernelsModel(), &sites = *page.sitesModel();
        QCOMPARE(kernels.totalRows(), qint64(305));
        QCOMPARE(sites.totalRows(), qint64(112));
        QTRY_COMPARE(page.findChild<QLabel *>("kernelsCount")->text(), QString("305 rows"));
        const QString site = sites.index(0, columnOf(diode::DataTable::Sites, "Site")).data().toString();
        QVERIFY2(site.contains(" B ") && site.contains(" K "), qPrintable(site));
        QAbstractItemModelTester kernelsTester(page.kernelsModel());
        auto column = [](const char *key) { return columnOf(diode::DataTable::Kernels, key); };
        QCOMPARE(kernels.headerData(column("Default ms"), Qt::Horizontal).toString(),
                 QString("Default (µs)"));
        int measured = 0, skipped = 0;
        for (int r = 0; r < kernels.rowCount(); ++r) {
            const double defaultMs = kernels.index(r, column("Default ms")).data(Qt::EditRole).toDouble();
            const double fastestMs =
                kernels.index(r, column("Fastest config ms")).data(Qt::EditRole).toDouble();
            if (kernels.index(r, column("Skipped")).data().toString().isEmpty()) {
                ++measured;
                QCOMPARE(kernels.index(r, column("Default ms")).data().toString(),
                         QLocale().toString(defaultMs * 1000, 'f', 1));
                QVERIFY(fastestMs > 0);
                QCOMPARE(kernels.index(r, column("Fastest / default")).data(Qt::EditRole).toDouble(),
                         fastestMs / defaultMs);
                // What the kernel is and the configuration that measured fastest, beside the times.
                const QString kernel = kernels.index(r, column("Kernel")).data().toString();
                QVERIFY2(kernel.startsWith("x ") && kernel.contains("loads"), qPrintable(kernel));
                const auto best = nlohmann::json::parse(
                    kernels.index(r, column("Fastest config")).data().toString().toStdString());
                QVERIFY2(best.contains("num_warps"), best.dump().c_str());
            } else {
                ++skipped;
                QCOMPARE(kernels.index(r, column("Default ms")).data().toString(), QString("n/a"));
            }
        }
        QCOMPARE(measured, 251);
        QCOMPARE(skipped, 54);
        // The text filter finds a family; the GEMM filters do not empty these tables.
        auto *text = page.findChild<QLineEdit *>("textFilter");
        text->setText("qwen2-0.5b");
        QTRY_COMPARE(kernels.totalRows(), qint64(69)); // qwen2-0.5b's cases, skipped ones too
        QTRY_VERIFY(sites.totalRows() > 0 && sites.totalRows() < 112);
        for (int r = 0; r < kernels.rowCount(); ++r)
            QCOMPARE(kernels.index(r, column("Family")).data().toString(), QString("qwen2-0.5b"));
        text->clear();
        auto *op = page.findChild<QComboBox *>("opFilter");
        op->setCurrentText("bmm");
        QTRY_COMPARE(kernels.totalRows(), qint64(305));
        auto *tabs = page.findChild<QTabWidget *>();
        tabs->setCurrentIndex(tabs->count() - 2);
        QCOMPARE(tabs->tabText(tabs->currentIndex()), QString("&Kernel lines"));
        QVERIFY(!op->isEnabled() && page.findChild<QLineEdit *>("textFilter")->isEnabled());
        tabs->setCurrentIndex(0);
        QVERIFY(op->isEnabled());
        tabs->setCurrentIndex(tabs->count() - 2);
        pagecheck::checkRendered(&page, "data-kernel-lines", 20);

        // A store without lines (the shipped one) says where they come from, not only "0 rows".
        WorkbenchState shipped;
        DataPage none(&shipped);
        QVERIFY(showOn(none, shipped, kShipped));
        QCOMPARE(none.kernelsModel()->totalRows(), qint64(0));
        for (const char *name : {"kernelsCount", "sitesCount"})
            QTRY_VERIFY2(none.findChild<QLabel *>(name)->text().contains("diode sweep-kernels"), name);
    }

    // On the cpu pipeline's data the heatmap opened on mm bf16, which has one problem
    // there: one bin filled the plot. It opens on the op and dtype with the most problems, a bin is
    // a cell among others, and hovering one says what it holds; a choice by hand is kept.
    void heatmapOpensOnTheMostMeasuredOpAndDtype() {
        const QString db = m_dir.filePath("heatmap-smoke.db");
        QCOMPARE(testutil::runCli({"sweep", "--backend", "cpu", "--plan",
                                   testutil::sourcePath("resources/plans/cpu-smoke.json"), "--db", db}),
                 0);
        WorkbenchState state;
        DataPage page(&state);
        page.resize(1130, 760);
        page.show();
        auto *op = page.findChild<QComboBox *>("heatmapOp");
        auto *dtype = page.findChild<QComboBox *>("heatmapDtype");
        op->setCurrentText("mm");
        dtype->setCurrentText("bf16"); // as the settings of an earlier session left them
        QSignalSpy shown(&page, &DataPage::analysisShown);
        state.setDatabase(db, true);
        QVERIFY(shown.wait(30000));
        QCOMPARE(op->currentText() + " " + dtype->currentText(), QString("mm fp32"));
        auto *heatmap = page.findChild<HeatmapView *>("heatmap");
        heatmap->replot();
        QVERIFY2(heatmap->xAxis->range().size() >= 5 && heatmap->yAxis->range().size() >= 5,
                 qPrintable(QString("%1 x %2 bins in view")
                                .arg(heatmap->xAxis->range().size())
                                .arg(heatmap->yAxis->range().size())));
        auto *map = heatmap->findChild<QCPColorMap *>();
        QVERIFY(map);
        QString tip;
        for (int x = 0; x < map->data()->keySize() && tip.isEmpty(); ++x)
            for (int y = 0; y < map->data()->valueSize() && tip.isEmpty(); ++y)
                if (!std::isnan(map->data()->cell(x, y))) {
                    double k = 0, v = 0;
                    map->data()->cellToCoord(x, y, &k, &v);
                    tip = PlotView::of(heatmap)->tipAt(map->coordsToPixels(k, v));
                }
        QVERIFY2(tip.contains("GFLOP/s over") && tip.contains("problem lines"), qPrintable(tip));
        // Chosen by hand: kept when the data is read again.
        dtype->setCurrentText("bf16");
        emit dtype->activated(dtype->currentIndex());
        QSignalSpy again(&page, &DataPage::analysisShown);
        state.notifyDataChanged();
        QVERIFY(again.wait(30000));
        QCOMPARE(dtype->currentText(), QString("bf16"));
    }

    // A long title wraps inside the heatmap beside its colour scale, not under it or past the
    // widget.
    void heatmapTitleFitsBesideTheScale() {
        HeatmapView view;
        view.resize(420, 360);
        view.show();
        view.setCells({diode::HeatCell{8, 8, 500.0, 1}, diode::HeatCell{9, 10, 300.0, 1}},
                      "Best FLOP rate of baddbmm bf16 over (M, N), log2 bins, in a window too narrow for it");
        view.replot();
        pagecheck::checkTitlesFit(&view, "heatmap");
    }

    // A roofline without a roof says so (no "0 TFLOP/s" roof in the legend) and labels whole
    // decades only.
    void rooflineWithoutPeaksHasNoRoof() {
        diode::ProblemBest b;
        b.problem.m = b.problem.n = b.problem.k = 256;
        b.bestMs = 2.0;
        RooflineView view;
        view.setPoints({b}, 0, 0, "1 problems, fp32");
        QCOMPARE(view.legend->itemCount(), 1); // the points only
        for (QCPAxis *axis : {view.xAxis, view.yAxis}) {
            const double decades = std::log10(axis->range().upper / axis->range().lower);
            QVERIFY2(std::abs(decades - std::round(decades)) < 1e-9 && decades >= 1,
                     qPrintable(QString::number(decades)));
        }
        view.setPoints({}, 989.4, 4.8, "0 problems, bf16");
        QVERIFY(!plotMessage(&view).isEmpty());
    }
};

QTEST_MAIN(TestDataPage)
#include "tst_datapage.moc"
