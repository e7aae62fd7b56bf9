#include "pagecheck.h"
#include "testutil.h"

#include "common/metricsmodel.h"
#include "common/workbenchstate.h"
#include "diode/infer/modelinstall.h"
#include "diode/infer/modelpackage.h"
#include "export/exportpage.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QLabel>
#include <QSet>

namespace {
const QString kModel = testutil::sourcePath("trained_models/h200/h200-gemm-mlp-v2.diode");
}

class TestExportPage : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void initTestCase() { testutil::freshSettings("tst_exportpage"); }

    void pluginDirectoryFollowsTheEnvironment() {
        qputenv("TORCH_DIODE_MODEL_PATH", "/a/first:/b/second");
        QCOMPARE(QString::fromStdString(diode::pluginModelDirectory().string()), QString("/a/first"));
        qunsetenv("TORCH_DIODE_MODEL_PATH");
        qputenv("XDG_DATA_HOME", "/x/data");
        QCOMPARE(QString::fromStdString(diode::pluginModelDirectory().string()),
                 QString("/x/data/torch_diode/models"));
        qunsetenv("XDG_DATA_HOME");
        qputenv("HOME", "/home/someone");
        QCOMPARE(QString::fromStdString(diode::pluginModelDirectory().string()),
                 QString("/home/someone/.local/share/torch_diode/models"));
    }

    void previewsSavesAndInstalls() {
        WorkbenchState state;
        state.setPackage(kModel);
        ExportPage page(&state);
        QCOMPARE(page.packagePath(), QFileInfo(kModel).absoluteFilePath());
        QAbstractItemModelTester tester(page.metricsModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        // The metrics in a table, the rest of the manifest as JSON: nothing shown twice.
        const auto *metrics = page.metricsModel();
        QVERIFY(metrics->rowCount() >= 4); // the model, its groups, three baselines
        QCOMPARE(metrics->index(0, 0).data().toString(), QString("h200-gemm-mlp-v2"));
        QCOMPARE(metrics->index(0, 2).data().toString(), QString("0.9243")); // test-split top-1 mean
        // The count is the trainer's, of problem lines, and the page says so.
        QVERIFY(page.findChild<QLabel *>("metricsTitle")
                    ->text()
                    .contains("problem lines the model never trained on"));
        // The baselines named as on every page, plain torch.compile's first.
        QStringList baselines;
        for (int r = 0; r < metrics->rowCount(); ++r) {
            const QString selector = metrics->index(r, 0).data().toString();
            if (selector != baselineTitle("aten") && selector != baselineTitle("first-config") &&
                selector != "random")
                continue;
            baselines << selector; // a baseline predicts no times: its MAPE and RMSE do not exist
            QCOMPARE(metrics->index(r, 9).data().toString(), QString("n/a"));
            QCOMPARE(metrics->index(r, 10).data().toString(), QString("n/a"));
        }
        QCOMPARE(baselines, QStringList({"plain torch.compile (ATen)", "Inductor's first config", "random"}));
        const QString json = page.manifestText();
        QVERIFY(json.contains("\"name\": \"h200-gemm-mlp-v2\""));
        QVERIFY2(!json.contains("top1_efficiency") && !json.contains("\"metrics\""),
                 "metrics are in the table only");

        const QString copy = m_dir.filePath("copy.diode");
        QCOMPARE(page.saveAs(copy), QString());
        QCOMPARE(testutil::fileBytes(copy), testutil::fileBytes(kModel));
        // Save as onto a shipped package is refused and the file stays unchanged.
        const QString shipped = testutil::sourcePath("trained_models/h200/h200-ingraph-warm.diode");
        const QByteArray before = testutil::fileBytes(shipped);
        QVERIFY2(page.saveAs(shipped).contains("is shipped data"), qPrintable(page.saveAs(shipped)));
        QCOMPARE(testutil::fileBytes(shipped), before);

        const QString dir = m_dir.filePath("plugin/models"); // created on install
        qputenv("TORCH_DIODE_MODEL_PATH", dir.toUtf8());
        QString error;
        const QString installed = page.install(false, &error);
        QCOMPARE(installed, dir + "/h200-gemm-mlp-v2.diode");
        QCOMPARE(testutil::fileBytes(installed), testutil::fileBytes(kModel));
        // A second install must not replace the file silently.
        QVERIFY(page.install(false, &error).isEmpty());
        QVERIFY2(error.contains("already exists"), qPrintable(error));
        QCOMPARE(page.install(true, &error), installed);
        qunsetenv("TORCH_DIODE_MODEL_PATH");

        page.resize(1130, 760);
        page.show();
        QTest::qWait(50);
        pagecheck::checkRendered(&page, "export", 20);
    }

    // A cpu model is described in its own terms (not "2 SMs" for a 2-core CPU).
    void cpuModelSaysCoresNotSMs() {
        const std::string bytes = testutil::fileBytes(kModel).toStdString();
        auto manifest = diode::ModelPackage::fromBytes(bytes).manifest();
        manifest["timing_method"] = "cpu";
        manifest["hardware"] = {{"gpu", "CPU: AMD EPYC 7B13"}, {"sm_count", 2}};
        const QString cpu = m_dir.filePath("cpu.diode");
        {
            QFile f(cpu);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray::fromStdString(diode::ModelPackage::withManifest(bytes, manifest)));
        }
        WorkbenchState state;
        state.setPackage(cpu);
        ExportPage page(&state);
        const auto *summary = page.findChild<QLabel *>("packageSummary");
        QVERIFY(summary);
        QVERIFY2(summary->text().contains("CPU: AMD EPYC 7B13 (2 cores)") && !summary->text().contains("SMs"),
                 qPrintable(summary->text()));
        state.setPackage(kModel);
        QVERIFY2(summary->text().contains("NVIDIA H200 (132 SMs)"), qPrintable(summary->text()));
    }

    // The plugin's own packages are offered without browsing to them, each with its GPU and truth
    // ("warm" alone said neither), and nothing is shown as chosen until a package is in use
    // (not v2 whatever database is open).
    void offersTheShippedInGraphPackages() {
        WorkbenchState state;
        ExportPage page(&state);
        auto *box = page.findChild<QComboBox *>();
        QVERIFY(box);
        QStringList items;
        for (int i = 0; i < box->count(); ++i)
            items << box->itemText(i);
        QVERIFY2(items.contains("h200-ingraph-warm · NVIDIA H200 · graph_warm") &&
                     items.contains("h200-ingraph-cold · NVIDIA H200 · graph_cold") &&
                     items.contains("h200-gemm-mlp-v2 · NVIDIA H200 · inductor_autotune"),
                 qPrintable(items.join(", ")));
        QCOMPARE(box->currentIndex(), -1);
        QVERIFY2(page.message().contains("No package yet"), qPrintable(page.message()));
        const QString warm = testutil::sourcePath("trained_models/h200/h200-ingraph-warm.diode");
        state.setPackage(warm);
        QCOMPARE(box->currentText(), QString("h200-ingraph-warm · NVIDIA H200 · graph_warm"));
        QCOMPARE(page.metricsModel()->index(0, 0).data().toString(), QString("h200-ingraph-warm"));
        // The baselines a user has, plain torch.compile first and max-autotune second (on the test
        // problems where Inductor's benchmark ran, said in its name), then the others.
        QStringList baselines;
        for (int r = 0; r < page.metricsModel()->rowCount(); ++r)
            if (page.metricsModel()->index(r, 9).data().toString() == "n/a") // predicts no times
                baselines << page.metricsModel()->index(r, 0).data().toString();
        QCOMPARE(baselines, QStringList({"plain torch.compile (ATen)",
                                         "max-autotune's pick (94 problem lines with Inductor's timings)",
                                         "Inductor's first config", "random"}));
        state.setPackage(QString()); // no model fits the open data: nothing of warm stays shown
        QCOMPARE(box->currentIndex(), -1);
        QCOMPARE(page.metricsModel()->rowCount(), 0);
        QVERIFY(page.packagePath().isEmpty());
        QVERIFY2(page.message().contains("No model fits"), qPrintable(page.message()));
    }

    void corruptPackageIsAVisibleError() {
        WorkbenchState state;
        ExportPage page(&state);
        QVERIFY(!page.showPackage(testutil::dataPath("../fuzz/corpus/tiny-truncated.diode")));
        QVERIFY2(page.message().contains("truncated"), qPrintable(page.message()));
    }
};

QTEST_MAIN(TestExportPage)
#include "tst_exportpage.moc"
