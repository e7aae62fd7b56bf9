#pragma once

#include "diode/sweep/sweeprunner.h"

#include <chrono>
#include <cstdio>

namespace diode::cli {

/// Draws sweep progress on stderr: a redrawn bar on a terminal, a plain line per problem
/// otherwise (CI logs, pipes).
class ProgressBar {
public:
    explicit ProgressBar(std::FILE *out);
    void update(const SweepProgress &p);
    void finish();

private:
    std::FILE *m_out;
    bool m_tty;
    bool m_drawn = false;
    int64_t m_lastDone = -1;
};

std::string formatDuration(double seconds);

} // namespace diode::cli
