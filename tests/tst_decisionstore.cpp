// Kernel and site lines in the store: imported through diode import, read back to what the lines
// read to, exported as lines again, trained from with train-decisions --db, on the shipped H200 lines
// and a real SQLite file.

#include "testutil.h"

#include "diode/infer/decisionmodel.h"
#include "diode/store/decisionstore.h"
#include "diode/store/exporter.h"
#include "diode/store/importer.h"

#include <QFileInfo>

#include <algorithm>
#include <fstream>
#include <sstream>

using namespace diode;

namespace {

std::string shipped(const char *name) {
    return testutil::sourcePath(QStringLiteral("trained_models/h200/%1").arg(QLatin1String(name)))
        .toStdString();
}

// Each struct as its line: equal lines, equal structs (every field is written).
template <typename T> QStringList lines(const std::vector<T> &items) {
    QStringList out;
    for (const auto &i : items)
        out << QString::fromStdString(toJson(i).dump());
    return out;
}

void compareData(const DecisionData &got, const DecisionData &want) {
    QCOMPARE(lines(got.kernels), lines(want.kernels));
    QCOMPARE(lines(got.sites), lines(want.sites));
    QStringList a = lines(got.skipped), b = lines(want.skipped);
    a.sort();
    b.sort();
    QCOMPARE(a, b);
}

QString tableRows(const QString &db) {
    return (testutil::rows(db,
                           "SELECT id, gpu, name, family, sm_count, shape_json, default_ms, grid, skipped, "
                           "seconds, source FROM measured_kernels") +
            testutil::rows(db, "SELECT * FROM measured_kernel_configs") +
            testutil::rows(db, "SELECT id, gpu, name, configs_from, family, sm_count, site_json, library_ms, "
                               "decomposed_default_ms, decomposed_tuned_ms, decomposed_ms, skipped, seconds, "
                               "source FROM measured_sites"))
        .join('\n');
}

using testutil::execSql;

} // namespace

class TestDecisionStore : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

    QString path(const char *name) const { return m_dir.filePath(QLatin1String(name)); }

private slots:
    // Every field of every line survives the store: the 54 skipped cases, configurations that
    // failed with their errors (a shipped line with two of its configurations failed, as the sweep
    // writes one whose output differs from the default's), and the sites timed with a package's
    // configs beside those timed without (the same names: a case is GPU, name and configs_from).
    void linesReadBackAndExportAsTheyWereRead() {
        const std::string failed = path("failed-configs.jsonl").toStdString();
        {
            std::ifstream in(shipped("h200-kernels.jsonl"));
            std::string text;
            std::getline(in, text);
            auto line = nlohmann::json::parse(text);
            line["name"] = line["name"].get<std::string>() + "-failed";
            for (int i : {0, 1}) {
                line["configs"][i].erase("time_ms");
                line["configs"][i]["error"] = "AssertionError: output differs from the default's";
            }
            std::ofstream(failed) << line.dump() << '\n';
        }
        const std::vector<std::string> files = {shipped("h200-kernels.jsonl"), shipped("h200-sites.jsonl"),
                                                shipped("h200-sites-plugin-configs.jsonl"), failed};
        const DecisionData read = readDecisionData(files);
        QCOMPARE(read.kernels.size(), size_t(252));
        QCOMPARE(read.sites.size(), size_t(224));
        QCOMPARE(read.skipped.size(), size_t(54));
        int errors = 0;
        for (const auto &k : read.kernels)
            errors +=
                int(std::count_if(k.errors.begin(), k.errors.end(), [](auto &e) { return !e.empty(); }));
        QCOMPARE(errors, 2);

        const QString db = path("roundtrip.db");
        {
            Store store(db.toStdString());
            for (const auto &f : files) {
                const auto r = importFile(store, f);
                QCOMPARE(r.format, std::string("kernel-site-lines"));
                QCOMPARE(r.lines.replaced, 0);
                QCOMPARE(r.lines.unchanged, 0);
                QCOMPARE(r.runs, 0);
            }
            compareData(storedDecisionData(store), read);
        }
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM measured_kernels"), 306);
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM measured_sites"), 224);
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM measured_kernel_configs WHERE error IS NOT NULL"),
                 2);

        const QString out = path("exported.jsonl");
        QString err;
        QCOMPARE(
            testutil::runCli({"export", "--db", db, "--format", "kernel-site", "--out", out}, nullptr, &err),
            0);
        QVERIFY2(err.contains("530 rows written"), qPrintable(err));
        compareData(readDecisionData(out.toStdString()), read);
    }

    // diode merge of two stores holding kernel and site lines (the sweeps of two machines) keeps every
    // line, as import does; merging them again adds nothing. A JSON lines input is imported alike.
    void mergeKeepsTheKernelAndSiteLinesOfItsStores() {
        const QString kernels = path("merge-kernels.db"), sites = path("merge-sites.db"),
                      out = path("merged.db");
        {
            Store a(kernels.toStdString()), b(sites.toStdString());
            importFile(a, shipped("h200-kernels.jsonl"));
            importFile(b, shipped("h200-sites.jsonl"));
        }
        QString text;
        QCOMPARE(testutil::runCli({"merge", out, kernels, sites}, &text), 0);
        QVERIFY2(text.contains("251 kernels, 0 sites, 54 skipped cases: 305 added"), qPrintable(text));
        QVERIFY2(text.contains("417 kernel and site lines added"), qPrintable(text));
        QCOMPARE(testutil::runCli({"stats", "--db", out}, &text), 0);
        QVERIFY2(text.contains(
                     "kernel and site lines 305 kernel cases (251 measured), 112 site cases (112 measured)"),
                 qPrintable(text));
        const DecisionData want = readDecisionData(
            std::vector<std::string>{shipped("h200-kernels.jsonl"), shipped("h200-sites.jsonl")});
        {
            Store merged(out.toStdString(), Store::Mode::ReadOnly);
            compareData(storedDecisionData(merged), want);
        }
        const QString rows = tableRows(out);
        QCOMPARE(
            testutil::runCli(
                {"merge", out, kernels, sites, QString::fromStdString(shipped("h200-sites.jsonl"))}, &text),
            0);
        QVERIFY2(text.contains("0 kernel and site lines added"), qPrintable(text));
        QCOMPARE(tableRows(out).count('\n'), rows.count('\n'));
    }

    // Two stores measuring one case differently: which is meant is not known, so nothing is merged
    // (merging A then B, and again, would flip the case between them).
    void mergeRefusesTwoStoresMeasuringOneCaseDifferently() {
        std::ifstream in(shipped("h200-sites.jsonl"));
        std::string first;
        std::getline(in, first);
        auto other = nlohmann::json::parse(first);
        other["library_ms"] = other["library_ms"].get<double>() * 2;
        const QString lines = path("remeasured.jsonl");
        std::ofstream(lines.toStdString()) << other.dump() << "\n";
        const QString a = path("conflict-a.db"), b = path("conflict-b.db"), out = path("conflict-out.db");
        {
            Store sa(a.toStdString()), sb(b.toStdString());
            importFile(sa, shipped("h200-sites.jsonl"));
            importFile(sb, lines.toStdString());
        }
        QString text, err;
        QCOMPARE(testutil::runCli({"merge", out, a, b}, &text, &err), 2);
        QVERIFY2(err.contains("hold different measurements of the site '" +
                              QString::fromStdString(other["name"].get<std::string>()) + "' of " +
                              QString::fromStdString(other["gpu"].get<std::string>())),
                 qPrintable(err));
        QVERIFY2(err.contains(a) && err.contains(b), qPrintable(err));
        QVERIFY(!QFileInfo::exists(out));
    }

    // The same lines again store nothing new; a case measured again replaces its line (the newest
    // import wins), and a skipped line never replaces a measured case.
    void importingAgainKeepsOneLineACaseAndTheNewestMeasurement() {
        const QString db = path("again.db");
        Store store(db.toStdString());
        importFile(store, shipped("h200-sites.jsonl"));
        const QString before = tableRows(db);
        const auto again = importFile(store, shipped("h200-sites.jsonl"));
        QCOMPARE(again.lines.added, 0);
        QCOMPARE(again.lines.unchanged, 112);
        QCOMPARE(tableRows(db), before);

        DecisionData first = readDecisionData(shipped("h200-sites.jsonl"));
        MeasuredSite remeasured = first.sites[5];
        remeasured.libraryMs *= 2;
        SkippedCase skipped{
            "site", first.sites[6].family, first.sites[6].name, first.sites[6].gpu, 132, "out of memory",
            1.0};
        const QString file = path("remeasured.jsonl");
        std::ofstream(file.toStdString()) << toJson(remeasured).dump() << '\n'
                                          << toJson(skipped).dump() << '\n';
        const auto r = importFile(store, file.toStdString());
        QCOMPARE(r.lines.replaced, 1);
        QCOMPARE(r.lines.unchanged, 1);
        QCOMPARE(r.lines.added, 0);
        const DecisionData stored = storedDecisionData(store);
        QCOMPARE(stored.sites.size(), size_t(112));
        QCOMPARE(stored.sites[5].libraryMs, remeasured.libraryMs); // in its place, with the new figure
        QCOMPARE(stored.sites[6].libraryMs, first.sites[6].libraryMs);
        QVERIFY(stored.skipped.empty());
        QCOMPARE(
            testutil::scalar(db, "SELECT count(*) FROM measured_sites WHERE source LIKE '%remeasured.jsonl'"),
            1);
    }

    // A bad line names the file, the line and the field, and nothing of its file is stored; files an
    // earlier argument imported stay, the database with them.
    void aBadLineImportsNothingOfItsFile() {
        const auto good = readDecisionData(shipped("h200-kernels.jsonl"));
        const QString bad = path("bad.jsonl");
        {
            std::ofstream out(bad.toStdString());
            out << toJson(good.kernels[0]).dump() << '\n' << toJson(good.kernels[1]).dump() << '\n';
            auto broken = toJson(good.kernels[2]);
            broken["configs"][3]["config"]["XBLOCK"] = 3;
            out << broken.dump() << '\n';
        }
        const QString db = path("bad.db");
        QString out, err;
        const int rc = testutil::runCli(
            {"import", "--db", db, QString::fromStdString(shipped("h200-sites.jsonl")), bad}, &out, &err);
        QCOMPARE(rc, 2);
        QVERIFY2(err.contains("bad.jsonl:3") && err.contains("configs[3]") && err.contains("XBLOCK"),
                 qPrintable(err));
        QVERIFY2(out.contains("112 sites"), qPrintable(out));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM measured_sites"), 112);
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM measured_kernels"), 0);
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM measured_kernel_configs"), 0);
    }

    // train-decisions --db: the held-out figures the files give, from a store the files were
    // imported into.
    void trainDecisionsFromAStoreGivesTheFiguresOfTheFiles() {
        const QString kernels = QString::fromStdString(shipped("h200-kernels.jsonl"));
        const QString sites = QString::fromStdString(shipped("h200-sites.jsonl"));
        const QString db = path("train.db");
        QCOMPARE(testutil::runCli({"import", "--db", db, kernels, sites}), 0);
        QString fromFiles, fromStore, saidFiles, saidStore;
        QCOMPARE(testutil::runCli({"train-decisions", kernels, sites, "--form-ops", "attention"}, &fromFiles,
                                  &saidFiles),
                 0);
        QCOMPARE(testutil::runCli({"train-decisions", "--db", db, "--form-ops", "attention"}, &fromStore,
                                  &saidStore),
                 0);
        QVERIFY(fromFiles.contains("kernel_config"));
        QCOMPARE(fromStore, fromFiles);
        QVERIFY2(saidStore.contains("held out by family"), qPrintable(saidStore));
        QCOMPARE(saidStore, saidFiles);
        QString err;
        QCOMPARE(testutil::runCli({"train-decisions"}, nullptr, &err), 2);
        QVERIFY2(err.contains("--db"), qPrintable(err));
    }

    // A store of schema 3 reads as holding no lines (read-only, unchanged) and takes them once
    // migrated; one of a newer schema is refused by its number.
    void olderStoresTakeLinesAndNewerOnesAreRefused() {
        const QString v3 = path("v3.db");
        execSql(v3, testutil::fileBytes(testutil::dataPath("schema-v3.sql")));
        const QByteArray file = testutil::fileBytes(v3);
        {
            Store ro(v3.toStdString(), Store::Mode::ReadOnly);
            const auto d = storedDecisionData(ro);
            QVERIFY(d.kernels.empty() && d.sites.empty() && d.skipped.empty());
        }
        QCOMPARE(testutil::fileBytes(v3), file);
        const auto measurements = testutil::scalar(v3, "SELECT count(*) FROM measurements");
        {
            Store s(v3.toStdString());
            QCOMPARE(s.schemaVersion(), Store::kSchemaVersion);
            importFile(s, shipped("h200-sites.jsonl"));
            QCOMPARE(storedDecisionData(s).sites.size(), size_t(112));
        }
        QCOMPARE(testutil::scalar(v3, "SELECT count(*) FROM measurements"), measurements);

        // A store of schema 5 holds site lines without how their library form was timed: read-only it
        // reads them as timed as written, unchanged; migrated, it keeps them so and takes flagged lines.
        const QString v5 = path("v5.db");
        {
            Store s(v5.toStdString());
            importFile(s, shipped("h200-sites.jsonl"));
        }
        execSql(v5, "ALTER TABLE measured_sites DROP COLUMN library_over_cache; PRAGMA user_version=5;");
        const QByteArray before = testutil::fileBytes(v5);
        {
            Store ro(v5.toStdString(), Store::Mode::ReadOnly);
            const auto d = storedDecisionData(ro);
            QCOMPARE(d.sites.size(), size_t(112));
            QVERIFY(std::none_of(d.sites.begin(), d.sites.end(),
                                 [](const auto &m) { return m.libraryOverCache; }));
        }
        QCOMPARE(testutil::fileBytes(v5), before);
        {
            Store s(v5.toStdString());
            QCOMPARE(s.schemaVersion(), Store::kSchemaVersion);
            const auto migrated = storedDecisionData(s);
            QVERIFY(std::none_of(migrated.sites.begin(), migrated.sites.end(),
                                 [](const auto &m) { return m.libraryOverCache; }));
            importFile(s, shipped("h200-sites.jsonl")); // the same lines, now with their flags: replaced
            const auto d = storedDecisionData(s);
            QCOMPARE(std::count_if(d.sites.begin(), d.sites.end(),
                                   [](const auto &m) { return m.libraryOverCache; }),
                     std::ptrdiff_t(48));
        }

        const QString future = path("future.db");
        QCOMPARE(
            testutil::runCli({"import", "--db", future, QString::fromStdString(shipped("h200-sites.jsonl"))}),
            0);
        execSql(future, QByteArray("PRAGMA user_version=") + QByteArray::number(Store::kSchemaVersion + 1));
        QString err;
        QVERIFY(testutil::runCli({"train-decisions", "--db", future}, nullptr, &err) != 0);
        QVERIFY2(err.contains(QStringLiteral("written by schema %1; this build reads up to %2")
                                  .arg(Store::kSchemaVersion + 1)
                                  .arg(Store::kSchemaVersion)),
                 qPrintable(err));
    }
};

QTEST_GUILESS_MAIN(TestDecisionStore)
#include "tst_decisionstore.moc"
