#include "workerprocess.h"

#include "diode/sweep/childprocess.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace diode {

WorkerProcess::WorkerProcess(std::vector<std::string> argv, std::vector<std::string> extraEnv,
                             std::string logPath)
    : m_argv(std::move(argv))
    , m_env(std::move(extraEnv))
    , m_logPath(std::move(logPath)) {}

WorkerProcess::~WorkerProcess() {
    kill();
}

void WorkerProcess::start() {
    kill();
    int fds[4];
    makePipes(fds, 2, "cannot create pipes");
    int *toChild = fds, *fromChild = fds + 2;
    const int logFd = open(m_logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    try { // own process group: a kill takes Inductor's compile workers along
        m_pid = startChild(m_argv, m_env, {toChild[0], fromChild[1], logFd}, true);
    } catch (...) {
        for (int fd : {toChild[0], toChild[1], fromChild[0], fromChild[1], logFd})
            if (fd >= 0)
                close(fd);
        throw;
    }
    if (logFd >= 0)
        close(logFd);
    close(toChild[0]);
    close(fromChild[1]);
    m_in = toChild[1];
    m_out = fromChild[0];
    fcntl(m_in, F_SETFL, fcntl(m_in, F_GETFL) | O_NONBLOCK);
    m_buffer.clear();
    m_scanned = 0;
    m_status.reset();
    signal(SIGPIPE, SIG_IGN);
}

bool WorkerProcess::running() {
    if (m_pid <= 0 || m_status)
        return false;
    int status = 0;
    if (waitpid(m_pid, &status, WNOHANG) == m_pid) {
        m_status = status;
        forgetChildGroup(m_pid);
        return false;
    }
    return true;
}

WorkerProcess::ReadStatus WorkerProcess::readLine(std::string &line, std::chrono::milliseconds timeout,
                                                  size_t maxLine) {
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + timeout;
    for (;;) {
        // From where the last look stopped: a long line arriving in pieces is scanned once.
        const size_t nl = m_buffer.find('\n', m_scanned);
        if (nl != std::string::npos && nl <= maxLine) {
            line = m_buffer.substr(0, nl);
            m_buffer.erase(0, nl + 1);
            m_scanned = 0;
            return ReadStatus::Line;
        }
        m_scanned = nl == std::string::npos ? m_buffer.size() : nl;
        if (m_buffer.size() > maxLine || nl != std::string::npos) {
            m_buffer.clear();
            m_scanned = 0;
            return ReadStatus::TooLong;
        }
        if (m_out < 0)
            return ReadStatus::Closed;
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0)
            return ReadStatus::Timeout;
        pollfd pfd{m_out, POLLIN, 0};
        const int rc = poll(&pfd, 1, int(std::min<long long>(left, 1 << 30)));
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc == 0)
            return ReadStatus::Timeout;
        char buf[65536];
        const ssize_t n = read(m_out, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            close(m_out);
            m_out = -1;
            return ReadStatus::Closed;
        }
        m_buffer.append(buf, size_t(n));
    }
}

bool WorkerProcess::writeLine(const std::string &line) {
    if (m_in < 0)
        return false;
    std::string data = line + "\n";
    size_t off = 0;
    // Non-blocking, waiting at most 10 s for room: a child that stops reading its stdin must not
    // hang the runner on a full pipe (the runner then kills it as it would a hung one).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (off < data.size()) {
        const ssize_t n = write(m_in, data.data() + off, data.size() - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  deadline - std::chrono::steady_clock::now())
                                  .count();
            pollfd pfd{m_in, POLLOUT, 0};
            if (left <= 0 || poll(&pfd, 1, int(left)) == 0)
                return false;
            continue;
        }
        if (n <= 0)
            return false;
        off += size_t(n);
    }
    return true;
}

void WorkerProcess::kill() {
    if (m_in >= 0)
        close(m_in);
    if (m_out >= 0)
        close(m_out);
    m_in = m_out = -1;
    if (m_pid > 0 && !m_status) {
        ::kill(-m_pid, SIGKILL);
        ::kill(m_pid, SIGKILL);
        int status = 0;
        if (waitpid(m_pid, &status, 0) == m_pid) {
            m_status = status;
            forgetChildGroup(m_pid);
        }
    }
}

std::string WorkerProcess::exitDescription() {
    for (int i = 0; i < 50 && running(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!m_status)
        return "still running";
    const int s = *m_status;
    if (WIFEXITED(s)) {
        if (WEXITSTATUS(s) == 127)
            return fmt::format("could not start '{}' (exit code 127: not found)", m_argv[0]);
        return fmt::format("exited with code {}", WEXITSTATUS(s));
    }
    if (WIFSIGNALED(s))
        return fmt::format("killed by signal {} ({})", WTERMSIG(s), strsignal(WTERMSIG(s)));
    return "ended";
}

std::string WorkerProcess::stderrTail(size_t maxLines) const {
    std::ifstream in(m_logPath);
    std::deque<std::string> lines;
    std::string l;
    while (std::getline(in, l)) {
        if (l.empty())
            continue;
        lines.push_back(l);
        if (lines.size() > maxLines)
            lines.pop_front();
    }
    std::string out;
    for (auto &x : lines)
        out += (out.empty() ? "" : "\n") + x;
    return out;
}

} // namespace diode
