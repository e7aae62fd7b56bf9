#include "testutil.h"

#include "pagecheck.h"

#include "common/eventloopprobe.h"
#include "common/plotmessage.h"
#include "common/workbenchstate.h"
#include "data/datapage.h"
#include "data/storetablemodel.h"
#include "mainwindow.h"
#include "sweep/failedproblemsmodel.h"
#include "sweep/planform.h"
#include "sweep/slurmjobs.h"
#include "sweep/sweeppage.h"
#include "sweep/throughputplot.h"

#include "diode/sweep/sweepplan.h"

#include <nlohmann/json.hpp>

#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QMultiMap>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSet>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QThread>
#include <QTimer>

namespace {

const QString kShipped = testutil::sourcePath("trained_models/h200/h200-dataset.db");

// cpu-smoke's problems with 8 tile configs and 3 repeats: the same path, in a third of the time.
const char *kSmallCpuPlan = R"json({
  "name": "gui-cpu", "version": 1, "timeout_s": 60, "repeats": 3,
  "cpu": {"block_m": [16, 64], "block_n": [64], "block_k": [64, 256], "threads": [1, 2]},
  "entries": [
    {"name": "square", "ops": ["mm"], "dtypes": ["fp32"], "M": [128, 256, 384], "N": [256], "K": [256]},
    {"name": "linear", "ops": ["addmm"], "dtypes": ["bf16"], "M": [1, 32, 200], "N": [384], "K": [256], "b_transposed": [true]},
    {"name": "batched", "ops": ["bmm"], "dtypes": ["fp16"], "B": [4], "M": [64], "N": [128, 200], "K": [96]},
    {"name": "odd", "problems": [
      {"op": "mm", "dtype": "fp32", "M": 97, "N": 301, "K": 153, "a_transposed": true},
      {"op": "mm", "dtype": "bf16", "M": 333, "N": 127, "K": 211}]}
  ]})json";

// Ten CPU problems of about 0.4 s each on a 2-core VM (one configuration, three repeats): slow
// enough that a cancel sent when the first one finishes lands long before the last.
const char *kSlowCpuPlan = R"json({
  "name": "gui-cpu-slow", "version": 1, "timeout_s": 120, "repeats": 3,
  "cpu": {"block_m": [64], "block_n": [64], "block_k": [256], "threads": [1]},
  "entries": [{"name": "square", "ops": ["mm"], "dtypes": ["fp32"],
               "M": [512, 520, 528, 536, 544, 552, 560, 568, 576, 584], "N": [512], "K": [512]}]})json";

// kSmallCpuPlan expanded by the one plan expander: its problem and tile-config counts.
struct PlanSize {
    qint64 problems, configs;
};
PlanSize smallCpuPlanSize() {
    const auto plan = diode::SweepPlan::parse(kSmallCpuPlan, ".");
    return {qint64(plan.problems.size()), qint64(plan.cpuConfigs.size())};
}

PlanEstimate waitEstimate(SweepPage &page) {
    QSignalSpy spy(&page, &SweepPage::estimateShown);
    if (!spy.wait(10000))
        return PlanEstimate{0, 0, 0, {}, QStringLiteral("no estimate")};
    return spy.last().at(0).value<PlanEstimate>();
}

// A cpu sweep of two problems into `db`, the first too big to fit (it fails), run to its end.
bool runOneTooBigOfTwo(SweepPage &page, const QString &db) {
    page.setBackend("cpu");
    page.setTargetDatabase(db);
    page.setPlanText(
        R"({"name": "too-big", "repeats": 1, "cpu": {"block_m": [64], "block_n": [64], "block_k": [64], "threads": [1]},
        "entries": [{"problems": [{"op": "mm", "dtype": "fp32", "M": 20000, "N": 20000, "K": 20000},
                                  {"op": "mm", "dtype": "fp32", "M": 8, "N": 8, "K": 8}]}]})",
        QFileInfo(db).absolutePath());
    if (!waitEstimate(page).error.isEmpty())
        return false;
    QSignalSpy finished(page.worker(), &SweepWorker::finished);
    page.run();
    return finished.wait(60000);
}

} // namespace

class TestSweepPage : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void initTestCase() { testutil::freshSettings("tst_sweeppage"); }
    void sizeSyntax() {
        QCOMPARE(QString::fromStdString(parseSizes("64..1024 x2", "M").dump()),
                 QString("[64,128,256,512,1024]"));
        QCOMPARE(QString::fromStdString(parseSizes("64..256 +64", "M").dump()), QString("[64,128,192,256]"));
        QCOMPARE(QString::fromStdString(parseSizes("1, 8 16", "M").dump()), QString("[1,8,16]"));
        const auto lu = parseSizes("log 1..8192 n24 s15", "M");
        QCOMPARE(lu["log_uniform"]["count"].get<int>(), 24);
        QCOMPARE(lu["log_uniform"]["seed"].get<int>(), 15);
        try {
            parseSizes("1, 0", "N");
            QFAIL("size 0 accepted");
        } catch (const std::invalid_argument &e) {
            QVERIFY(QString(e.what()).startsWith("N: '0'"));
        }
    }

    void countsAndEstimatesPlans() {
        WorkbenchState state;
        SweepPage page(&state);
        QVERIFY(page.openPlan(testutil::sourcePath("resources/plans/cpu-smoke.json")));
        auto e = waitEstimate(page);
        QVERIFY2(e.error.isEmpty(), qPrintable(e.error));
        QCOMPARE(e.problems, qint64(26));
        QCOMPARE(e.choicesPerProblem, qint64(16));
        QVERIFY(e.seconds > 2 && e.seconds < 120);
        QVERIFY(e.basis.contains("GFLOP/s"));
        page.setBackend("inductor");
        QVERIFY(page.openPlan(testutil::sourcePath("resources/plans/h200-dataset.json")));
        e = waitEstimate(page);
        QVERIFY2(e.error.isEmpty(), qPrintable(e.error));
        QVERIFY(e.problems > 300);
        QVERIFY(e.basis.contains("90.6"));
        QVERIFY(e.seconds > 3600); // ~87 GPU-minutes measured
        // An invalid plan names the entry and field, and cannot be run.
        page.setPlanText(
            R"({"entries": [{"name": "x", "ops": ["mm"], "dtypes": ["bf16"], "M": [0], "N": 1, "K": 1}]})",
            m_dir.path());
        e = waitEstimate(page);
        QVERIFY2(e.error.contains("entries[0] (x): field 'M' has 0"), qPrintable(e.error));
        QVERIFY(!page.findChild<QPushButton *>("runSweep")->isEnabled());
    }

    void formAddsAnEntry() {
        WorkbenchState state;
        SweepPage page(&state);
        waitEstimate(page);
        page.setPlanText("{}", m_dir.path());
        waitEstimate(page);
        page.findChild<QPushButton *>("addEntry")->click();
        const auto e = waitEstimate(page);
        QVERIFY2(e.error.isEmpty(), qPrintable(e.error));
        QCOMPARE(e.problems, qint64(10)); // mm bf16, M 64..1024 x2 (5) × N {256, 512} × K {256}
        const auto plan =
            nlohmann::json::parse(page.findChild<QPlainTextEdit *>("planJson")->toPlainText().toStdString());
        QCOMPARE(plan["entries"].size(), size_t(1));
        QCOMPARE(plan["cpu"]["threads"].dump(), std::string("[1,2]"));
    }

    void shippedDatasetIsNeverTheSweepTarget() {
        WorkbenchState state;
        SweepPage page(&state);
        state.setDatabase(kShipped, true);
        QVERIFY(page.targetDatabase() != kShipped);
        const QString mine = m_dir.filePath("mine.db");
        state.setDatabase(mine, false);
        QCOMPARE(page.targetDatabase(), mine);
    }

    // Shipped data opens read-only whatever the caller asks, so Run cannot add a cpu run to the
    // H200 data after File ▸ Open.
    void fileOpenOfShippedDataIsReadOnly() {
        MainWindow w;
        QSignalSpy shown(&w, &MainWindow::databaseShown);
        w.openDatabase(kShipped); // as File ▸ Open does: not asked read-only
        QVERIFY(shown.wait(20000));
        QCOMPARE(w.state()->databasePath(), kShipped);
        QVERIFY(w.state()->databaseReadOnly());
        QVERIFY(w.findChild<SweepPage *>("sweepPage")->targetDatabase() != kShipped);
    }

    // A cpu sweep into H200 data asks first, naming what would mix; Cancel writes nothing, "Add
    // anyway" runs it.
    void sweepThatWouldMixDataAsksFirst() {
        const QString db = m_dir.filePath("h200-copy.db");
        QVERIFY(QFile::copy(kShipped, db));
        QFile::setPermissions(db, QFile::ReadOwner | QFile::WriteOwner);
        const QByteArray before = testutil::fileBytes(db);
        WorkbenchState state;
        SweepPage page(&state);
        state.setDatabase(db, false);
        page.setBackend("cpu");
        page.setPlanText(QString::fromLatin1(R"({"name": "mix", "repeats": 1,
          "cpu": {"block_m": [16], "block_n": [16], "block_k": [16], "threads": [1]},
          "entries": [{"ops": ["mm"], "dtypes": ["fp32"], "M": [16, 32], "N": [16], "K": [16]}]})"),
                         m_dir.path());
        QVERIFY2(waitEstimate(page).error.isEmpty(), "plan refused");
        QCOMPARE(page.targetDatabase(), db);
        QSignalSpy refused(page.worker(), &SweepWorker::mixRefused);
        QSignalSpy finished(page.worker(), &SweepWorker::finished);
        page.run();
        QVERIFY(refused.wait(30000));
        QVERIFY2(refused.at(0).at(0).toString().contains("GPU CPU: ") &&
                     refused.at(0).at(0).toString().contains("with NVIDIA H200"),
                 qPrintable(refused.at(0).at(0).toString()));
        auto *box = page.findChild<QMessageBox *>("mixedDataDialog");
        QVERIFY(box && box->isVisible());
        QVERIFY(box->text().contains("timing method cpu with inductor_autotune"));
        box->button(QMessageBox::Cancel)->click();
        QVERIFY(finished.isEmpty());
        QCOMPARE(testutil::fileBytes(db), before); // nothing written
        QVERIFY(page.findChild<QLabel *>("sweepError")->text().contains("would mix data"));

        page.run();
        QVERIFY(refused.wait(30000));
        box = page.findChild<QMessageBox *>("mixedDataDialog");
        QVERIFY(box);
        QAbstractButton *add = nullptr;
        for (auto *b : box->buttons())
            if (box->buttonRole(b) == QMessageBox::AcceptRole)
                add = b;
        QVERIFY(add);
        add->click();
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.at(0).at(0).toString(), QString("finished"));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM runs WHERE backend = 'cpu'"), int64_t(1));
    }

    void cpuSweepFillsTheDataPage() {
        MainWindow w;
        w.resize(1280, 800);
        w.show();
        QSignalSpy shown(&w, &MainWindow::databaseShown);
        w.openDatabase(kShipped, true);
        QVERIFY(shown.wait(20000));
        auto *sweep = w.findChild<SweepPage *>("sweepPage");
        auto *data = w.findChild<DataPage *>("dataPage");
        QVERIFY(sweep && data);
        QAbstractItemModelTester failedTester(sweep->failedModel(),
                                              QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester measTester(data->measurementsModel(),
                                            QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(w.showPage("sweepPage"));
        const QString db = m_dir.filePath("gui-sweep.db");
        sweep->setBackend("cpu");
        sweep->setTargetDatabase(db);
        sweep->setPlanText(QString::fromLatin1(kSmallCpuPlan), m_dir.path());
        const auto e = waitEstimate(*sweep);
        QVERIFY2(e.error.isEmpty(), qPrintable(e.error));
        const auto [problems, configs] = smallCpuPlanSize();
        QCOMPARE(problems, qint64(10)); // the numbers in the messages below
        QCOMPARE(configs, qint64(8));
        QCOMPARE(e.problems, problems); // kSmallCpuPlan's, never the shipped cpu-smoke's

        QSignalSpy finished(sweep->worker(), &SweepWorker::finished);
        QSignalSpy failed(sweep->worker(), &SweepWorker::failed);
        QSignalSpy progress(sweep->worker(), &SweepWorker::progress);
        QSignalSpy analysis(data, &DataPage::analysisShown);
        EventLoopProbe probe;
        QElapsedTimer t;
        t.start();
        probe.start();
        sweep->run();
        QVERIFY2(finished.wait(120000),
                 failed.isEmpty() ? "no finish" : qPrintable(failed.at(0).at(0).toString()));
        probe.stop();
        const double seconds = t.elapsed() / 1000.0;
        qInfo("cpu sweep of 10 problems x 8 configs from the Sweep page: %.1f s (estimated %.1f s); worst "
              "GUI-thread "
              "stall %.1f ms over %ld probe ticks",
              seconds, e.seconds, probe.worstMs(), probe.ticks());
        QCOMPARE(finished.at(0).at(0).toString(), QString("finished"));
        QVERIFY(progress.count() >= problems);
        QVERIFY2(probe.worstMs() < 1000, qPrintable(QString::number(probe.worstMs())));
        QCOMPARE(sweep->plot()->points(), int(problems));
        QCOMPARE(w.state()->databasePath(), db);
        QVERIFY(!w.state()->databaseReadOnly());

        // The Data page shows the sweep's database: 10 problems, 80 measurements.
        QVERIFY(analysis.wait(20000));
        QSignalSpy page(data->measurementsModel(), &StoreTableModel::pageLoaded);
        QVERIFY(!data->measurementsModel()->isLoading() || page.wait(20000));
        QCOMPARE(data->measurementsModel()->totalRows(), problems * configs);
        QSignalSpy ppage(data->problemsModel(), &StoreTableModel::pageLoaded);
        QVERIFY(!data->problemsModel()->isLoading() || ppage.wait(20000));
        QCOMPARE(data->problemsModel()->totalRows(), problems);
        QCOMPARE(qint64(data->analysis().best.size()), problems);
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM measurements WHERE status = 'ok'"),
                 int64_t(problems * configs));
        QTest::qWait(50);
        pagecheck::checkRendered(sweep, "sweep-after-cpu-run", 40);
        QVERIFY(w.showPage("dataPage"));
        QTest::qWait(50);
        pagecheck::checkRendered(data, "data-after-cpu-run", 8);
    }

    // Before a run the bar counts the plan's problems (never a default "0 / 100"), and the plot
    // is a sentence, not empty axes.
    void progressCountsThePlanBeforeARun() {
        WorkbenchState state;
        SweepPage page(&state);
        page.setPlanText(QString::fromLatin1(kSmallCpuPlan), m_dir.path());
        const qint64 problems = smallCpuPlanSize().problems;
        QCOMPARE(waitEstimate(page).problems, problems);
        auto *bar = page.findChild<QProgressBar *>("sweepProgress");
        QCOMPARE(bar->maximum(), int(problems));
        QCOMPARE(bar->text(), QString("0 / %1 problems").arg(problems));
        QVERIFY(!plotMessage(page.plot()).isEmpty());
    }

    // An estimate still under way when the plan text changes is dropped: the page never shows
    // (or lets Run start on) the previous plan's count. The MainWindow of a fresh start counts the
    // shipped cpu-smoke plan while a caller already sets another.
    void staleEstimateIsNeverShown() {
        WorkbenchState state;
        SweepPage page(&state);
        waitEstimate(page);
        page.openPlan(testutil::sourcePath("resources/plans/cpu-smoke.json"));
        auto *delay = page.findChild<QTimer *>("estimateDelay");
        QVERIFY(delay && delay->isActive());
        QElapsedTimer t;
        t.start();
        while (delay->isActive() && t.elapsed() < 10000) { // until cpu-smoke's count has started
            QCoreApplication::processEvents();
            QThread::msleep(1);
        }
        QVERIFY(!delay->isActive());
        page.setPlanText(QString::fromLatin1(kSmallCpuPlan), m_dir.path());
        QSignalSpy shown(&page, &SweepPage::estimateShown);
        QVERIFY(shown.wait(10000));
        QCOMPARE(shown.at(0).at(0).value<PlanEstimate>().problems, smallCpuPlanSize().problems);
        QTest::qWait(100);
        QCOMPARE(shown.count(), 1);
    }

    // What `diode-workbench --page Sweep --screenshot` shows, with no sweep run for it: the plan and
    // its estimate, and a run of the open database under the plot to compare
    // the next sweep with (Nsight's and TensorBoard's overlay of runs); ready() once it is drawn.
    void showsARunOfTheOpenDatabaseToCompareWith() {
        WorkbenchState state;
        SweepPage page(&state);
        page.resize(1130, 760);
        page.show();
        QSignalSpy ready(&page, &SweepPage::ready);
        state.setDatabase(kShipped, true);
        QVERIFY(ready.wait(60000));
        QVERIFY(!page.worker()->isRunning());
        QCOMPARE(page.plot()->points(), 0);
        QVERIFY(page.plot()->overlayPoints() > 100);
        QVERIFY(plotMessage(page.plot()).isEmpty());
        auto *compare = page.findChild<QComboBox *>("compareRun");
        QCOMPARE(compare->count(), 1 + 2); // "no earlier run" and the earlier data's two runs
        QVERIFY2(compare->currentText().startsWith("run 2: import problem-jsonl"),
                 qPrintable(compare->currentText()));
        compare->setCurrentIndex(0);
        QCOMPARE(page.plot()->overlayPoints(), 0);
        compare->setCurrentIndex(1);
        QVERIFY(page.plot()->overlayPoints() > 100);
        // The points a cpu sweep adds go on top of a GPU's run; the unit follows the largest rate.
        const QString db = m_dir.filePath("overlay.db");
        QVERIFY(runOneTooBigOfTwo(page, db));
        QCOMPARE(page.plot()->points(), 1);
    }

    // On a machine the Hardware page found without a GPU, an inductor sweep was
    // offered and ran into an error; it is not offered, and the page says why.
    void inductorIsOfferedOnlyWithAGpu() {
        WorkbenchState state;
        SweepPage page(&state);
        page.setBackend("inductor");
        auto *backend = page.findChild<QComboBox *>("backend");
        auto *items = qobject_cast<QStandardItemModel *>(backend->model());
        QStandardItem *inductor = items->item(backend->findText("inductor"));
        QVERIFY(inductor->isEnabled()); // not known yet: not refused
        state.setLocalGpus({});
        QVERIFY(!inductor->isEnabled());
        QVERIFY2(inductor->toolTip().contains("No GPU"), qPrintable(inductor->toolTip()));
        QCOMPARE(backend->currentText(), QString("cpu"));
        QVERIFY2(page.findChild<QLabel *>("sweepStatus")->text().contains("No GPU on this machine"),
                 qPrintable(page.findChild<QLabel *>("sweepStatus")->text()));
        state.setLocalGpus({"NVIDIA H100 80GB HBM3"});
        QVERIFY(inductor->isEnabled());
    }

    void cancelThenResumeFinishesTheRun() {
        WorkbenchState state;
        SweepPage page(&state);
        waitEstimate(page);
        const QString db = m_dir.filePath("resume.db");
        page.setBackend("cpu");
        page.setTargetDatabase(db);
        page.setPlanText(QString::fromLatin1(kSlowCpuPlan), m_dir.path());
        QVERIFY(waitEstimate(page).error.isEmpty());
        QSignalSpy finished(page.worker(), &SweepWorker::finished);
        QSignalSpy done(page.worker(), &SweepWorker::problemFinished);
        page.run();
        QVERIFY(done.wait(60000));
        page.cancel();
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.at(0).at(0).toString(), QString("cancelled"));
        const auto before = testutil::scalar(db, "SELECT count(*) FROM run_problems");
        QVERIFY2(before >= 1 && before < 10, qPrintable(QString::number(before)));
        page.resume();
        QVERIFY(finished.wait(120000));
        QCOMPARE(finished.at(1).at(0).toString(), QString("finished"));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM runs"), int64_t(1));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM run_problems"), int64_t(10));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM measurements"), int64_t(10));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM runs WHERE status = 'finished'"), int64_t(1));
    }

    // A cpu sweep's rates are written in GFLOP/s (not "0.004 TFLOP/s"); a faster result
    // rewrites the points already drawn in TFLOP/s, and clearing starts again from TFLOP/s.
    void throughputUnitFollowsTheLargestRate() {
        ThroughputPlot plot;
        ProblemResult slow;
        slow.problem.m = slow.problem.n = slow.problem.k = 256;
        slow.bestMs = 8.0; // 4.19 GFLOP/s
        plot.addResult(slow);
        QCOMPARE(plot.yAxis->label(), QString("achieved GFLOP/s (best config)"));
        QVERIFY(std::abs(plot.graph(0)->data()->begin()->value - slow.tflops() * 1000) < 1e-9);
        ProblemResult fast = slow;
        fast.problem.m = 4096;
        fast.bestMs = 0.01; // 3.4 TFLOP/s
        plot.addResult(fast);
        QCOMPARE(plot.yAxis->label(), QString("achieved TFLOP/s (best config)"));
        QCOMPARE(plot.graph(0)->data()->size(), 2);
        QList<double> values; // in key (problem size) order: the slow small one, then the fast one
        for (auto it = plot.graph(0)->data()->begin(); it != plot.graph(0)->data()->end(); ++it)
            values << it->value;
        QVERIFY2(std::abs(values[0] - slow.tflops()) < 1e-12 && std::abs(values[1] - fast.tflops()) < 1e-12,
                 qPrintable(QString("%1 %2").arg(values[0]).arg(values[1])));
        plot.clear("again");
        QCOMPARE(plot.unit().scale, 1.0);
        plot.addResult(slow);
        QCOMPARE(plot.yAxis->label(), QString("achieved GFLOP/s (best config)"));
    }

    // After another database is opened the page no longer shows the last run's progress, plot and
    // failures, as if they were of the database now open.
    void anotherDatabaseClearsTheLastRun() {
        WorkbenchState state;
        SweepPage page(&state);
        waitEstimate(page);
        const QString db = m_dir.filePath("last-run.db");
        QVERIFY(runOneTooBigOfTwo(page, db));
        auto *bar = page.findChild<QProgressBar *>("sweepProgress");
        auto *status = page.findChild<QLabel *>("sweepStatus");
        QCOMPARE(page.plot()->points(), 1);
        QCOMPARE(page.failedModel()->rowCount(), 1);
        QCOMPARE(bar->value(), 2);
        QVERIFY(status->text().contains("finished"));
        // The run's own database shown everywhere (as the page does when a run starts) keeps it.
        state.setDatabase(db, false);
        QCOMPARE(page.plot()->points(), 1);
        // Another database: nothing of that run is in it.
        state.setDatabase(kShipped, true);
        QCOMPARE(page.plot()->points(), 0);
        QVERIFY2(plotMessage(page.plot()).contains("h200-dataset.db is open"),
                 qPrintable(plotMessage(page.plot())));
        QCOMPARE(page.failedModel()->rowCount(), 0);
        QCOMPARE(bar->value(), 0);
        QCOMPARE(status->text(), QString("No sweep running."));
        QCOMPARE(page.targetDatabase(), db); // a read-only database is never a sweep's target
    }

    void failedProblemsAreListedWithTheirErrors() {
        WorkbenchState state;
        SweepPage page(&state);
        QAbstractItemModelTester tester(page.failedModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        waitEstimate(page);
        QVERIFY(runOneTooBigOfTwo(page, m_dir.filePath("failed.db")));
        QCOMPARE(page.failedModel()->rowCount(), 1);
        QVERIFY(page.failedModel()->index(0, 0).data().toString().contains("20000"));
        QVERIFY2(page.failedModel()->index(0, 1).data().toString().contains("2 GB"),
                 qPrintable(page.failedModel()->index(0, 1).data().toString()));
        QCOMPARE(page.plot()->points(), 1);
    }

    // The page's workers and GPUs reach the sweep: every worker the fake inductor worker ran
    // (tests/data/fakeworker) was given one of the two GPUs, and the store holds each problem once.
    void workersAndGpusReachTheSweep() {
        WorkbenchState state;
        SweepPage page(&state);
        waitEstimate(page);
        auto *workers = page.findChild<QSpinBox *>("workersPerGpu");
        auto *gpus = page.findChild<QLineEdit *>("gpus");
        QVERIFY(workers && gpus);
        page.setBackend("cpu");
        QVERIFY(!workers->isEnabled() && !gpus->isEnabled()); // the cpu backend has no GPU
        page.setBackend("inductor");
        QVERIFY(workers->isEnabled() && gpus->isEnabled());
        const QString db = m_dir.filePath("workers.db"), trace = m_dir.filePath("workers-trace.jsonl");
        page.setTargetDatabase(db);
        page.setPlanText(QString::fromLatin1(kSmallCpuPlan), m_dir.path());
        QVERIFY(waitEstimate(page).error.isEmpty());
        page.setWorkers(2, QStringLiteral("0,1"));
        qputenv("DIODE_PLUGIN_PYTHON", testutil::dataPath("fakeworker").toUtf8());
        qputenv("FAKE_WORKER_TRACE", trace.toUtf8());
        QSignalSpy finished(page.worker(), &SweepWorker::finished);
        QSignalSpy failed(page.worker(), &SweepWorker::failed);
        page.run();
        const bool done = finished.wait(120000);
        qunsetenv("FAKE_WORKER_TRACE");
        qunsetenv("DIODE_PLUGIN_PYTHON");
        QVERIFY2(done, failed.isEmpty() ? "no finish" : qPrintable(failed.at(0).at(0).toString()));
        QFile f(trace);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QMultiMap<QString, qint64> workersOfGpu; // from each worker's start line
        QSet<qint64> ms;
        int lines = 0;
        for (const QByteArray &line : f.readAll().split('\n')) {
            if (line.isEmpty())
                continue;
            const auto j = nlohmann::json::parse(line.toStdString());
            if (j.contains("event")) {
                workersOfGpu.insert(
                    QString::fromStdString(j["env"]["CUDA_VISIBLE_DEVICES"].get<std::string>()),
                    j["pid"].get<qint64>());
                continue;
            }
            ms.insert(j["M"].get<qint64>() * 100000 + j["N"].get<qint64>());
            ++lines;
        }
        const auto [problems, configs] = smallCpuPlanSize();
        QCOMPARE(lines, int(problems));
        QCOMPARE(ms.size(), problems); // each problem once (no two of the plan share M and N)
        // Two workers on each of the two GPUs, whichever of them took problems.
        QCOMPARE(workersOfGpu.uniqueKeys(), (QList<QString>{QStringLiteral("0"), QStringLiteral("1")}));
        QCOMPARE(workersOfGpu.count(QStringLiteral("0")), 2);
        QCOMPARE(workersOfGpu.count(QStringLiteral("1")), 2);
        // A bad GPU list is the page's error, not a crash.
        page.setWorkers(1, QStringLiteral("0,0"));
        page.setTargetDatabase(m_dir.filePath("workers-bad.db"));
        QSignalSpy failedAgain(page.worker(), &SweepWorker::failed);
        page.run();
        QVERIFY(failedAgain.wait(30000));
        auto *error = page.findChild<QLabel *>("sweepError");
        QVERIFY2(error->text().contains("name each GPU once"), qPrintable(error->text()));
        page.setWorkers(1, QString());
    }

    // Slurm is offered where sbatch is on the PATH and says why not elsewhere.
    void slurmIsOfferedOnlyWithSbatch() {
        const QByteArray path = qgetenv("PATH");
        qputenv("PATH", m_dir.filePath("no-slurm-here").toUtf8());
        WorkbenchState state;
        SweepPage page(&state);
        qputenv("PATH", path);
        auto *box = page.findChild<QCheckBox *>("slurmSubmit");
        QVERIFY(box && !box->isEnabled());
        QVERIFY2(box->toolTip().contains("sbatch is not on the PATH"), qPrintable(box->toolTip()));
        // Its fields follow it; on Slurm the GPUs are those Slurm gives, not the GPU list.
        page.setBackend("inductor");
        page.setSlurm(false);
        QVERIFY(!page.findChild<QSpinBox *>("slurmShards")->isEnabled());
        QVERIFY(page.findChild<QLineEdit *>("gpus")->isEnabled());
        page.setSlurm(true, 3, "gpu", "01:00:00");
        QVERIFY(page.findChild<QSpinBox *>("slurmShards")->isEnabled());
        QVERIFY(!page.findChild<QLineEdit *>("gpus")->isEnabled());
        page.setSlurm(false);
    }

    // The Sweep page on a real one-node Slurm: tests/slurm/test_slurm_cluster.py runs this case with
    // its cluster up (DIODE_SLURM_LIVE=1, the plan in DIODE_SLURM_PLAN). Run submits the plan as an
    // array of shards, the page follows the shards' stores and jobs, then the merge, and opens the
    // merged database: every problem of the plan measured once.
    void submitsToSlurmAndFollowsTheMerge() {
        if (qEnvironmentVariableIsEmpty("DIODE_SLURM_LIVE"))
            QSKIP("needs a running Slurm: tests/slurm/test_slurm_cluster.py runs this case with its cluster");
        WorkbenchState state;
        SweepPage page(&state);
        waitEstimate(page);
        const QString db = m_dir.filePath("gui-slurm.db");
        page.setBackend("cpu");
        page.setTargetDatabase(db);
        QVERIFY(page.openPlan(qEnvironmentVariable("DIODE_SLURM_PLAN")));
        const PlanEstimate e = waitEstimate(page);
        QVERIFY2(e.error.isEmpty(), qPrintable(e.error));
        auto *box = page.findChild<QCheckBox *>("slurmSubmit");
        QVERIFY2(box->isEnabled(), qPrintable(box->toolTip()));
        page.setSlurm(true, 2);
        QSignalSpy states(page.slurmJobs(), &SlurmJobs::states);
        QSignalSpy failed(page.slurmJobs(), &SlurmJobs::failed);
        page.run();
        auto *status = page.findChild<QLabel *>("sweepStatus");
        QTRY_VERIFY2_WITH_TIMEOUT(status->text().contains("merged into") || !failed.isEmpty(),
                                  qPrintable(status->text()), 240000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.at(0).at(0).toString()));
        QVERIFY(states.size() >= 1);
        QCOMPARE(state.databasePath(), db); // the merged store is what the pages show now
        QVERIFY(QFileInfo(db + ".shards/sweep.sbatch").exists());
        const qint64 problems = e.problems;
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM run_problems WHERE status = 'ok'"), problems);
        QCOMPARE(testutil::scalar(db, "SELECT count(DISTINCT problem_id) FROM run_problems"), problems);
        const QString shown = page.findChild<QPlainTextEdit *>("slurmState")->toPlainText();
        QVERIFY2(shown.contains("shard 0/2") && shown.contains("shard 1/2") && shown.contains("merge"),
                 qPrintable(shown));
        page.setSlurm(false);
    }

    void unavailableBackendIsAVisibleError() {
        WorkbenchState state;
        SweepPage page(&state);
        waitEstimate(page);
        page.setBackend("inductor");
        page.setTargetDatabase(m_dir.filePath("inductor.db"));
        page.setPlanText(QString::fromLatin1(kSmallCpuPlan), m_dir.path());
        QVERIFY(waitEstimate(page).error.isEmpty());
        qputenv("DIODE_PYTHON", testutil::dataPath("python-without-torch.sh").toUtf8());
        QSignalSpy failed(page.worker(), &SweepWorker::failed);
        page.run();
        QVERIFY(failed.wait(60000));
        qunsetenv("DIODE_PYTHON");
        auto *error = page.findChild<QLabel *>("sweepError");
        QVERIFY(!error->isHidden());
        QVERIFY2(error->text().contains("inductor backend cannot run"), qPrintable(error->text()));
        // Said once (not "cannot run: the inductor backend cannot run"), the bar back
        // on the plan's problems (not "0 / 1"), and no "Measuring…" over an empty plot.
        QCOMPARE(error->text().count("cannot run"), 1);
        auto *bar = page.findChild<QProgressBar *>("sweepProgress");
        QCOMPARE(bar->maximum(), int(smallCpuPlanSize().problems));
        QVERIFY(bar->maximum() > 1);
        QVERIFY2(!plotMessage(page.plot()).contains("Measuring"), qPrintable(plotMessage(page.plot())));
        QVERIFY2(plotMessage(page.plot()).contains("No problem was measured"),
                 qPrintable(plotMessage(page.plot())));
    }
};

QTEST_MAIN(TestSweepPage)
#include "tst_sweeppage.moc"
