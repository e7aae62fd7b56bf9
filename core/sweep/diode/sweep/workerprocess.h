#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace diode {

/// A child process spoken to in lines over pipes, with timeouts: the runner must survive a
/// worker that crashes, hangs or never starts. stderr goes to a log file kept for diagnosis.
class WorkerProcess {
public:
    WorkerProcess(std::vector<std::string> argv, std::vector<std::string> extraEnv, std::string logPath);
    ~WorkerProcess(); ///< kills the child if it still runs

    /// Throws std::runtime_error if fork/pipe fail (exec failure shows as exit code 127).
    void start();
    bool running();
    pid_t pid() const { return m_pid; }

    enum class ReadStatus { Line, Timeout, Closed, TooLong };
    /// Waits up to `timeout` for one line; Closed means the child closed stdout (usually exited);
    /// TooLong that it sent more than `maxLine` bytes without a line break (what it sent is dropped,
    /// so a child that floods its stdout cannot grow our memory without bound).
    ReadStatus readLine(std::string &line, std::chrono::milliseconds timeout, size_t maxLine);
    bool writeLine(const std::string &line);
    /// SIGKILL and reap.
    void kill();
    /// "exited with code 1", "killed by signal 9 (Killed)"; waits briefly for the exit.
    std::string exitDescription();
    std::string stderrTail(size_t maxLines = 12) const;

private:
    std::vector<std::string> m_argv;
    std::vector<std::string> m_env;
    std::string m_logPath;
    pid_t m_pid = -1;
    int m_in = -1;
    int m_out = -1;
    std::string m_buffer;
    size_t m_scanned = 0; ///< m_buffer holds no line break before this
    std::optional<int> m_status;
};

} // namespace diode
