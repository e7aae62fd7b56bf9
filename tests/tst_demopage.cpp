#include "testutil.h"

#include "pagecheck.h"

#include "common/workbenchstate.h"
#include "demo/demochart.h"
#include "demo/demopage.h"
#include "demo/demorunner.h"
#include "demo/demotablemodel.h"
#include "diode/demoresult.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QSet>
#include <QSignalSpy>

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
