#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>

/// Measures how long the GUI thread's event loop goes without running: a 5 ms timer that
/// records how late each tick arrives. `worstMs()` is the longest stall since start().
class EventLoopProbe : public QObject {
    Q_OBJECT
public:
    explicit EventLoopProbe(QObject *parent = nullptr);
    void start();
    void stop() { m_timer.stop(); }
    double worstMs() const { return m_worstNs / 1e6; }
    long ticks() const { return m_ticks; }

private:
    void tick();

    QTimer m_timer;
    QElapsedTimer m_clock;
    qint64 m_lastNs = 0;
    qint64 m_worstNs = 0;
    long m_ticks = 0;
};
