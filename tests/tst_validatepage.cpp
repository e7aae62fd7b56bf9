#include "testutil.h"

#include "pagecheck.h"

#include "common/asyncjobs.h"
#include "common/curveplot.h"
#include "common/metricsmodel.h"
#include "common/modellist.h"
#include "common/plotmessage.h"
#include "common/seriescolours.h"
#include "common/timingmethodbox.h"
#include "common/workbenchstate.h"
#include "export/exportpage.h"
#include "train/trainpage.h"
#include "train/trainworker.h"
#include "validate/candidatemodel.h"
#include "validate/decisionpanel.h"
#include "validate/predictionscatter.h"
#include "validate/validatepage.h"
#include "validate/validationworker.h"

#include "diode/analysis/decisionevaluation.h"
#include "diode/infer/features.h"
#include "diode/infer/modelpackage.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QLabel>
#include <QRegularExpression>
#include <QSet>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTabWidget>

#include <algorithm>
#include <functional>

namespace {

const QString kDataset = testutil::sourcePath("trained_models/h200/h200-dataset.db");
const QString kModel = testutil::sourcePath("trained_models/h200/h200-gemm-mlp-v2.diode");
const QString kHeldOut = testutil::sourcePath("trained_models/h200/h200-heldout.jsonl");
// A package with decision models beside the GEMM kernel, the kernel lines they were built from, and
// one without them.
const QString kDecisionPackage = testutil::sourcePath("trained_models/h200/h200-ingraph-warm.diode");
const QString kKernelLines = testutil::sourcePath("trained_models/h200/h200-kernels-extras.jsonl");
const QString kNoDecisions = kModel;

// Shows `package` (and then judges `lines`, if any) in `panel`, to what it shows.
bool shownIn(DecisionPanel &panel, const QString &package, const QStringList &lines = {}) {
    QSignalSpy shown(&panel, &DecisionPanel::shown);
    panel.setPackages({package});
    if (!shown.wait(30000))
        return false;
    if (lines.isEmpty())
        return true;
    panel.judgeLines(lines);
    return shown.wait(60000);
}

QString cellText(const QStandardItemModel *model, int row, int column) {
    return model->index(row, column).data().toString();
}

// Whether one of the labels of `w` says what `says` looks for (by default: contains `text`).
bool aLabelSays(const QWidget &w, const std::function<bool(const QString &)> &says) {
    const auto labels = w.findChildren<QLabel *>();
    return std::any_of(labels.begin(), labels.end(), [&](const QLabel *l) { return says(l->text()); });
}
bool aLabelSays(const QWidget &w, const QString &text) {
    return aLabelSays(w, [&](const QString &t) { return t.contains(text); });
}

int distinctColours(const QImage &image) {
    QSet<QRgb> seen;
    const QImage img = image.convertToFormat(QImage::Format_RGB32);
    for (int y = 0; y < img.height(); y += 3)
        for (int x = 0; x < img.width(); x += 3)
            seen.insert(img.pixel(x, y));
    return int(seen.size());
}

// Runs the worker to its complete result; the first delivery only carries the scatter.
ValidationResult validate(ValidationWorker &worker, const ValidationRequest &req) {
    QSignalSpy results(&worker, &ValidationWorker::resultReady);
    QSignalSpy failed(&worker, &ValidationWorker::failed);
    worker.start(req);
    for (int i = 0; i < 2 && failed.isEmpty(); ++i)
        if (results.size() < 2 && !results.wait(30000))
            break;
    if (!failed.isEmpty())
        qWarning("failed: %s", qPrintable(failed.at(0).at(0).toString()));
    return results.size() == 2 ? results.at(1).at(0).value<ValidationResult>() : ValidationResult{};
}

// A second, untrained package under another name: an ensemble of one small network.
QString otherPackage(const QString &dir) {
    const int f = diode::FeatureSchema::size();
    diode::MlpWeights w;
    w.layerSizes = {f, 8, 1};
    w.weights = {std::vector<float>(size_t(8 * f), 0.01f), std::vector<float>(8, 0.1f)};
    w.biases = {std::vector<float>(8, 0.0f), std::vector<float>(1, -3.0f)};
    w.inputMean.assign(size_t(f), 0.0f);
    w.inputStd.assign(size_t(f), 1.0f);
    const QString path = dir + "/other-model.diode";
    diode::ModelPackage::save(
        path.toStdString(),
        {{"name", "other-model"}, {"hardware", {{"gpu", "NVIDIA H200"}, {"sm_count", 132}}}}, {w});
    return path;
}

QString scatterMessage(QWidget &page) {
    return plotMessage(page.findChild<PredictionScatter *>("scatterA"));
}

/// The page at the tests' window size, shown (it validates on first show) until its result is ready.
bool shownAndValidated(ValidatePage &page, QSignalSpy &ready) {
    page.resize(1130, 760);
    page.show();
    return ready.wait(30000);
}

} // namespace

class TestValidatePage : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void initTestCase() { testutil::freshSettings("tst_validatepage"); }

    void workerValidatesTheShippedModel() {
        ValidationWorker worker;
        const auto res = validate(worker, {kDataset, {}, {kModel}});
        QVERIFY(res.complete);
        QCOMPARE(res.table->problems.size(), size_t(624));
        QCOMPARE(res.models.size(), size_t(1));
        const auto &m = res.models[0];
        QCOMPARE(m.top1.size(), size_t(624));
        QVERIFY(std::is_sorted(m.top1.begin(), m.top1.end()));
        QCOMPARE(res.atenTop1.size(), size_t(624));
        QVERIFY2(m.metrics.top1.mean > res.aten.top1.mean, "the model beats ATen alone on its own dataset");
        QVERIFY(m.source.contains("predicted with the package")); // the shipped db holds no predictions
        QCOMPARE(res.byMeasured.size(),
                 size_t(std::count_if(res.table->measuredMs.begin(), res.table->measuredMs.end(),
                                      [](double t) { return !std::isnan(t); })));
    }

    // The same numbers as `diode eval --input` (docs/MODELS.md): one metrics code path.
    void heldOutMatchesTheCli() {
        ValidationWorker worker;
        const auto res = validate(worker, {kDataset, kHeldOut, {kModel}});
        QVERIFY(res.complete);
        QString out;
        QCOMPARE(testutil::runCli({"eval", "--package", kModel, "--input", kHeldOut}, &out), 0);
        // "model   <top1 mean> ..." and "aten   <top1 mean> ..." rows of the CLI's table.
        auto firstNumber = [&out](const QString &row) {
            const QRegularExpression re(QStringLiteral("^%1\\s+([0-9.]+)").arg(row),
                                        QRegularExpression::MultilineOption);
            return re.match(out).captured(1).toDouble();
        };
        const int heldOut = int(testutil::fileBytes(kHeldOut).count('\n'));
        QCOMPARE(res.table->problems.size(), size_t(heldOut));
        QVERIFY(heldOut >= 85);
        QVERIFY2(
            std::abs(res.models[0].metrics.top1.mean - firstNumber("model")) < 5e-5,
            qPrintable(QString("%1 vs %2").arg(res.models[0].metrics.top1.mean).arg(firstNumber("model"))));
        // The baselines under the names every face gives them (wording.h).
        QVERIFY(std::abs(res.aten.top1.mean - firstNumber("plain torch\\.compile \\(ATen\\)")) < 5e-5);
        // max-autotune's pick, where Inductor's benchmark ran: the page's row is the CLI's.
        QVERIFY(res.maxAutotune.problems > 0);
        QVERIFY(std::abs(res.maxAutotune.top1.mean - firstNumber("max-autotune's pick")) < 5e-5);
        // The selection policy's top-1 (the plugin's decision) is the same rule on both faces.
        QVERIFY2(std::abs(res.models[0].policyMetrics.top1.mean - firstNumber("model policy")) < 5e-5,
                 qPrintable(QString("%1 vs %2")
                                .arg(res.models[0].policyMetrics.top1.mean)
                                .arg(firstNumber("model policy"))));
        QCOMPARE(res.models[0].policyMargin, 0.10); // the package carries none: the warm default
    }

    // Predictions written by `diode eval` are read back from the store instead of recomputed.
    void readsStoredPredictions() {
        const QString db = m_dir.filePath("copy.db");
        QVERIFY(QFile::copy(kDataset, db));
        QFile(db).setPermissions(QFile::ReadOwner | QFile::WriteOwner);
        QCOMPARE(testutil::runCli({"eval", "--package", kModel, "--db", db, "--store-predictions"}), 0);
        ValidationWorker worker;
        const auto res = validate(worker, {db, {}, {kModel}});
        QVERIFY(res.complete);
        QVERIFY2(res.models[0].source.contains("stored in the database"), qPrintable(res.models[0].source));
        ValidationWorker again;
        const auto computed = validate(again, {kDataset, {}, {kModel}});
        QVERIFY(std::abs(res.models[0].metrics.top1.mean - computed.models[0].metrics.top1.mean) < 1e-6);
    }

    // The cpu pipeline of docs/CLI.md past the command line: a model trained on a cpu sweep validates
    // on its own test split, and the Export page saves it but never installs it into the plugin.
    void cpuModelValidatesAndIsNotInstalled() {
#if !DIODE_HAVE_TORCH
        QSKIP("this build has no LibTorch: diode train cannot run");
#endif
        const QString db = m_dir.filePath("cpu.db"), pkg = m_dir.filePath("cpu.diode");
        QCOMPARE(testutil::runCli({"sweep", "--backend", "cpu", "--plan",
                                   testutil::sourcePath("resources/plans/cpu-smoke.json"), "--db", db}),
                 0);
        QString out, err;
        QCOMPARE(testutil::runCli({"train", "--db", db, "--out", pkg, "--epochs", "30", "--members", "1"},
                                  &out, &err, 300000),
                 0);
        ValidationWorker worker;
        ValidationRequest req{db, {}, {pkg}};
        req.heldOutOnly = true;
        const auto res = validate(worker, req);
        QVERIFY(res.complete);
        QVERIFY(res.heldOutOnly);
        QVERIFY(res.method.method == diode::TimingMethod::Cpu);
        QCOMPARE(res.problemsBeforeCut, size_t(26));
        QVERIFY(!res.table->problems.empty() && res.table->problems.size() < 26);
        QCOMPARE(res.models[0].trainedOnShown, 0);
        QVERIFY(res.models[0].metrics.top1.mean > 0);
        ModelList models;
        const int row = models.add(pkg);
        QVERIFY(row >= 0);
        QCOMPARE(models.at(row).label, QString("cpu (cpu model)"));

        WorkbenchState state;
        state.setPackage(pkg);
        ExportPage page(&state);
        QVERIFY(page.manifestText().contains("\"timing_method\": \"cpu\""));
        const QString saved = m_dir.filePath("saved-cpu.diode");
        QCOMPARE(page.saveAs(saved), QString());
        const QString plugin = m_dir.filePath("plugin-models");
        QString error;
        QVERIFY(page.install(false, &error, plugin).isEmpty());
        QVERIFY2(error.contains("not installed into the plugin: a cpu model"), qPrintable(error));
        QVERIFY(!QFileInfo::exists(plugin + "/cpu.diode"));

        // cpu data in its own terms: no ATen kernel and no Inductor config, so no
        // "plain torch.compile (ATen)" or "Inductor's first config" (both were the plan's first tile)
        // on Export, Validate or Train; that baseline once, under its own name.
        auto baselines = [](const MetricsModel *m) {
            QStringList names;
            for (int r = 0; r < m->rowCount(); ++r)
                names << m->index(r, 0).data().toString();
            return names.join(" | ");
        };
        const QString firstTile = baselineTitle("first-config", true);
        const QString exported = baselines(page.metricsModel());
        QVERIFY2(exported.contains(firstTile) && !exported.contains("plain torch.compile") &&
                     !exported.contains("Inductor's first config"),
                 qPrintable(exported));
        state.setDatabase(db, true, "cpu"); // as the window opens cpu data: its truth is cpu times
        ValidatePage validatePage(&state);
        validatePage.resize(1130, 760);
        QSignalSpy ready(&validatePage, &ValidatePage::ready);
        validatePage.show();
        QVERIFY(ready.wait(60000));
        const QString validated = baselines(validatePage.metricsModel());
        QVERIFY2(validated.contains(firstTile) && !validated.contains("plain torch.compile") &&
                     !validated.contains("Inductor's first config"),
                 qPrintable(validated));
        // Nor an ATen guard: on cpu data the policy is the arg-min, no row of its own, here or in diode eval.
        QVERIFY2(!validated.contains("policy"), qPrintable(validated));
        QString evalOut;
        QCOMPARE(testutil::runCli({"eval", "--package", pkg, "--db", db}, &evalOut), 0);
        QVERIFY2(!evalOut.contains("ATen unless") && !evalOut.contains("\nmodel policy ") &&
                     evalOut.contains("model policy: the arg-min (cpu data has no ATen kernel to keep)"),
                 qPrintable(evalOut));
        // No GPU model is offered on cpu times, and one asked for by file is refused
        // with the reason; the summary names the baseline as the legend does; four held-out
        // problems carry the warning that they are too few to judge by (F5).
        for (const char *box : {"modelA", "modelB"}) {
            auto *combo = validatePage.findChild<QComboBox *>(box);
            for (int i = 0; i < combo->count(); ++i)
                QVERIFY2(!combo->itemText(i).contains("NVIDIA"),
                         qPrintable(QString(box) + ": " + combo->itemText(i)));
        }
        const QString scope = validatePage.scopeText();
        QVERIFY2(scope.contains("as fast as those of " + firstTile) && !scope.contains("torch.compile's"),
                 qPrintable(scope));
        QVERIFY2(scope.contains(QRegularExpression("Warning: only [0-9]+ held-out problems?: below 30")),
                 qPrintable(scope));
        state.setPackage(testutil::sourcePath("trained_models/h200/h200-ingraph-warm.diode"));
        auto *refused = validatePage.findChild<QLabel *>("validateError");
        QVERIFY2(refused->isVisible() && refused->text().contains("graph_warm times of NVIDIA H200") &&
                     refused->text().contains("the open data is cpu times"),
                 qPrintable(refused->text()));
        QCOMPARE(validatePage.findChild<QComboBox *>("modelA")->currentData().toString(),
                 QFileInfo(pkg).absoluteFilePath());
        TrainPage train(&state);
        train.resize(1130, 760);
        train.show();
        train.setEpochs(2);
        QSignalSpy trained(&train, &TrainPage::trained);
        train.train();
        QVERIFY(trained.wait(120000));
        QVERIFY(train.lastOutcome().cpuData);
        const QString status = train.findChild<QLabel *>("trainStatus")->text();
        QVERIFY2(status.contains(firstTile) && !status.contains("ATen alone"), qPrintable(status));
    }

    // The measured side reads one timing method: the data's default unless one is chosen.
    void measuredTimesAreOneMethod() {
        ValidationWorker worker;
        const auto res = validate(worker, {kDataset, {}, {kModel}});
        QVERIFY(res.method.method == diode::TimingMethod::InductorAutotune && res.method.byDefault);
        ValidationRequest req{kDataset, {}, {kModel}};
        req.method = diode::TimingMethod::GraphWarm;
        QSignalSpy failed(&worker, &ValidationWorker::failed);
        worker.start(req);
        QVERIFY(failed.wait(30000));
        QVERIFY2(failed.at(0).at(0).toString().contains("the data has no successful graph_warm times"),
                 qPrintable(failed.at(0).at(0).toString()));
    }

    // The helper every page's loader and worker runs on (ui/common/asyncjobs.h): only the newest job
    // delivers, a cancelled one never does, and destruction waits for what still runs.
    void asyncJobsDropStaleResultsAndWait() {
        QObject owner;
        QList<int> delivered;
        std::atomic<int> returned{0};
        {
            AsyncJobs jobs(&owner);
            const int first = jobs.start([&](const AsyncJobs::Job &job) {
                while (!job.cancelled())
                    QThread::msleep(2); // until the newer start()
                job.post([&] { delivered << 1; });
                ++returned;
            });
            const int second = jobs.start([&](const AsyncJobs::Job &job) {
                job.post([&] { delivered << 2; });
                ++returned;
            });
            QVERIFY(!jobs.isCurrent(first) && jobs.isCurrent(second));
            jobs.waitForDone();
            QTRY_COMPARE(delivered, QList<int>{2});
            jobs.start([&](const AsyncJobs::Job &job) {
                QThread::msleep(100);
                job.post([&] { delivered << 3; });
                ++returned;
            });
            jobs.cancel();
        }
        QCOMPARE(returned.load(), 3); // the destructor waited for the cancelled job
        QTest::qWait(50);
        QCOMPARE(delivered, QList<int>{2});
    }

    void staleResultsAreDropped() {
        ValidationWorker worker;
        QSignalSpy results(&worker, &ValidationWorker::resultReady);
        QSignalSpy finished(&worker, &ValidationWorker::finished);
        worker.start({kDataset, {}, {kModel}});
        worker.cancel();
        QCOMPARE(finished.size(), 1);
        QVERIFY(!worker.isRunning());
        QTest::qWait(1500); // long enough for the cancelled run to have delivered, had it not been stale
        QCOMPARE(results.size(), 0);
    }

    void missingPackageIsAVisibleError() {
        ValidationWorker worker;
        QSignalSpy failed(&worker, &ValidationWorker::failed);
        worker.start({kDataset, {}, {m_dir.filePath("nope.diode")}});
        QVERIFY(failed.wait(10000));
        QVERIFY2(failed.at(0).at(0).toString().contains("nope.diode"),
                 qPrintable(failed.at(0).at(0).toString()));
    }

    void itemModelsPassTheTester() {
        MetricsModel metrics;
        QAbstractItemModelTester t1(&metrics, QAbstractItemModelTester::FailureReportingMode::QtTest);
        metrics.setResults({{"model", {}, true}, {"aten", {}, false}});
        QCOMPARE(metrics.rowCount(), 2);
        CandidateModel candidates;
        QAbstractItemModelTester t2(&candidates, QAbstractItemModelTester::FailureReportingMode::QtTest);
        candidates.setResults({"A", "B"}, {CandidateRow{"aten", 0.1, 1, 1.0, {0.11, 0.12}, {1, 2}},
                                           CandidateRow{"triton", NAN, 0, 0.0, {0.2, 0.1}, {2, 1}}});
        QCOMPARE(candidates.columnCount(), 8);
        candidates.setResults({}, {});
        WorkbenchState state;
        ModelList *models = ModelList::of(&state);
        QCOMPARE(ModelList::of(&state), models);
        QAbstractItemModelTester t3(models, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(models->add(kModel) >= 0);
        QString error;
        QCOMPARE(models->add(m_dir.filePath("missing.diode"), &error), -1);
        QVERIFY(error.contains("missing.diode"));
    }

    // cpu data and no model for it: the page says what is missing whatever changes, never "Out of
    // date … Validate (F5) to see  on held-out problems" with no model named.
    void noModelSaysWhatIsMissing() {
        const QString db = m_dir.filePath("nomodel-cpu.db");
        QCOMPARE(testutil::runCli({"sweep", "--backend", "cpu", "--plan",
                                   testutil::sourcePath("resources/plans/cpu-smoke.json"), "--db", db}),
                 0);
        WorkbenchState state;
        state.setDatabase(db, true);
        ValidatePage page(&state);
        page.resize(1130, 760);
        page.show();
        auto *source = page.findChild<QComboBox *>("problemSource");
        QVERIFY(source && source->count() >= 2);
        for (int i : {1, 0}) { // another problem source, then back: the inputs changed twice
            source->setCurrentIndex(i);
            const QString message = scatterMessage(page);
            QVERIFY2(message.contains("No model chosen") && !message.contains("to see  on"),
                     qPrintable(message));
            // Nothing was shown, so nothing is "out of date".
            QVERIFY2(!message.contains("Out of date"), qPrintable(message));
        }
    }

    // The problem sources offer the held-out file that belongs to the open database
    // (core/infer/diode/infer/shippeddata.h), not one file name for every database.
    // It starts on that file: the problems the shipped packages never trained on.
    void offersTheHeldOutFileOfTheOpenDatabase() {
        auto sources = [](const QString &db) {
            WorkbenchState state;
            state.setDatabase(db, true);
            ValidatePage page(&state);
            auto *source = page.findChild<QComboBox *>("problemSource");
            QStringList items;
            for (int i = 0; i < source->count(); ++i)
                items << source->itemText(i);
            if (!source->currentText().startsWith("held-out file"))
                items << "(not chosen)";
            return items;
        };
        QVERIFY(sources(kDataset).contains("held-out file h200-heldout.jsonl"));
        const QStringList ingraph = sources(testutil::sourcePath("trained_models/h200/h200-ingraph.db"));
        QVERIFY2(ingraph.contains("held-out file h200-ingraph-heldout.jsonl"),
                 qPrintable(ingraph.join(", ")));
        QVERIFY(!ingraph.contains("held-out file h200-heldout.jsonl"));
        QVERIFY(!ingraph.contains("(not chosen)"));
    }

    // Validate measures on problems the model never saw unless told otherwise, and says which: with
    // no held-out file beside the database, its test split of it.
    void defaultSourceIsHeldOut() {
        const QString alone = m_dir.filePath("alone/h200-dataset.db");
        QVERIFY(QDir().mkpath(QFileInfo(alone).absolutePath()));
        QVERIFY(QFile::copy(kDataset, alone));
        WorkbenchState state;
        state.setPackage(kModel);
        state.setDatabase(alone, true);
        ValidatePage page(&state);
        auto *source = page.findChild<QComboBox *>("problemSource");
        QCOMPARE(source->currentData().toString(), ValidatePage::kHeldOutSource);
        page.resize(1130, 760);
        QSignalSpy ready(&page, &ValidatePage::ready);
        page.show();
        QVERIFY(ready.wait(30000));
        QVERIFY(page.result().heldOutOnly);
        QCOMPARE(page.result().problemsBeforeCut, size_t(624));
        const size_t heldOut = page.result().table->problems.size();
        QVERIFY2(heldOut >= 85 && heldOut <= 94,
                 qPrintable(QString::number(heldOut))); // the test split: 94 drawn
        QCOMPARE(page.result().models[0].trainedOnShown, 0);
        QVERIFY2(page.scopeText().contains("never trained on"), qPrintable(page.scopeText()));
        // The same problems and numbers as `diode eval --db` (its default is held-out too).
        QString out, err;
        const QString db =
            m_dir.filePath("eval-heldout.db"); // eval stores predictions: never in the shipped file
        QVERIFY(QFile::copy(kDataset, db));
        QFile(db).setPermissions(QFile::ReadOwner | QFile::WriteOwner);
        QCOMPARE(testutil::runCli({"eval", "--package", kModel, "--db", db}, &out, &err), 0);
        // Counted as the page counts them: problems, and the lines they are in where those differ.
        QVERIFY2(err.contains(QString("measuring on the %1 problems of").arg(heldOut)), qPrintable(err));
        QVERIFY2(out.contains(QString("model on %1 problems").arg(heldOut)), qPrintable(out));
        // Every problem: labelled as including training problems, in the scope line and the titles.
        source->setCurrentIndex(source->findData(ValidatePage::kAllSource));
        QVERIFY(!page.hasResult()); // the held-out view is gone at once
        QVERIFY(ready.wait(30000));
        QCOMPARE(page.result().table->problems.size(), size_t(624));
        QVERIFY(page.result().models[0].trainedOnShown >= int(624 - heldOut));
        QVERIFY2(page.scopeText().contains("trained on"), qPrintable(page.scopeText()));
        // The CDF plots a share: its y axis ends at 1.
        const auto *cdf = page.findChild<CurvePlot *>("efficiencyCdf");
        QVERIFY(cdf->yAxis->range().upper <= 1.05 && cdf->yAxis->range().lower == 0);
        // Its x axis is how much slower than the best each pick is, in percent on a log axis from the
        // 0.1 % floor: a linear efficiency axis crushes good selectors against 1.
        QCOMPARE(cdf->xAxis->scaleType(), QCPAxis::stLogarithmic);
        QVERIFY(cdf->xAxis->range().lower <= 0.1 && cdf->xAxis->range().upper > 10);
        const QSharedPointer<QCPGraphDataContainer> model = cdf->graph(0)->data();
        QCOMPARE(model->constBegin()->key, 0.1); // the hits
        QVERIFY(std::is_sorted(model->constBegin(), model->constEnd(),
                               [](const QCPGraphData &a, const QCPGraphData &b) { return a.key < b.key; }));
        // The residual histogram's clamped end bins (everything beyond ±2) stand inside the plot,
        // not on its border.
        const auto *residuals = page.findChild<CurvePlot *>("residualHistogram");
        QVERIFY(residuals->xAxis->range().lower < -2.2 && residuals->xAxis->range().upper > 2.2);
    }

    // After another model is chosen, nothing of the old one stays on screen under its name.
    void noStaleViewAfterAChangeOfModel() {
        WorkbenchState state;
        state.setPackage(kModel);
        state.setDatabase(kDataset, true);
        ValidatePage page(&state);
        QSignalSpy ready(&page, &ValidatePage::ready);
        QVERIFY(shownAndValidated(page, ready));
        QCOMPARE(page.metricsModel()->index(0, 0).data().toString(), QString("h200-gemm-mlp-v2"));
        const int v2 = ModelList::of(&state)->rowOf(kModel);
        const int row = ModelList::of(&state)->add(otherPackage(m_dir.path()));
        QVERIFY(row >= 0);
        auto *modelA = page.findChild<QComboBox *>("modelA");
        modelA->setCurrentIndex(row);
        // Shown, it recomputes at once: the old result is gone before the new one arrives.
        QVERIFY(!page.hasResult());
        QCOMPARE(page.metricsModel()->rowCount(), 0);
        QVERIFY2(scatterMessage(page).contains("other-model"), qPrintable(scatterMessage(page)));
        QVERIFY(ready.wait(30000));
        QCOMPARE(page.result().models[0].name, QString("other-model"));
        QCOMPARE(page.metricsModel()->index(0, 0).data().toString(), QString("other-model"));
        QVERIFY(scatterMessage(page).isEmpty());
        // Hidden, it says it is out of date until it is shown again.
        page.hide();
        modelA->setCurrentIndex(v2);
        QVERIFY(!page.hasResult());
        QVERIFY2(scatterMessage(page).startsWith("Out of date"), qPrintable(scatterMessage(page)));
        page.show();
        QVERIFY(ready.wait(30000));
        QCOMPARE(page.result().models[0].name, QString("h200-gemm-mlp-v2"));
    }

    // Two models side by side keep the page within a 1280x800 window.
    void twoModelsFitTheWindow() {
        WorkbenchState state;
        state.setPackage(kModel);
        state.setDatabase(kDataset, true);
        const QString other =
            ModelList::of(&state)->at(ModelList::of(&state)->add(otherPackage(m_dir.path()))).path;
        ValidatePage page(&state);
        QSignalSpy ready(&page, &ValidatePage::ready);
        QVERIFY(shownAndValidated(page, ready));
        auto *modelB = page.findChild<QComboBox *>("modelB");
        modelB->setCurrentIndex(modelB->findData(other));
        QVERIFY(ready.wait(30000));
        QCOMPARE(page.result().models.size(), size_t(2));
        const int width = page.minimumSizeHint().width();
        // Three plots share the width: every title wraps inside its plot instead of pushing the axes
        // out of the widget and losing both its ends.
        for (const char *name : {"scatterA", "scatterB", "efficiencyCdf"}) {
            auto *plot = page.findChild<QCustomPlot *>(name);
            QVERIFY(plot && plot->isVisible());
            plot->replot();
            pagecheck::checkTitlesFit(plot, name);
            if (QTest::currentTestFailed())
                return;
        }
        // The CDF's legend (five selectors and a second model's two) sits below its axes, where it
        // hides no curve: inside them it would cover max-autotune's and plain torch.compile's.
        auto *cdf = page.findChild<CurvePlot *>("efficiencyCdf");
        QVERIFY(cdf->legend->itemCount() >= 6);
        const QRect legend = cdf->legend->outerRect(), axes = cdf->axisRect()->outerRect();
        QVERIFY2(!legend.intersects(axes) && legend.top() >= axes.bottom() && cdf->rect().contains(legend),
                 qPrintable(QString("legend %1,%2 %3x%4; axes bottom %5")
                                .arg(legend.x())
                                .arg(legend.y())
                                .arg(legend.width())
                                .arg(legend.height())
                                .arg(axes.bottom())));
        modelB->setCurrentIndex(0); // the page remembers its second model: none for the next case
        QVERIFY2(width <= 1100, qPrintable(QString::number(width)));
    }

    // A series keeps its colour whatever else is shown: an op in data without mm, the
    // baselines beside one model or two (and as on the Demo page), a model in the histogram and
    // the CDF alike.
    void seriesKeepTheirColours() {
        const QString noMm = m_dir.filePath("heldout-without-mm.jsonl");
        {
            QFile in(kHeldOut), out(noMm);
            QVERIFY(in.open(QIODevice::ReadOnly) && out.open(QIODevice::WriteOnly));
            while (!in.atEnd()) {
                const QByteArray line = in.readLine();
                if (!line.startsWith(R"({"op":"mm")"))
                    out.write(line);
            }
        }
        QSettings().setValue("validate/problemsFile", noMm); // as if chosen with Problems…
        WorkbenchState state;
        state.setPackage(kModel);
        state.setDatabase(kDataset, true);
        ValidatePage page(&state);
        QSignalSpy ready(&page, &ValidatePage::ready);
        QVERIFY(shownAndValidated(page, ready));
        auto *source = page.findChild<QComboBox *>("problemSource");
        source->setCurrentIndex(source->findData(noMm));
        QVERIFY(ready.wait(30000));
        QSettings().remove("validate/problemsFile");

        auto same = [](QColor a, QColor b) {
            return std::abs(a.red() - b.red()) + std::abs(a.green() - b.green()) +
                       std::abs(a.blue() - b.blue()) <=
                   6;
        };
        auto *scatter = page.findChild<PredictionScatter *>("scatterA");
        QStringList ops;
        for (int i = 0; i < scatter->graphCount(); ++i) {
            const QString op = scatter->graph(i)->name();
            ops << op;
            const QColor drawn = scatter->graph(i)->scatterStyle().pixmap().toImage().pixelColor(2, 2);
            const QColor expected = opColour(*diode::parseOp(op.toStdString()));
            QVERIFY2(same(drawn, expected), qPrintable(op + ": " + drawn.name() + " not " + expected.name()));
        }
        QCOMPARE(ops, QStringList({"addmm", "bmm"}));

        auto *cdf = page.findChild<CurvePlot *>("efficiencyCdf");
        auto *histogram = page.findChild<CurvePlot *>("residualHistogram");
        auto colourOf = [](QCustomPlot *plot, const QString &prefix) {
            for (int i = 0; i < plot->graphCount(); ++i)
                if (plot->graph(i)->name().startsWith(prefix))
                    return plot->graph(i)->pen().color();
            return QColor();
        };
        const QColor plain = colourOf(cdf, "plain torch.compile");
        const QColor maxAutotune = colourOf(cdf, "max-autotune");
        QCOMPARE(plain, selectorColour("plain torch.compile")); // the Demo page's plain torch.compile
        QCOMPARE(maxAutotune, selectorColour("max-autotune"));
        QCOMPARE(colourOf(histogram, "h200-gemm-mlp-v2"), colourOf(cdf, "h200-gemm-mlp-v2"));

        const QString other =
            ModelList::of(&state)->at(ModelList::of(&state)->add(otherPackage(m_dir.path()))).path;
        auto *modelB = page.findChild<QComboBox *>("modelB");
        modelB->setCurrentIndex(modelB->findData(other));
        QVERIFY(ready.wait(30000));
        QCOMPARE(page.result().models.size(), size_t(2));
        QCOMPARE(colourOf(cdf, "plain torch.compile"), plain);
        QCOMPARE(colourOf(cdf, "max-autotune"), maxAutotune);
        QCOMPARE(colourOf(histogram, "other-model"), colourOf(cdf, "other-model"));
        QVERIFY(colourOf(cdf, "other-model") != colourOf(cdf, "h200-gemm-mlp-v2"));
        modelB->setCurrentIndex(0); // the page remembers its second model: none for the next case
    }

    // The Decisions tab: the package's own held-out figures, family by family, as the manifest
    // holds them, then its decisions judged on measured lines exactly as diode eval judges them.
    void decisionsTabShowsHeldOutFiguresAndJudgesLines() {
        DecisionPanel panel;
        QVERIFY(shownIn(panel, kDecisionPackage));
        const auto manifest = diode::ModelPackage::load(kDecisionPackage.toStdString()).manifest();
        const auto held = diode::heldOutFigures(manifest);
        const auto *model = panel.model();
        QCOMPARE(model->rowCount(), int(held.size()));
        QVERIFY2(held.size() >= 4, "both decision kinds, families held out and pooled");
        int pooled = -1;
        for (int r = 0; r < model->rowCount(); ++r)
            if (cellText(model, r, 1) == "Kernel config" && cellText(model, r, 2) == "all families")
                pooled = r;
        QVERIFY2(pooled >= 0, "the pooled kernel-config row");
        const auto &all = manifest["decisions"]["kernel_config"]["held_out_by_family"]["all"];
        const int judged = all["kernels"], unmeasured = all.value("picks_not_measured", 0);
        // Kernels whose pick the lines hold no time of (a sample of the grid measured) are left out, and
        // said.
        QCOMPARE(cellText(model, pooled, 0), QString("h200-ingraph-warm.diode"));
        QCOMPARE(cellText(model, pooled, 3), unmeasured
                                                 ? QString("%1 (+%2 unmeasured)").arg(judged).arg(unmeasured)
                                                 : QString::number(judged));
        QVERIFY(judged > 100);
        // Of the kernels whose default Inductor tunes at first run, those kept at it.
        QCOMPARE(cellText(model, pooled, 10), QString("%1 of %2")
                                                  .arg(all["tuned_default_kept"].get<int>())
                                                  .arg(all["default_tuned_at_first_run"].get<int>()));
        QVERIFY(all["default_tuned_at_first_run"].get<int>() > 0);

        // Judged on the lines the package was built from: every measured kernel is judged once, and
        // a model judged on its own data beats Inductor's default.
        const int before = model->rowCount();
        QSignalSpy shown(&panel, &DecisionPanel::shown);
        panel.judgeLines({kKernelLines});
        QVERIFY(shown.wait(60000));
        QCOMPARE(model->rowCount(), before + 1);
        const int last = model->rowCount() - 1;
        QCOMPARE(cellText(model, last, 2), QString("h200-kernels-extras.jsonl"));
        const auto data = diode::readDecisionData(kKernelLines.toStdString());
        const int judgedHere = model->index(last, 3).data(Qt::UserRole).toInt();
        const QString text = cellText(model, last, 3);
        const int left = text.contains('+') ? text.section('+', 1).section(' ', 0, 0).toInt() : 0;
        QCOMPARE(judgedHere + left, int(data.kernels.size()));
        QVERIFY(judgedHere > 100);
        const double pick = model->index(last, 8).data(Qt::UserRole).toDouble();
        QVERIFY2(pick > 0 && pick < 1.0, qPrintable(cellText(model, last, 8)));
        QCOMPARE(cellText(model, last, 7), QString("0")); // a failed configuration is never chosen
        // What these figures are not, said beside them; what the models were built from, above them.
        QVERIFY2(aLabelSays(panel, "not held out"),
                 "judged on its own families' lines, the tab says the figures are not held out");
        QVERIFY2(aLabelSays(panel, "a prediction of the 8 nearest measured rows"),
                 "the tab says what the models were built from");
    }

    // Models A and B: the rows of each, named by package; lines judged by both; a package without
    // decision models said so beside the other's rows.
    void decisionsTabComparesTwoPackages() {
        const QString h100 = testutil::sourcePath("trained_models/h100/h100-ingraph-warm.diode");
        DecisionPanel panel;
        QSignalSpy shown(&panel, &DecisionPanel::shown);
        panel.setPackages({kDecisionPackage, h100});
        QVERIFY(shown.wait(30000));
        const auto *model = panel.model();
        const auto rowsOf = [&](const QString &package) {
            int n = 0;
            for (int r = 0; r < model->rowCount(); ++r)
                n += cellText(model, r, 0) == package;
            return n;
        };
        const auto heldA =
            diode::heldOutFigures(diode::ModelPackage::load(kDecisionPackage.toStdString()).manifest());
        const auto heldB = diode::heldOutFigures(diode::ModelPackage::load(h100.toStdString()).manifest());
        QCOMPARE(rowsOf("h200-ingraph-warm.diode"), int(heldA.size()));
        QCOMPARE(rowsOf("h100-ingraph-warm.diode"), int(heldB.size()));
        QCOMPARE(model->rowCount(), int(heldA.size() + heldB.size()));
        panel.judgeLines({kKernelLines});
        QVERIFY(shown.wait(60000));
        QCOMPARE(model->rowCount(), int(heldA.size() + heldB.size()) + 2); // a kernel-config row each
        QVERIFY2(aLabelSays(panel,
                            [](const QString &t) {
                                return t.contains("h100-ingraph-warm.diode: Note:") &&
                                       t.contains("NVIDIA H200");
                            }),
                 "the H100 package judged on H200 lines says so, named");

        // A model B that cannot be read: said, named; A's rows shown and judged as before.
        const QString broken = m_dir.filePath("broken.diode");
        {
            QFile f(broken);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("not a package");
        }
        panel.setPackages({kDecisionPackage, broken});
        QVERIFY(shown.wait(30000));
        QCOMPARE(model->rowCount(), int(heldA.size()));
        QVERIFY2(aLabelSays(panel, [](const QString &t) { return t.startsWith("broken.diode: "); }),
                 "the package that cannot be read is named with why");
        panel.judgeLines({kKernelLines});
        QVERIFY(shown.wait(60000));
        QCOMPARE(model->rowCount(), int(heldA.size()) + 1);
        QCOMPARE(cellText(model, model->rowCount() - 1, 0), QString("h200-ingraph-warm.diode"));

        panel.setPackages({kDecisionPackage, kNoDecisions});
        QVERIFY(shown.wait(30000));
        QCOMPARE(model->rowCount(), int(heldA.size()));
        QVERIFY(aLabelSays(panel, "carries no decision models"));
        QVERIFY(panel.findChild<QPushButton *>("judgeDecisionLines")->isEnabled());
    }

    void decisionsTabSaysWhenAPackageHasNone() {
        DecisionPanel panel;
        QVERIFY(shownIn(panel, kNoDecisions));
        QCOMPARE(panel.model()->rowCount(), 0);
        QVERIFY2(aLabelSays(panel, "carries no decision models"),
                 "the tab says the package has none and how to add them");
        QVERIFY(!panel.findChild<QPushButton *>("judgeDecisionLines")->isEnabled());
    }

    // A bad line is a visible error naming its file and line; the rows already shown stay.
    void decisionsTabBadLinesAreAVisibleError() {
        const QString bad = m_dir.filePath("bad-kernels.jsonl");
        {
            QFile f(bad);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("{\"kind\": \"kernel\"}\n{\"kind\": \"sprocket\"}\n");
        }
        DecisionPanel panel;
        QVERIFY(shownIn(panel, kDecisionPackage, {bad}));
        QVERIFY(panel.model()->rowCount() > 0);
        QVERIFY2(aLabelSays(panel,
                            [](const QString &t) {
                                return t.contains("bad-kernels.jsonl:1") && t.contains("kernel");
                            }),
                 "the error names the file and the line");
    }

    void pageShowsModelAsDecisions() {
        WorkbenchState state;
        state.setPackage(kModel);
        state.setDatabase(kDataset, true);
        ValidatePage page(&state);
        auto *tabs = page.findChild<QTabWidget *>("bottomTabs");
        QVERIFY(tabs);
        QVERIFY(tabs->indexOf(page.decisionPanel()) >= 0);
        auto *modelA = page.findChild<QComboBox *>("modelA");
        QVERIFY(modelA->count() > 0);
        QCOMPARE(page.decisionPanel()->packages(), QStringList{modelA->currentData().toString()});
        // Model B chosen: its decisions beside A's; back to none, A's alone.
        auto *modelB = page.findChild<QComboBox *>("modelB");
        int other = -1;
        for (int i = 1; i < modelB->count(); ++i)
            if (modelB->itemData(i).toString() != modelA->currentData().toString())
                other = i;
        QVERIFY(other > 0);
        modelB->setCurrentIndex(other);
        QCOMPARE(page.decisionPanel()->packages(),
                 (QStringList{modelA->currentData().toString(), modelB->itemData(other).toString()}));
        modelB->setCurrentIndex(0);
        QCOMPARE(page.decisionPanel()->packages(), QStringList{modelA->currentData().toString()});
    }

    void pageRendersTheShippedData() {
        WorkbenchState state;
        state.setPackage(kModel);
        state.setDatabase(kDataset, true);
        ValidatePage page(&state);
        QSignalSpy ready(&page, &ValidatePage::ready);
        QVERIFY(shownAndValidated(page, ready));
        QVERIFY(page.hasResult());
        // The model's arg-min and its selection policy, then the baselines in the order every page
        // lists them: plain torch.compile, max-autotune's pick (this data has Inductor's own
        // times), Inductor's first config.
        QCOMPARE(page.metricsModel()->rowCount(), 5);
        QCOMPARE(page.metricsModel()->index(1, 0).data().toString(),
                 QString("h200-gemm-mlp-v2 policy (margin 0.10)"));
        QCOMPARE(page.metricsModel()->index(2, 0).data().toString(), QString("plain torch.compile (ATen)"));
        QVERIFY2(page.metricsModel()->index(3, 0).data().toString().startsWith("max-autotune's pick"),
                 qPrintable(page.metricsModel()->index(3, 0).data().toString()));
        QCOMPARE(page.metricsModel()->index(4, 0).data().toString(), QString("Inductor's first config"));
        QVERIFY(!page.methodBox()->method()); // the data's default, said in the status line
        QVERIFY(page.result().method.method == diode::TimingMethod::InductorAutotune);
        QVERIFY2(aLabelSays(page, "inductor_autotune times (default: the data has no in-graph times)"),
                 "the status line names the timing method");
        page.openProblem(0);
        QVERIFY(page.candidateModel()->rowCount() > 1);
        QTest::qWait(100);
        const QImage shot = page.grab().toImage();
        QVERIFY(shot.save(m_dir.filePath("validate.png")));
        QVERIFY2(distinctColours(shot) > 100, "the page is blank");
    }
};

QTEST_MAIN(TestValidatePage)
#include "tst_validatepage.moc"
