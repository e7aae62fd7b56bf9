#include "testutil.h"

#include "pagecheck.h"

#include "common/plotmessage.h"
#include "common/workbenchstate.h"
#include "hardware/hardwarepage.h"
#include "hardware/telemetryplot.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QLabel>
#include <QSignalSpy>
#include <QStandardItemModel>

class TestHardwarePage : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void initTestCase() { testutil::freshSettings("tst_hardwarepage"); }
    void showsTheMachineAndSaysWhenThereIsNoGpu() {
        WorkbenchState state;
        HardwarePage page(&state);
        QAbstractItemModelTester tester(page.gpuModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy shown(&page, &HardwarePage::hardwareShown);
        QVERIFY(shown.wait(20000));
        const QString machine = page.findChild<QLabel *>("machine")->text();
        QVERIFY2(machine.contains("CPU") && machine.contains("threads"), qPrintable(machine));
        const QString notes = page.findChild<QLabel *>("hardwareNotes")->text();
        if (page.gpuModel()->rowCount() == 0) {
            QVERIFY2(notes.contains("No GPU detected"), qPrintable(notes));
            QVERIFY2(notes.contains("NVML"), qPrintable(notes)); // says why
        } else {
            QVERIFY(!page.gpuModel()->item(0, 1)->text().isEmpty());
        }
    }

    void shippedDatasetHasNoTelemetryAndSaysSo() {
        WorkbenchState state;
        HardwarePage page(&state);
        page.resize(1130, 760);
        page.show();
        QSignalSpy hw(&page, &HardwarePage::hardwareShown);
        QSignalSpy tel(&page, &HardwarePage::telemetryShown);
        state.setDatabase(testutil::sourcePath("trained_models/h200/h200-dataset.db"), true);
        QVERIFY(tel.count() > 0 || tel.wait(20000));
        QVERIFY(hw.count() > 0 || hw.wait(20000));
        auto *source = page.findChild<QComboBox *>("telemetrySource");
        if (page.gpuModel()->rowCount() > 0)
            source->setCurrentIndex(source->count() - 1);
        // An empty state is a sentence in place of the plot, not empty axes with a legend.
        const QString why = plotMessage(page.plot());
        QVERIFY2(why.contains("has no telemetry") && why.contains("imported"), qPrintable(why));
        QCOMPARE(page.plot()->sampleCount(), 0);
        QTest::qWait(50);
        pagecheck::checkRendered(&page, "hardware-shipped", 8);
    }

    void plotsTelemetryStoredWithARun() {
        const QString db = m_dir.filePath("telemetry.db");
        {
            diode::Store store(db.toStdString());
            diode::RunInfo run;
            run.backend = "inductor";
            run.gpuName = "NVIDIA H200";
            const auto id = store.createRun(run);
            for (int i = 0; i < 30; ++i)
                store.insertTelemetry(
                    id, {double(i), 1500.0 + 10 * (i % 7), 2619, 300.0 + 5 * i, 40.0 + i * 0.5, 95});
        }
        WorkbenchState state;
        HardwarePage page(&state);
        page.resize(1130, 760);
        page.show();
        QSignalSpy tel(&page, &HardwarePage::telemetryShown);
        QSignalSpy hw(&page, &HardwarePage::hardwareShown);
        state.setDatabase(db, false);
        QVERIFY(tel.wait(20000));
        QVERIFY(hw.count() > 0 || hw.wait(20000));
        auto *source = page.findChild<QComboBox *>("telemetrySource");
        source->setCurrentIndex(source->count() - 1);
        QCOMPARE(page.plot()->sampleCount(), 30);
        QVERIFY(page.findChild<QLabel *>("telemetryInfo")->text().contains("30 samples"));
        QVERIFY(plotMessage(page.plot()).isEmpty());
        QTest::qWait(50);
        pagecheck::checkRendered(&page, "hardware-telemetry", 20);
    }
};

QTEST_MAIN(TestHardwarePage)
#include "tst_hardwarepage.moc"
