// Hostile databases, each a real SQLite file driven through the real `diode` CLI: another
// program's database (left alone unless adopted), a WAL database in a folder the reader may not
// write, a disk that fills while a database is created, and a package whose predictions
// overflow to NaN. Each is refused or handled with a message naming the file and what was found.
#include "testutil.h"

#include "diode/infer/features.h"
#include "diode/infer/modelpackage.h"

#include <QCryptographicHash>

#include <unistd.h>

using namespace diode;

namespace {

void sql(const QString &path, const char *statements) {
    sqlite3 *db = nullptr;
    QCOMPARE(sqlite3_open(path.toStdString().c_str(), &db), SQLITE_OK);
    char *err = nullptr;
    const int rc = sqlite3_exec(db, statements, nullptr, nullptr, &err);
    const QString msg = err ? QString::fromUtf8(err) : QString();
    sqlite3_free(err);
    sqlite3_close(db);
    QVERIFY2(rc == SQLITE_OK, qPrintable(msg));
}

QByteArray digest(const QString &path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}

/// Bytes 18 and 19 of an SQLite header: 1 rollback journal, 2 WAL.
int journalFormat(const QString &path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    return int(uint8_t(f.read(20).at(18)));
}

void writeFile(const QString &path, const QByteArray &bytes) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

/// Runs the CLI as a user who cannot write `dir`: ourselves, or nobody through setpriv when we
/// are root (root writes through any mode bits). Empty `how` when neither is possible.
int runCliWithoutWriteAccess(const QStringList &args, QString *out, QString *err, QString *how) {
    QProcess p;
    if (::geteuid() != 0) {
        *how = QStringLiteral("as this user");
        p.start(QStringLiteral(DIODE_CLI), args);
    } else {
        const QString setpriv = QStandardPaths::findExecutable(QStringLiteral("setpriv"));
        if (setpriv.isEmpty())
            return -1;
        *how = QStringLiteral("as nobody (setpriv), since root writes through mode bits");
        p.start(setpriv,
                QStringList{"--reuid=65534", "--regid=65534", "--clear-groups", QStringLiteral(DIODE_CLI)} +
                    args);
    }
    if (!p.waitForFinished(120000))
        return -1;
    *out = QString::fromUtf8(p.readAllStandardOutput());
    *err = QString::fromUtf8(p.readAllStandardError());
    return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
}

const char *kLine =
    R"({"op":"mm","dtype":"bf16","M":64,"N":512,"K":512,"candidates":[{"kind":"triton","template":"mm","BLOCK_M":64,"BLOCK_N":64,"BLOCK_K":32,"num_stages":3,"num_warps":4,"time_ms":0.01},{"kind":"triton","template":"mm","BLOCK_M":32,"BLOCK_N":64,"BLOCK_K":32,"num_stages":3,"num_warps":4,"time_ms":0.02}]})";

} // namespace

class TestHostileStore : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    // A foreign database once got diode's tables and was switched to WAL without asking.
    void foreignDatabaseIsLeftAlone() {
        const QString db = m_dir.filePath("notes.db"), lines = m_dir.filePath("one.jsonl");
        sql(db, "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes(body) VALUES('keep "
                "me');"
                "CREATE TABLE tags(name TEXT);");
        writeFile(lines, QByteArray(kLine) + "\n");
        const QByteArray before = digest(db);
        QString out, err;
        QCOMPARE(testutil::runCli({"import", lines, "--db", db}, &out, &err), 2);
        QVERIFY2(err.contains("database '" + db +
                              "': not a diode database (it holds 2 tables: notes, tags, schema "
                              "version (PRAGMA user_version) 0)") &&
                     err.contains("--adopt-foreign-db"),
                 qPrintable(err));
        QCOMPARE(digest(db), before);
        QCOMPARE(journalFormat(db), 1);
        QVERIFY(!QFile::exists(db + "-wal"));
        // Read-only commands say the same, without the flag that cannot help them.
        QCOMPARE(testutil::runCli({"stats", "--db", db}, &out, &err), 2);
        QVERIFY2(err.contains("'" + db + "': not a diode database (it holds 2 tables: notes, tags"),
                 qPrintable(err));
        // A sweep is refused the same way, before it measures anything.
        QCOMPARE(testutil::runCli({"sweep", "--backend", "cpu", "--plan",
                                   testutil::sourcePath("resources/plans/cpu-smoke.json"), "--db", db},
                                  &out, &err),
                 2);
        QVERIFY2(err.contains("not a diode database"), qPrintable(err));
        QCOMPARE(digest(db), before);

        // Told to, diode adds its tables beside the others and leaves theirs as they were.
        QCOMPARE(testutil::runCli({"import", lines, "--db", db, "--adopt-foreign-db"}, &out, &err), 0);
        QCOMPARE(testutil::rows(db, "SELECT body FROM notes"), QStringList{"keep me"});
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM measurements"), int64_t(2));
        QCOMPARE(testutil::scalar(db, "PRAGMA user_version"), int64_t(Store::kSchemaVersion));
        // Once adopted it is diode's: later commands need no flag.
        QCOMPARE(testutil::runCli({"stats", "--db", db}, &out, &err), 0);
    }

    void foreignDatabaseThatCannotBeAdopted() {
        QString out, err;
        const QString lines = m_dir.filePath("one.jsonl");
        writeFile(lines, QByteArray(kLine) + "\n");
        // A table of its own under one of diode's names.
        const QString clash = m_dir.filePath("clash.db");
        sql(clash, "CREATE TABLE problems(x); CREATE TABLE other(y);");
        QCOMPARE(testutil::runCli({"import", lines, "--db", clash, "--adopt-foreign-db"}, &out, &err), 2);
        QVERIFY2(err.contains(
                     "cannot adopt it: it already has tables or indexes under names diode uses (problems)"),
                 qPrintable(err));
        QCOMPARE(journalFormat(clash), 1);
        // A schema version another program set, which diode's own would overwrite.
        const QString versioned = m_dir.filePath("versioned.db");
        sql(versioned, "CREATE TABLE other(y); PRAGMA user_version=2;");
        const QByteArray before = digest(versioned);
        QCOMPARE(testutil::runCli({"import", lines, "--db", versioned}, &out, &err), 2);
        QVERIFY2(
            err.contains(
                "not a diode database (it holds 1 table: other, schema version (PRAGMA user_version) 2)"),
            qPrintable(err));
        QCOMPARE(testutil::runCli({"import", lines, "--db", versioned, "--adopt-foreign-db"}, &out, &err), 2);
        QVERIFY2(err.contains("its schema version (PRAGMA user_version) is 2"), qPrintable(err));
        QCOMPARE(digest(versioned), before);
        // An empty file is a new database, not a foreign one.
        const QString empty = m_dir.filePath("empty.db");
        writeFile(empty, {});
        QCOMPARE(testutil::runCli({"import", lines, "--db", empty}, &out, &err), 0);
    }

    // A WAL database in a folder the reader cannot write could not even be read: SQLite wants to
    // create its -shm file there ("attempt to write a readonly database").
    void walDatabaseInReadOnlyFolderIsReadable() {
        QTemporaryDir base;
        QFile::setPermissions(base.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                               QFileDevice::ExeOwner | QFileDevice::ReadOther |
                                               QFileDevice::ExeOther | QFileDevice::ReadGroup |
                                               QFileDevice::ExeGroup);
        const QString dir = base.filePath("ro"), db = dir + "/data.db";
        QVERIFY(QDir().mkpath(dir));
        QString imported;
        QCOMPARE(
            testutil::runCli({"import", testutil::dataPath("bias-problems.jsonl"), "--db", db}, &imported),
            0);
        // Counted from import's answer: opening the file here, as root, would leave a -shm behind.
        const QRegularExpression counted("(\\d+) problems, (\\d+) measurements");
        const auto match = counted.match(imported);
        QVERIFY2(match.hasMatch(), qPrintable(imported));
        const int problems = match.captured(1).toInt();
        QCOMPARE(journalFormat(db), 2);
        QVERIFY(!QFile::exists(db + "-shm"));
        QVERIFY(QFile::setPermissions(dir, QFileDevice::ReadOwner | QFileDevice::ExeOwner |
                                               QFileDevice::ReadOther | QFileDevice::ExeOther |
                                               QFileDevice::ReadGroup | QFileDevice::ExeGroup));
        QFile::setPermissions(db, QFileDevice::ReadOwner | QFileDevice::ReadOther | QFileDevice::ReadGroup);
        QString out, err, how;
        const int stats = runCliWithoutWriteAccess({"stats", "--db", db, "--json"}, &out, &err, &how);
        if (how.isEmpty()) {
            QFile::setPermissions(dir,
                                  QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
            QSKIP("running as root without setpriv: no way to take write access away here");
        }
        qInfo("reading %s", qPrintable(how));
        QVERIFY2(stats == 0, qPrintable(err));
        QCOMPARE(nlohmann::json::parse(out.toStdString())["problems"].get<int>(), problems);
        QCOMPARE(runCliWithoutWriteAccess({"export", "--db", db}, &out, &err, &how), 0);
        QCOMPARE(out.count('\n'), problems);
        QVERIFY2(runCliWithoutWriteAccess({"bias", "--db", db}, &out, &err, &how) == 0, qPrintable(err));
        QVERIFY(!QFile::exists(db + "-shm") && !QFile::exists(db + "-wal"));

        // A -wal file that holds changes (a copy taken while a writer was open): reading the file
        // alone would silently miss them, so it is refused, naming the -wal file.
        QFile::setPermissions(dir, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner |
                                       QFileDevice::ReadOther | QFileDevice::ExeOther);
        writeFile(db + "-wal", QByteArray(4096, 'w'));
        QFile::setPermissions(dir, QFileDevice::ReadOwner | QFileDevice::ExeOwner | QFileDevice::ReadOther |
                                       QFileDevice::ExeOther);
        QCOMPARE(runCliWithoutWriteAccess({"stats", "--db", db}, &out, &err, &how), 1);
        QVERIFY2(err.contains("its folder is not writable and '" + db + "-wal' holds changes"),
                 qPrintable(err));
        QFile::setPermissions(dir, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    }

    // `diode eval --db` only reads the database: predictions are written when asked for, and a
    // read-only database (the shipped data, a folder one cannot write) is refused up front.
    void evalWritesPredictionsOnlyWhenAsked() {
        QTemporaryDir base;
        QFile::setPermissions(base.path(), QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                               QFileDevice::ExeOwner | QFileDevice::ReadOther |
                                               QFileDevice::ExeOther);
        const QString dir = base.filePath("data"), db = dir + "/eval.db", lines = dir + "/eval.jsonl",
                      pkg = dir + "/small.diode";
        QVERIFY(QDir().mkpath(dir));
        writeFile(lines, QByteArray(kLine) + "\n");
        QCOMPARE(testutil::runCli({"import", lines, "--db", db}), 0);
        const int f = FeatureSchema::size();
        MlpWeights m;
        m.layerSizes = {f, 4, 1};
        m.weights = {std::vector<float>(size_t(4 * f), 0.01f), std::vector<float>(4, 0.1f)};
        m.biases = {std::vector<float>(4, 0.0f), std::vector<float>(1, -3.0f)};
        m.inputMean.assign(size_t(f), 0.0f);
        m.inputStd.assign(size_t(f), 1.0f);
        ModelPackage::save(pkg.toStdString(), {{"name", "small"}}, {m});
        QString out, err;
        QCOMPARE(testutil::runCli({"eval", "--package", pkg, "--db", db}, &out, &err), 0);
        QVERIFY2(err.contains("predictions not stored (--store-predictions keeps them in " + db),
                 qPrintable(err));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM predictions"), int64_t(0));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM models"), int64_t(0));
        QCOMPARE(
            testutil::runCli({"eval", "--package", pkg, "--input", lines, "--store-predictions"}, &out, &err),
            2);

        QFile::setPermissions(db, QFileDevice::ReadOwner | QFileDevice::ReadOther | QFileDevice::ReadGroup);
        QFile::setPermissions(pkg, QFileDevice::ReadOwner | QFileDevice::ReadOther | QFileDevice::ReadGroup);
        QVERIFY(QFile::setPermissions(dir, QFileDevice::ReadOwner | QFileDevice::ExeOwner |
                                               QFileDevice::ReadOther | QFileDevice::ExeOther));
        QString how;
        const int rc = runCliWithoutWriteAccess({"eval", "--package", pkg, "--db", db, "--store-predictions"},
                                                &out, &err, &how);
        QFile::setPermissions(dir, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        if (how.isEmpty())
            QSKIP("running as root without setpriv: no way to take write access away here");
        QCOMPARE(rc, 2);
        QVERIFY2(err.contains("cannot store predictions in '" + db + "': it (or its folder) is read-only"),
                 qPrintable(err));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM predictions"), int64_t(0));
    }

    // On a nearly full disk a new database said "cannot read schema version", and the next
    // command "no such table: runs". A file size limit (RLIMIT_FSIZE, SIGXFSZ ignored) fails the
    // same writes as a full disk does, without filling one.
    void fullDiskWhileCreatingNamesTheDatabaseAndTheCause() {
        const QString db = m_dir.filePath("full.db");
        const QString shell =
            QStandardPaths::findExecutable(QStringLiteral("bash")).isEmpty() ? "sh" : "bash";
        QProcess p;
        p.start(shell,
                {"-c", QStringLiteral("trap '' XFSZ; ulimit -f 4; exec \"$0\" import \"$1\" --db \"$2\""),
                 QStringLiteral(DIODE_CLI), testutil::dataPath("bias-problems.jsonl"), db});
        QVERIFY(p.waitForFinished(60000));
        QString err = QString::fromUtf8(p.readAllStandardError());
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QCOMPARE(p.exitCode(), 1);
        QVERIFY2(err.contains("database '" + db + "': ") &&
                     err.contains("is its disk full, or the file size limited?"),
                 qPrintable(err));
        QString out;
        QCOMPARE(testutil::runCli({"stats", "--db", db}, &out, &err), 2);
        QVERIFY2(err.contains("database '" + db + "' is empty: it holds no diode tables"), qPrintable(err));
        QVERIFY2(!err.contains("no such table"), qPrintable(err));
    }

    // A file size limit set by the user or a batch scheduler (ulimit -f, SIGXFSZ left at its
    // default) killed a sweep with the signal mid-write, saying nothing (exit 153 from a shell).
    // diode ignores SIGXFSZ: the write fails, the message names the database and the likely
    // cause, and the run stays resumable.
    void fileSizeLimitDuringASweepIsAnErrorNotASignal() {
        const QString db = m_dir.filePath("limited.db"), plan = m_dir.filePath("limited.json");
        writeFile(plan, R"({"name": "limited", "repeats": 1,
          "cpu": {"block_m": [16, 32, 64, 128], "block_n": [16, 32, 64], "block_k": [16, 32], "threads": [1]},
          "entries": [{"ops": ["mm"], "dtypes": ["fp32"], "M": {"log_uniform": {"min": 1, "max": 64, "count": 400,
          "seed": 3}}, "N": [8, 16], "K": [8]}]})");
        QProcess p;
        p.start(QStringLiteral("sh"),
                {"-c",
                 QStringLiteral("ulimit -f 40; exec \"$0\" sweep --backend cpu --plan \"$1\" --db \"$2\""),
                 QStringLiteral(DIODE_CLI), plan, db});
        QVERIFY(p.waitForFinished(120000));
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QCOMPARE(p.exitStatus(), QProcess::NormalExit); // not killed by SIGXFSZ
        QCOMPARE(p.exitCode(), 1);
        QVERIFY2(err.contains("database '" + db + "'") &&
                     err.contains("is its disk full, or the file size limited?"),
                 qPrintable(err));
    }

    // The schema checks sizes >= 1 only: a row with M = 2^63-1 (another program's write) was
    // exported as a problem line and ranked. The one reader of a problem row refuses it.
    void storedProblemOutOfRangeIsRefused() {
        const QString db = m_dir.filePath("huge.db"), lines = m_dir.filePath("huge.jsonl");
        writeFile(lines, QByteArray(kLine) + "\n");
        QCOMPARE(testutil::runCli({"import", lines, "--db", db}), 0);
        sql(db, "UPDATE problems SET m = 9223372036854775807");
        QString out, err;
        QCOMPARE(testutil::runCli({"export", "--db", db}, &out, &err), 1);
        QVERIFY2(err.contains(
                     "a stored problem: field 'M' is 9223372036854775807; sizes must be at most 2147483647"),
                 qPrintable(err));
        QVERIFY(!out.contains("9223372036854775807"));
    }

    // A package whose sums overflow predicts NaN; storing it failed with "NOT NULL constraint failed".
    void nanPredictionsAreRefusedNamingModelAndCandidate() {
        const QString db = m_dir.filePath("nan.db"), lines = m_dir.filePath("nan.jsonl"),
                      pkg = m_dir.filePath("overflow.diode");
        writeFile(lines, QByteArray(kLine) + "\n");
        QCOMPARE(testutil::runCli({"import", lines, "--db", db}), 0);
        // Weights within the reader's ±1e4 bound, eight layers of 64: the activations pass float's
        // range by the sixth layer, and the last layer's mixed signs turn inf into NaN.
        const int f = FeatureSchema::size(), w = 64, depth = 8;
        MlpWeights m;
        m.layerSizes = {f};
        for (int i = 1; i < depth; ++i)
            m.layerSizes.push_back(w);
        m.layerSizes.push_back(1);
        m.inputMean.assign(size_t(f), 0.0f);
        m.inputStd.assign(size_t(f), 1.0f);
        for (size_t l = 0; l + 1 < m.layerSizes.size(); ++l) {
            const size_t in = size_t(m.layerSizes[l]), out = size_t(m.layerSizes[l + 1]);
            std::vector<float> weights(in * out, 1e4f);
            if (l + 2 == m.layerSizes.size())
                for (size_t i = 0; i < weights.size(); ++i)
                    weights[i] = i % 2 ? -1e4f : 1e4f;
            m.weights.push_back(std::move(weights));
            m.biases.push_back(std::vector<float>(out, 1e4f));
        }
        ModelPackage::save(pkg.toStdString(), {{"name", "overflow"}}, {m});
        QString out, err;
        QCOMPARE(testutil::runCli({"eval", "--package", pkg, "--db", db, "--store-predictions"}, &out, &err),
                 2);
        QVERIFY2(err.contains("model 'overflow' (" + pkg + ") predicts NaN ms for mm bf16 64x512x512") &&
                     err.contains("none of its predictions were stored in '" + db + "'"),
                 qPrintable(err));
        QVERIFY2(!err.contains("NOT NULL"), qPrintable(err));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM predictions"), int64_t(0));
        QCOMPARE(testutil::scalar(db, "SELECT count(*) FROM models"), int64_t(0));
        // rank printed such predictions as null, an answer that looks like one.
        QCOMPARE(testutil::runCli({"rank", "--package", pkg, "--input", lines}, &out, &err), 2);
        const auto j = nlohmann::json::parse(out.split('\n').first().toStdString());
        QVERIFY2(j.value("error", "").find("line 1: candidates[0]: the model predicts NaN ms") == 0,
                 qPrintable(out));
    }
};

QTEST_GUILESS_MAIN(TestHostileStore)
#include "tst_hostilestore.moc"
