#include "common/eventloopprobe.h"

EventLoopProbe::EventLoopProbe(QObject *parent)
    : QObject(parent) {
    m_timer.setInterval(5);
    m_timer.setTimerType(Qt::PreciseTimer);
    connect(&m_timer, &QTimer::timeout, this, &EventLoopProbe::tick);
}

void EventLoopProbe::start() {
    m_worstNs = 0;
    m_ticks = 0;
    m_clock.start();
    m_lastNs = 0;
    m_timer.start();
}

void EventLoopProbe::tick() {
    const qint64 now = m_clock.nsecsElapsed();
    // The gap between ticks beyond the 5 ms interval is time the loop could not run.
    const qint64 gap = now - m_lastNs;
    if (m_ticks > 0 && gap > m_worstNs)
        m_worstNs = gap;
    m_lastNs = now;
    ++m_ticks;
}
