#pragma once

#include <cstdint>
#include <ctime>
#include <stdexcept>
#include <string>

namespace diode {

/// Thrown when another process already sweeps into the same database; the message names it.
class SweepBusy : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// One sweep writes a database at a time: an exclusive lock (flock) on `DB.sweep.lock`, taken
/// before a run is created or resumed and held while it measures. The file says who holds it (the
/// run, pid, host, start time) for the message a second sweep gets ("database 'x.db' is busy with
/// run 3 ..."), and is removed when the sweep ends. The kernel drops the lock when its holder dies
/// (kill -9 included), so a file left behind is never a stale lock: the next sweep simply takes it.
/// The lock file is never the database: closing a descriptor of the database would drop SQLite's
/// own locks on it.
class SweepLock {
public:
    /// Takes the lock or throws SweepBusy naming the holder; throws std::runtime_error when the
    /// lock file cannot be created.
    explicit SweepLock(const std::string &dbPath);
    ~SweepLock();
    SweepLock(const SweepLock &) = delete;
    SweepLock &operator=(const SweepLock &) = delete;

    static std::string lockPath(const std::string &dbPath) { return dbPath + ".sweep.lock"; }

    /// Records the run the holder sweeps, for the message a second sweep gets.
    void setRun(int64_t runId);

private:
    void writeHolder();
    std::string m_path;
    int m_fd = -1;
    int64_t m_runId = 0;
    std::time_t m_since = 0;
};

} // namespace diode
