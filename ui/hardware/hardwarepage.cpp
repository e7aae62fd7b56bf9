#include "hardware/hardwarepage.h"

#include "common/exportactions.h"
#include "common/modellist.h"
#include "common/workbenchstate.h"
#include "hardware/characterisepanel.h"
#include "hardware/telemetryplot.h"

#include <QComboBox>
#include <QDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QStandardItemModel>
#include <QTableView>
#include <QVBoxLayout>

HardwarePage::HardwarePage(WorkbenchState *state, QWidget *parent)
    : QWidget(parent)
    , m_state(state)
    , m_probe(new HardwareProbe)
    , m_characterise(new QPushButton(tr("Characterise this GPU…"), this))
    , m_loader(new TelemetryLoader(this))
    , m_machine(new QLabel(tr("Reading this machine's hardware…"), this))
    , m_notes(new QLabel(this))
    , m_gpuModel(new QStandardItemModel(0, 8, this))
    , m_gpus(new QTableView(this))
    , m_source(new QComboBox(this))
    , m_sourceInfo(new QLabel(this))
    , m_plot(new TelemetryPlot(this)) {
    setObjectName(QStringLiteral("hardwarePage"));
    m_machine->setObjectName(QStringLiteral("machine"));
    m_machine->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_notes->setObjectName(QStringLiteral("hardwareNotes"));
    m_notes->setWordWrap(true);
    m_gpuModel->setHorizontalHeaderLabels({tr("GPU"), tr("Name"), tr("Vendor"), tr("SMs / CUs"),
                                           tr("Memory (GiB)"), tr("Max SM clock (MHz)"),
                                           tr("Max mem clock (MHz)"), tr("Driver")});
    m_gpus->setObjectName(QStringLiteral("gpuTable"));
    m_gpus->setModel(m_gpuModel);
    m_gpus->horizontalHeader()->setStretchLastSection(true);
    m_gpus->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_gpus->setMaximumHeight(160);
    addTableExport(m_gpus, QStringLiteral("gpus"));
    m_source->setObjectName(QStringLiteral("telemetrySource"));
    // Its items arrive after the page is first shown (the runs of the database): sized to them then.
    m_source->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_sourceInfo->setObjectName(QStringLiteral("telemetryInfo"));
    m_sourceInfo->setWordWrap(true);
    m_plot->setObjectName(QStringLiteral("telemetryPlot"));

    auto *sourceRow = new QHBoxLayout;
    sourceRow->addWidget(new QLabel(tr("Telemetry:"), this));
    sourceRow->addWidget(m_source);
    sourceRow->addWidget(m_sourceInfo, 1);
    m_characterise->setObjectName(QStringLiteral("characteriseButton"));
    m_characterise->setToolTip(
        tr("Measure the problems this GPU's package is least sure of, fine-tune it, and "
           "compare on held-out problems (diode characterise)"));
    connect(m_characterise, &QPushButton::clicked, this, [this] { openCharacterise(); });
    auto *machineRow = new QHBoxLayout;
    machineRow->addWidget(m_machine, 1);
    machineRow->addWidget(m_characterise);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(machineRow);
    layout->addWidget(m_gpus);
    layout->addWidget(m_notes);
    layout->addLayout(sourceRow);
    layout->addWidget(m_plot, 1);

    m_probe->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_probe, &QObject::deleteLater);
    connect(m_probe, &HardwareProbe::reported, this, &HardwarePage::showReport);
    connect(m_probe, &HardwareProbe::sampled, this, &HardwarePage::addLiveSample);
    m_thread.setObjectName(QStringLiteral("hardwareProbe"));
    m_thread.start();
    QMetaObject::invokeMethod(m_probe, &HardwareProbe::start, Qt::QueuedConnection);

    connect(m_loader, &TelemetryLoader::loaded, this, &HardwarePage::showStored);
    connect(m_loader, &TelemetryLoader::failed, this, [this](const QString &msg) {
        m_sourceInfo->setText(msg);
        m_sourceInfo->setStyleSheet(QStringLiteral("QLabel { color: #c0392b; }"));
    });
    connect(m_source, &QComboBox::currentIndexChanged, this, &HardwarePage::showSource);
    auto reload = [this] {
        if (!m_state->databasePath().isEmpty())
            m_loader->load(m_state->databasePath());
    };
    connect(state, &WorkbenchState::databaseChanged, this, reload);
    connect(state, &WorkbenchState::dataChanged, this, reload);
    reload();
}

HardwarePage::~HardwarePage() {
    m_thread.quit();
    m_thread.wait();
}

void HardwarePage::showReport(const diode::HardwareReport &r) {
    m_reported = true;
    m_machine->setText(tr("<b>%1</b>: CPU %2, %3 threads")
                           .arg(QString::fromStdString(r.host), QString::fromStdString(r.cpu))
                           .arg(r.cpuThreads));
    m_gpuModel->setRowCount(0);
    for (const auto &g : r.gpus) {
        QList<QStandardItem *> row;
        for (const QString &v :
             {QString::number(g.index), QString::fromStdString(g.name), QString::fromStdString(g.vendor),
              QString::number(g.smCount), QString::number(g.memoryMb / 1024.0, 'f', 1),
              QString::number(g.maxSmClockMhz), QString::number(g.maxMemClockMhz),
              QString::fromStdString(g.driver)})
            row << new QStandardItem(v);
        m_gpuModel->appendRow(row);
    }
    QStringList notes;
    for (const auto &n : r.notes)
        notes << QString::fromStdString(n).toHtmlEscaped();
    if (r.gpus.empty()) {
        m_notes->setText(
            tr("<b>No GPU detected on this machine.</b> Sweeps can use the cpu backend; the inductor "
               "backend needs a GPU.<br>%1")
                .arg(notes.join(QStringLiteral("<br>"))));
        m_gpus->hide();
    } else {
        m_notes->setText(notes.join(QStringLiteral("<br>")));
        m_gpus->show();
    }
    m_liveGpus = int(r.gpus.size());
    if (!r.gpus.empty()) {
        m_firstGpu = QString::fromStdString(r.gpus.front().name);
        m_firstGpuSms = r.gpus.front().smCount;
    }
    m_characterise->setText(r.gpus.empty() ? tr("Characterise…") : tr("Characterise this GPU…"));
    QStringList names;
    for (const auto &g : r.gpus)
        names << QString::fromStdString(g.name);
    m_state->setLocalGpus(names); // the pages whose flows need a GPU offer them only with one
    if (m_panel)
        m_panel->setGpu(m_firstGpu, m_firstGpuSms);
    const int keep = m_source->currentIndex();
    const QSignalBlocker block(m_source);
    for (int i = 0; i < m_liveGpus; ++i)
        m_source->insertItem(
            i, tr("Live: GPU %1 (%2)").arg(i).arg(QString::fromStdString(r.gpus[size_t(i)].name)), -1 - i);
    m_source->setCurrentIndex(m_liveGpus > 0 ? 0 : std::max(keep, 0));
    showSource();
    emit hardwareShown();
}

void HardwarePage::showStored(const StoredTelemetry &t) {
    m_stored = t;
    m_sourceInfo->setStyleSheet(QString());
    const QSignalBlocker block(m_source);
    while (m_source->count() > m_liveGpus)
        m_source->removeItem(m_liveGpus);
    int firstWithSamples = -1;
    for (size_t i = 0; i < t.runs.size(); ++i) {
        const auto &r = t.runs[i];
        m_source->addItem(tr("Run %1: %2, %3 samples")
                              .arg(r.id)
                              .arg(QString::fromStdString(r.gpuName))
                              .arg(t.samples[i].size()),
                          qlonglong(i));
        if (firstWithSamples < 0 && !t.samples[i].empty())
            firstWithSamples = m_source->count() - 1;
    }
    if (m_liveGpus == 0)
        m_source->setCurrentIndex(firstWithSamples >= 0 ? firstWithSamples : (m_source->count() ? 0 : -1));
    showSource();
    emit telemetryShown();
}

void HardwarePage::showSource() {
    const QVariant v = m_source->currentData();
    if (!v.isValid()) {
        const QString why = m_reported && m_liveGpus == 0
                                ? tr("No GPU on this machine, and the open database has no runs: there is no "
                                     "telemetry to show.")
                                : tr("No telemetry source.");
        m_plot->setSamples({}, QString(), why);
        m_sourceInfo->clear();
        return;
    }
    const qlonglong i = v.toLongLong();
    if (i < 0) {
        m_plot->setSamples({}, tr("Live telemetry of GPU %1 (one sample a second)").arg(-1 - i),
                           tr("Waiting for the first sample of GPU %1…").arg(-1 - i));
        m_sourceInfo->setText(tr("Sampling live."));
        return;
    }
    const auto &samples = m_stored.samples[size_t(i)];
    const auto &run = m_stored.runs[size_t(i)];
    if (!samples.empty()) {
        m_sourceInfo->setText(tr("%1 samples over %2 s, stored while the run measured.")
                                  .arg(samples.size())
                                  .arg(samples.back().tSeconds, 0, 'f', 0));
        m_plot->setSamples(
            samples,
            tr("Telemetry stored with run %1 (%2)").arg(run.id).arg(QString::fromStdString(run.gpuName)),
            QString());
        return;
    }
    const bool imported = run.backend == "import";
    const QString why =
        imported ? tr("Run %1 has no telemetry: it was imported from the sweep worker's problem JSON, which "
                      "carries no clock, power or temperature samples.")
                       .arg(run.id)
                 : tr("Run %1 has no telemetry: its backend (%2) sampled none (no GPU library where it ran).")
                       .arg(run.id)
                       .arg(QString::fromStdString(run.backend));
    m_sourceInfo->setText(m_liveGpus == 0 ? tr("No live GPU on this machine.") : QString());
    m_plot->setSamples({}, QString(), why);
}

void HardwarePage::addLiveSample(int gpu, const diode::TelemetrySample &sample) {
    if (m_source->currentData().toLongLong() == -1 - gpu)
        m_plot->addSample(sample);
}

CharacterisePanel *HardwarePage::openCharacterise() {
    if (!m_panel) {
        auto *dialog = new QDialog(this);
        dialog->setObjectName(QStringLiteral("characteriseDialog"));
        dialog->setWindowTitle(
            tr("Characterise %1").arg(m_firstGpu.isEmpty() ? tr("this machine") : m_firstGpu));
        dialog->resize(900, 640);
        m_panel = new CharacterisePanel(dialog);
        auto *layout = new QVBoxLayout(dialog);
        layout->addWidget(m_panel);
        if (m_reported)                                 // else when the machine has been read (showReport)
            m_panel->setGpu(m_firstGpu, m_firstGpuSms); // once: later opens keep what was typed
    }
    // A cpu model to start the cpu backend from: the newest the workbench knows of.
    const auto models = ModelList::of(m_state)->models();
    for (auto it = models.crbegin(); it != models.crend(); ++it)
        if (it->timingMethod == QLatin1String("cpu")) {
            m_panel->setCpuModel(it->path);
            break;
        }
    auto *dialog = static_cast<QDialog *>(m_panel->parentWidget());
    dialog->show(); // not modal: the rest of the workbench stays usable while it sweeps
    dialog->raise();
    return m_panel;
}
