#include "progressbar.h"

#include <fmt/format.h>

#include <unistd.h>

namespace diode::cli {

namespace {

// Never throws: a closed or full stderr must not stop the sweep it reports on.
void put(std::FILE *out, const std::string &text) {
    (void)!std::fwrite(text.data(), 1, text.size(), out);
    std::fflush(out);
}

} // namespace

std::string formatDuration(double s) {
    if (s <= 0)
        return "--:--";
    const int64_t t = int64_t(s + 0.5);
    return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
                     : fmt::format("{}:{:02}", t / 60, t % 60);
}

ProgressBar::ProgressBar(std::FILE *out)
    : m_out(out)
    , m_tty(isatty(fileno(out))) {}

void ProgressBar::update(const SweepProgress &p) {
    const double frac = p.total ? double(p.done) / double(p.total) : 1.0;
    const std::string stats =
        fmt::format("{}/{} problems, {} failed, {} measurements, {:.2f} problems/s, ETA {}", p.done, p.total,
                    p.failed, p.measurements, p.problemsPerS, formatDuration(p.etaS));
    if (m_tty) {
        constexpr int width = 28;
        const int filled = int(frac * width);
        std::string bar = std::string(size_t(filled), '#') + std::string(size_t(width - filled), '.');
        std::string line = fmt::format("\r[{}] {:3.0f}% {}  {}", bar, frac * 100, stats, p.current);
        if (line.size() > 160)
            line.resize(160);
        put(m_out, line + "\033[K");
        m_drawn = true;
    } else if (p.done != m_lastDone) {
        put(m_out, stats + "\n");
    }
    m_lastDone = p.done;
}

void ProgressBar::finish() {
    if (m_tty && m_drawn)
        put(m_out, "\n");
}

} // namespace diode::cli
