#include "testutil.h"

#include "mainwindow.h"
#include "summarypage.h"

#include <QLabel>
#include <QSignalSpy>
#include <QTableWidget>

// The real main window, offscreen, opening real databases.
class TestWorkbench : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    void initTestCase() { testutil::freshSettings("tst_workbench"); }
    void showsSummaryOfADatabase()
    {
        const QString db = m_dir.filePath("w.db");
        QCOMPARE(testutil::runCli({"sweep", "--backend", "cpu", "--plan", testutil::sourcePath("resources/plans/cpu-smoke.json"),
                                   "--db", db}),
                 0);
        MainWindow w;
        w.show();
        QSignalSpy shown(&w, &MainWindow::databaseShown);
        w.openDatabase(db);
        QVERIFY(shown.wait(10000));
        auto *counts = w.findChild<QLabel *>("summaryCounts");
        QVERIFY(counts);
        QVERIFY2(counts->text().contains("<td>10 (0 failed)</td>"), qPrintable(counts->text()));
        QVERIFY(counts->text().contains("160 (0 failed)"));
        QVERIFY(counts->text().contains("addmm, bmm, mm"));
        auto *runs = w.findChild<QTableWidget *>("runsTable");
        QCOMPARE(runs->rowCount(), 1);
        QCOMPARE(runs->item(0, 1)->text(), QString("cpu"));
        QCOMPARE(runs->item(0, 3)->text(), QString("finished"));
        QVERIFY(!w.grab().isNull());
    }

    void foreignFileGivesAVisibleError()
    {
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
