#pragma once

#include "hardware/hardwareprobe.h"
#include "hardware/telemetryloader.h"

#include <QThread>
#include <QWidget>

class CharacterisePanel;
class QComboBox;
class QPushButton;
class QLabel;
class QStandardItemModel;
class QTableView;
class TelemetryPlot;
class WorkbenchState;

/// This machine's CPU and GPUs (name, SMs, memory, clocks, driver) and a plot of clocks,
/// power and temperature: live from NVML/ROCm SMI when there is a GPU, otherwise the
/// telemetry stored with a run of the open database, and a clear sentence when there is none.
class HardwarePage : public QWidget {
    Q_OBJECT
public:
    explicit HardwarePage(WorkbenchState *state, QWidget *parent = nullptr);
    ~HardwarePage() override;

    QStandardItemModel *gpuModel() const { return m_gpuModel; }
    /// "Characterise this GPU": the window of CharacterisePanel for the first GPU found.
    CharacterisePanel *openCharacterise();
    TelemetryPlot *plot() const { return m_plot; }

signals:
    /// The machine was read (report shown).
    void hardwareShown();
    /// The open database's telemetry was read and the source list refreshed.
    void telemetryShown();

private:
    void showReport(const diode::HardwareReport &report);
    void showStored(const StoredTelemetry &telemetry);
    void showSource();
    void addLiveSample(int gpu, const diode::TelemetrySample &sample);

    WorkbenchState *m_state;
    QThread m_thread;
    HardwareProbe *m_probe;
    TelemetryLoader *m_loader;
    StoredTelemetry m_stored;
    int m_liveGpus = 0;
    bool m_reported = false;

    QString m_firstGpu;
    int m_firstGpuSms = 0;
    QPushButton *m_characterise;
    CharacterisePanel *m_panel = nullptr;
    QLabel *m_machine;
    QLabel *m_notes;
    QStandardItemModel *m_gpuModel;
    QTableView *m_gpus;
    QComboBox *m_source;
    QLabel *m_sourceInfo;
    TelemetryPlot *m_plot;
};
