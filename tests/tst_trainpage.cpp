#include "testutil.h"

#include "common/eventloopprobe.h"
#include "common/modellist.h"
#include "common/trainingavailable.h"
#include "common/workbenchstate.h"
#include "train/trainingcurves.h"
#include "train/trainpage.h"
#include "train/trainworker.h"
#include "validate/validationworker.h"

#include <QLabel>
#include <QProgressBar>
#include <QRegularExpression>
#include <QSet>
#include <QSignalSpy>
#include <QSpinBox>

namespace {

const QString kDataset = testutil::sourcePath("trained_models/h200/h200-dataset.db");

int distinctColours(const QImage &image) {
    QSet<QRgb> seen;
    const QImage img = image.convertToFormat(QImage::Format_RGB32);
    for (int y = 0; y < img.height(); y += 3)
        for (int x = 0; x < img.width(); x += 3)
            seen.insert(img.pixel(x, y));
    return int(seen.size());
}

} // namespace

// Real LibTorch training runs from the Train page on the shipped H200 dataset, a few epochs each.
class TestTrainPage : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void initTestCase() {
        testutil::freshSettings("tst_trainpage");
        QVERIFY(trainingAvailable());
    }

    void shortRunLandsInTheModelList() {
        WorkbenchState state;
        state.setDatabase(kDataset, true);
        TrainPage page(&state);
        page.resize(1130, 760);
        page.show();
        page.setEpochs(4);
        QSignalSpy epochs(page.worker(), &TrainWorker::progress);
        QSignalSpy ready(&page, &TrainPage::trained);
        QSignalSpy failed(page.worker(), &TrainWorker::failed);
        QSignalSpy package(&state, &WorkbenchState::packageChanged);
        EventLoopProbe probe;
        probe.start();
        page.train();
        QVERIFY(ready.wait(180000)); // six networks for real: slow beside other builds
        probe.stop();
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.at(0).at(0).toString()));
        const int members = diode::TrainOptions().members;
        QCOMPARE(epochs.size(), 4 * members);
        QCOMPARE(epochs.at(3).at(0).value<diode::EpochReport>().epoch, 4);
        QCOMPARE(epochs.last().at(0).value<diode::EpochReport>().member, members - 1);
        const TrainOutcome &o = page.lastOutcome();
        QVERIFY(QFileInfo::exists(o.package));
        QCOMPARE(o.epochsRun, 4 * diode::TrainOptions().members); // 4 epochs per network
        QCOMPARE(o.members, diode::TrainOptions().members);
        QVERIFY(!o.cancelled);
        QCOMPARE(o.problems, 624);
        // The page's method box says "default for the data": Inductor's numbers in the shipped set.
        QCOMPARE(o.method, QString("inductor_autotune times (default: the data has no in-graph times)"));
        QVERIFY(diode::ModelPackage::load(o.package.toStdString()).timingMethod() ==
                diode::TimingMethod::InductorAutotune);
        QCOMPARE(o.modelId, 0); // the shipped dataset is read-only: nothing stored
        QVERIFY(page.models()->rowOf(o.package) >= 0);
        QCOMPARE(state.packagePath(), o.package);
        QCOMPARE(package.size(), 1);
        // One curve per network over the same epoch axis (not one after another: a saw-tooth),
        // on a loss axis of whole decades.
        const auto *curves = page.findChild<TrainingCurves *>();
        QCOMPARE(curves->networks(), members);
        for (int k = 0; k < members; ++k) {
            QCOMPARE(curves->lossOf(k)->dataCount(), 4);
            QCOMPARE(curves->lossOf(k)->data()->constBegin()->key, 1.0);
        }
        QVERIFY(curves->xAxis->range().upper < 20);
        const double decades = std::log10(curves->yAxis->range().upper / curves->yAxis->range().lower);
        QVERIFY2(decades >= 1 && std::abs(decades - std::round(decades)) < 1e-9,
                 qPrintable(QString::number(decades)));
        qInfo("GUI thread worst stall during a 4-epoch training run: %.1f ms over %ld ticks", probe.worstMs(),
              probe.ticks());
        QTest::qWait(100);
        const QImage shot = page.grab().toImage();
        QVERIFY(shot.save(m_dir.filePath("train.png")));
        QVERIFY2(distinctColours(shot) > 100, "the page is blank");
    }

    // After another database was opened, Train still showed the last run's curves and
    // "Wrote … 26 problems", and its bar read "2400 / 2400 epochs" where early stopping ran 659.
    // Now: the time left while it trains, the epochs that ran at the end, nothing of an old run on
    // another database, and that run kept to compare the next one with (an overlay, TensorBoard's).
    void tellsTimeLeftEpochsRunAndKeepsRunsToCompare() {
        WorkbenchState state;
        state.setDatabase(kDataset, true);
        TrainPage page(&state);
        page.resize(1130, 760);
        page.show();
        page.setEpochs(400);
        page.findChild<QSpinBox *>("patience")->setValue(3); // early stopping well before 400
        page.findChild<QSpinBox *>("members")->setValue(2);
        auto *status = page.findChild<QLabel *>("trainStatus");
        QStringList lines;
        connect(page.worker(), &TrainWorker::progress, this, [&] { lines << status->text(); });
        QSignalSpy trained(&page, &TrainPage::trained);
        page.train();
        QVERIFY(trained.wait(120000));
        const TrainOutcome &o = page.lastOutcome();
        QVERIFY2(o.epochsRun < 800, qPrintable(QString::number(o.epochsRun)));
        QVERIFY2(
            std::any_of(lines.begin(), lines.end(),
                        [](const QString &l) { return l.contains(QRegularExpression("at most .* left")); }),
            qPrintable(lines.join("\n")));
        auto *bar = page.findChild<QProgressBar *>();
        QCOMPARE(bar->value(), bar->maximum());
        QCOMPARE(bar->text(), QString("%1 epochs run of at most 800 (early stopping)").arg(o.epochsRun));
        QVERIFY(status->text().contains(QString("%1 epochs in all").arg(o.epochsRun)));
        // What the run says is in sight at this size, not below the form's fold.
        QVERIFY(!status->visibleRegion().isEmpty() && !bar->visibleRegion().isEmpty());
        auto *curves = page.findChild<TrainingCurves *>();
        QCOMPARE(curves->networks(), 2);
        // Another database: the page is about it, not the run before.
        state.setDatabase(testutil::sourcePath("trained_models/h200/h200-ingraph.db"), true);
        QCOMPARE(curves->networks(), 0);
        QVERIFY(status->text().isEmpty());
        QVERIFY(bar->text().isEmpty() || !bar->isTextVisible());
        // The run is kept, named with its database, and drawn under the next run on request.
        QCOMPARE(page.earlierRuns().size(), 1);
        QVERIFY2(page.earlierRuns()[0].endsWith("on h200-dataset.db"), qPrintable(page.earlierRuns()[0]));
        page.compareWith(0);
        QCOMPARE(curves->overlayGraphs(), 4); // loss and validation top-1 of two networks
        QVERIFY(curves->legend->itemCount() >= 2);
        page.compareWith(-1);
        QCOMPARE(curves->overlayGraphs(), 0);
    }

    void cancelStopsAfterTheCurrentEpochAndKeepsTheBest() {
        WorkbenchState state;
        state.setDatabase(kDataset, true);
        const QString before = testutil::sourcePath("trained_models/h200/h200-gemm-mlp-v2.diode");
        state.setPackage(before);
        TrainPage page(&state);
        page.setEpochs(5000);
        QSignalSpy epochs(page.worker(), &TrainWorker::progress);
        QSignalSpy ready(&page, &TrainPage::trained);
        EventLoopProbe probe;
        probe.start();
        page.train();
        QVERIFY(epochs.wait(60000));
        page.cancel();
        QVERIFY(ready.wait(60000));
        probe.stop();
        const TrainOutcome &o = page.lastOutcome();
        QVERIFY(o.cancelled);
        QVERIFY2(o.epochsRun < 50, qPrintable(QString::number(o.epochsRun)));
        QVERIFY(QFileInfo::exists(o.package)); // the best network so far is written
        // ... but a stopped run does not become the model the other pages judge.
        QCOMPARE(state.packagePath(), before);
        qInfo("GUI thread worst stall during a cancelled training run: %.1f ms", probe.worstMs());
    }

    // A writable database gets the model and its predictions; Validate reads them back.
    void predictionsGoToAWritableDatabase() {
        const QString db = m_dir.filePath("mine.db");
        QVERIFY(QFile::copy(kDataset, db));
        QFile(db).setPermissions(QFile::ReadOwner | QFile::WriteOwner);
        WorkbenchState state;
        state.setDatabase(db, false);
        QSignalSpy dataChanged(&state, &WorkbenchState::dataChanged);
        TrainPage page(&state);
        page.setEpochs(2);
        QVERIFY(page.request().storePredictions);
        QSignalSpy ready(&page, &TrainPage::trained);
        page.train();
        QVERIFY(ready.wait(60000));
        QVERIFY(page.lastOutcome().modelId > 0);
        QCOMPARE(dataChanged.size(), 1);
        QVERIFY(testutil::scalar(db, "SELECT count(*) FROM predictions") > 6000);

        ValidationWorker validation;
        QSignalSpy results(&validation, &ValidationWorker::resultReady);
        validation.start({db, {}, {page.lastOutcome().package}});
        QVERIFY(results.wait(30000));
        QVERIFY(results.wait(30000));
        const auto res = results.at(1).at(0).value<ValidationResult>();
        QVERIFY2(res.models.at(0).source.contains("stored in the database"),
                 qPrintable(res.models.at(0).source));
    }

    void missingDatabaseIsAVisibleError() {
        WorkbenchState state;
        state.setDatabase(kDataset, true);
        TrainPage page(&state);
        QSignalSpy failed(page.worker(), &TrainWorker::failed);
        TrainRequest r = page.request();
        r.database = m_dir.filePath("missing.db");
        r.out = m_dir.filePath("never.diode");
        page.worker()->start(r);
        QVERIFY(failed.wait(30000));
        QVERIFY2(failed.at(0).at(0).toString().contains("missing.db"),
                 qPrintable(failed.at(0).at(0).toString()));
    }
};

QTEST_MAIN(TestTrainPage)
#include "tst_trainpage.moc"
