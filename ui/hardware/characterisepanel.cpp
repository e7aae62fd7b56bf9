#include "hardware/characterisepanel.h"

#include "common/shippedfile.h"
#include "common/trainingavailable.h"

#include "diode/analysis/characterise.h"
#include "diode/analysis/wording.h"
#include "diode/config.h"
#include "diode/infer/shippeddata.h"
#include "diode/sweep/kernelsweep.h"
#include "diode/sweep/sweepplan.h"
#include "diode/sweep/sweepsession.h"
#if DIODE_HAVE_TORCH
#include "diode/train/characterisejob.h"
#endif

#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>
#include <string_view>
#include <vector>

namespace {

QString fileStem(const QString &gpu) {
    QString s = gpu.toLower();
    s.replace(QRegularExpression(QStringLiteral("[^a-z0-9]+")), QStringLiteral("-"));
    return s.isEmpty() ? QStringLiteral("this-gpu") : s;
}

// The sweep database and the new package, in the workbench's data folder, named after the GPU.
QString defaultDatabase(const QString &gpu) {
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
           QStringLiteral("/characterise-%1.db").arg(fileStem(gpu));
}

QString defaultOut(const QString &gpu) {
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
           QStringLiteral("/%1-characterised.diode").arg(fileStem(gpu));
}

QString efficiency(double v) {
    return v < 0 ? QObject::tr("n/a") : QString::number(v, 'f', 4);
}

// Each backend's pool: the shipped in-graph data (its candidates were timed on a GPU) for the
// inductor backend, the shipped cpu plan (its tiles) for the cpu backend.
QString defaultPool(const QString &backend) {
    return shippedFile(backend == QLatin1String("cpu") ? diode::shipped::kCpuPlan : diode::shipped::kDataset);
}

// The window's labelled fields and the flags of `diode characterise` they stand for: one list for
// the form's labels and for the job's messages shown here.
struct Field {
    const char *flag;
    const char *label;
};
constexpr Field kFields[] = {{"--package", QT_TRANSLATE_NOOP("CharacterisePanel", "Start package")},
                             {"--pool", QT_TRANSLATE_NOOP("CharacterisePanel", "Pool")},
                             {"--db", QT_TRANSLATE_NOOP("CharacterisePanel", "Sweep database")},
                             {"--out", QT_TRANSLATE_NOOP("CharacterisePanel", "New package")},
                             {"--python", QT_TRANSLATE_NOOP("CharacterisePanel", "Worker Python")},
                             {"--heldout", QT_TRANSLATE_NOOP("CharacterisePanel", "Held-out set")},
                             {"--kernel-lines", QT_TRANSLATE_NOOP("CharacterisePanel", "Kernel lines")},
                             {"--steps", QT_TRANSLATE_NOOP("CharacterisePanel", "Model steps")}};

QString fieldLabel(std::string_view flag) {
    for (const auto &f : kFields)
        if (flag == f.flag)
            return CharacterisePanel::tr(f.label);
    return QString::fromUtf8(flag.data(), qsizetype(flag.size()));
}

// core's reason names the CLI's flag ("name one with --package"); here the field says it.
QString withoutFlag(QString why) {
    why.remove(QRegularExpression(QStringLiteral("[:,]? name (the start package|one) with --package")));
    return why;
}

} // namespace

// A message of the characterise job in this window's terms: each flag the window has a field or a
// box for, named by it (the job's messages serve both faces); flags it has none for stay, as the
// command line has them.
QString CharacterisePanel::inPanelTerms(QString message) const {
    const auto quoted = [](const QString &text) { return QStringLiteral("“%1”").arg(text); };
    std::vector<std::pair<QString, QString>> names;
    for (const auto &f : kFields)
        names.emplace_back(QLatin1String(f.flag), quoted(tr(f.label)));
    names.insert(names.end(), {{QStringLiteral("--count"), tr("the problem count")},
                               {QStringLiteral("--deadline"), tr("the deadline")},
                               {QStringLiteral("--epochs"), tr("the epochs")},
                               {QStringLiteral("--kernel-workers"), tr("the kernel cases at once")},
                               {QStringLiteral("--install"), quoted(m_install->text())},
                               {QStringLiteral("--force"), quoted(m_force->text())},
                               {QStringLiteral("--retrain"), quoted(m_retrain->text())}});
    for (const auto &[flag, name] : names)
        message.replace(QRegularExpression(QRegularExpression::escape(flag) + QStringLiteral("(?![-\\w])")),
                        name);
    return message;
}

int CharacterisePanel::minimumCount() {
#if DIODE_HAVE_TORCH
    return int(diode::minimumCharacteriseCount(diode::CharacteriseRequest().heldoutFraction, false));
#else
    return 10;
#endif
}

CharacterisePanel::CharacterisePanel(QWidget *parent)
    : QWidget(parent)
    , m_worker(new CharacteriseWorker(this))
    , m_backend(new QComboBox(this))
    , m_package(new QLineEdit(this))
    , m_pool(new QLineEdit(this))
    , m_database(new QLineEdit(this))
    , m_out(new QLineEdit(this))
    , m_python(new QLineEdit(this))
    , m_heldout(new QLineEdit(this))
    , m_kernelLines(new QLineEdit(this))
    , m_steps(new QLineEdit(this))
    , m_count(new QSpinBox(this))
    , m_deadline(new QSpinBox(this))
    , m_workers(new QSpinBox(this))
    , m_kernelWorkers(new QSpinBox(this))
    , m_epochs(new QSpinBox(this))
    , m_kernelSweep(new QCheckBox(tr("measure this GPU's pointwise, reduction and small-M kernels too, for "
                                     "their decision models, in what is left of the deadline (not run with "
                                     "under a minute left)"),
                                  this))
    , m_install(new QCheckBox(tr("install a better package for the plugin"), this))
    , m_retrain(new QCheckBox(tr("train from random weights, not fine-tuning"), this))
    , m_force(new QCheckBox(tr("keep the new package even when not better"), this))
    , m_run(new QPushButton(tr("Characterise"), this))
    , m_cancel(new QPushButton(tr("Cancel"), this))
    , m_progress(new QProgressBar(this))
    , m_start(new QLabel(this))
    , m_status(new QLabel(tr("Not started. The same settings again continue an interrupted run."), this))
    , m_verdict(new QLabel(this))
    , m_error(new QLabel(this))
    , m_table(new QTableWidget(0, 5, this)) {
    setObjectName(QStringLiteral("characterisePanel"));
    m_backend->setObjectName(QStringLiteral("characteriseBackend"));
    m_backend->addItems({QStringLiteral("inductor"), QStringLiteral("cpu")});
    m_package->setObjectName(QStringLiteral("characterisePackage"));
    m_pool->setObjectName(QStringLiteral("characterisePool"));
    m_pool->setText(defaultPool(QStringLiteral("inductor")));
    m_pool->setToolTip(
        tr("The problems to choose from: a store (the shipped H200 data carries its candidates), "
           "problem lines, or a cpu plan"));
    m_database->setObjectName(QStringLiteral("characteriseDatabase"));
    m_out->setObjectName(QStringLiteral("characteriseOut"));
    m_python->setPlaceholderText(tr("python3 ($DIODE_PYTHON)"));
    m_count->setObjectName(QStringLiteral("characteriseCount"));
    m_count->setRange(minimumCount(), int(diode::planlimits::kMaxProblems)); // as --count
    m_count->setToolTip(tr("Problems to choose and measure; at least %1, so that %2 are left to train on "
                           "after a fifth is held out to compare on")
                            .arg(minimumCount())
                            .arg(minimumCount() - int(std::lround(minimumCount() * 0.2))));
    m_count->setValue(200);
    m_count->setSuffix(tr(" problems"));
    m_deadline->setObjectName(QStringLiteral("characteriseDeadline"));
    m_deadline->setRange(0, 24 * 60);
    m_deadline->setValue(15);
    m_deadline->setSuffix(tr(" min of sweep"));
    m_deadline->setSpecialValueText(tr("no deadline"));
    m_workers->setRange(diode::SweepSession::kAutoWorkers, diode::SweepSession::kMaxWorkersPerGpu);
    m_workers->setValue(diode::SweepSession::kAutoWorkers);
    m_workers->setSuffix(tr(" workers a GPU"));
    m_workers->setSpecialValueText(tr("auto workers a GPU"));
    m_heldout->setObjectName(QStringLiteral("characteriseHeldout"));
    m_heldout->setPlaceholderText(tr("none: a fifth of the chosen problems kept aside"));
    m_heldout->setToolTip(tr("Problems of this GPU measured before (problem lines or a store) to compare the "
                             "packages on; none of them is chosen or trained on"));
    m_kernelLines->setObjectName(QStringLiteral("characteriseKernelLines"));
    m_kernelLines->setPlaceholderText(tr("beside the sweep database (.kernels.jsonl)"));
    m_kernelLines->setToolTip(
        tr("Kernel and site lines of this GPU the decision models beside the GEMM kernel "
           "are trained on; the kernel sweep continues them"));
    m_steps->setObjectName(QStringLiteral("characteriseSteps"));
    m_steps->setPlaceholderText(tr("none, or model steps such as llama-decode-cat-b1-s2048,vit-b4"));
    m_steps->setToolTip(
        tr("After the kernel sweep, measure the kernels and small-M sites of these model steps (the "
           "names of diode demo --models, comma-separated) inside each step, with the start package's "
           "GEMM and form decisions: the kernels a model really runs, which single-kernel cases do not "
           "reproduce, and each site's two forms with the neighbours the step fuses into them"));
    m_kernelWorkers->setObjectName(QStringLiteral("characteriseKernelWorkers"));
    m_kernelWorkers->setRange(1, diode::KernelSweepRequest::kMaxWorkers);
    m_kernelWorkers->setValue(diode::KernelSweepRequest{}.workers);
    m_kernelWorkers->setSuffix(tr(" kernel cases at once"));
    m_retrain->setObjectName(QStringLiteral("characteriseRetrain"));
    m_retrain->setToolTip(tr("Train the new package from random weights instead of fine-tuning the start "
                             "package's networks"));
    m_force->setObjectName(QStringLiteral("characteriseForce"));
    m_force->setToolTip(tr("Keep (and install, when asked) the new package even when it is not better than "
                           "the package it started from on the held-out problems"));
    m_epochs->setObjectName(QStringLiteral("characteriseEpochs"));
    m_epochs->setRange(0, 100000);
    m_epochs->setSpecialValueText(tr("the trainer's"));
    m_epochs->setSuffix(tr(" epochs at most"));
    m_start->setObjectName(QStringLiteral("characteriseStart"));
    m_start->setWordWrap(true);
    m_status->setObjectName(QStringLiteral("characteriseStatus"));
    m_status->setWordWrap(true);
    m_verdict->setObjectName(QStringLiteral("characteriseVerdict"));
    m_verdict->setWordWrap(true);
    m_verdict->setStyleSheet(QStringLiteral("QLabel { font-weight: bold; }"));
    m_error->setObjectName(QStringLiteral("characteriseError"));
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("QLabel { color: #c0392b; font-weight: bold; }"));
    m_error->hide();
    m_table->setObjectName(QStringLiteral("characteriseTable"));
    m_table->setHorizontalHeaderLabels(
        {tr("selector"), tr("held-out problems"), tr("top-1 mean"), tr("top-1 P10"), tr("note")});
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->resizeColumnsToContents(); // the headers whole before any row is there
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_progress->setObjectName(QStringLiteral("characteriseProgress"));
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    m_cancel->setEnabled(false);
    m_run->setObjectName(QStringLiteral("characteriseRun"));

    auto *form = new QFormLayout;
    form->addRow(tr("Backend"), m_backend);
    form->addRow(fieldLabel("--package"), m_package);
    form->addRow(fieldLabel("--pool"), m_pool);
    form->addRow(fieldLabel("--db"), m_database);
    form->addRow(fieldLabel("--out"), m_out);
    form->addRow(fieldLabel("--python"), m_python);
    auto *inputs = new QHBoxLayout; // the optional inputs, one row
    inputs->addWidget(m_heldout, 1);
    inputs->addWidget(new QLabel(fieldLabel("--kernel-lines"), this));
    inputs->addWidget(m_kernelLines, 1);
    form->addRow(fieldLabel("--heldout"), inputs);
    auto *budget = new QHBoxLayout;
    budget->addWidget(m_count);
    budget->addWidget(m_deadline);
    auto *effort = new QHBoxLayout;
    effort->addWidget(m_workers);
    effort->addWidget(m_kernelWorkers);
    effort->addWidget(m_epochs);
    form->addRow(tr("Budget"), budget);
    form->addRow(QString(), effort);
    m_kernelSweep->setObjectName(QStringLiteral("characteriseKernelSweep"));
    m_kernelSweep->setChecked(true);
    form->addRow(QString(), m_kernelSweep);
    form->addRow(fieldLabel("--steps"), m_steps);
    auto *training = new QHBoxLayout;
    training->addWidget(m_retrain);
    training->addWidget(m_force, 1);
    form->addRow(QString(), training);
    form->addRow(QString(), m_install);
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_run);
    buttons->addWidget(m_cancel);
    buttons->addWidget(m_progress, 1);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_error);
    layout->addLayout(form);
    layout->addWidget(m_start);
    layout->addLayout(buttons);
    layout->addWidget(m_status);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_verdict);

    connect(m_backend, &QComboBox::currentIndexChanged, this, &CharacterisePanel::backendChanged);
    connect(m_backend, &QComboBox::activated, this, [this] { m_backendChosen = true; }); // by hand only
    connect(m_package, &QLineEdit::textChanged, this, &CharacterisePanel::updateRun);
    connect(m_pool, &QLineEdit::textChanged, this, &CharacterisePanel::updateRun);
    connect(m_kernelSweep, &QCheckBox::toggled, this, &CharacterisePanel::updateKernelWorkers);
    connect(m_run, &QPushButton::clicked, this, &CharacterisePanel::run);
    connect(m_cancel, &QPushButton::clicked, this, &CharacterisePanel::cancel);
    connect(m_worker, &CharacteriseWorker::status, m_status, &QLabel::setText);
    connect(m_worker, &CharacteriseWorker::selected, this,
            [this](int chosen, int pool, int heldOut, const QString &startWhy) {
                m_start->setText(tr("Start: %1").arg(startWhy));
                m_status->setText(
                    tr("%1 of %2 pool problems chosen where the package is least sure (%3 held out "
                       "to compare on); measuring them…")
                        .arg(chosen)
                        .arg(pool)
                        .arg(heldOut));
            });
    connect(m_worker, &CharacteriseWorker::sweepProgress, this,
            [this](qint64 done, qint64 total, double etaS) {
                m_progress->setRange(0, int(total));
                m_progress->setValue(int(done));
                m_progress->setFormat(tr("%v / %m problems"));
                m_progress->setTextVisible(true);
                m_status->setText(etaS > 0 ? tr("Sweeping: %1 of %2 problems; ETA %3 min")
                                                 .arg(done)
                                                 .arg(total)
                                                 .arg(etaS / 60, 0, 'f', 1)
                                           : tr("Sweeping: %1 of %2 problems").arg(done).arg(total));
            });
    connect(m_worker, &CharacteriseWorker::epoch, this,
            [this](int member, int members, int epoch, double top1) {
                m_status->setText(tr("Training: network %1 of %2, epoch %3, validation top-1 %4")
                                      .arg(member + 1)
                                      .arg(members)
                                      .arg(epoch)
                                      .arg(top1, 0, 'f', 4));
            });
    connect(m_worker, &CharacteriseWorker::resultReady, this, &CharacterisePanel::showOutcome);
    connect(m_worker, &CharacteriseWorker::failed, this,
            [this](const QString &message) { fail(inPanelTerms(message)); });
    connect(m_worker, &CharacteriseWorker::finished, this, [this] {
        setRunning(false);
        emit ended();
    });
    m_database->setText(defaultDatabase(QString()));
    m_out->setText(defaultOut(QString()));
    backendChanged();
}

void CharacterisePanel::setGpu(const QString &name, int smCount) {
    // The files are named after the GPU, unless the user named them already.
    if (m_database->text().isEmpty() || m_database->text() == defaultDatabase(m_gpu))
        m_database->setText(defaultDatabase(name));
    if (m_out->text().isEmpty() || m_out->text() == defaultOut(m_gpu))
        m_out->setText(defaultOut(name));
    m_gpu = name;
    m_smCount = smCount;
    m_gpuKnown = true;
    // Without a GPU only the cpu backend can run: it is the default, the other says why it is off.
    auto *items = qobject_cast<QStandardItemModel *>(m_backend->model());
    QStandardItem *inductor = items ? items->item(m_backend->findText(QStringLiteral("inductor"))) : nullptr;
    if (inductor) {
        inductor->setEnabled(!name.isEmpty());
        inductor->setToolTip(name.isEmpty() ? tr("No GPU on this machine: the inductor backend needs one")
                                            : QString());
    }
    if (!m_backendChosen || name.isEmpty())
        m_backend->setCurrentText(name.isEmpty() ? QStringLiteral("cpu") : QStringLiteral("inductor"));
    backendChanged();
}

void CharacterisePanel::setCpuModel(const QString &path) {
    m_cpuModel = path;
    backendChanged();
}

void CharacterisePanel::backendChanged() {
    const QString backend = m_backend->currentText();
    const bool inductor = backend == QLatin1String("inductor");
    m_python->setEnabled(inductor);
    m_workers->setEnabled(inductor);
    m_kernelSweep->setEnabled(inductor); // the cpu backend has no GPU kernels to measure
    updateKernelWorkers();
    m_kernelSweep->setToolTip(inductor
                                  ? QString()
                                  : tr("The cpu backend has no GPU kernels to measure: the kernel sweep "
                                       "runs with the inductor backend only, and the new cpu model keeps "
                                       "the start package's decision models."));
    m_package->setPlaceholderText(inductor ? tr("the plugin's package for this GPU, else the nearest")
                                           : tr("a cpu model (Train on a cpu sweep)"));
    // What the user has not typed follows the backend: the other backend's pool, or its package,
    // would fail it (a GPU dataset has no cpu tiles; a GPU package never ranked a tile).
    if (!m_lastBackend.isEmpty() && m_lastBackend != backend) {
        if (m_pool->text() == defaultPool(m_lastBackend))
            m_pool->setText(defaultPool(backend));
        if (m_lastBackend == QLatin1String("cpu") && m_package->text() == m_cpuModel)
            m_package->clear();
    }
    if (!inductor && m_package->text().trimmed().isEmpty())
        m_package->setText(m_cpuModel);
    m_lastBackend = backend;
    if (inductor && !m_gpu.isEmpty()) {
        const auto start = diode::nearestStartPackage(m_gpu.toStdString(), m_smCount);
        m_start->setText(tr("Start: %1").arg(withoutFlag(QString::fromStdString(start.why))));
    } else if (inductor) {
        m_start->setText(m_gpuKnown ? tr("No GPU on this machine: the inductor backend needs one.")
                                    : tr("Reading this machine's GPUs…"));
    } else {
        m_start->setText(
            tr("The cpu backend characterises this CPU, starting from a cpu model and the shipped "
               "cpu plan's tiles."));
    }
    updateRun();
}

void CharacterisePanel::updateKernelWorkers() {
    const bool sweeps = m_backend->currentText() == QLatin1String("inductor") && m_kernelSweep->isChecked();
    m_kernelWorkers->setEnabled(sweeps);
    m_steps->setEnabled(sweeps); // the step sweep runs after the kernel sweep
}

bool CharacterisePanel::canRun(QString *why) const {
    QString reason;
    const bool inductor = m_backend->currentText() == QLatin1String("inductor");
    if (!trainingAvailable(&reason)) { // characterising trains a package
    } else if (m_worker->isRunning()) {
        reason = tr("A characterisation is running.");
    } else if (inductor && m_gpuKnown && m_gpu.isEmpty()) {
        reason =
            tr("This machine has no GPU: characterise its CPU with the cpu backend, or run this on a GPU "
               "machine.");
    } else if (!inductor && m_package->text().trimmed().isEmpty()) {
        reason =
            tr("The cpu backend starts from a cpu model, and none is known yet: sweep the cpu plan (Sweep "
               "page, cpu backend) and train on it (Train page), or name a cpu model in “Start package”.");
    } else if (m_pool->text().trimmed().isEmpty()) {
        reason = tr("Name the pool to choose problems from.");
    }
    if (why)
        *why = reason;
    return reason.isEmpty();
}

void CharacterisePanel::updateRun() {
    QString why;
    const bool ok = canRun(&why);
    m_run->setEnabled(ok);
    m_run->setToolTip(ok ? tr("Choose, measure, fine-tune and compare") : why);
    if (!m_worker->isRunning() && m_error->isHidden())
        m_status->setText(ok ? tr("Not started. The same settings again continue an interrupted run.") : why);
}

void CharacterisePanel::setBackend(const QString &backend) {
    m_backendChosen = true;
    m_backend->setCurrentText(backend);
}

void CharacterisePanel::setPaths(const QString &package, const QString &pool, const QString &database,
                                 const QString &out) {
    for (auto [edit, v] :
         {std::pair{m_package, package}, {m_pool, pool}, {m_database, database}, {m_out, out}})
        if (!v.isEmpty())
            edit->setText(v);
}

void CharacterisePanel::setBudget(int problems, double deadlineMinutes, int epochs) {
    m_count->setValue(problems);
    m_deadline->setValue(int(deadlineMinutes));
    m_epochs->setValue(epochs);
}

void CharacterisePanel::run() {
    if (m_worker->isRunning())
        return;
    m_error->hide();
    m_verdict->clear();
    m_table->setRowCount(0);
    if (QString why; !canRun(&why))
        return fail(why);
#if DIODE_HAVE_TORCH
    diode::CharacteriseRequest r;
    r.backend = m_backend->currentText().toStdString();
    r.package = m_package->text().trimmed().toStdString();
    if (r.package.empty()) { // canRun() asked the cpu backend for one: the inductor backend finds it
        const auto start = diode::nearestStartPackage(m_gpu.toStdString(), m_smCount);
        if (start.path.empty())
            return fail(tr("%1: name a package in “Start package”.")
                            .arg(withoutFlag(QString::fromStdString(start.why))));
        r.package = start.path;
    }
    r.pool = m_pool->text().trimmed().toStdString();
    r.db = m_database->text().trimmed().toStdString();
    r.out = m_out->text().trimmed().toStdString();
    r.python = m_python->text().trimmed().toStdString();
    if (r.pool.empty() || r.db.empty() || r.out.empty())
        return fail(tr("Name the pool, the sweep database and the new package."));
    r.selection.count = size_t(m_count->value());
    r.deadlineS = m_deadline->value() * 60.0;
    if (r.backend == "inductor")
        r.workersPerGpu = m_workers->value();
    if (m_epochs->value() > 0)
        r.train.epochs = m_epochs->value();
    r.kernelSweep = m_kernelSweep->isChecked();
    r.kernelWorkers = m_kernelWorkers->value();
    r.kernelLines = m_kernelLines->text().trimmed().toStdString();
    if (m_steps->isEnabled())
        r.steps = m_steps->text().trimmed().toStdString();
    r.heldout = m_heldout->text().trimmed().toStdString();
    r.retrain = m_retrain->isChecked();
    r.train.learningRate = diode::CharacteriseRequest::defaultLearningRate(r.retrain);
    r.force = m_force->isChecked();
    r.install = m_install->isChecked();
    setRunning(true);
    m_status->setText(tr("Choosing the problems…"));
    m_worker->start(r);
#endif
}

void CharacterisePanel::cancel() {
    m_worker->cancel();
}

void CharacterisePanel::setRunning(bool running) {
    m_run->setEnabled(!running && canRun());
    m_cancel->setEnabled(running);
    if (running) {
        m_progress->setRange(0, 0);
    } else if (m_progress->maximum() == 0) {
        m_progress->setRange(0, 1);
    }
}

void CharacterisePanel::fail(const QString &message) {
    m_error->setText(message);
    m_error->show();
    m_status->setText(tr("Stopped."));
}

void CharacterisePanel::showOutcome(const CharacteriseOutcome &o) {
    if (o.cancelled) {
        m_status->setText(
            tr("Cancelled: nothing trained or kept. Characterise again with the same settings to "
               "continue the sweep where it stopped."));
        return;
    }
    m_start->setText(tr("Start: %1").arg(o.startWhy));
    // The trainer reads every run of the sweep database: a problem measured in two runs (an earlier
    // characterisation with other settings) is two lines, so the count can pass the pool's size.
    m_status->setText(
        tr("Sweep %1; trained on %2 problem lines of %3 (a problem once per run that measured "
           "it); held out: %4.")
            .arg(o.sweepStatus)
            .arg(o.trainingProblems)
            .arg(QFileInfo(m_database->text()).fileName())
            .arg(o.heldOutSource) +
        (o.kernelSweepStatus.isEmpty() ? QString()
                                       : tr(" Kernel sweep: %1.").arg(inPanelTerms(o.kernelSweepStatus))) +
        (o.stepSweepStatus.isEmpty() ? QString()
                                     : tr(" Step sweep: %1.").arg(inPanelTerms(o.stepSweepStatus))) +
        QLatin1Char(' ') + o.decisions + QLatin1Char('.'));
    m_table->setRowCount(int(o.table.size()));
    for (int i = 0; i < o.table.size(); ++i) {
        const auto &row = o.table[i];
        const QStringList cells{row.selector, QString::number(row.problems), efficiency(row.mean),
                                efficiency(row.p10), row.note};
        for (int c = 0; c < cells.size(); ++c)
            m_table->setItem(i, c, new QTableWidgetItem(cells[c]));
    }
    m_table->resizeColumnsToContents();
    // What became of it, in the terms of this window (the CLI's line names its --force).
    QString verdict =
        o.verdict + (o.kept.isEmpty() ? tr("; dropped: not better than the package it started from")
                                      : tr("; kept as %1").arg(o.kept));
    if (!o.installed.isEmpty())
        verdict += tr(", installed for the plugin as %1").arg(o.installed);
    else if (m_install->isChecked() && !o.kept.isEmpty())
        verdict += tr(", not installed");
    m_verdict->setText(verdict);
}
