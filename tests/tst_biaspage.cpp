#include "testutil.h"

#include "bias/biasgroupmodel.h"
#include "bias/biaspage.h"
#include "bias/biasproblemmodel.h"
#include "common/configlabel.h"
#include "common/timingmethodbox.h"
#include "common/workbenchstate.h"
#include "pagecheck.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTableView>

// The Bias page on tests/data/bias-problems.jsonl (two in-graph problems worked out by hand in
// tst_bias, one v1 problem with Inductor's times only), imported into a real database.
class TestBiasPage : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_db, m_oldDb;

    static QString cell(const QAbstractItemModel *m, int row, int column) {
        return m->data(m->index(row, column)).toString();
    }

    static bool waitReady(BiasPage &page) {
        QSignalSpy ready(&page, &BiasPage::ready);
        return ready.wait(30000);
    }

private slots:
    // Every page names a config by configLabel: cpu tiles by their block sizes and threads (they
    // once all read "cpu tiled"), Triton configs by template, blocks, group, stages and warps, and
    // a stored config key the same way as the config it is.
    void configLabelsTellConfigsApart() {
        diode::KernelConfig a;
        a.kind = "cpu";
        a.name = "tiled";
        a.blockM = 64;
        a.blockN = 64;
        a.blockK = 256;
        a.threads = 4;
        diode::KernelConfig b = a;
        b.threads = 2;
        QCOMPARE(configLabel(a), QStringLiteral("cpu tiled 64×64×256 t4"));
        QVERIFY(configLabel(a) != configLabel(b));
        QCOMPARE(configLabel(a.key()), configLabel(a));
        diode::KernelConfig t;
        t.kind = "triton";
        t.name = "mm";
        t.blockM = 64;
        t.blockN = 128;
        t.blockK = 32;
        t.groupM = 8;
        t.numStages = 3;
        t.numWarps = 4;
        QCOMPARE(configLabel(t), QStringLiteral("triton mm 64×128×32 G8 s3 w4"));
        QCOMPARE(configLabel(std::string("not json")), QStringLiteral("not json"));
    }

    void initTestCase() {
        testutil::freshSettings("tst_biaspage");
        QVERIFY(m_dir.isValid());
        const QString data = testutil::dataPath("bias-problems.jsonl");
        QString out, err;
        m_db = m_dir.filePath("bias.db");
        QVERIFY2(testutil::runCli({"import", data, "--db", m_db}, &out, &err) == 0, qPrintable(err));
        // The same problems as data written before in-graph timing: the v1 line alone.
        const QString v1 = m_dir.filePath("v1.jsonl");
        QFile f(v1);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(testutil::fileBytes(data).split('\n').value(2) + '\n');
        f.close();
        m_oldDb = m_dir.filePath("old.db");
        QVERIFY2(testutil::runCli({"import", v1, "--db", m_oldDb}, &out, &err) == 0, qPrintable(err));
    }

    void showsTheGroupsAndProblems() {
        WorkbenchState state;
        BiasPage page(&state);
        QAbstractItemModelTester groupTester(page.groupModel(),
                                             QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester problemTester(page.problemModel(),
                                               QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(page.methodBox()->count(), 2); // graph_warm and graph_cold only
        QVERIFY(page.methodBox()->method() == diode::TimingMethod::GraphWarm);
        page.resize(1200, 800);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        state.setDatabase(m_db, true);
        QVERIFY(waitReady(page));
        QVERIFY2(page.emptyText().isEmpty(), qPrintable(page.emptyText()));

        const auto *g = page.groupModel();
        QCOMPARE(g->rowCount(), 5); // overall, two ops, two op x dtype x size classes
        QCOMPARE(cell(g, 0, BiasGroupModel::Op), QStringLiteral("all"));
        QCOMPARE(cell(g, 0, BiasGroupModel::Problems), QStringLiteral("2"));
        QCOMPARE(cell(g, 0, BiasGroupModel::MaxAutotuneMean), QStringLiteral("0.833"));
        QCOMPARE(cell(g, 0, BiasGroupModel::MaxAutotuneP10), QStringLiteral("0.667"));
        QCOMPARE(cell(g, 0, BiasGroupModel::CompileMean), QString::number((0.008 / 0.0105 + 1) / 2, 'f', 3));
        QCOMPARE(cell(g, 0, BiasGroupModel::PickIsFastest), QStringLiteral("50%"));
        QCOMPARE(cell(g, 0, BiasGroupModel::AtenInflation), QStringLiteral("1.94×"));
        // One order of baselines on every face: plain torch.compile first, max-autotune second, in
        // the table's columns and in `diode bias`'s header.
        QVERIFY(BiasGroupModel::CompileMean < BiasGroupModel::MaxAutotuneMean);
        QCOMPARE(g->headerData(BiasGroupModel::CompileMean, Qt::Horizontal).toString(),
                 QString("torch.compile"));
        QCOMPARE(g->headerData(BiasGroupModel::MaxAutotuneMean, Qt::Horizontal).toString(),
                 QString("max-autotune"));
        QString cli;
        QCOMPARE(testutil::runCli({"bias", "--db", m_db}, &cli), 0);
        const QString header = cli.section('\n', 1, 1);
        QVERIFY2(header.indexOf("torch.compile") > 0 &&
                     header.indexOf("torch.compile") < header.indexOf("max-autotune"),
                 qPrintable(header));
        for (int r = 0; r < g->rowCount(); ++r)
            for (int c = BiasGroupModel::CompileMean; c < BiasGroupModel::ColumnCount; ++c)
                QVERIFY2(!cell(g, r, c).isEmpty() && cell(g, r, c) != QStringLiteral("0.000"),
                         qPrintable(QStringLiteral("row %1 column %2: %3").arg(r).arg(c).arg(cell(g, r, c))));

        // Worst loss first: the mm problem, whose pick runs at 2/3 of the fastest.
        const auto *p = page.problemModel();
        QCOMPARE(p->rowCount(), 2);
        auto *view = page.findChild<QTableView *>(QStringLiteral("biasProblems"));
        QVERIFY(view);
        const auto *shown = view->model();
        QVERIFY(cell(shown, 0, BiasProblemModel::Problem).contains(QStringLiteral("mm")));
        QCOMPARE(cell(shown, 0, BiasProblemModel::PickLoss), QStringLiteral("33.3%"));
        QCOMPARE(cell(shown, 1, BiasProblemModel::PickLoss), QStringLiteral("0.0%"));
        QCOMPARE(cell(shown, 0, BiasProblemModel::FastestUs), QStringLiteral("8.00"));
        // Configs named as the Validate page names them, not as raw JSON.
        for (int row = 0; row < shown->rowCount(); ++row)
            for (int column : {int(BiasProblemModel::Fastest), int(BiasProblemModel::Pick)}) {
                const QString config = cell(shown, row, column);
                QVERIFY2(config.startsWith(QStringLiteral("aten ")) ||
                             config.startsWith(QStringLiteral("triton ")),
                         qPrintable(config));
            }
        QCOMPARE(page.result().report.points.size(), size_t(5));
        pagecheck::checkRendered(&page, QStringLiteral("bias"), 20);

        // Cold L2 is its own truth: the mm pick's efficiency is 0.75 there.
        page.methodBox()->setMethod(diode::TimingMethod::GraphCold);
        QVERIFY(!page.hasResult()); // the warm numbers are gone at once
        QCOMPARE(g->rowCount(), 0);
        QVERIFY(waitReady(page));
        QVERIFY(page.result().method == diode::TimingMethod::GraphCold);
        QCOMPARE(cell(g, 0, BiasGroupModel::MaxAutotuneMean), QString::number((0.75 + 1) / 2, 'f', 3));
        QCOMPARE(cell(g, 0, BiasGroupModel::MaxAutotuneP10), QStringLiteral("0.750"));
    }

    // A sweep that ran Inductor's own benchmark on a sample (worker --inductor-every): the third
    // problem (tests/data/bias-sampled.jsonl) has in-graph times but no max-autotune pick, so
    // max-autotune's columns are over 2 of 3 problems, and say so.
    void sampledProblemsSayOverHowMany() {
        const QString db = m_dir.filePath("sampled.db");
        QString out, err;
        for (const char *name : {"bias-problems.jsonl", "bias-sampled.jsonl"})
            QVERIFY2(testutil::runCli({"import", testutil::dataPath(name), "--db", db}, &out, &err) == 0,
                     qPrintable(err));
        WorkbenchState state;
        BiasPage page(&state);
        page.methodBox()->setMethod(diode::TimingMethod::GraphWarm); // the last test left cold chosen
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        state.setDatabase(db, true);
        QVERIFY(waitReady(page));
        const auto *g = page.groupModel();
        QCOMPARE(cell(g, 0, BiasGroupModel::Problems), QStringLiteral("3"));
        QCOMPARE(cell(g, 0, BiasGroupModel::MaxAutotuneMean), QStringLiteral("0.833 (2)"));
        QCOMPARE(cell(g, 0, BiasGroupModel::PickIsFastest), QStringLiteral("50% (2)"));
        QVERIFY(g->data(g->index(0, BiasGroupModel::MaxAutotuneMean), Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("2 of 3 problems")));
        QVERIFY(!g->data(g->index(0, BiasGroupModel::CompileMean), Qt::ToolTipRole).isValid());
        QCOMPARE(cell(g, 0, BiasGroupModel::CompileMean).contains('('), false);
    }

    // Shown before its database arrives (the workbench opening with --page Bias), the page is not
    // ready with "No database open": a --screenshot would save the "Computing…" placeholder of the
    // database that comes next. Ready means a bias of the open database.
    void readyOnlyOnceTheDatabaseIsThere() {
        WorkbenchState state;
        BiasPage page(&state);
        page.methodBox()->setMethod(diode::TimingMethod::GraphWarm);
        QSignalSpy ready(&page, &BiasPage::ready);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        QCOMPARE(ready.count(), 0);
        QCOMPARE(page.emptyText(), QStringLiteral("No database open."));
        state.setDatabase(m_db, true);
        QVERIFY(ready.wait(30000));
        QCOMPARE(ready.count(), 1);
        QVERIFY(page.hasResult());
        QVERIFY2(page.emptyText().isEmpty(), qPrintable(page.emptyText()));
    }

    // A hidden page computes nothing, but never shows numbers of the database it no longer has.
    void hiddenPageSaysOutOfDate() {
        WorkbenchState state;
        BiasPage page(&state);
        state.setDatabase(m_db, true);
        QVERIFY(!page.hasResult());
        QVERIFY2(page.emptyText().startsWith(QStringLiteral("Out of date")), qPrintable(page.emptyText()));
    }

    void oldDatabaseIsOneSentence() {
        WorkbenchState state;
        BiasPage page(&state);
        page.resize(1000, 700);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        // A switch before the first result ends: only the last database's result is shown.
        state.setDatabase(m_db, true);
        state.setDatabase(m_oldDb, true);
        QVERIFY(waitReady(page));
        QCOMPARE(page.result().database, m_oldDb);
        QVERIFY2(page.emptyText().startsWith(
                     QStringLiteral("This database has no in-graph times (graph_warm/graph_cold): sweep with "
                                    "the in-graph worker")),
                 qPrintable(page.emptyText()));
        QVERIFY(page.emptyText().contains(QStringLiteral("inductor_autotune")));
        QVERIFY(!page.findChild<QWidget *>(QStringLiteral("biasScatter"))
                     ->isVisible()); // a sentence, no empty plot
        QCOMPARE(page.groupModel()->rowCount(), 0);
        QTest::qWait(300); // the dropped job for the first database must not land afterwards
        QCOMPARE(page.result().database, m_oldDb);
        QVERIFY(!page.emptyText().isEmpty());
        pagecheck::checkRendered(&page, QStringLiteral("bias-empty"), 2, 0.001);
    }
};

QTEST_MAIN(TestBiasPage)
#include "tst_biaspage.moc"
