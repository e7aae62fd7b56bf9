#include "sweeplock.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <sys/file.h>
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

SweepLock::SweepLock(const std::string &dbPath) {
    const auto path = lockPath(dbPath);
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
                fmt::format("database '{}' is already being swept ({}); one sweep writes a database at a "
                            "time: wait for it to finish or stop it, then --resume",
                            dbPath, holder.empty() ? "by another process" : holder));
        throw std::runtime_error(fmt::format("cannot lock '{}': {}", path, std::strerror(err)));
    }
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char when[32];
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    const auto owner = fmt::format("by pid {} on host {} since {}\n", ::getpid(), host, when);
    if (::ftruncate(m_fd, 0) == 0 && ::lseek(m_fd, 0, SEEK_SET) == 0) {
        [[maybe_unused]] auto n = ::write(m_fd, owner.data(), owner.size());
    }
}

SweepLock::~SweepLock() {
    if (m_fd >= 0) {
        ::flock(m_fd, LOCK_UN);
        ::close(m_fd);
    }
}

} // namespace diode
