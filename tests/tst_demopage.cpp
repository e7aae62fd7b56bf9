#include "testutil.h"

#include "pagecheck.h"

#include "common/plotmessage.h"
#include "common/plotview.h"
#include "common/workbenchstate.h"
#include "demo/breakdownchart.h"
#include "demo/demochart.h"
#include "demo/demokernelmodel.h"
#include "demo/demopage.h"
#include "demo/demorunner.h"
#include "demo/demotablemodel.h"
#include "demo/scenarioview.h"
#include "diode/analysis/demoresult.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QSet>
#include <QSignalSpy>
#include <QTabWidget>

class TestDemoPage : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void initTestCase() { testutil::freshSettings("tst_demopage"); }

    void showsASavedResult() {
        WorkbenchState state;
        DemoPage page(&state);
        QAbstractItemModelTester tester(page.tableModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(page.openResult(testutil::dataPath("demo/h200-demo.json")));
        // 4 cases x 5 modes, less the mode one case lacks; the failed mode stays as a row with its error.
        QCOMPARE(page.tableModel()->rowCount(), 19);
        bool sawError = false;
        for (int r = 0; r < page.tableModel()->rowCount(); ++r)
            sawError |= page.tableModel()->index(r, DemoTableModel::Error).data().toString() ==
                        "out of shared memory";
        QVERIFY(sawError);
        // max-autotune 9.7 s against plugin-top1 0.79 s on the first case
        diode::DemoCase c{
            "x", "gemm", {{"max-autotune", {9.7, 0.0335, ""}}, {"plugin-top1", {0.79, 0.0339, ""}}}};
        QVERIFY(std::abs(diode::DemoResult::compileSpeedup(c, "plugin-top1") - 9.7 / 0.79) < 1e-9);
        QVERIFY(std::isnan(diode::DemoResult::compileSpeedup(c, "default")));
        // One convention everywhere: speed-up ×, higher is better, times in µs; against plain
        // torch.compile first (the baseline a user has), then against max-autotune.
        QVERIFY(std::abs(diode::DemoResult::kernelSpeedup(c, "plugin-top1") - 0.0335 / 0.0339) < 1e-9);
        const auto *model = page.tableModel();
        QCOMPARE(model->headerData(DemoTableModel::KernelUs, Qt::Horizontal).toString(),
                 QString("kernel (µs)"));
        QCOMPARE(model->headerData(DemoTableModel::KernelVsPlain, Qt::Horizontal).toString(),
                 QString("kernel × vs plain"));
        QVERIFY(DemoTableModel::CompileVsPlain < DemoTableModel::CompileVsMaxAutotune &&
                DemoTableModel::KernelVsPlain < DemoTableModel::KernelVsMaxAutotune);
        QCOMPARE(model->headerData(DemoTableModel::KernelVsMaxAutotune, Qt::Horizontal).toString(),
                 QString("kernel × vs max-autotune"));
        for (int r = 0; r < model->rowCount(); ++r) {
            const QString mode = model->index(r, DemoTableModel::Mode).data().toString();
            const QString vsPlain = model->index(r, DemoTableModel::KernelVsPlain).data().toString(),
                          vsMax = model->index(r, DemoTableModel::KernelVsMaxAutotune).data().toString();
            QVERIFY2(mode == "default" ? vsPlain.startsWith("1×") : vsPlain.endsWith("×") || vsPlain == "n/a",
                     qPrintable(mode + ": " + vsPlain));
            QVERIFY2(mode == "max-autotune" ? vsMax.startsWith("1×") : vsMax.endsWith("×") || vsMax == "n/a",
                     qPrintable(mode + ": " + vsMax));
        }
        // Each case's rows: plain torch.compile first, max-autotune second.
        QCOMPARE(model->index(0, DemoTableModel::Mode).data().toString(), QString("default"));
        QCOMPARE(model->index(1, DemoTableModel::Mode).data().toString(), QString("max-autotune"));
        // The CLI prints the same speed-ups (diode demo --show).
        QString out;
        QCOMPARE(testutil::runCli({"demo", "--show", testutil::dataPath("demo/h200-demo.json")}, &out), 0);
        QVERIFY2(out.contains("kernel µs") &&
                     out.contains("speed-up against max-autotune (higher is better)"),
                 qPrintable(out));
        QVERIFY2(!out.contains("ratio"), qPrintable(out));
        // Whatever order a result lists its modes in (the shipped model steps: default, plugin,
        // max-autotune), the CLI prints plain torch.compile first and max-autotune second.
        QCOMPARE(
            testutil::runCli(
                {"demo", "--show", testutil::sourcePath("trained_models/h200/h200-model-steps.json")}, &out),
            0);
        const QString header = out.section('\n', 1, 1);
        QVERIFY2(header.indexOf("plain torch.compile") > 0 &&
                     header.indexOf("plain torch.compile") < header.indexOf("max-autotune") &&
                     header.indexOf("max-autotune") < header.indexOf("plugin"),
                 qPrintable(header));
        QVERIFY2(out.contains("speed-up against plain torch.compile"), qPrintable(out));

        page.resize(1130, 760);
        page.show();
        QTest::qWait(50);
        pagecheck::checkRendered(&page, "demo-fixture", 50);
    }

    // The result measured on the H200 ships with the workbench and opens on first start: all
    // cases summarised first, then any one case on its own.
    void showsTheShippedH200Result() {
        WorkbenchState state;
        DemoPage page(&state);
        QVERIFY(!DemoPage::shippedResult().isEmpty());
        QVERIFY(page.openResult(DemoPage::shippedResult()));
        auto *cases = page.findChild<QComboBox *>("demoCase");
        QVERIFY(cases);
        QVERIFY(cases->count() >= 69); // the summary, at least 60 held-out GEMMs and 8 model blocks
        QVERIFY(cases->itemText(0).startsWith("All"));
        // One row per case and mode it was run in (the blocks lack plugin-cold: never run on them),
        // the model steps measured beside the result included.
        const auto shipped = diode::DemoResult::load(DemoPage::shippedResult().toStdString());
        int runs = 0, shippedRuns = 0;
        for (const auto &c : page.result().cases)
            for (const auto &m : page.result().modes)
                runs += int(c.results.count(m));
        for (const auto &c : shipped.cases)
            for (const auto &m : shipped.modes)
                shippedRuns += int(c.results.count(m));
        QCOMPARE(page.tableModel()->rowCount(), runs);
        QVERIFY(runs > shippedRuns);
        QVERIFY(runs > 3 * (cases->count() - 1));
        page.resize(1130, 760);
        page.show();
        QTest::qWait(50);
        pagecheck::checkRendered(&page, "demo-h200-summary", 50);
        // Summarised by kind, against plain torch.compile and max-autotune, warm and L2-flushed.
        const QString summary = page.findChild<QLabel *>("demoSummary")->text();
        QVERIFY2(summary.contains("GEMMs against plain torch.compile") &&
                     summary.contains("model blocks against max-autotune") &&
                     summary.contains("L2 flushed") && !summary.contains("nan"),
                 qPrintable(summary));
        // The model steps measured beside it (trained_models/h200/h200-models-cases.jsonl) are shown
        // with it: every scenario once, the latest line of each.
        QVERIFY2(summary.contains("model steps against plain torch.compile"), qPrintable(summary));
        int steps = 0;
        for (const auto &c : page.result().cases)
            steps += c.kind == "model";
        QVERIFY2(steps >= 6, qPrintable(QString::number(steps)));
        // Charts and legend: plain torch.compile is the reference and comes first, max-autotune second.
        auto *chart = page.kernelChart();
        QVERIFY(chart->plottableCount() >= 3);
        QCOMPARE(chart->plottable(0)->name(), QString("plain torch.compile"));
        QCOMPARE(chart->plottable(1)->name(), QString("max-autotune"));
        bool titled = false;
        for (int i = 0; i < chart->plotLayout()->elementCount(); ++i)
            if (auto *t = qobject_cast<QCPTextElement *>(chart->plotLayout()->elementAt(i)))
                titled = titled || t->text().contains("against plain torch.compile");
        QVERIFY2(titled, "the kernel chart's title names plain torch.compile as the reference");
        // A mode keeps its colour whatever its position: exhaustive-plugin is the
        // sixth mode here and the fifth in the fixture.
        auto colourOf = [chart](const QString &mode) {
            for (int i = 0; i < chart->plottableCount(); ++i)
                if (chart->plottable(i)->name() == mode)
                    return qobject_cast<QCPBars *>(chart->plottable(i))->brush().color();
            return QColor();
        };
        const QColor exhaustive = colourOf("exhaustive-plugin");
        QVERIFY(exhaustive.isValid());
        QVERIFY(page.openResult(testutil::dataPath("demo/h200-demo.json")));
        QCOMPARE(chart->plottable(0)->name(), QString("plain torch.compile"));
        QCOMPARE(colourOf("exhaustive-plugin"), exhaustive);
        QVERIFY(page.openResult(DemoPage::shippedResult()));
        cases->setCurrentIndex(cases->findText("vit-b8 bf16")); // a model step
        QVERIFY(cases->currentIndex() > 0);
        QCOMPARE(chart->plottable(0)->name(), QString("plain torch.compile"));
        QTest::qWait(50);
        pagecheck::checkRendered(&page, "demo-h200-step", 50);
    }

    // The model steps per scenario (diode-demo/3): step time per mode with its
    // spread over processes, compile time, where the step's time goes by kind of kernel, and the
    // largest kernels; plain torch.compile first, max-autotune second, then the plugin.
    void showsModelStepsPerScenario() {
        WorkbenchState state;
        DemoPage page(&state);
        page.resize(1130, 760);
        page.show();
        QVERIFY(page.openResult(testutil::dataPath("demo/demo3-model-steps.json")));
        QCOMPARE(page.findChild<QTabWidget *>("demoTabs")->currentIndex(), 1); // opens on the model steps
        ScenarioView *view = page.scenarioView();
        QCOMPARE(view->scenarios(), QStringList({"llama-decode-b1-s512 bf16", "gpt2-train-b8-s1024 bf16"}));
        DemoChart *step = view->stepChart();
        QStringList modes;
        int errorBars = 0;
        for (int i = 0; i < step->plottableCount(); ++i) {
            if (qobject_cast<QCPBars *>(step->plottable(i)))
                modes << step->plottable(i)->name();
            errorBars += qobject_cast<QCPErrorBars *>(step->plottable(i)) != nullptr;
        }
        QCOMPARE(modes, QStringList({"plain torch.compile", "max-autotune", "plugin"}));
        QCOMPARE(errorBars, 3); // the spread over three processes, one whisker a mode
        QCOMPARE(step->barsOf("plugin")->data()->at(0)->value, 371.6);
        // Hovering the plugin's bar names it, its time, its spread and its speed-up.
        const auto *bar = step->barsOf("plugin");
        const QPointF px = bar->coordsToPixels(bar->data()->at(0)->key, bar->data()->at(0)->value / 2);
        const QString tip = PlotView::of(step)->tipAt(px);
        QVERIFY2(tip.contains("plugin") && tip.contains("371.6") && tip.contains("370.1") &&
                     tip.contains("×"),
                 qPrintable(tip));
        QVERIFY(view->compileChart()->barsOf("max-autotune"));
        QCOMPARE(view->breakdownChart()->segments(), 3 * 6); // three modes, six kinds of kernel each
        QCOMPARE(view->kernelModel()->rowCount(), 3 * DemoKernelModel::kPerMode);
        QCOMPARE(view->kernelModel()->index(0, DemoKernelModel::Mode).data().toString(),
                 QString("plain torch.compile"));
        QCOMPARE(view->kernelModel()->index(0, DemoKernelModel::Kernel).data().toString(),
                 QString("extern_kernels.mm (qkv)"));
        QCOMPARE(view->kernelModel()->index(0, DemoKernelModel::Us).data().toString(), QString("120.4"));
        QTest::qWait(50);
        pagecheck::checkRendered(&page, "demo-model-steps", 50);
        for (QCustomPlot *plot :
             {static_cast<QCustomPlot *>(step), static_cast<QCustomPlot *>(view->compileChart()),
              static_cast<QCustomPlot *>(view->breakdownChart())}) {
            plot->replot();
            pagecheck::checkTitlesFit(plot, plot->objectName());
        }
        // The training step: the other scenario.
        page.findChild<QComboBox *>("demoScenario")->setCurrentIndex(1);
        QCOMPARE(step->barsOf("max-autotune")->data()->at(0)->value, 7918.0);
        // A result without model steps, or with steps but no breakdown (diode-demo/2), says so.
        QVERIFY(page.openResult(testutil::dataPath("demo/h200-demo.json")));
        QVERIFY2(plotMessage(view->breakdownChart()).contains("diode-demo/3 results record"),
                 qPrintable(plotMessage(view->breakdownChart())));
        // The shipped result opens on its first step that says where the time goes; its older
        // steps, measured without their kernels, say so.
        QVERIFY(page.openResult(DemoPage::shippedResult()));
        QVERIFY(!view->scenarios().isEmpty());
        auto *scenario = page.findChild<QComboBox *>("demoScenario");
        QVERIFY2(view->breakdownChart()->segments() > 0, qPrintable(scenario->currentText()));
        const int older = scenario->findText("llama-decode-b1-s512 bf16"); // measured before breakdowns
        QVERIFY(older >= 0 && older != scenario->currentIndex());
        scenario->setCurrentIndex(older);
        QVERIFY2(plotMessage(view->breakdownChart()).contains("diode-demo/3"),
                 qPrintable(plotMessage(view->breakdownChart())));
        // The CLI prints the same: medians with their spread, and where the time goes.
        QString out;
        QCOMPARE(
            testutil::runCli({"demo", "--show", testutil::dataPath("demo/demo3-model-steps.json")}, &out), 0);
        QVERIFY2(out.contains("step 371.6 us [370.1-374.4]") && out.contains("(3 processes)") &&
                     out.contains("gemm 282.5"),
                 qPrintable(out));
    }

    // A demo/3 field that is not what the format says is refused, naming the case, mode and field.
    void badModelStepFieldsAreNamed() {
        const QString base =
            QString::fromUtf8(testutil::fileBytes(testutil::dataPath("demo/demo3-model-steps.json")));
        const QString cases[][2] = {
            {R"("category": "gemm")", R"("category": "matmul")"},
            {R"("processes": 3)", R"("processes": 0)"},
        };
        const QString said[] = {"breakdown[0]: category 'matmul' is not one of gemm, attention",
                                "'processes' must be"};
        for (int i = 0; i < 2; ++i) {
            QString text = base;
            text.replace(text.indexOf(cases[i][0]), cases[i][0].size(), cases[i][1]);
            const QString path = m_dir.filePath(QString("bad-%1.json").arg(i));
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(text.toUtf8());
            f.close();
            WorkbenchState state;
            DemoPage page(&state);
            QVERIFY(!page.openResult(path));
            QVERIFY2(page.message().contains(said[i]) && page.message().contains("cases[1].results.default"),
                     qPrintable(page.message()));
        }
    }

    // The legend listed modes with no bar; a case's kernel bars stood on a log axis
    // (155 and 140 µs looked equal); `diode demo --show` printed max-autotune's compile speed-up as
    // "0.0x"; the page opened on a result measured before the timer fix without a word.
    void demoChartsTellTheTruth() {
        WorkbenchState state;
        DemoPage page(&state);
        page.resize(1280, 760);
        page.show();
        QVERIFY(page.openResult(DemoPage::shippedResult()));
        auto *cases = page.findChild<QComboBox *>("demoCase");
        auto *chart = page.kernelChart();
        for (int k = 1; k < cases->count(); k += 7) {
            cases->setCurrentIndex(k);
            const auto &c = page.result().cases[size_t(k - 1)];
            int bars = 0;
            for (int i = 0; i < chart->plottableCount(); ++i)
                if (auto *b = qobject_cast<QCPBars *>(chart->plottable(i))) {
                    ++bars;
                    QVERIFY2(b->dataCount() > 0,
                             qPrintable(QString::fromStdString(c.name) + ": " + b->name() + " has no bar"));
                }
            int withTimes = 0;
            for (const auto &[mode, t] : c.results)
                withTimes += t.error.empty() && t.kernelMs.has_value();
            QCOMPARE(bars, withTimes);
            QStringList legend;
            for (int i = 0; i < chart->legend->itemCount(); ++i)
                if (auto *item = qobject_cast<QCPPlottableLegendItem *>(chart->legend->item(i)))
                    legend << item->plottable()->name();
            QVERIFY2(legend.size() == bars,
                     qPrintable(QString::fromStdString(c.name) + ": " + legend.join(", ")));
            QCOMPARE(chart->yAxis->scaleType(), QCPAxis::stLinear);
            QCOMPARE(chart->yAxis->range().lower, 0.0);
        }
        // Measured before every timing started from a flushed L2: said above the charts.
        auto *note = page.findChild<QLabel *>("demoTimerNote");
        QVERIFY(note->isVisible());
        QVERIFY2(note->text().contains("before every timing started from a flushed L2 (2026-11-27)"),
                 qPrintable(note->text()));
        QVERIFY(page.openResult(testutil::dataPath("demo/demo3-model-steps.json")));
        QVERIFY(!note->isVisible());
        // The CLI's digits are the page's: a compile speed-up of 0.01x is not "0.0x".
        QString out;
        QCOMPARE(testutil::runCli({"demo", "--show", DemoPage::shippedResult()}, &out), 0);
        QVERIFY2(!out.contains(QRegularExpression("compile\\s+0\\.0×")), qPrintable(out));
        QVERIFY2(out.contains(QRegularExpression("max-autotune\\s+compile\\s+0\\.0[0-9]+×")),
                 qPrintable(out));
        QVERIFY2(out.contains("note: measured 2026-11-23, before every timing started from a flushed L2"),
                 qPrintable(out.left(400)));
    }

    void runIsDisabledWithoutAGpu() {
        WorkbenchState state;
        DemoPage page(&state);
        QSignalSpy checked(page.runner(), &DemoRunner::gpuChecked);
        QVERIFY(checked.wait(20000)); // NVML is asked on a worker thread
        if (checked.at(0).at(0).toBool())
            QSKIP("this machine has a GPU; the demo itself is run by hand");
        QVERIFY(!page.canRun());
        QVERIFY2(page.runReason().contains("no GPU"), qPrintable(page.runReason()));
        page.run(); // refused with a visible reason, nothing started
        QVERIFY(!page.runner()->isRunning());
        QVERIFY2(page.message().contains("Cannot run the demo"), qPrintable(page.message()));
    }

    // The real `diode demo` child process on a machine without torch or a GPU: the runner turns
    // its exit code 3 and last words into a visible error, and no result is announced.
    void demoProcessFailureReachesTheUser() {
        DemoRunner runner;
        QSignalSpy failed(&runner, &DemoRunner::failed), finished(&runner, &DemoRunner::finished),
            ready(&runner, &DemoRunner::resultReady);
        qputenv("DIODE_PYTHON", testutil::dataPath("python-without-torch.sh").toUtf8());
        runner.start(
            {"--problems", testutil::sourcePath("resources/demo/h200-heldout-gemms.jsonl"), "--limit", "1"},
            m_dir.filePath("never.json"));
        QVERIFY(finished.wait(60000));
        qunsetenv("DIODE_PYTHON");
        QCOMPARE(ready.count(), 0);
        QCOMPARE(failed.count(), 1);
        const QString msg = failed.at(0).at(0).toString();
        QVERIFY2(msg.contains("cannot run on this machine") && msg.contains("torch"), qPrintable(msg));
        QVERIFY(!QFileInfo::exists(m_dir.filePath("never.json")));
    }

    void badFileIsAVisibleError() {
        const QString bad = m_dir.filePath("bad.json");
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"schema": "diode-demo/9", "modes": [], "cases": []})");
        f.close();
        WorkbenchState state;
        DemoPage page(&state);
        QVERIFY(!page.openResult(bad));
        QVERIFY2(page.message().contains("diode-demo/9"), qPrintable(page.message()));
    }
};

QTEST_MAIN(TestDemoPage)
#include "tst_demopage.moc"
