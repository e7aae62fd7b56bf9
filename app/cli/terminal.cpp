#include "terminal.h"

#include "diode/sweep/childprocess.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>

namespace diode::cli {

namespace {

bool g_outputFailed = false;
int g_outputErrno = 0;

void secondSignal(int sig) {
    killChildGroups();
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

} // namespace

void sayText(const std::string &text) {
    const std::string line = printableLines(text);
    (void)!std::fwrite(line.data(), 1, line.size(), stderr);
}

void showText(const std::string &text) {
    const std::string out = printableLines(text);
    if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() && !g_outputFailed) {
        g_outputFailed = true;
        g_outputErrno = errno;
    }
}

bool finishOutput() {
    std::cout.flush();
    errno = 0;
    const bool flushed = std::fflush(stdout) == 0;
    if (!flushed && !g_outputFailed)
        g_outputErrno = errno;
    if (flushed && !g_outputFailed && !std::ferror(stdout) && std::cout.good())
        return true;
    say("error: writing standard output failed: {}; what was printed is incomplete\n",
        g_outputErrno ? std::strerror(g_outputErrno) : "a full disk or a closed pipe");
    return false;
}

void onSecondSignal(int) {
    std::signal(SIGINT, secondSignal);
    std::signal(SIGTERM, secondSignal);
}

} // namespace diode::cli
