#pragma once

#include <atomic>
#include <string>
#include <vector>

#include <sys/types.h>

namespace diode {

/// Where a child's standard streams go: a file descriptor of ours, or -1 to share ours.
struct ChildStreams {
    int in = -1, out = -1, err = -1;
};

/// Starts `argv[0]` (looked up on PATH) with our environment plus `extraEnv` ("NAME=value", each
/// replacing a variable of that name), its streams from `streams`, and in a process group of its own
/// when `ownGroup` (so a kill of the group takes its children along). A program that cannot be run
/// exits 127 after one line on its stderr naming it. Throws std::runtime_error when it cannot fork.
/// The one way the project starts a child: the sweep's workers, Slurm's clients and the demo.
pid_t startChild(const std::vector<std::string> &argv, const std::vector<std::string> &extraEnv = {},
                 ChildStreams streams = {}, bool ownGroup = false);

/// `count` pipes (O_CLOEXEC) into fds[0..2*count): read end, then write end, of each. When one
/// cannot be made, those made are closed and std::runtime_error says "WHAT: why".
void makePipes(int *fds, int count, const std::string &what);

/// SIGKILLs the process group of every child started with `ownGroup` and not yet forgotten (the
/// sweep's workers and what they started): for a signal handler ending the process at once, so that
/// no worker outlives it. Async-signal-safe.
void killChildGroups();
/// Forgets a child's group once it is reaped (its id may be given to another process).
void forgetChildGroup(pid_t pid);

/// Waits for `pid` to end: its exit code, or 128 + the signal that ended it.
int waitChild(pid_t pid);
/// The same for a child started with `ownGroup`, checking `stop` every 100 ms: once it is true the
/// child's process group is sent SIGTERM, and SIGKILL `graceS` seconds later if the child is still
/// there. Once the child is reaped, whatever is left of its group is killed and the group forgotten:
/// nothing it started outlives it.
int waitChildGroup(pid_t pid, const std::atomic<bool> &stop, double graceS = 10);

/// What a command printed, and how it ended (exit code; 127: it could not be started).
struct ChildOutput {
    int rc = -1;
    std::string out, err;
};

/// Runs `argv` to its end with its stdout and stderr captured (no shell: nothing is quoted), with
/// our environment plus `extraEnv` as startChild gives it.
ChildOutput runCaptured(const std::vector<std::string> &argv, const std::vector<std::string> &extraEnv = {});

} // namespace diode
