#pragma once

#include "diode/sweep/hardware.h"

#include <QObject>
#include <QTimer>

#include <memory>

Q_DECLARE_METATYPE(diode::HardwareReport)
Q_DECLARE_METATYPE(diode::TelemetrySample)

/// Lives on its own thread: reads the machine's CPU and GPUs once (NVML's init can take a
/// second), then samples every GPU's clocks, power and temperature once a second.
class HardwareProbe : public QObject {
    Q_OBJECT
public:
    HardwareProbe();
    ~HardwareProbe() override;
    /// Runs on the probe's thread (queued call).
    void start();

signals:
    void reported(const diode::HardwareReport &report);
    void sampled(int gpu, const diode::TelemetrySample &sample);

private:
    void sample();

    std::unique_ptr<diode::HardwareMonitor> m_monitor;
    QTimer *m_timer = nullptr;
    int m_gpus = 0;
    qint64 m_startMs = 0;
};
