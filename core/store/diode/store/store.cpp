#include "store.h"

#include "diode/infer/shippeddata.h"

#include "diode/infer/timingagreement.h"
#include "diode/store/sqlstatement.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <random>
#include <thread>
#include <vector>

namespace diode {

namespace {

// Each entry takes the schema from version i to i+1. Never edit a shipped step: add one.
constexpr std::array<const char *, Store::kSchemaVersion> kMigrations{
    // 0 -> 1: the data plane.
    R"sql(
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  created_at TEXT NOT NULL,
  finished_at TEXT,
  status TEXT NOT NULL CHECK(status IN ('running','finished','cancelled','failed')),
  backend TEXT NOT NULL,
  plan_name TEXT, plan_json TEXT, search_space TEXT,
  host TEXT, gpu_name TEXT, sm_count INTEGER, gpu_memory_mb INTEGER, driver TEXT,
  torch_version TEXT, triton_version TEXT, source TEXT,
  problems_planned INTEGER NOT NULL DEFAULT 0);
CREATE TABLE problems(
  id INTEGER PRIMARY KEY,
  op TEXT NOT NULL CHECK(op IN ('mm','addmm','bmm')),
  dtype TEXT NOT NULL CHECK(dtype IN ('bf16','fp16','fp32')),
  b INTEGER NOT NULL CHECK(b >= 1), m INTEGER NOT NULL CHECK(m >= 1),
  n INTEGER NOT NULL CHECK(n >= 1), k INTEGER NOT NULL CHECK(k >= 1),
  a_transposed INTEGER NOT NULL, b_transposed INTEGER NOT NULL,
  UNIQUE(op, dtype, b, m, n, k, a_transposed, b_transposed));
CREATE TABLE kernel_configs(
  id INTEGER PRIMARY KEY,
  config_key TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL, name TEXT NOT NULL,
  block_m INTEGER, block_n INTEGER, block_k INTEGER, group_m INTEGER,
  num_stages INTEGER, num_warps INTEGER, threads INTEGER, extra_json TEXT);
CREATE TABLE measurements(
  problem_id INTEGER NOT NULL REFERENCES problems(id),
  config_id INTEGER NOT NULL REFERENCES kernel_configs(id),
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  time_ms REAL,
  status TEXT NOT NULL CHECK(status IN ('ok','failed','timeout')),
  error TEXT,
  PRIMARY KEY(problem_id, config_id, run_id)) WITHOUT ROWID;
-- By problem: the primary key. By config: the index below. By run: run_problems' key, then the
-- primary key. No more indexes: each one costs ingest rate (docs/BENCHMARKS.md).
CREATE INDEX measurements_by_config ON measurements(config_id);
CREATE TABLE run_problems(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  problem_id INTEGER NOT NULL REFERENCES problems(id),
  status TEXT NOT NULL CHECK(status IN ('ok','failed','timeout')),
  error TEXT, seconds REAL,
  PRIMARY KEY(run_id, problem_id));
CREATE INDEX run_problems_by_problem ON run_problems(problem_id);
)sql",
    // 1 -> 2: telemetry sampled during runs; models and their predictions for the GUI.
    R"sql(
CREATE TABLE telemetry(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  t REAL NOT NULL, sm_clock_mhz REAL, mem_clock_mhz REAL, power_w REAL,
  temperature_c REAL, utilization_pct REAL);
CREATE INDEX telemetry_by_run ON telemetry(run_id, t);
CREATE TABLE models(
  id INTEGER PRIMARY KEY, name TEXT NOT NULL, path TEXT, created_at TEXT NOT NULL,
  manifest_json TEXT NOT NULL);
CREATE TABLE predictions(
  model_id INTEGER NOT NULL REFERENCES models(id) ON DELETE CASCADE,
  problem_id INTEGER NOT NULL REFERENCES problems(id),
  config_id INTEGER NOT NULL REFERENCES kernel_configs(id),
  predicted_ms REAL NOT NULL,
  PRIMARY KEY(model_id, problem_id, config_id));
CREATE INDEX predictions_by_problem ON predictions(problem_id);
)sql",
    // 2 -> 3: each time carries its timing method (part of the key: one kernel is now timed in
    // CUDA graphs, warm and cold, beside Inductor's own number), and per-problem baselines. Times
    // stored before were Inductor's autotune numbers, or the cpu backend's own.
    R"sql(
CREATE TABLE measurements_v3(
  problem_id INTEGER NOT NULL REFERENCES problems(id),
  config_id INTEGER NOT NULL REFERENCES kernel_configs(id),
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  method TEXT NOT NULL CHECK(method IN ('graph_warm','graph_cold','inductor_autotune','cpu')),
  time_ms REAL,
  status TEXT NOT NULL CHECK(status IN ('ok','failed','timeout')),
  error TEXT,
  PRIMARY KEY(problem_id, config_id, run_id, method)) WITHOUT ROWID;
INSERT INTO measurements_v3(problem_id, config_id, run_id, method, time_ms, status, error)
  SELECT m.problem_id, m.config_id, m.run_id,
         CASE WHEN r.backend = 'cpu' OR c.kind = 'cpu' THEN 'cpu' ELSE 'inductor_autotune' END,
         m.time_ms, m.status, m.error
  FROM measurements m LEFT JOIN runs r ON r.id = m.run_id LEFT JOIN kernel_configs c ON c.id = m.config_id;
DROP TABLE measurements;
ALTER TABLE measurements_v3 RENAME TO measurements;
CREATE INDEX measurements_by_config ON measurements(config_id);
CREATE TABLE problem_baselines(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  problem_id INTEGER NOT NULL REFERENCES problems(id),
  baseline TEXT NOT NULL,
  method TEXT NOT NULL CHECK(method IN ('graph_warm','graph_cold','inductor_autotune','cpu')),
  time_ms REAL NOT NULL,
  compile_s REAL,
  pick_config_id INTEGER REFERENCES kernel_configs(id),
  PRIMARY KEY(run_id, problem_id, baseline, method)) WITHOUT ROWID;
)sql",
    // 3 -> 4: the op baddbmm. SQLite cannot alter a CHECK, so the problems table is rebuilt with
    // every row and id kept (SQLite's documented procedure: new table, copy, drop, rename; run with
    // foreign keys off by migrate(), which checks them before it commits).
    R"sql(
CREATE TABLE problems_v4(
  id INTEGER PRIMARY KEY,
  op TEXT NOT NULL CHECK(op IN ('mm','addmm','bmm','baddbmm')),
  dtype TEXT NOT NULL CHECK(dtype IN ('bf16','fp16','fp32')),
  b INTEGER NOT NULL CHECK(b >= 1), m INTEGER NOT NULL CHECK(m >= 1),
  n INTEGER NOT NULL CHECK(n >= 1), k INTEGER NOT NULL CHECK(k >= 1),
  a_transposed INTEGER NOT NULL, b_transposed INTEGER NOT NULL,
  UNIQUE(op, dtype, b, m, n, k, a_transposed, b_transposed));
INSERT INTO problems_v4(id, op, dtype, b, m, n, k, a_transposed, b_transposed)
  SELECT id, op, dtype, b, m, n, k, a_transposed, b_transposed FROM problems;
DROP TABLE problems;
ALTER TABLE problems_v4 RENAME TO problems;
)sql",
    // 4 -> 5: the kernel sweep's kernel and site lines (decisionstore.h), one row a case and GPU; a
    // skipped case has its reason and no figures.
    R"sql(
CREATE TABLE measured_kernels(
  id INTEGER PRIMARY KEY,
  gpu TEXT NOT NULL, name TEXT NOT NULL, family TEXT NOT NULL, sm_count INTEGER NOT NULL,
  shape_json TEXT, default_ms REAL, grid INTEGER NOT NULL DEFAULT 0,
  skipped TEXT, seconds REAL NOT NULL DEFAULT 0,
  source TEXT NOT NULL, imported_at TEXT NOT NULL,
  CHECK((skipped IS NULL) = (shape_json IS NOT NULL AND default_ms IS NOT NULL)),
  UNIQUE(gpu, name));
CREATE TABLE measured_kernel_configs(
  kernel_id INTEGER NOT NULL REFERENCES measured_kernels(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  config_json TEXT NOT NULL,
  time_ms REAL,
  error TEXT,
  PRIMARY KEY(kernel_id, position)) WITHOUT ROWID;
CREATE TABLE measured_sites(
  id INTEGER PRIMARY KEY,
  gpu TEXT NOT NULL, name TEXT NOT NULL, configs_from TEXT NOT NULL DEFAULT '', family TEXT NOT NULL,
  sm_count INTEGER NOT NULL,
  site_json TEXT, library_ms REAL, decomposed_default_ms REAL, decomposed_tuned_ms REAL, decomposed_ms REAL,
  skipped TEXT, seconds REAL NOT NULL DEFAULT 0,
  source TEXT NOT NULL, imported_at TEXT NOT NULL,
  CHECK((skipped IS NULL) = (site_json IS NOT NULL AND library_ms IS NOT NULL AND decomposed_ms IS NOT NULL)),
  UNIQUE(gpu, name, configs_from));
)sql",
    // 5 -> 6: how a site line's library form was timed (MeasuredSite::libraryOverCache); the lines
    // before it were all timed as written.
    R"sql(
ALTER TABLE measured_sites ADD COLUMN library_over_cache INTEGER NOT NULL DEFAULT 0
  CHECK(library_over_cache IN (0, 1));
)sql",
};

// A read-only connection cannot migrate an older database (the shipped dataset is opened so):
// it reads it through temporary views and empty tables shaped like the current schema, which
// shadow the older tables for unqualified names. Index i serves a database of schema i + 1.
constexpr std::array<const char *, Store::kSchemaVersion - 1> kReadOnlyShims{
    // 1: no telemetry, models or predictions yet.
    R"sql(
CREATE TEMP TABLE telemetry(run_id INTEGER, t REAL, sm_clock_mhz REAL, mem_clock_mhz REAL, power_w REAL,
  temperature_c REAL, utilization_pct REAL);
CREATE TEMP TABLE models(id INTEGER PRIMARY KEY, name TEXT, path TEXT, created_at TEXT, manifest_json TEXT);
CREATE TEMP TABLE predictions(model_id INTEGER, problem_id INTEGER, config_id INTEGER, predicted_ms REAL,
  PRIMARY KEY(model_id, problem_id, config_id));
)sql",
    // 2: measurements without their method (as the 2 -> 3 migration assigns it); no baselines.
    R"sql(
CREATE TEMP VIEW measurements AS
  SELECT m.problem_id, m.config_id, m.run_id,
         CASE WHEN r.backend = 'cpu' OR c.kind = 'cpu' THEN 'cpu' ELSE 'inductor_autotune' END AS method,
         m.time_ms, m.status, m.error
  FROM main.measurements m LEFT JOIN main.runs r ON r.id = m.run_id
       LEFT JOIN main.kernel_configs c ON c.id = m.config_id;
CREATE TEMP TABLE problem_baselines(run_id INTEGER, problem_id INTEGER, baseline TEXT, method TEXT, time_ms REAL,
  compile_s REAL, pick_config_id INTEGER, PRIMARY KEY(run_id, problem_id, baseline, method));
)sql", // 3: problems whose CHECK lacks 'baddbmm': the same rows to read.
    "",
    // 4: no kernel or site lines yet.
    R"sql(
CREATE TEMP TABLE measured_kernels(id INTEGER PRIMARY KEY, gpu TEXT, name TEXT, family TEXT, sm_count INTEGER,
  shape_json TEXT, default_ms REAL, grid INTEGER, skipped TEXT, seconds REAL, source TEXT, imported_at TEXT);
CREATE TEMP TABLE measured_kernel_configs(kernel_id INTEGER, position INTEGER, config_json TEXT, time_ms REAL,
  error TEXT);
CREATE TEMP TABLE measured_sites(id INTEGER PRIMARY KEY, gpu TEXT, name TEXT, configs_from TEXT, family TEXT,
  sm_count INTEGER, site_json TEXT, library_ms REAL, decomposed_default_ms REAL, decomposed_tuned_ms REAL,
  decomposed_ms REAL, skipped TEXT, seconds REAL, source TEXT, imported_at TEXT, library_over_cache INTEGER);
)sql",
    // 5: site lines all timed as written. (A database of schema 4 has the table above already.)
    R"sql(
CREATE TEMP VIEW IF NOT EXISTS measured_sites AS SELECT *, 0 AS library_over_cache FROM main.measured_sites;
)sql",
};

void bindNullIfZero(SqlStatement &s, int i, int v) {
    if (v)
        s.bind(i, v);
    else
        s.bindNull(i);
}

RunInfo readRun(const SqlStatement &s) {
    RunInfo r;
    r.id = s.integer(0);
    r.createdAt = s.text(1);
    r.finishedAt = s.text(2);
    r.status = s.text(3);
    r.backend = s.text(4);
    r.planName = s.text(5);
    r.planJson = s.text(6);
    r.searchSpace = s.text(7);
    r.host = s.text(8);
    r.gpuName = s.text(9);
    r.smCount = int(s.integer(10));
    r.gpuMemoryMb = s.integer(11);
    r.driver = s.text(12);
    r.torchVersion = s.text(13);
    r.tritonVersion = s.text(14);
    r.source = s.text(15);
    r.problemsPlanned = s.integer(16);
    return r;
}

constexpr const char *kRunColumns =
    "id, created_at, finished_at, status, backend, plan_name, plan_json, search_space, host, gpu_name, "
    "sm_count, gpu_memory_mb, driver, torch_version, triton_version, source, problems_planned";

/// The first `n` bytes of `path` ("" when it cannot be read), read through SQLite's own file layer.
/// Never with open() and close(): closing any descriptor of a file drops every POSIX lock this
/// process holds on it, those of SQLite's connections included, and another process may then
/// checkpoint and delete the WAL under them (SQLite's "How To Corrupt", 2.2). SQLite's unix layer
/// keeps such a descriptor open until its connections' locks are gone.
std::string readFileHead(const std::string &path, int n) {
    sqlite3_vfs *vfs = sqlite3_vfs_find(nullptr);
    if (!vfs || path.empty() || path == ":memory:")
        return {};
    sqlite3_filename name = sqlite3_create_filename(path.c_str(), "", "", 0, nullptr);
    if (!name)
        return {};
    std::vector<char> mem(size_t(vfs->szOsFile), 0);
    auto *file = reinterpret_cast<sqlite3_file *>(mem.data());
    int outFlags = 0;
    std::string head;
    if (vfs->xOpen(vfs, name, file, SQLITE_OPEN_READONLY | SQLITE_OPEN_MAIN_DB, &outFlags) == SQLITE_OK) {
        std::string buf(size_t(n), '\0');
        sqlite3_int64 size = 0;
        if (file->pMethods->xFileSize(file, &size) == SQLITE_OK && size >= n &&
            file->pMethods->xRead(file, buf.data(), n, 0) == SQLITE_OK)
            head = std::move(buf);
        file->pMethods->xClose(file);
    }
    sqlite3_free_filename(name);
    return head;
}

/// Tables and indexes of the current schema, which an adopted database must not hold already.
constexpr std::array<const char *, 16> kOurNames{"runs",
                                                 "problems",
                                                 "kernel_configs",
                                                 "measurements",
                                                 "run_problems",
                                                 "telemetry",
                                                 "models",
                                                 "predictions",
                                                 "problem_baselines",
                                                 "measurements_by_config",
                                                 "run_problems_by_problem",
                                                 "telemetry_by_run",
                                                 "predictions_by_problem",
                                                 "measured_kernels",
                                                 "measured_kernel_configs",
                                                 "measured_sites"};

/// `path` as an SQLite URI file name (RFC 3986 percent-encoding of what a URI reserves).
std::string uriPath(const std::string &path) {
    std::string out = "file:";
    for (unsigned char c : path) {
        if (std::isalnum(c) || std::strchr("/-_.~", c))
            out += char(c);
        else
            out += fmt::format("%{:02X}", c);
    }
    return out;
}

bool isWritableFolderOf(const std::string &path) {
    const auto slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    return ::access(dir.c_str(), W_OK) == 0;
}

/// True for a file whose header says WAL (bytes 18 and 19 are 2): SQLite needs a -shm file beside
/// it even to read it.
bool headerSaysWal(const std::string &path) {
    const std::string h = readFileHead(path, 20);
    return h.size() == 20 && h[18] == 2 && h[19] == 2;
}

off_t fileSize(const std::string &path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}

/// SQL spellings of the project's timing rules, so that a query applies the C++ rule rather than
/// restating it: diode_warm_cold_glitch(warm_ms, cold_ms) is warmColdGlitch.
void registerFunctions(sqlite3 *db) {
    auto glitch = [](sqlite3_context *ctx, int, sqlite3_value **argv) {
        sqlite3_result_int(ctx, warmColdGlitch(sqlite3_value_double(argv[0]), sqlite3_value_double(argv[1])));
    };
    if (sqlite3_create_function(db, "diode_warm_cold_glitch", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr,
                                glitch, nullptr, nullptr) != SQLITE_OK)
        throw StoreError(
            fmt::format("cannot register SQL function diode_warm_cold_glitch: {}", sqlite3_errmsg(db)));
}

} // namespace

void RunInfo::setFromWorker(const nlohmann::json &hw, const nlohmann::json &versions,
                            const std::string &where) {
    auto text = [&](const nlohmann::json &o, const char *key, const char *field) {
        const auto it = o.find(key);
        if (it == o.end() || it->is_null())
            return std::string();
        if (!it->is_string())
            throw InvalidInput(fmt::format("{}: field '{}' must be a string, got {}", where, field,
                                           it->dump().substr(0, 80)));
        return it->get<std::string>();
    };
    auto count = [&](const nlohmann::json &o, const char *key, const char *field) {
        const auto it = o.find(key);
        if (it == o.end() || it->is_null())
            return int64_t(0);
        if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > (int64_t(1) << 40))
            throw InvalidInput(fmt::format("{}: field '{}' must be a count, got {}", where, field,
                                           it->dump().substr(0, 80)));
        return it->get<int64_t>();
    };
    if (hw.is_object()) {
        gpuName = text(hw, "gpu", "hardware.gpu");
        smCount = int(std::min<int64_t>(count(hw, "sm_count", "hardware.sm_count"), 1 << 20));
        gpuMemoryMb = count(hw, "memory_mb", "hardware.memory_mb");
        driver = text(hw, "driver", "hardware.driver");
    }
    if (versions.is_object()) {
        torchVersion = text(versions, "torch", "versions.torch");
        tritonVersion = text(versions, "triton", "versions.triton");
    }
}

bool isSqliteFile(const std::string &path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) // a FIFO would block the read
        return false;
    return readFileHead(path, 16) == std::string_view("SQLite format 3\0", 16);
}

std::string utcNow() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

void removeEmptyDatabase(const std::string &path) {
    bool empty = false;
    try {
        Store s(path);
        SqlStatement held(s, "SELECT (SELECT count(*) FROM runs) + (SELECT count(*) FROM measured_kernels) + "
                             "(SELECT count(*) FROM measured_sites)");
        held.stepRow("cannot count what it holds");
        empty = held.integer(0) == 0;
    } catch (...) {
        return;
    }
    std::error_code ec;
    if (empty && !std::filesystem::exists(path + "-wal", ec))
        for (const char *suffix : {"", "-shm", "-journal"})
            std::filesystem::remove(path + suffix, ec);
}

Store::Store(const std::string &path, Mode mode, Foreign foreign)
    : SqlConnection(path) {
    // Before SQLite touches the file: even opening a database read-write may switch it to WAL.
    if (mode == Mode::ReadWrite)
        shipped::refuseWritingShipped(path, "database");
    // Memory statistics cost a global mutex on every allocation; the store never reads them.
    static const bool configured = [] { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK; }();
    (void)configured;
    int flags = mode == Mode::ReadOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    std::string name = path;
    // Reading a WAL database needs its -shm file, which SQLite cannot create in a folder we may
    // not write (a shared dataset, a read-only mount): "attempt to write a readonly database"
    // even for a SELECT. Without a -shm there is no writer, and without a -wal holding changes
    // the file alone is the database, so it is read as immutable.
    if (mode == Mode::ReadOnly && path != ":memory:" && headerSaysWal(path) && !isWritableFolderOf(path) &&
        ::access((path + "-shm").c_str(), F_OK) != 0) {
        if (fileSize(path + "-wal") > 0)
            throw StoreError(fmt::format(
                "cannot read database '{}': its folder is not writable and '{}-wal' holds changes not yet in "
                "the "
                "database file, which only a process that may write the folder can read (open it once there, "
                "or copy the database, its -wal file included, to a writable folder)",
                path, path));
        name = uriPath(path) + "?immutable=1";
        flags |= SQLITE_OPEN_URI;
    }
    m_removeWalFiles =
        mode == Mode::ReadOnly && !(flags & SQLITE_OPEN_URI) && path != ":memory:" && headerSaysWal(path);
    // To read, a file must be there: SQLite would say "unable to open database file".
    if (mode == Mode::ReadOnly && path != ":memory:") {
        std::error_code ec;
        const auto st = std::filesystem::status(path, ec);
        if (!std::filesystem::exists(st))
            throw StoreUnreadable(fmt::format("database '{}' does not exist", path));
        if (std::filesystem::is_directory(st))
            throw StoreUnreadable(fmt::format("'{}' is a directory, not a database", path));
        if (!std::filesystem::is_regular_file(st))
            throw StoreUnreadable(fmt::format("'{}' is not a regular file; a database is one", path));
    }
    if (sqlite3_open_v2(name.c_str(), &m_db, flags | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
        std::string msg = m_db ? sqlite3_errmsg(m_db) : "out of memory";
        const int code = m_db ? sqlite3_extended_errcode(m_db) : SQLITE_NOMEM;
        sqlite3_close(m_db);
        m_db = nullptr;
        throwStoreError(code, fmt::format("cannot open database '{}': {}", path, msg));
    }
    sqlite3_extended_result_codes(m_db, 1);
    sqlite3_busy_timeout(m_db, int(kBusyTimeoutMs));
    try {
        registerFunctions(m_db);
        // Fail early, with a clear message, on a file that is not a database.
        exec("SELECT count(*) FROM sqlite_master");
        checkOwnership(mode, foreign); // before anything is switched to WAL or created
        if (mode == Mode::ReadWrite) {
            execRetryingBusy("PRAGMA journal_mode=WAL");
            exec("PRAGMA synchronous=NORMAL");
            exec("PRAGMA cache_size=-65536"); // 64 MiB: index inserts of a large sweep stay in memory
        }
        exec("PRAGMA foreign_keys=ON");
        if (mode == Mode::ReadWrite) {
            migrate();
        } else if (int v = schemaVersion(); v > kSchemaVersion) {
            fail(fmt::format("database was written by schema {}; this build reads up to {}", v,
                             kSchemaVersion));
        } else if (v >= 1) {
            for (int i = v; i < kSchemaVersion; ++i)
                exec(kReadOnlyShims[size_t(i - 1)]);
        }
    } catch (...) {
        for (auto &[k, s] : m_stmts)
            sqlite3_finalize(s);
        m_stmts.clear();
        sqlite3_close(m_db);
        m_db = nullptr;
        throw;
    }
}

Store::~Store() {
    for (auto &[k, s] : m_stmts)
        sqlite3_finalize(s);
    if (m_db)
        sqlite3_close(m_db);
    // A read-only connection never deletes the -wal and -shm SQLite made for it (`diode stats` and
    // the workbench's readers would otherwise leave both beside a finished sweep's database). The
    // last read-write connection to close does, under SQLite's own locks: one that reads nothing
    // but the schema, opened only when the -wal holds no change, so it writes nothing. Any other
    // connection still open, of this process or another, reader or writer, keeps the files, as it
    // should (the last reader to close removes them); a folder or file we may not write keeps
    // them too.
    if (m_removeWalFiles && fileSize(m_path + "-wal") == 0) {
        sqlite3 *db = nullptr;
        if (sqlite3_open_v2(m_path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) ==
            SQLITE_OK)
            sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr);
        sqlite3_close(db);
    }
}

void throwStoreError(int code, const std::string &message) {
    const int primary = code & 0xff;
    if (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT)
        throw StoreUnreadable(message);
    throw StoreError(message);
}

void Store::fail(const std::string &what) {
    throwStoreError(m_db ? sqlite3_extended_errcode(m_db) : SQLITE_ERROR,
                    fmt::format("database '{}': {}", m_path, what));
}

void Store::exec(const char *sql) {
    char *err = nullptr;
    if (sqlite3_exec(m_db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
        std::string msg = err ? err : sqlite3_errmsg(m_db);
        sqlite3_free(err);
        if (sqlite3_errcode(m_db) == SQLITE_NOTADB)
            fail("not a SQLite database (file is corrupt or of another kind)");
        fail(msg + diskHint(m_db));
    }
}

void Store::execRetryingBusy(const char *sql) {
    // Switching a new file to WAL takes an exclusive lock from a shared one. Two processes opening
    // the file at once may each hold the shared lock the other must see go, and SQLite then answers
    // "database is locked" at once instead of calling the busy handler (it would wait forever).
    // The statement has ended and let go of its lock when it fails, so trying again after a short,
    // varying pause lets one of them through; the other finds the file switched.
    using Clock = std::chrono::steady_clock;
    const auto until = Clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
    std::minstd_rand jitter(unsigned(::getpid()));
    for (;;) {
        const int rc = sqlite3_exec(m_db, sql, nullptr, nullptr, nullptr);
        if (rc == SQLITE_OK)
            return;
        if ((rc & 0xff) != SQLITE_BUSY || Clock::now() > until)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1 + jitter() % 20));
    }
    exec(sql); // the error, said as exec says it
}

int Store::schemaVersion() {
    SqlStatement s(*this, "PRAGMA user_version", SqlStatement::Cached{});
    s.stepRow("cannot read schema version");
    const int version = int(s.integer(0));
    // user_version is any 32-bit integer a file may carry; a negative one would index the
    // migration table out of bounds.
    if (version < 0)
        throw StoreError(
            fmt::format("database '{}' has schema version {}, which no diode wrote", m_path, version));
    return version;
}

void Store::checkOwnership(Mode mode, Foreign foreign) {
    std::vector<std::string> tables, ours;
    int64_t objects = 0;
    int version = 0;
    {
        // The tables and the schema version as of one moment: another process making a new file's
        // schema commits both at once, and read apart they were seen half made (no table yet, then
        // its version), the file taken for another program's.
        exec("BEGIN");
        struct EndRead {
            sqlite3 *db;
            ~EndRead() { sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr); }
        } endRead{m_db};
        SqlStatement s(*this,
                       "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY rowid",
                       SqlStatement::Cached{});
        while (s.step("cannot list its tables")) {
            ++objects;
            const std::string name = s.text(1);
            if (std::find_if(kOurNames.begin(), kOurNames.end(), [&](const char *n) { return name == n; }) !=
                kOurNames.end())
                ours.push_back(name);
            else if (s.text(0) == "table")
                tables.push_back(name);
        }
        version = schemaVersion();
    }
    const bool hasRuns = std::find(ours.begin(), ours.end(), "runs") != ours.end();
    if (objects == 0 && version == 0 && mode == Mode::ReadOnly)
        throw EmptyDatabase(
            fmt::format("database '{}' is empty: it holds no diode tables (nothing was stored in it, "
                        "or the command that was to set it up failed, on a full disk say)",
                        m_path));
    if (objects == 0 && version == 0)
        return; // empty: a new database
    if (version >= 1 && hasRuns)
        return; // ours (a newer schema is refused by the caller)
    const size_t shown = std::min<size_t>(tables.size(), 5);
    const std::string found =
        fmt::format("{} table{}{}{}{}, schema version (PRAGMA user_version) {}", tables.size(),
                    tables.size() == 1 ? "" : "s", tables.empty() ? "" : ": ",
                    fmt::join(tables.begin(), tables.begin() + long(shown), ", "),
                    tables.size() > shown ? ", ..." : "", version);
    // Pointing diode at another program's file is bad input (exit 2), not a store failure.
    auto refuse = [&](const std::string &why) {
        throw InvalidInput(fmt::format("database '{}': {}", m_path, why));
    };
    if (mode == Mode::ReadOnly)
        refuse(fmt::format("not a diode database (it holds {}; no diode tables)", found));
    if (foreign == Foreign::Refuse)
        refuse(fmt::format(
            "not a diode database (it holds {}); diode leaves another program's database as it "
            "is. Use a new file, or pass --adopt-foreign-db to add diode's tables beside the others "
            "(the database is switched to WAL journaling)",
            found));
    if (!ours.empty())
        refuse(fmt::format("cannot adopt it: it already has tables or indexes under names diode uses ({})",
                           fmt::join(ours, ", ")));
    if (version != 0)
        refuse(
            fmt::format("cannot adopt it: its schema version (PRAGMA user_version) is {}, set by the program "
                        "that wrote it; diode would overwrite it with its own",
                        version));
}

void Store::migrate() {
    const int version = schemaVersion();
    if (version > kSchemaVersion)
        fail(
            fmt::format("database was written by schema {}; this build reads up to {}. Use a newer diode, or "
                        "export the data with it",
                        version, kSchemaVersion));
    if (version == kSchemaVersion)
        return;
    // A migration that rebuilds a table other tables reference (3 -> 4) must not have SQLite
    // check or act on those references half-way; the pragma is a no-op inside a transaction, so it
    // is set around it, and the references are checked before the commit.
    exec("PRAGMA foreign_keys=OFF");
    struct KeysOn {
        Store &s;
        ~KeysOn() { sqlite3_exec(s.m_db, "PRAGMA foreign_keys=ON", nullptr, nullptr, nullptr); }
    } keysOn{*this};
    Transaction tx(*this);
    // Read the version again under the write lock: another process opening the same new file
    // may have created the schema since ("table runs already exists" in 7 of 20 trials of 4
    // parallel imports).
    const int locked = schemaVersion();
    if (locked == kSchemaVersion)
        return;
    for (int v = locked; v < kSchemaVersion; ++v)
        exec(kMigrations[v]);
    SqlStatement check(*this, "SELECT count(*) FROM pragma_foreign_key_check", SqlStatement::Cached{});
    check.stepRow("cannot check foreign keys after migrating");
    if (const int64_t broken = check.integer(0); broken > 0)
        fail(fmt::format("migrating from schema {} to {} would leave {} rows referring to rows that do not "
                         "exist; nothing was changed",
                         locked, kSchemaVersion, broken));
    exec(fmt::format("PRAGMA user_version={}", kSchemaVersion).c_str());
    tx.commit();
}

Store::Transaction::Transaction(Store &store)
    : m_store(store) {
    const int rc = sqlite3_exec(m_store.m_db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr);
    if ((rc & 0xff) == SQLITE_BUSY)
        throw StoreError(
            fmt::format("database '{}' is busy: another process has been writing it for {} s; nothing "
                        "was written (try again once it is done)",
                        m_store.m_path, kBusyTimeoutMs / 1000));
    if (rc != SQLITE_OK)
        m_store.exec("BEGIN IMMEDIATE"); // says why, as exec does
}

Store::Transaction::~Transaction() {
    if (!m_done)
        sqlite3_exec(m_store.m_db, "ROLLBACK", nullptr, nullptr, nullptr);
    if (!m_done) {
        // Ids handed out inside the rolled-back transaction no longer exist.
        m_store.m_configIds.clear();
        m_store.m_problemIds.clear();
    }
}

void Store::Transaction::commit() {
    m_store.exec("COMMIT");
    m_done = true;
}

int64_t Store::createRun(const RunInfo &r) {
    SqlStatement s(*this,
                   "INSERT INTO runs(created_at, status, backend, plan_name, plan_json, search_space, host, "
                   "gpu_name, sm_count, gpu_memory_mb, driver, torch_version, triton_version, source, "
                   "problems_planned) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                   SqlStatement::Cached{});
    s.bind(1, r.createdAt.empty() ? utcNow() : r.createdAt);
    s.bind(2, r.status);
    s.bind(3, r.backend);
    s.bind(4, r.planName);
    s.bind(5, r.planJson);
    s.bind(6, r.searchSpace);
    s.bind(7, r.host);
    s.bind(8, r.gpuName);
    s.bind(9, r.smCount);
    s.bind(10, r.gpuMemoryMb);
    s.bind(11, r.driver);
    s.bind(12, r.torchVersion);
    s.bind(13, r.tritonVersion);
    s.bind(14, r.source);
    s.bind(15, r.problemsPlanned);
    s.run("cannot create run");
    return s.lastInsertId();
}

void Store::setRunStatus(int64_t runId, const std::string &status) {
    SqlStatement s(
        *this, "UPDATE runs SET status=?, finished_at=CASE WHEN ?='running' THEN NULL ELSE ? END WHERE id=?",
        SqlStatement::Cached{});
    s.bind(1, status);
    s.bind(2, status);
    s.bind(3, utcNow());
    s.bind(4, runId);
    s.run(fmt::format("cannot update run {}", runId));
}

RunInfo Store::run(int64_t runId) {
    static const std::string sql = fmt::format("SELECT {} FROM runs WHERE id=?", kRunColumns);
    SqlStatement s(*this, sql.c_str(), SqlStatement::Cached{});
    s.bind(1, runId);
    if (!s.step())
        fail(fmt::format("there is no run {}", runId));
    return readRun(s);
}

std::vector<RunInfo> Store::runs() {
    static const std::string sql = fmt::format("SELECT {} FROM runs ORDER BY id", kRunColumns);
    SqlStatement s(*this, sql.c_str(), SqlStatement::Cached{});
    std::vector<RunInfo> out;
    while (s.step())
        out.push_back(readRun(s));
    return out;
}

std::optional<RunInfo> Store::newestUnfinishedRun() {
    static const std::string sql = fmt::format("SELECT {} FROM runs WHERE status IN ('running','cancelled') "
                                               "AND backend != 'import' ORDER BY id DESC LIMIT 1",
                                               kRunColumns);
    SqlStatement s(*this, sql.c_str(), SqlStatement::Cached{});
    if (!s.step())
        return std::nullopt;
    return readRun(s);
}

std::optional<RunInfo> Store::importOfContent(const std::string &fingerprint) {
    static const std::string sql =
        fmt::format("SELECT {} FROM runs WHERE backend = 'import' AND json_valid(plan_json) AND "
                    "json_extract(plan_json, '$.content_fnv1a64') = ?1 ORDER BY id LIMIT 1",
                    kRunColumns);
    SqlStatement s(*this, sql.c_str(), SqlStatement::Cached{});
    s.bind(1, std::string_view(fingerprint));
    if (!s.step())
        return std::nullopt;
    return readRun(s);
}

size_t Store::ProblemHash::operator()(const GemmProblem &p) const noexcept {
    uint64_t h =
        uint64_t(p.op) | uint64_t(p.dtype) << 2 | uint64_t(p.aTransposed) << 4 | uint64_t(p.bTransposed) << 5;
    for (int64_t v : {p.batch, p.m, p.n, p.k})
        h = (h ^ uint64_t(v)) * 0x100000001B3ull + (h >> 29);
    return size_t(h);
}

int64_t Store::problemId(const GemmProblem &p) {
    if (auto it = m_problemIds.find(p); it != m_problemIds.end())
        return it->second;
    SqlStatement ins(
        *this,
        "INSERT INTO problems(op, dtype, b, m, n, k, a_transposed, b_transposed) VALUES(?,?,?,?,?,?,?,?) "
        "ON CONFLICT DO UPDATE SET op=excluded.op RETURNING id",
        SqlStatement::Cached{});
    ins.bind(1, toString(p.op));
    ins.bind(2, toString(p.dtype));
    ins.bind(3, p.batch);
    ins.bind(4, p.m);
    ins.bind(5, p.n);
    ins.bind(6, p.k);
    ins.bind(7, int(p.aTransposed));
    ins.bind(8, int(p.bTransposed));
    ins.stepRow(fmt::format("cannot store problem {}", p.label()));
    const int64_t id = ins.integer(0);
    while (ins.step()) {
    }
    m_problemIds.emplace(p, id);
    return id;
}

int64_t Store::configId(const KernelConfig &c) {
    std::string fingerprint = fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}", c.kind, c.name, c.blockM, c.blockN,
                                          c.blockK, c.groupM, c.numStages, c.numWarps, c.threads);
    if (!c.extra.empty())
        fingerprint += c.extra.dump();
    if (auto it = m_configIds.find(fingerprint); it != m_configIds.end())
        return it->second;
    const std::string key = c.key();
    SqlStatement ins(*this,
                     "INSERT INTO kernel_configs(config_key, kind, name, block_m, block_n, block_k, group_m, "
                     "num_stages, num_warps, threads, extra_json) VALUES(?,?,?,?,?,?,?,?,?,?,?) "
                     "ON CONFLICT DO UPDATE SET kind=excluded.kind RETURNING id",
                     SqlStatement::Cached{});
    ins.bind(1, key);
    ins.bind(2, c.kind);
    ins.bind(3, c.name);
    bindNullIfZero(ins, 4, c.blockM);
    bindNullIfZero(ins, 5, c.blockN);
    bindNullIfZero(ins, 6, c.blockK);
    bindNullIfZero(ins, 7, c.groupM);
    bindNullIfZero(ins, 8, c.numStages);
    bindNullIfZero(ins, 9, c.numWarps);
    bindNullIfZero(ins, 10, c.threads);
    ins.bind(11, c.extra.is_object() ? c.extra.dump() : std::string("{}"));
    ins.stepRow("cannot store kernel config");
    const int64_t id = ins.integer(0);
    while (ins.step()) {
    }
    m_configIds.emplace(std::move(fingerprint), id);
    return id;
}

void Store::insertMeasurement(int64_t runId, int64_t problemId, const Measurement &m) {
    const int64_t cfg = configId(m.config);
    SqlStatement s(
        *this,
        "INSERT OR IGNORE INTO measurements(run_id, problem_id, config_id, method, time_ms, status, "
        "error) VALUES(?,?,?,?,?,?,?)",
        SqlStatement::Cached{});
    s.bind(1, runId);
    s.bind(2, problemId);
    s.bind(3, cfg);
    s.bind(4, toString(m.method));
    if (m.timeMs)
        s.bind(5, *m.timeMs);
    s.bind(6, toString(m.status));
    if (!m.error.empty())
        s.bind(7, m.error);
    s.run("cannot store measurement");
}

void Store::insertBaselines(int64_t runId, int64_t problemId, const std::vector<BaselineTiming> &baselines) {
    for (const auto &b : baselines) {
        const int64_t pick = b.pick ? configId(*b.pick) : 0;
        SqlStatement s(
            *this,
            "INSERT OR REPLACE INTO problem_baselines(run_id, problem_id, baseline, method, time_ms, "
            "compile_s, pick_config_id) VALUES(?,?,?,?,?,?,?)",
            SqlStatement::Cached{});
        s.bind(1, runId);
        s.bind(2, problemId);
        s.bind(3, b.baseline);
        s.bind(4, toString(b.method));
        s.bind(5, b.timeMs);
        if (b.compileS)
            s.bind(6, *b.compileS);
        if (pick)
            s.bind(7, pick);
        s.run("cannot store baseline");
    }
}

void Store::markProblemDone(int64_t runId, int64_t problemId, const std::string &status,
                            const std::string &error, double seconds) {
    SqlStatement s(
        *this,
        "INSERT OR REPLACE INTO run_problems(run_id, problem_id, status, error, seconds) VALUES(?,?,?,?,?)",
        SqlStatement::Cached{});
    s.bind(1, runId);
    s.bind(2, problemId);
    s.bind(3, status);
    if (!error.empty())
        s.bind(4, error);
    s.bind(5, seconds);
    s.run("cannot mark problem done");
}

void Store::insertRecord(int64_t runId, const ProblemRecord &r, double seconds) {
    const int64_t pid = problemId(r.problem);
    for (const auto &c : r.candidates)
        for (const auto &m : c.measurements())
            insertMeasurement(runId, pid, m);
    insertBaselines(runId, pid, r.baselines);
    markProblemDone(runId, pid, r.error.empty() ? "ok" : "failed", r.error, seconds);
}

void Store::insertTelemetry(int64_t runId, const TelemetrySample &t) {
    SqlStatement s(*this,
                   "INSERT INTO telemetry(run_id, t, sm_clock_mhz, mem_clock_mhz, power_w, temperature_c, "
                   "utilization_pct) VALUES(?,?,?,?,?,?,?)",
                   SqlStatement::Cached{});
    s.bind(1, runId);
    s.bind(2, t.tSeconds);
    s.bind(3, t.smClockMhz);
    s.bind(4, t.memClockMhz);
    s.bind(5, t.powerW);
    s.bind(6, t.temperatureC);
    s.bind(7, t.utilizationPct);
    s.run("cannot store telemetry");
}

std::vector<TelemetrySample> Store::telemetry(int64_t runId) {
    SqlStatement s(
        *this,
        "SELECT t, sm_clock_mhz, mem_clock_mhz, power_w, temperature_c, utilization_pct FROM telemetry "
        "WHERE run_id=? ORDER BY t",
        SqlStatement::Cached{});
    s.bind(1, runId);
    std::vector<TelemetrySample> out;
    while (s.step())
        out.push_back({s.real(0), s.real(1), s.real(2), s.real(3), s.real(4), s.real(5)});
    return out;
}

int64_t Store::addModel(const std::string &name, const std::string &path, const nlohmann::json &manifest) {
    SqlStatement s(*this, "INSERT INTO models(name, path, created_at, manifest_json) VALUES(?,?,?,?)",
                   SqlStatement::Cached{});
    s.bind(1, name);
    s.bind(2, path);
    s.bind(3, utcNow());
    s.bind(4, manifest.dump());
    s.run("cannot store model");
    return s.lastInsertId();
}

void Store::insertPrediction(int64_t modelId, const GemmProblem &p, const KernelConfig &c,
                             double predictedMs) {
    // The column is NOT NULL and SQLite stores NaN as NULL: say which model and candidate, not
    // "NOT NULL constraint failed".
    if (!std::isfinite(predictedMs) || predictedMs < 0) {
        std::string model = fmt::format("model {}", modelId);
        SqlStatement m(*this, "SELECT name, path FROM models WHERE id=?", SqlStatement::Cached{});
        m.bind(1, modelId);
        if (m.step())
            model = fmt::format("model '{}' ({})", m.text(0), m.text(1));
        throw InvalidInput(
            fmt::format("{} predicts {} ms for {} with config {}; a prediction must be a finite "
                        "number >= 0, so none of its predictions were stored in '{}' (the package's "
                        "weights overflow on this input)",
                        model, std::isnan(predictedMs) ? "NaN" : fmt::format("{}", predictedMs), p.label(),
                        c.key(), m_path));
    }
    const int64_t pid = problemId(p), cid = configId(c);
    SqlStatement s(
        *this,
        "INSERT OR REPLACE INTO predictions(model_id, problem_id, config_id, predicted_ms) VALUES(?,?,?,?)",
        SqlStatement::Cached{});
    s.bind(1, modelId);
    s.bind(2, pid);
    s.bind(3, cid);
    s.bind(4, predictedMs);
    s.run("cannot store prediction");
}

} // namespace diode
