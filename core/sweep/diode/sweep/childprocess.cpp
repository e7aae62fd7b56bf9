#include "childprocess.h"

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace diode {

namespace {

std::string nameOf(const std::string &kv) {
    return kv.substr(0, kv.find('='));
}

// Lock-free, so that a signal handler may read it: a slot a running child with its own group.
constexpr size_t kGroupSlots = 256;
std::atomic<pid_t> g_groups[kGroupSlots];

void rememberChildGroup(pid_t pid) {
    for (auto &slot : g_groups) {
        pid_t free = 0;
        if (slot.compare_exchange_strong(free, pid))
            return;
    }
}

} // namespace

pid_t startChild(const std::vector<std::string> &argv, const std::vector<std::string> &extraEnv,
                 ChildStreams streams, bool ownGroup) {
    if (argv.empty())
        throw std::runtime_error("cannot start a child process: no program named");
    // Everything is built before fork: only async-signal-safe calls after it.
    std::vector<std::string> envStore;
    for (char **e = environ; *e; ++e) {
        std::string kv(*e);
        bool replaced = false;
        for (const auto &x : extraEnv)
            replaced = replaced || nameOf(kv) == nameOf(x);
        if (!replaced)
            envStore.push_back(std::move(kv));
    }
    envStore.insert(envStore.end(), extraEnv.begin(), extraEnv.end());
    std::vector<char *> args, envp;
    for (const auto &a : argv)
        args.push_back(const_cast<char *>(a.c_str()));
    args.push_back(nullptr);
    for (auto &e : envStore)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    const std::string cannot = fmt::format("cannot run '{}': ", argv[0]);

    const pid_t pid = fork();
    if (pid < 0)
        throw std::runtime_error(
            fmt::format("cannot start '{}': fork failed: {}", argv[0], std::strerror(errno)));
    if (pid > 0 && ownGroup) {
        setpgid(pid, pid); // as the child does: whichever runs first, the group exists before a kill
        rememberChildGroup(pid);
    }
    if (pid == 0) {
        if (streams.in >= 0)
            dup2(streams.in, 0);
        if (streams.out >= 0)
            dup2(streams.out, 1);
        if (streams.err >= 0)
            dup2(streams.err, 2);
        if (ownGroup)
            setpgid(0, 0);
        execvpe(args[0], args.data(), envp.data());
        const char *why = strerror(errno); // not async-signal-safe in theory; glibc's reads a table
        (void)!write(2, cannot.data(), cannot.size());
        (void)!write(2, why, std::strlen(why));
        (void)!write(2, "\n", 1);
        _exit(127);
    }
    return pid;
}

void killChildGroups() {
    for (auto &slot : g_groups)
        if (const pid_t pid = slot.load(); pid > 0)
            ::kill(-pid, SIGKILL);
}

void forgetChildGroup(pid_t pid) {
    for (auto &slot : g_groups) {
        pid_t held = pid;
        if (slot.compare_exchange_strong(held, 0))
            return;
    }
}

namespace {
int exitCodeOf(int status) {
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
} // namespace

int waitChild(pid_t pid) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return exitCodeOf(status);
}

int waitChildGroup(pid_t pid, const std::atomic<bool> &stop, double graceS) {
    using Clock = std::chrono::steady_clock;
    std::optional<Clock::time_point> termSent;
    bool killed = false;
    for (;;) {
        int status = 0;
        const pid_t got = waitpid(pid, &status, WNOHANG);
        if (got == pid || (got < 0 && errno != EINTR)) {
            kill(-pid, SIGKILL); // what the child started and left behind
            forgetChildGroup(pid);
            return got == pid ? exitCodeOf(status) : -1;
        }
        if (!termSent && stop.load()) {
            kill(-pid, SIGTERM);
            termSent = Clock::now();
        } else if (termSent && !killed && Clock::now() - *termSent > std::chrono::duration<double>(graceS)) {
            kill(-pid, SIGKILL);
            killed = true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

void makePipes(int *fds, int count, const std::string &what) {
    for (int i = 0; i < count; ++i)
        if (pipe2(fds + 2 * i, O_CLOEXEC) != 0) {
            const int e = errno;
            for (int j = 0; j < 2 * i; ++j)
                close(fds[j]);
            throw std::runtime_error(fmt::format("{}: {}", what, std::strerror(e)));
        }
}

ChildOutput runCaptured(const std::vector<std::string> &argv, const std::vector<std::string> &extraEnv) {
    if (argv.empty())
        throw std::runtime_error("runCaptured: no program to run");
    int pipes[4];
    makePipes(pipes, 2, fmt::format("cannot run '{}'", argv.at(0)));
    int *outPipe = pipes, *errPipe = pipes + 2;
    pid_t pid = -1;
    try {
        pid = startChild(argv, extraEnv, {-1, outPipe[1], errPipe[1]});
    } catch (...) {
        for (int fd : {outPipe[0], outPipe[1], errPipe[0], errPipe[1]})
            close(fd);
        throw;
    }
    close(outPipe[1]);
    close(errPipe[1]);
    ChildOutput r;
    pollfd fds[2] = {{outPipe[0], POLLIN, 0}, {errPipe[0], POLLIN, 0}};
    std::string *bufs[2] = {&r.out, &r.err};
    int open = 2;
    while (open > 0) {
        if (poll(fds, 2, -1) < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char buf[4096];
            const ssize_t n = read(fds[i].fd, buf, sizeof buf);
            if (n > 0) {
                bufs[i]->append(buf, size_t(n));
            } else if (n == 0 || errno != EINTR) {
                close(fds[i].fd);
                fds[i].fd = -1;
                --open;
            }
        }
    }
    for (auto &f : fds)
        if (f.fd >= 0)
            close(f.fd);
    r.rc = waitChild(pid);
    return r;
}

} // namespace diode
