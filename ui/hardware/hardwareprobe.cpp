#include "hardware/hardwareprobe.h"

#include <QDateTime>

HardwareProbe::HardwareProbe() {
    qRegisterMetaType<diode::HardwareReport>();
    qRegisterMetaType<diode::TelemetrySample>();
}

HardwareProbe::~HardwareProbe() = default;

void HardwareProbe::start() {
    m_monitor = std::make_unique<diode::HardwareMonitor>();
    const auto report = m_monitor->report();
    m_gpus = int(report.gpus.size());
    emit reported(report);
    if (m_gpus == 0)
        return; // nothing to sample: the page shows stored telemetry instead
    m_startMs = QDateTime::currentMSecsSinceEpoch();
    m_timer = new QTimer(this);
    m_timer->setInterval(1000);
    connect(m_timer, &QTimer::timeout, this, &HardwareProbe::sample);
    m_timer->start();
    sample();
}

void HardwareProbe::sample() {
    const double t = (QDateTime::currentMSecsSinceEpoch() - m_startMs) / 1000.0;
    for (int i = 0; i < m_gpus; ++i)
        if (auto s = m_monitor->sample(i)) {
            s->tSeconds = t;
            emit sampled(i, *s);
        }
}
