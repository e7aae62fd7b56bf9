#include "sweeplock.h"

#include "diode/infer/printable.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace diode {
namespace {

std::string readAll(int fd) {
    std::string text;
    char buf[256];
    ::lseek(fd, 0, SEEK_SET);
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0 && text.size() < 4096;)
        text.append(buf, size_t(n));
    while (!text.empty() && (text.back() == '\n' || text.back() == '\0'))
        text.pop_back();
    return text;
}

} // namespace

SweepLock::SweepLock(const std::string &dbPath)
    : m_path(lockPath(dbPath)) {
    const auto &path = m_path;
    for (;;) {
        m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (m_fd < 0)
            throw std::runtime_error(
                fmt::format("cannot create the sweep lock '{}': {}", path, std::strerror(errno)));
        if (::flock(m_fd, LOCK_EX | LOCK_NB) != 0) {
            const int err = errno;
            const auto holder = readAll(m_fd);
            ::close(m_fd);
            m_fd = -1;
            if (err == EWOULDBLOCK)
                throw SweepBusy(
                    fmt::format("database '{}' is busy with {}; one sweep writes a database at a time, and "
                                "this one created and changed nothing: wait for that one to finish or stop "
                                "it, then --resume",
                                dbPath, holder.empty() ? "a sweep of another process" : printable(holder)));
            throw std::runtime_error(fmt::format("cannot lock '{}': {}", path, std::strerror(err)));
        }
        // The holder before us removes the file as it lets go (~SweepLock): if it did so after we
        // opened it, we hold a file nobody else will open, and the next sweep would create another.
        // Only a lock on the file that is at the path now counts.
        struct stat held {
        }, now{};
        if (::fstat(m_fd, &held) == 0 && ::stat(path.c_str(), &now) == 0 && held.st_dev == now.st_dev &&
            held.st_ino == now.st_ino)
            break;
        ::close(m_fd);
        m_fd = -1;
    }
    m_since = std::time(nullptr);
    writeHolder();
}

void SweepLock::setRun(int64_t runId) {
    m_runId = runId;
    writeHolder();
}

// "run 3 (a sweep by pid 12 on host h since 2026-...)"; before the run exists, the sweep alone.
void SweepLock::writeHolder() {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    std::tm tm{};
    gmtime_r(&m_since, &tm);
    char when[32];
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    const std::string sweep = fmt::format("a sweep by pid {} on host {} since {}", ::getpid(), host, when);
    const auto owner =
        m_runId ? fmt::format("run {} ({})\n", m_runId, sweep) : sweep + " (starting its run)\n";
    if (::ftruncate(m_fd, 0) == 0 && ::lseek(m_fd, 0, SEEK_SET) == 0) {
        [[maybe_unused]] auto n = ::write(m_fd, owner.data(), owner.size());
    }
}

// A finished sweep leaves no lock file behind. Removed while still held, so a sweep that opened
// it meanwhile sees the file gone once it gets the lock, and starts again on a new one.
SweepLock::~SweepLock() {
    if (m_fd >= 0) {
        ::unlink(m_path.c_str());
        ::flock(m_fd, LOCK_UN);
        ::close(m_fd);
    }
}

} // namespace diode
