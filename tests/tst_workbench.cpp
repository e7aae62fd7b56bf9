#include "testutil.h"

#include "pagecheck.h"

#include "bias/biaspage.h"
#include "bias/biasscatter.h"
#include "common/metricsmodel.h"
#include "common/plotmessage.h"
#include "common/plotview.h"
#include "common/workbenchstate.h"
#include "data/datapage.h"
#include "data/rooflineview.h"
#include "demo/demopage.h"
#include "export/exportpage.h"
#include "hardware/characterisepanel.h"
#include "hardware/hardwarepage.h"
#include "mainwindow.h"
#include "screenshotrun.h"
#include "summary/summarypage.h"
#include "sweep/sweeppage.h"
#include "sweep/sweepworker.h"
#include "sweep/throughputplot.h"
#include "train/trainpage.h"
#include "train/trainworker.h"
#include "validate/candidatemodel.h"
#include "validate/predictionscatter.h"
#include "validate/validatepage.h"

#include "diode/config.h"
#include "diode/sweep/sweepplan.h"

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QCryptographicHash>
#include <QDesktopServices>
#include <QDialog>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QImage>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTableView>
#include <QTableWidget>
#include <QTimer>
#include <QWheelEvent>

// Stands in for a desktop's file handler (QDesktopServices::setUrlHandler).
class UrlOpener : public QObject {
    Q_OBJECT
public:
    QUrl url;
public slots:
    void open(const QUrl &u) { url = u; }
};

// The window a fresh clone opens, at 1280 x 800 on the shipped data, with the signals its pages
// give once their data is shown.
struct ShippedWindow {
    MainWindow w;
    QSignalSpy shown{&w, &MainWindow::databaseShown};
    QSignalSpy validated{w.findChild<ValidatePage *>(), &ValidatePage::ready};
    QSignalSpy biased{w.findChild<BiasPage *>(), &BiasPage::ready};
    QSignalSpy analysed{w.findChild<DataPage *>(), &DataPage::analysisShown};
    /// `visitFirst`: every page is shown once before the data opens, as a user clicking through
    /// the pages while it loads (a combo box sized on its first show, empty, cut what came later).
    bool open(bool visitFirst = false) {
        w.resize(1280, 800);
        w.show();
        if (visitFirst)
            for (const QString &name : w.pageTitles()) {
                w.showPage(name);
                QTest::qWait(100); // laid out and painted, empty
            }
        w.openShippedData();
        return shown.wait(30000);
    }
};

// The real main window, offscreen, opening real databases.
class TestWorkbench : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void initTestCase() { testutil::freshSettings("tst_workbench"); }
    void showsSummaryOfADatabase() {
        const QString db = m_dir.filePath("w.db");
        QCOMPARE(testutil::runCli({"sweep", "--backend", "cpu", "--plan",
                                   testutil::sourcePath("resources/plans/cpu-smoke.json"), "--db", db}),
                 0);
        // Kernel lines beside the sweep's runs: counted on their own row, as `diode stats` counts them.
        QCOMPARE(testutil::runCli(
                     {"import", testutil::sourcePath("trained_models/h200/h200-kernels.jsonl"), "--db", db}),
                 0);
        MainWindow w;
        w.show();
        QSignalSpy shown(&w, &MainWindow::databaseShown);
        w.openDatabase(db);
        QVERIFY(shown.wait(10000));
        auto *counts = w.findChild<QLabel *>("summaryCounts");
        QVERIFY(counts);
        // cpu-smoke's problems, each with every tile config of the plan
        const auto plan =
            diode::SweepPlan::load(testutil::sourcePath("resources/plans/cpu-smoke.json").toStdString());
        const auto problems = plan.problems.size(), measurements = problems * plan.cpuConfigs.size();
        // Says what it counts, as `diode stats` counts it: problems, one line each in one run; the
        // Data page lists a problem once per run.
        QVERIFY2(counts->text().contains(
                     QString("<td>%1 problems (0 failed); a line is a problem in one run").arg(problems)),
                 qPrintable(counts->text()));
        QString stats;
        QCOMPARE(testutil::runCli({"stats", "--db", db}, &stats), 0);
        QVERIFY2(stats.contains(QString("problems      %1 problems (0 failed)").arg(problems)),
                 qPrintable(stats));
        QVERIFY2(counts->text().contains(QString("%1 (0 failed)").arg(measurements)),
                 qPrintable(counts->text()));
        QVERIFY(counts->text().contains("addmm, bmm, mm"));
        QVERIFY2(counts->text().contains("<b>Timing glitches</b></td><td>— (no in-graph warm and cold times"),
                 qPrintable(counts->text()));
        QVERIFY2(counts->text().contains("<b>Kernel and site lines</b></td><td>305 kernel cases (251 "
                                         "measured), 0 site cases (0 measured)"),
                 qPrintable(counts->text()));
        QVERIFY2(stats.contains(
                     "kernel and site lines 305 kernel cases (251 measured), 0 site cases (0 measured)"),
                 qPrintable(stats));
        auto *runs = w.findChild<QTableWidget *>("runsTable");
        QCOMPARE(runs->rowCount(), 1);
        QCOMPARE(runs->item(0, 1)->text(), QString("cpu"));
        QCOMPARE(runs->item(0, 3)->text(), QString("finished"));
        QTest::qWait(50);
        pagecheck::checkRendered(&w, "overview", 8);
    }

    // "Usable at 1280x800": no page may force the window wider or taller than that.
    void everyPageFitsA1280x800Screen() {
        MainWindow w;
        w.show();
        QTest::qWait(200);
        const QSize min = w.minimumSizeHint().expandedTo(w.minimumSize());
        QStringList wide;
        for (const QString &name : w.pageNames()) {
            QVERIFY(w.showPage(name));
            auto *page = w.findChild<QWidget *>(name);
            QVERIFY(page);
            const QSize hint = page->minimumSizeHint();
            if (hint.width() > 1100 || hint.height() > 740)
                wide << QString("%1 %2x%3").arg(name).arg(hint.width()).arg(hint.height());
        }
        QVERIFY2(wide.isEmpty(), qPrintable(wide.join(", ")));
        QVERIFY2(min.width() <= 1280 && min.height() <= 800,
                 qPrintable(QString("%1x%2").arg(min.width()).arg(min.height())));
        w.resize(1280, 800);
        QTest::qWait(50);
        QCOMPARE(w.size(), QSize(1280, 800));
    }

    // --help and --version answer on a machine without a display (a GPU server, CI).
    void helpNeedsNoDisplay() {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        for (const char *k : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"})
            env.remove(k);
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(DIODE_WORKBENCH), {"--help"});
        QVERIFY(p.waitForFinished(10000));
        QCOMPARE(p.exitCode(), 0);
        QVERIFY(QString::fromUtf8(p.readAllStandardOutput()).contains("--screenshot"));
        p.start(QStringLiteral(DIODE_WORKBENCH), {});
        QVERIFY(p.waitForFinished(10000));
        QCOMPARE(p.exitCode(), 2); // no display and no --help: the one-line reason
        QVERIFY(QString::fromUtf8(p.readAllStandardError()).contains("no display"));
    }

    // `diode-workbench --version` answers without loading LibTorch's libraries (most of a second).
    // The dynamic loader's own log (LD_DEBUG) shows what was loaded: neither LibTorch nor Qt.
    void versionLoadsNeitherLibTorchNorQt() {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("LD_DEBUG", "libs");
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(DIODE_WORKBENCH), {"--version"});
        QVERIFY(p.waitForFinished(10000));
        QCOMPARE(p.exitCode(), 0);
        QCOMPARE(QString::fromUtf8(p.readAllStandardOutput()),
                 QStringLiteral("diode-workbench " DIODE_VERSION "\n"));
        const QString loads = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(loads.contains("calling init"), "LD_DEBUG gave no log: the check would see nothing");
        QVERIFY2(!loads.contains("libtorch") && !loads.contains("libQt6"), qPrintable(loads.left(2000)));
    }

    // The GUI runs with passive OpenMP waits, set before LibTorch loaded (GNU OpenMP reads them
    // only then): the Train page does not spin against other programs.
    void guiRunsWithPassiveThreadWaits() {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.remove("OMP_WAIT_POLICY");
        env.insert("QT_QPA_PLATFORM", "offscreen");
        env.insert("XDG_CONFIG_HOME", m_dir.filePath("config"));
        env.insert("XDG_DATA_HOME", m_dir.filePath("data"));
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(DIODE_WORKBENCH), {"--page", "trainPage"});
        QVERIFY(p.waitForStarted(10000));
        const QString proc = QStringLiteral("/proc/%1/").arg(p.processId());
        QByteArray environ;
        for (int i = 0; i < 100 && !QFileInfo(proc + "exe").symLinkTarget().endsWith("diode-workbench-gui");
             ++i)
            QTest::qWait(50); // the launcher execs the GUI in the same process
        QVERIFY2(QFileInfo(proc + "exe").symLinkTarget().endsWith("diode-workbench-gui"),
                 qPrintable(QFileInfo(proc + "exe").symLinkTarget()));
        QFile f(proc + "environ");
        QVERIFY(f.open(QIODevice::ReadOnly));
        environ = f.readAll();
        p.terminate();
        QVERIFY(p.waitForFinished(10000));
        QVERIFY2(environ.split('\0').contains("OMP_WAIT_POLICY=PASSIVE"), environ.constData());
    }

    // Where no program opens files (no xdg-open: a server under Xvfb, a container), Help ▸
    // Documentation names the README and docs/ in a dialog instead of doing nothing.
    void documentationWithoutAUrlLauncherNamesTheFiles() {
        const QByteArray path = qgetenv("PATH");
        QTemporaryDir empty;
        qputenv("PATH", empty.path().toUtf8()); // no xdg-open, whatever this machine has
        MainWindow w;
        w.show();
        w.showDocumentation();
        qputenv("PATH", path);
        auto *box = w.findChild<QMessageBox *>("documentationDialog");
        QVERIFY(box && box->isVisible());
        QVERIFY2(box->text().contains(testutil::sourcePath("README.md")), qPrintable(box->text()));
        QVERIFY2(box->text().contains(testutil::sourcePath("docs")), qPrintable(box->text()));
        box->close();
        // Where a program can open it, the README goes there and no dialog stands in the way.
        UrlOpener opener;
        QDesktopServices::setUrlHandler("file", &opener, "open");
        w.showDocumentation();
        QDesktopServices::unsetUrlHandler("file");
        QCOMPARE(opener.url, QUrl::fromLocalFile(testutil::sourcePath("README.md")));
    }

    // The real diode-workbench binary on the shipped data stays up (offscreen, as under Xvfb
    // without a window manager) until it is told to end, and prints no error on the way.
    void workbenchBinaryStaysUpOnTheShippedData() {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("QT_QPA_PLATFORM", "offscreen");
        env.insert("XDG_CONFIG_HOME", m_dir.filePath("config"));
        env.insert("XDG_DATA_HOME", m_dir.filePath("data"));
        p.setProcessEnvironment(env);
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(QStringLiteral(DIODE_WORKBENCH), {"--page", "validatePage"});
        QVERIFY(p.waitForStarted(10000));
        QVERIFY2(!p.waitForFinished(8000),
                 qPrintable(QString::fromUtf8(p.readAll()))); // still running after 8 s
        QCOMPARE(p.state(), QProcess::Running);
        p.terminate();
        QVERIFY(p.waitForFinished(10000));
        const QString out = QString::fromUtf8(p.readAll());
        QVERIFY2(!out.contains("Cannot") && !out.contains("error"), qPrintable(out));
    }

    // Every page says in one line what it shows; Help ▸ About names the version, the build's
    // features, where data lives and the documentation.
    void pagesSayWhatTheyShowAndAboutNamesTheBuild() {
        MainWindow w;
        w.show();
        auto *description = w.findChild<QLabel *>("pageDescription");
        QVERIFY(description);
        QSet<QString> seen;
        for (const QString &name : w.pageNames()) {
            QVERIFY(w.showPage(name));
            QVERIFY2(description->text().size() > 20, qPrintable(name));
            seen.insert(description->text());
        }
        QCOMPARE(seen.size(), w.pageNames().size());
        const QString about = MainWindow::aboutText();
        for (const QString &part : {QString(DIODE_VERSION), QString("training (LibTorch)"),
                                    QString("settings:"), QString("trained models:"), QString("README.md")})
            QVERIFY2(about.contains(part), qPrintable(part));
        w.showAbout();
        auto *box = w.findChild<QMessageBox *>("aboutDialog");
        QVERIFY(box && box->isVisible());
        box->close();
    }

    // A --screenshot run trains, sweeps and opens files to show real content, in a world of its
    // own: the user's settings, model folder, current model and sweep database stay as they were.
    void screenshotRunLeavesSettingsAndDataAlone() {
        const QString config = m_dir.filePath("user-config"), data = m_dir.filePath("user-data");
        const QString settings = config + "/diode/diode-workbench.conf";
        QVERIFY(QDir().mkpath(QFileInfo(settings).absolutePath()));
        QVERIFY(QDir().mkpath(data + "/diode/diode-workbench/models"));
        auto write = [](const QString &path, const QByteArray &bytes) {
            QFile f(path);
            return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
        };
        QVERIFY(
            write(settings,
                  "[state]\npackage=/home/someone/mine.diode\n\n[sweep]\ndatabase=/home/someone/mine.db\n\n"
                  "[train]\nepochs=3\n"));
        QVERIFY(write(data + "/diode/diode-workbench/models/mine.diode", "not a real package"));
        auto snapshot = [&] { // every file under both folders with a hash of its bytes
            QStringList files;
            for (const QString &root : {config, data}) {
                QDirIterator it(root, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
                while (it.hasNext()) {
                    const QString f = it.next();
                    files << f + ' ' +
                                 QCryptographicHash::hash(testutil::fileBytes(f), QCryptographicHash::Sha1)
                                     .toHex();
                }
            }
            files.sort();
            return files;
        };
        const QStringList before = snapshot();
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("QT_QPA_PLATFORM", "offscreen");
        env.insert("XDG_CONFIG_HOME", config);
        env.insert("XDG_DATA_HOME", data);
        QStringList pages{"sweepPage"};
        if (DIODE_HAVE_TORCH)
            pages << "trainPage"; // trains a model and makes it current
        for (const QString &page : pages) {
            const QString png = m_dir.filePath(page + ".png");
            QProcess p;
            p.setProcessEnvironment(env);
            p.setProcessChannelMode(QProcess::MergedChannels);
            // On the earlier (smaller) data: the Train shot trains on the open database, and this
            // test is about what the run leaves behind, not about the default data.
            p.start(QStringLiteral(DIODE_WORKBENCH),
                    {testutil::sourcePath("trained_models/h200/h200-dataset.db"), "--page", page,
                     "--screenshot", png});
            // The Train shot trains six networks for real: seconds on an idle 2-core machine, minutes
            // beside CI's other tests. Only a hang should fail here; CTest's timeout bounds it.
            QVERIFY2(p.waitForFinished(780000), qPrintable(page));
            // The reason for a failure is at the end, after Qt's warnings: show the tail.
            const QString output = QString::fromUtf8(p.readAll());
            QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0,
                     qPrintable(QStringLiteral("%1: exit code %2, output ends: ...%3")
                                    .arg(page)
                                    .arg(p.exitCode())
                                    .arg(output.right(1500))));
            QVERIFY(QFileInfo(png).size() > 10000);
        }
        QCOMPARE(snapshot(), before);
    }

    // `--screenshot` of a database that cannot be opened does not wait for the 240 s hang watchdog
    // to exit 1 with "nothing progressed". It ends at once, exit 2, the reason on
    // stderr, no picture, and the file as it was.
    void screenshotOfADatabaseThatCannotOpenFailsAtOnce_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QByteArray>("content"); // "" with name "missing.db": no file at all
        QTest::addColumn<QString>("reason");
        QTest::newRow("missing") << "missing.db" << QByteArray() << "the file does not exist";
        QTest::newRow("not sqlite") << "text.db" << QByteArray(100, 'x') << "not a SQLite database";
        QTest::newRow("empty") << "empty.db" << QByteArray() << "is empty: it holds no diode tables";
        QTest::newRow("foreign sqlite") << "foreign.db" << QByteArray() << "not a diode database";
    }
    void screenshotOfADatabaseThatCannotOpenFailsAtOnce() {
        QFETCH(QString, name);
        QFETCH(QByteArray, content);
        QFETCH(QString, reason);
        const QString db = m_dir.filePath(name), png = m_dir.filePath(name + ".png");
        if (name == "foreign.db") {
            sqlite3 *h = nullptr;
            QCOMPARE(sqlite3_open(db.toUtf8().constData(), &h), SQLITE_OK);
            QCOMPARE(sqlite3_exec(h, "CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT)", nullptr,
                                  nullptr, nullptr),
                     SQLITE_OK);
            sqlite3_close(h);
        } else if (name != "missing.db") {
            QFile f(db);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(content);
        }
        const QByteArray before = QFileInfo::exists(db) ? testutil::fileBytes(db) : QByteArray();
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("QT_QPA_PLATFORM", "offscreen");
        p.setProcessEnvironment(env);
        QElapsedTimer t;
        t.start();
        p.start(QStringLiteral(DIODE_WORKBENCH), {db, "--screenshot", png});
        QVERIFY(p.waitForFinished(120000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(t.elapsed() < 60000, qPrintable(QString::number(t.elapsed())));
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QVERIFY2(p.exitCode() == 2, qPrintable(QString::number(p.exitCode()) + ": " + err.right(800)));
        QVERIFY2(err.contains("--screenshot: Cannot open " + db) && err.contains(reason),
                 qPrintable(err.right(800)));
        QVERIFY(!err.contains("nothing progressed"));
        QVERIFY(!QFileInfo::exists(png));
        QCOMPARE(QFileInfo::exists(db) ? testutil::fileBytes(db) : QByteArray(), before);
        QCOMPARE(QFileInfo::exists(db + "-wal") || QFileInfo::exists(db + "-shm"), false);
    }

    // `--demo missing.json --screenshot` fails; it does not exit 0 with a picture of the error.
    void screenshotOfADemoResultThatCannotBeReadFails() {
        const QString missing = m_dir.filePath("missing-demo.json"), png = m_dir.filePath("demo.png");
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("QT_QPA_PLATFORM", "offscreen");
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(DIODE_WORKBENCH),
                {"--page", "demoPage", "--demo", missing, "--screenshot", png});
        QVERIFY(p.waitForFinished(60000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 2,
                 qPrintable(QString::number(p.exitCode()) + ": " + err.right(800)));
        QVERIFY2(err.contains("--demo " + missing + ": Cannot open the demo result: cannot read '" + missing +
                              "'"),
                 qPrintable(err.right(800)));
        QVERIFY(!QFileInfo::exists(png));
    }

    // Validate on data no model fits (a cpu sweep) is a final state: the screenshot waited for a
    // validation that never starts, until the 240 s watchdog.
    void screenshotOfValidateWithNoModelShowsTheReason() {
        const QString cpu = m_dir.filePath("shot-cpu.db"), png = m_dir.filePath("validate-cpu.png");
        QCOMPARE(testutil::runCli({"sweep", "--backend", "cpu", "--plan",
                                   testutil::sourcePath("resources/plans/cpu-smoke.json"), "--db", cpu}),
                 0);
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("QT_QPA_PLATFORM", "offscreen");
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(DIODE_WORKBENCH), {cpu, "--page", "Validate", "--screenshot", png});
        QVERIFY(p.waitForFinished(200000)); // the watchdog would end it after 240 s, with exit 1
        QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0,
                 qPrintable(QString::fromUtf8(p.readAllStandardError()).right(800)));
        QVERIFY(QImage(png).width() > 0);
    }

    // A fresh clone opens not the earlier data and model (Inductor's own timings, v2) but the
    // in-graph data, read-only, with the plugin's default package for the data's
    // GPU; Validate shows that package on the data's held-out problems with the baselines in the
    // order every page uses, Bias shows its bias, Export offers the in-graph packages. Then the
    // model follows the data: the earlier data gets the model trained on its times, cpu data none.
    void freshStartShowsTheProductDefaults() {
        const QString warm =
            QFileInfo(testutil::sourcePath("trained_models/h200/h200-ingraph-warm.diode")).absoluteFilePath();
        MainWindow w;
        w.resize(1280, 800);
        w.show();
        QVERIFY(w.showPage("Validate"));
        auto *validate = w.findChild<ValidatePage *>();
        QSignalSpy validated(validate, &ValidatePage::ready);
        QSignalSpy shown(&w, &MainWindow::databaseShown);
        w.openShippedData();
        QVERIFY(shown.wait(30000));
        QCOMPARE(QFileInfo(w.state()->databasePath()).fileName(), QString("h200-ingraph.db"));
        QVERIFY(w.state()->databaseReadOnly());
        QCOMPARE(w.state()->packagePath(), warm);
        // Every page starts on the same truth: the Data page's measurements are graph_warm's from
        // their first load (it showed every method until its own analysis arrived).
        QCOMPARE(w.state()->dataMethod(), QString("graph_warm"));
        QCOMPARE(w.findChild<QComboBox *>("methodFilter")->currentText(), QString("graph_warm"));
        QVERIFY2(w.findChild<QLabel *>("summaryCounts")->text().contains("graph_warm times (default"),
                 qPrintable(w.findChild<QLabel *>("summaryCounts")->text()));
        // The shipped H200 store's 12 warm-cold glitches (docs/FORMATS.md), in the sentence diode stats
        // prints.
        QVERIFY2(w.findChild<QLabel *>("summaryCounts")
                     ->text()
                     .contains("<b>Timing glitches</b></td><td>12 candidates have a warm time over 1.5x"),
                 qPrintable(w.findChild<QLabel *>("summaryCounts")->text()));

        QVERIFY(validated.wait(120000));
        const auto &r = validate->result();
        QCOMPARE(r.models.size(), size_t(1));
        QCOMPARE(r.models[0].packagePath, warm);
        QVERIFY(r.method.method == diode::TimingMethod::GraphWarm);
        auto *source = w.findChild<QComboBox *>("problemSource");
        QVERIFY2(source->currentData().toString().endsWith("trained_models/h200/h200-ingraph-heldout.jsonl"),
                 qPrintable(source->currentData().toString()));
        QVERIFY2(r.table->problems.size() > 700, qPrintable(QString::number(r.table->problems.size())));
        const auto *metrics = validate->metricsModel();
        QStringList selectors;
        for (int row = 0; row < metrics->rowCount(); ++row)
            selectors << metrics->index(row, 0).data().toString();
        // The package's arg-min and its selection policy (what the plugin runs), then the baselines.
        QCOMPARE(selectors.size(), 5);
        QCOMPARE(selectors[0], QString("h200-ingraph-warm"));
        QCOMPARE(selectors[1], QString("h200-ingraph-warm policy (margin 0.10)"));
        QCOMPARE(selectors[2], QString("plain torch.compile (ATen)"));
        QVERIFY2(selectors[3].startsWith("max-autotune's pick ("), qPrintable(selectors[3]));
        QCOMPARE(selectors[4], QString("Inductor's first config"));
        QVERIFY(r.maxAutotune.problems > 0 && r.maxAutotune.problems < int64_t(r.table->problems.size()));
        // The package beats both baselines a user has on problems it never trained on.
        QVERIFY(r.models[0].metrics.top1.mean > r.aten.top1.mean);
        QVERIFY(r.models[0].metrics.top1.mean > r.maxAutotune.top1.mean);
        // ... and says so in the Demo page's convention: speed-up ×, plain torch.compile first.
        QVERIFY(r.models[0].speedupVsPlain > 1 && r.models[0].speedupVsMaxAutotune > 1);
        const QString scope = validate->scopeText();
        QVERIFY2(scope.indexOf("× as fast as those of plain torch.compile (ATen)") > 0 &&
                     scope.indexOf("× as fast as those of plain torch.compile (ATen)") <
                         scope.indexOf("max-autotune's"),
                 qPrintable(scope));
        // Counted as `diode eval` and `diode stats` count: distinct problems in their lines.
        QVERIFY2(scope.contains(QRegularExpression("Measured on [0-9]+ problems in [0-9]+ lines")),
                 qPrintable(scope));

        auto *bias = w.findChild<BiasPage *>();
        QSignalSpy biased(bias, &BiasPage::ready);
        QVERIFY(w.showPage("bias")); // the page list's name, any case
        QVERIFY(biased.wait(120000));
        QVERIFY(bias->hasResult());
        QVERIFY2(bias->emptyText().isEmpty(), qPrintable(bias->emptyText()));
        QVERIFY(bias->result().hasInGraphTimes());

        QVERIFY(w.showPage("Export"));
        auto *exportBox = w.findChild<ExportPage *>()->findChild<QComboBox *>();
        QCOMPARE(exportBox->currentText(), QString("h200-ingraph-warm · NVIDIA H200 · graph_warm"));
        QVERIFY(exportBox->findText("h200-ingraph-cold · NVIDIA H200 · graph_cold") >= 0);

        // The earlier data gets the model trained on its times (v2), not the in-graph one.
        w.openEarlierData();
        QVERIFY(shown.wait(30000));
        QCOMPARE(QFileInfo(w.state()->databasePath()).fileName(), QString("h200-dataset.db"));
        QCOMPARE(QFileInfo(w.state()->packagePath()).fileName(), QString("h200-gemm-mlp-v2.diode"));
        // A model chosen by hand that fits the data stays: cold is in-graph H200 too.
        const QString cold =
            QFileInfo(testutil::sourcePath("trained_models/h200/h200-ingraph-cold.diode")).absoluteFilePath();
        w.openShippedData();
        QVERIFY(shown.wait(30000));
        QCOMPARE(w.state()->packagePath(), warm);
        w.state()->setPackage(cold);
        w.openShippedData();
        QVERIFY(shown.wait(30000));
        QCOMPARE(w.state()->packagePath(), cold);
        // cpu data: no GPU model is validated against cpu times.
        // A copy of showsSummaryOfADatabase's cpu sweep when it ran (a sweep takes a while), else one.
        const QString cpu = m_dir.filePath("defaults-cpu.db");
        QFile::copy(m_dir.filePath("w.db"), cpu);
        if (!QFileInfo::exists(cpu))
            QCOMPARE(testutil::runCli({"sweep", "--backend", "cpu", "--plan",
                                       testutil::sourcePath("resources/plans/cpu-smoke.json"), "--db", cpu}),
                     0);
        w.openDatabase(cpu);
        QVERIFY(shown.wait(30000));
        QVERIFY(w.state()->packagePath().isEmpty());
        QVERIFY(w.showPage("Validate"));
        QVERIFY(!validate->hasResult());
        QCOMPARE(w.findChild<QComboBox *>("modelA")->currentIndex(), -1);
    }

    // One name per page: the page list's title is what docs and --page use; the object
    // name still works, a wrong one is refused with the list of titles.
    void pagesAreCalledAsTheListCallsThem() {
        MainWindow w;
        QCOMPARE(w.pageTitles(), QStringList({"Overview", "Hardware", "Sweep", "Data", "Train", "Validate",
                                              "Bias", "Export", "Demo"}));
        for (int i = 0; i < w.pageTitles().size(); ++i) {
            QWidget *byTitle = w.page(w.pageTitles()[i]);
            QVERIFY(byTitle);
            QCOMPARE(w.page(w.pageTitles()[i].toLower()), byTitle);
            QCOMPARE(w.page(w.pageNames()[i]), byTitle);
        }
        QVERIFY(!w.page("summaryPage"));
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("QT_QPA_PLATFORM", "offscreen");
        env.insert("XDG_CONFIG_HOME", m_dir.filePath("config"));
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(DIODE_WORKBENCH), {"--page", "summaryPage"});
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 2);
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(err.contains("no page 'summaryPage'; pages: Overview, Hardware"), qPrintable(err));
    }

    // A failed File > Open does not close the database that was open (Overview "No database open",
    // Data stuck on "Loading…"): the open one stays open and usable; the error is shown.
    void failedOpenKeepsTheOpenDatabase() {
        const QString good = testutil::sourcePath("trained_models/h200/h200-dataset.db");
        const QString bad = m_dir.filePath("bad-open.db");
        {
            QFile f(bad);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray(100, 'x'));
        }
        MainWindow w;
        w.show();
        QSignalSpy shown(&w, &MainWindow::databaseShown);
        QSignalSpy failed(&w, &MainWindow::databaseFailed);
        w.openDatabase(good, true);
        QVERIFY(shown.wait(20000));
        auto *counts = w.findChild<QLabel *>("summaryCounts");
        auto *title = w.findChild<QLabel *>("summaryTitle");
        auto *rows = w.findChild<QLabel *>("measurementsCount");
        QVERIFY(counts && title && rows);
        QTRY_VERIFY_WITH_TIMEOUT(rows->text().contains("rows"), 20000);
        const QString summary = counts->text(), measurements = rows->text();
        QVERIFY(!summary.isEmpty());

        w.openDatabase(bad);
        QVERIFY(failed.wait(10000));
        QVERIFY2(failed.at(0).at(0).toString().contains("not a SQLite database"),
                 qPrintable(failed.at(0).at(0).toString()));
        QCOMPARE(w.state()->databasePath(), good);
        QVERIFY(w.state()->databaseReadOnly());
        QCOMPARE(title->text(), good);
        QCOMPARE(counts->text(), summary);
        auto *box = w.findChild<QMessageBox *>("databaseErrorDialog");
        QVERIFY(box && box->isVisible());
        QVERIFY2(box->text().contains(bad) && box->text().contains("h200-dataset.db stays open"),
                 qPrintable(box->text()));
        QVERIFY(w.statusBar()->currentMessage().contains(bad));
        box->close();
        // The Data page still shows the open database, never the failed one.
        QTest::qWait(500);
        QCOMPARE(rows->text(), measurements);
        // ... and it is usable: read again after a change, it shows again.
        w.state()->notifyDataChanged();
        QVERIFY(shown.wait(20000));
        QCOMPARE(counts->text(), summary);
        QCOMPARE(failed.count(), 1);
    }

    // Save table as CSV says where the file went, in the status bar.
    void savedTableSaysWhereItWent() {
        MainWindow w;
        w.show();
        QSignalSpy shown(&w, &MainWindow::databaseShown);
        w.openDatabase(testutil::sourcePath("trained_models/h200/h200-dataset.db"), true);
        QVERIFY(shown.wait(20000));
        // Answers the save dialog the action opens (Qt's own dialog: offscreen has no native one).
        auto answer = [](const QString &path) {
            QTimer::singleShot(200, [path] {
                auto *dialog = qobject_cast<QFileDialog *>(QApplication::activeModalWidget());
                QVERIFY(dialog);
                dialog->selectFile(path);
                static_cast<QDialog *>(dialog)->accept(); // QFileDialog::accept is protected
            });
        };
        auto trigger = [](QWidget *view, const QString &prefix) {
            for (QAction *a : view->actions())
                if (a->text().startsWith(prefix)) {
                    a->trigger();
                    return true;
                }
            return false;
        };
        // A table of a page (the Sweep page's failed problems), saved as it is shown.
        auto *sweep = w.findChild<QWidget *>("sweepPage");
        QTableView *failedView = nullptr;
        for (auto *v : sweep->findChildren<QTableView *>())
            for (QAction *a : v->actions())
                if (a->text().startsWith("Save table as CSV"))
                    failedView = v;
        QVERIFY(failedView);
        const QString csv = m_dir.filePath("failed-problems.csv");
        answer(csv);
        QVERIFY(trigger(failedView, "Save table as CSV"));
        QVERIFY(QFileInfo::exists(csv));
        QVERIFY2(w.statusBar()->currentMessage().contains("Table saved to " + csv),
                 qPrintable(w.statusBar()->currentMessage()));
        // The Data page's tables, every matching row (written on a worker thread).
        QVERIFY(w.showPage("dataPage"));
        auto *rows = w.findChild<QLabel *>("measurementsCount");
        QTRY_VERIFY_WITH_TIMEOUT(rows && rows->text().contains("rows"), 20000);
        auto *measurements = w.findChild<QTableView *>("measurementsView");
        QVERIFY(measurements);
        const QString all = m_dir.filePath("measurements.csv");
        answer(all);
        QVERIFY(trigger(measurements, "Save table as CSV"));
        QTRY_VERIFY_WITH_TIMEOUT(w.statusBar()->currentMessage().contains("rows saved to " + all), 20000);
        QVERIFY(QFileInfo(all).size() > 1000);
    }

    // The open file in the title bar, and File ▸ Open recent: what every desktop application has.
    void titleNamesTheOpenFileAndRecentFilesReopen() {
        const QString earlier = testutil::sourcePath("trained_models/h200/h200-dataset.db");
        const QString cpu = m_dir.filePath("recent-cpu.db");
        QCOMPARE(testutil::runCli({"sweep", "--backend", "cpu", "--plan",
                                   testutil::sourcePath("resources/plans/cpu-smoke.json"), "--db", cpu}),
                 0);
        QSettings().remove("recent/databases");
        MainWindow w;
        w.show();
        QCOMPARE(w.windowTitle(), QString("Diode Workbench"));
        QSignalSpy shown(&w, &MainWindow::databaseShown);
        w.openDatabase(earlier, true);
        QVERIFY(shown.wait(20000));
        QCOMPARE(w.windowTitle(), QString("h200-dataset.db (read-only) — Diode Workbench"));
        w.openDatabase(cpu);
        QVERIFY(shown.wait(20000));
        QCOMPARE(w.windowTitle(), QString("recent-cpu.db — Diode Workbench"));
        QCOMPARE(w.recentDatabases(),
                 QStringList({QFileInfo(cpu).absoluteFilePath(), QFileInfo(earlier).absoluteFilePath()}));
        auto *recent = w.findChild<QMenu *>("recentMenu");
        QVERIFY(recent);
        QAction *again = nullptr;
        for (QAction *a : recent->actions())
            if (a->data().toString() == QFileInfo(earlier).absoluteFilePath())
                again = a;
        QVERIFY2(again && again->text().contains("h200-dataset.db"),
                 "the earlier database is in Open recent");
        again->trigger();
        QVERIFY(shown.wait(20000));
        QCOMPARE(QFileInfo(w.state()->databasePath()).fileName(), QString("h200-dataset.db"));
        QVERIFY(w.windowTitle().startsWith("h200-dataset.db"));
        QCOMPARE(w.recentDatabases().first(), QFileInfo(earlier).absoluteFilePath());
        // A new window (the next start) lists them too.
        MainWindow next;
        QCOMPARE(next.recentDatabases().size(), 2);
    }

    // Help ▸ About named only the H200 folder; every hardware's folder of shipped data is named.
    void aboutNamesEveryShippedFolder() {
        const QString about = MainWindow::aboutText();
        for (const char *folder : {"trained_models/h100", "trained_models/h200"})
            QVERIFY2(about.contains(folder), qPrintable(about));
    }

    // --screenshot of Train trained a model for 102 s, and of Sweep ran a sweep: a picture must
    // start no work. Both are saved once the open database is shown; nothing trains or sweeps.
    void screenshotOfTrainAndSweepStartsNoWork() {
        for (const QString name : {"Train", "Sweep"}) {
            MainWindow w;
            w.resize(1280, 800);
            w.show();
            QVERIFY(w.showPage(name));
            const QString png = m_dir.filePath("no-work-" + name + ".png");
            auto *run = new ScreenshotRun(&w, w.page(name), png);
            QSignalSpy finished(run, &ScreenshotRun::finished);
            auto *train = w.findChild<TrainPage *>();
            auto *sweep = w.findChild<SweepPage *>();
            QSignalSpy epochs(train->worker(), &TrainWorker::progress);
            QSignalSpy problems(sweep->worker(), &SweepWorker::problemFinished);
            w.openDatabase(testutil::sourcePath("trained_models/h200/h200-dataset.db"), true);
            QVERIFY(finished.wait(60000));
            QCOMPARE(finished.at(0).at(0).toInt(), 0);
            QVERIFY(QImage(png).width() > 0);
            QVERIFY(!train->worker()->isRunning() && !sweep->worker()->isRunning());
            QTest::qWait(500);
            QCOMPARE(epochs.size(), 0);
            QCOMPARE(problems.size(), 0);
            if (name == "Sweep") // a run of the open database, to compare the next sweep with
                QVERIFY2(sweep->plot()->overlayPoints() > 0, "the Sweep shot shows the database's run");
        }
    }

    // The default window: every page at 1280 x 800 with its data shown, every tab of it, and the
    // states a newcomer meets (two models on Validate, an error on Sweep, a result on Demo, the
    // Characterise window): no text of a page's own widgets is cut, and the window stays 1280 wide.
    void noPageCutsATextAt1280x800() {
        ShippedWindow sw;
        QVERIFY(sw.open(true));
        MainWindow &w = sw.w;
        auto *validate = w.findChild<ValidatePage *>();
        QSignalSpy &validated = sw.validated, &biased = sw.biased;
        QStringList cut;
        auto check = [&](const QString &name, QWidget *page) {
            QTest::qWait(100);
            for (const QString &c : pagecheck::clippedTextsOnEveryTab(page)) {
                cut << name + ": " + c;
                qWarning("cut: %s", qPrintable(cut.last()));
            }
            QVERIFY2(w.width() == 1280,
                     qPrintable(QString("%1 widened the window to %2").arg(name).arg(w.width())));
            for (auto *plot : page->findChildren<QCustomPlot *>())
                if (plot->isVisible() && !plotMessage(plot).size()) {
                    plot->replot();
                    bool titled = false;
                    for (QCPLayoutElement *e : plot->plotLayout()->elements(true))
                        if (auto *t = qobject_cast<QCPTextElement *>(e); t && !t->text().isEmpty())
                            titled = true;
                    if (titled)
                        pagecheck::checkTitlesFit(plot, name + "/" + plot->objectName());
                }
        };
        for (const QString &name : w.pageTitles()) {
            QVERIFY(w.showPage(name));
            if (name == "Validate")
                QVERIFY(validated.count() || validated.wait(120000));
            if (name == "Bias")
                QVERIFY(biased.count() || biased.wait(120000));
            check(name, w.page(name));
            if (QTest::currentTestFailed())
                return;
        }
        // Two models side by side on Validate.
        QVERIFY(w.showPage("Validate"));
        auto *modelB = w.findChild<QComboBox *>("modelB");
        const int cold = modelB->findText("h200-ingraph-cold", Qt::MatchStartsWith);
        QVERIFY(cold > 0);
        validated.clear();
        modelB->setCurrentIndex(cold);
        QVERIFY(validated.wait(120000));
        QCOMPARE(validate->result().models.size(), size_t(2));
        check("Validate with two models", validate);
        modelB->setCurrentIndex(0);
        // Sweep after an error (a database it cannot create, a long path in the message): the message
        // wraps inside the page.
        QVERIFY(w.showPage("Sweep"));
        auto *sweep = w.findChild<SweepPage *>();
        sweep->setTargetDatabase(
            m_dir.filePath("a/folder/that/does/not/exist/with/a/long/name/cut-check.db"));
        sweep->setBackend("cpu");
        QSignalSpy failed(sweep->worker(), &SweepWorker::failed);
        sweep->run();
        QVERIFY(failed.wait(60000));
        QVERIFY(sweep->findChild<QLabel *>("sweepError")->isVisible());
        check("Sweep after an error", sweep);
        // Demo on a model-step result, and on one case of the shipped result.
        auto *demo = w.findChild<DemoPage *>();
        QVERIFY(w.showPage("Demo"));
        QVERIFY(demo->openResult(testutil::dataPath("demo/demo3-model-steps.json")));
        check("Demo on model steps", demo);
        QVERIFY(demo->openResult(DemoPage::shippedResult()));
        auto *cases = demo->findChild<QComboBox *>("demoCase");
        cases->setCurrentIndex(1);
        check("Demo on one case", demo);
        // The Characterise window, at the size it opens.
        auto *panel = w.findChild<HardwarePage *>()->openCharacterise();
        check("Characterise", panel->window());
        panel->window()->close();
        QVERIFY2(cut.isEmpty(), qPrintable(cut.join("\n")));
    }

    // Every plot answers the mouse as Nsight's and TensorBoard's do: the wheel zooms, a double-click
    // goes back to the data's view, and the point, bar or cell under the mouse is named.
    void everyPlotZoomsResetsAndNamesWhatIsUnderTheMouse() {
        ShippedWindow sw;
        QVERIFY(sw.open());
        MainWindow &w = sw.w;
        auto *validate = w.findChild<ValidatePage *>();
        auto *bias = w.findChild<BiasPage *>();
        auto *data = w.findChild<DataPage *>();
        QSignalSpy &validated = sw.validated, &biased = sw.biased, &analysed = sw.analysed;
        QVERIFY(analysed.count() || analysed.wait(60000));
        QStringList silent, stuck;
        // A pixel of a data point (graph), of a bar's middle, or of a colour map's cell.
        auto dataPixel = [](QCustomPlot *plot) -> std::optional<QPointF> {
            for (int i = plot->plottableCount() - 1; i >= 0; --i) {
                QCPAbstractPlottable *p = plot->plottable(i);
                if (!p->visible())
                    continue;
                if (auto *g = qobject_cast<QCPGraph *>(p); g && g->dataCount() > 0) {
                    for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it) {
                        const QPointF px = g->coordsToPixels(it->key, it->value);
                        if (plot->axisRect()->rect().contains(px.toPoint()))
                            return px;
                    }
                }
                if (auto *b = qobject_cast<QCPBars *>(p); b && b->dataCount() > 0) {
                    const auto it = b->data()->constBegin();
                    return b->coordsToPixels(it->key, it->value / 2);
                }
                if (auto *m = qobject_cast<QCPColorMap *>(p)) {
                    for (int x = 0; x < m->data()->keySize(); ++x)
                        for (int y = 0; y < m->data()->valueSize(); ++y)
                            if (!std::isnan(m->data()->cell(x, y))) {
                                double k = 0, v = 0;
                                m->data()->cellToCoord(x, y, &k, &v);
                                return m->coordsToPixels(k, v);
                            }
                }
            }
            return std::nullopt;
        };
        auto exercise = [&](QCustomPlot *plot, const QString &name) {
            plot->replot();
            const auto px = dataPixel(plot);
            if (!px)
                return;
            auto *view = PlotView::of(plot);
            const bool ownTips = qobject_cast<PredictionScatter *>(plot);
            if (!ownTips && view->tipAt(*px).isEmpty())
                silent << name;
            const QCPRange before = plot->xAxis->range(), beforeY = plot->yAxis->range();
            QWheelEvent wheel(*px, plot->mapToGlobal(*px), QPoint(), QPoint(0, 240), Qt::NoButton,
                              Qt::NoModifier, Qt::NoScrollPhase, false);
            QApplication::sendEvent(plot, &wheel);
            plot->replot();
            const bool zoomed = plot->xAxis->range() != before || plot->yAxis->range() != beforeY;
            const bool moved = view->moved();
            QTest::mouseDClick(plot, Qt::LeftButton, Qt::NoModifier, px->toPoint());
            const bool back =
                plot->xAxis->range() == before && plot->yAxis->range() == beforeY && !view->moved();
            if (!zoomed || !moved || !back)
                stuck << QString("%1 (zoomed %2, moved %3, back %4)")
                             .arg(name)
                             .arg(zoomed)
                             .arg(moved)
                             .arg(back);
        };
        for (const QString &page : w.pageTitles()) {
            QVERIFY(w.showPage(page));
            if (page == "Validate")
                QVERIFY(validated.count() || validated.wait(120000));
            if (page == "Bias")
                QVERIFY(biased.count() || biased.wait(120000));
            QWidget *p = w.page(page);
            for (auto *tabs : p->findChildren<QTabWidget *>())
                for (int i = 0; i < tabs->count(); ++i) {
                    tabs->setCurrentIndex(i);
                    QTest::qWait(50);
                    for (auto *plot : p->findChildren<QCustomPlot *>())
                        if (plot->isVisible())
                            exercise(plot, page + "/" + plot->objectName());
                }
            for (auto *plot : p->findChildren<QCustomPlot *>())
                if (plot->isVisible())
                    exercise(plot, page + "/" + plot->objectName());
        }
        QVERIFY2(silent.isEmpty(), qPrintable("no tooltip over a data point: " + silent.join(", ")));
        QVERIFY2(stuck.isEmpty(),
                 qPrintable("no zoom, or no way back with a double-click: " + stuck.join(", ")));
        // Every plot of the window has them, whether it had data here or not.
        for (auto *plot : w.findChildren<QCustomPlot *>()) {
            bool reset = false;
            for (QAction *a : plot->actions())
                reset = reset || a->objectName() == "resetView";
            QVERIFY2(reset, qPrintable(plot->objectName() + " has no Reset view"));
        }
    }

    // Select a problem on one page, see it on the others: Validate, Bias and Data (linked selection).
    void aProblemSelectedOnOnePageIsSelectedOnTheOthers() {
        ShippedWindow sw;
        QVERIFY(sw.open());
        MainWindow &w = sw.w;
        auto *validate = w.findChild<ValidatePage *>();
        auto *bias = w.findChild<BiasPage *>();
        auto *data = w.findChild<DataPage *>();
        QSignalSpy &validated = sw.validated, &biased = sw.biased, &analysed = sw.analysed;
        QVERIFY(w.showPage("Bias"));
        QVERIFY(biased.count() || biased.wait(120000));
        QVERIFY(analysed.count() || analysed.wait(60000));
        QVERIFY(w.showPage("Validate"));
        QVERIFY(validated.count() || validated.wait(120000));
        // Validate on the database's problems, which Bias and Data show too.
        auto *source = w.findChild<QComboBox *>("problemSource");
        validated.clear();
        source->setCurrentIndex(source->findData(ValidatePage::kAllSource));
        QVERIFY(validated.wait(120000));
        // Bias -> Validate and Data: a row of Bias's problem table.
        QVERIFY(w.showPage("Bias"));
        auto *problems = bias->findChild<QTableView *>("biasProblems");
        problems->setCurrentIndex(problems->model()->index(3, 0));
        const QString label = problems->model()->index(3, 0).data().toString();
        QCOMPARE(w.state()->selectedProblem(), label);
        QVERIFY(bias->scatter()->highlighted() > 0);
        QVERIFY(validate->candidateModel()->rowCount() > 0);
        QVERIFY2(w.findChild<QLabel *>("validateProblemTitle")->text().contains(label),
                 qPrintable(w.findChild<QLabel *>("validateProblemTitle")->text()));
        QVERIFY(validate->findChild<PredictionScatter *>("scatterA")->highlighted() > 0);
        QVERIFY(data->problemFilter().has_value());
        QCOMPARE(QString::fromStdString(data->problemFilter()->label()), label);
        QVERIFY(data->roofline()->highlighted() > 0);
        // The Data page's tables show that problem's lines only (one a run that measured it).
        auto *lines = data->findChild<QTableView *>("problemsView");
        QTRY_VERIFY_WITH_TIMEOUT(lines->model()->rowCount() >= 1 && lines->model()->rowCount() <= 4, 20000);
        QVERIFY(w.findChild<QLabel *>("problemFilter")->text().contains(label.toHtmlEscaped()));
        // Validate -> Bias: a problem opened on Validate is the row Bias selects.
        QVERIFY(w.showPage("Validate"));
        validate->openProblem(10);
        const QString other = QString::fromStdString(validate->result().table->problems[10].label());
        QCOMPARE(w.state()->selectedProblem(), other);
        const QModelIndex current = problems->currentIndex();
        QCOMPARE(current.siblingAtColumn(0).data().toString(), other);
        // Data -> the others: a row of the problems table.
        QVERIFY(w.showPage("Data"));
        auto *rows = data->findChild<QTableView *>("problemsView");
        QTRY_VERIFY_WITH_TIMEOUT(rows->model()->rowCount() > 0, 20000);
        w.findChild<QPushButton *>("clearProblemFilter")->click();
        QTRY_VERIFY_WITH_TIMEOUT(rows->model()->rowCount() > 20, 20000);
        rows->setCurrentIndex(rows->model()->index(20, 0));
        QVERIFY(w.state()->selectedProblem() != other);
        QCOMPARE(problems->currentIndex().siblingAtColumn(0).data().toString(), w.state()->selectedProblem());
    }

    void foreignFileGivesAVisibleError() {
        const QString bad = m_dir.filePath("bad.db");
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("this is not a database, just text that is long enough to be a header............");
        f.close();
        MainWindow w; // not shown: the error goes to the status bar, not a modal box
        QSignalSpy failed(&w, &MainWindow::databaseFailed);
        w.openDatabase(bad);
        QVERIFY(failed.wait(10000));
        QVERIFY(failed.at(0).at(0).toString().contains("not a SQLite database"));
    }
};

QTEST_MAIN(TestWorkbench)
#include "tst_workbench.moc"
