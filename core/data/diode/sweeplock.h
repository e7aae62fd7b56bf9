#pragma once

#include <stdexcept>
#include <string>

namespace diode {

/// Thrown when another process already sweeps into the same database; the message names it.
class SweepBusy : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// One sweep writes a database at a time: an exclusive lock (flock) on `DB.sweep.lock`, held
/// while a run measures. The file says who holds it (pid, host, start time) for the message a
/// second sweep gets, and is removed when the sweep ends. The kernel drops the lock when its
/// holder dies (kill -9 included), so a file left behind is never a stale lock: the next sweep
/// simply takes it.
class SweepLock {
public:
    /// Takes the lock or throws SweepBusy naming the holder; throws std::runtime_error when the
    /// lock file cannot be created.
    explicit SweepLock(const std::string &dbPath);
    ~SweepLock();
    SweepLock(const SweepLock &) = delete;
    SweepLock &operator=(const SweepLock &) = delete;

    static std::string lockPath(const std::string &dbPath) { return dbPath + ".sweep.lock"; }

private:
    std::string m_path;
    int m_fd = -1;
};

} // namespace diode
