#include "sweep/sweeppage.h"

#include "common/exportactions.h"
#include "common/pageshortcut.h"
#include "common/shippedfile.h"
#include "common/workbenchstate.h"
#include "diode/infer/shippeddata.h"
#include "sweep/failedproblemsmodel.h"
#include "sweep/planform.h"
#include "sweep/slurmjobs.h"
#include "sweep/throughputplot.h"
#include "ui_sweeprunpanel.h"

#include "diode/analysis/wording.h"
#include "diode/config.h"
#include "diode/store/store.h"
#include "diode/sweep/slurmsweep.h"
#include "diode/sweep/sweepsession.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QShortcut>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <climits>

using json = nlohmann::json;

namespace {

// The shipped cpu plan's name (core/infer/diode/infer/shippeddata.h), and where it is: the source tree's or
// the installed copy; its name alone when neither exists, so the error says what is missing.
const QString kCpuPlanName =
    QString::fromUtf8(diode::shipped::kCpuPlan.data(), qsizetype(diode::shipped::kCpuPlan.size()));
QString shippedCpuPlan() {
    const QString found = shippedFile(diode::shipped::kCpuPlan);
    return found.isEmpty() ? kCpuPlanName : found;
}

QString duration(double s) {
    return QString::fromStdString(diode::durationText(s));
}

} // namespace

SweepPage::SweepPage(WorkbenchState *state, QWidget *parent)
    : QWidget(parent)
    , m_state(state)
    , m_worker(new SweepWorker(this))
    , m_estimator(new PlanEstimator(this))
    , m_failed(new FailedProblemsModel(this))
    , m_form(new PlanForm(this))
    , m_runUi(std::make_unique<Ui::SweepRunPanel>())
    , m_slurmJobs(new SlurmJobs(this))
    , m_estimateDelay(new QTimer(this))
    , m_runsLoader(new AnalysisLoader(this)) {
    setObjectName(QStringLiteral("sweepPage"));
    m_planDir = resourcesDir() + QStringLiteral("/plans");
    m_estimateDelay->setObjectName(QStringLiteral("estimateDelay"));
    m_estimateDelay->setSingleShot(true);
    m_estimateDelay->setInterval(250);

    auto *formScroll = new QScrollArea(this);
    formScroll->setWidget(m_form);
    formScroll->setWidgetResizable(true);
    formScroll->setMinimumWidth(340);
    auto *right = new QSplitter(Qt::Vertical, this);
    right->addWidget(planEditor());
    right->addWidget(runPanel());
    right->setStretchFactor(0, 2);
    right->setStretchFactor(1, 3);
    auto *split = new QSplitter(Qt::Horizontal, this);
    split->setObjectName(QStringLiteral("sweepSplitter"));
    split->addWidget(formScroll);
    split->addWidget(right);
    split->setStretchFactor(1, 1);
    split->setSizes({380, 750});
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(split);

    connect(m_form, &PlanForm::addEntryRequested, this, &SweepPage::addEntry);
    connect(m_form, &PlanForm::newPlanRequested, this, &SweepPage::newPlan);
    connect(m_form, &PlanForm::settingsChanged, this, &SweepPage::settingsToPlan);
    connect(m_estimateDelay, &QTimer::timeout, this, [this] {
        m_estimator->estimate(m_plan->toPlainText().toUtf8(), m_planDir, m_backend->currentText());
    });
    connect(m_estimator, &PlanEstimator::estimated, this, &SweepPage::showEstimate);
    connect(m_worker, &SweepWorker::started, this,
            [this](qint64 runId, qint64 total, const QString &backend) {
                m_status->setText(tr("Run %1 (%2 backend): %3 problems").arg(runId).arg(backend).arg(total));
                m_plotRunId = runId;
                m_progress->setRange(0, int(total));
                m_progress->setTextVisible(true);
                // Show the sweep's database everywhere, so the Data page fills as it is written.
                if (m_state->databasePath() != m_database)
                    m_state->setDatabase(m_database, false);
                m_state->notifyDataChanged();
            });
    connect(m_worker, &SweepWorker::progress, this, &SweepPage::showStatus);
    connect(m_worker, &SweepWorker::problemFinished, this, [this](const ProblemResult &r) {
        m_plot->addResult(r);
        if (!r.ok) {
            m_failed->append(QString::fromStdString(r.problem.label()), r.error);
            m_results->setTabText(1, tr("Failed problems (%1)").arg(m_failed->rowCount()));
        }
    });
    connect(m_worker, &SweepWorker::finished, this, [this](const QString &status, qint64 runId) {
        sweepEnded(status == QLatin1String("cancelled")
                       ? tr("Run %1 cancelled; Resume (Ctrl+Shift+R) finishes it.").arg(runId)
                       : tr("Run %1 finished: %2 problems plotted, %3 failed.")
                             .arg(runId)
                             .arg(m_plot->points())
                             .arg(m_failed->rowCount()));
    });
    connect(m_worker, &SweepWorker::failed, this, [this](const QString &message) {
        showError(message);
        // Nothing measured: not "Measuring…" over an empty plot, not a bar of "0 / 1".
        if (m_plot->points() == 0)
            m_plot->clear(tr("No problem was measured: the sweep stopped (the message above says why)."));
        sweepEnded(tr("Sweep stopped."));
    });
    connect(m_worker, &SweepWorker::mixRefused, this, &SweepPage::confirmMixing);
    connect(state, &WorkbenchState::databaseChanged, this, [this](const QString &path) {
        if (m_worker->isRunning() || m_slurmJobs->following())
            return;
        if (!m_state->databaseReadOnly())
            setTargetDatabase(path);
        // The run shown was of another database: what it measured is not in this one.
        if (!m_resultDatabase.isEmpty() && path != m_resultDatabase)
            clearResult(path);
        loadRuns();
    });
    connect(state, &WorkbenchState::dataChanged, this, [this] {
        if (!m_worker->isRunning())
            loadRuns();
    });
    connect(state, &WorkbenchState::localGpusChanged, this, &SweepPage::followGpus);
    connect(m_runsLoader, &AnalysisLoader::loaded, this, &SweepPage::showRuns);
    connect(m_runsLoader, &AnalysisLoader::failed, this, [this](const QString &message) {
        m_compare->clear();
        m_compare->addItem(tr("no earlier run (%1)").arg(message));
        emit ready();
    });

    addPageShortcut(this, QKeySequence(Qt::CTRL | Qt::Key_R), [this] { run(); });
    addPageShortcut(this, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R), [this] { resume(); });
    addPageShortcut(this, QKeySequence(Qt::Key_Escape), [this] { cancel(); });
    addPageShortcut(this, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), [this] { choosePlanToOpen(); });
    addPageShortcut(this, QKeySequence::Save, [this] { savePlan(false); });

    QSettings settings;
    m_backend->setCurrentText(settings.value(QStringLiteral("sweep/backend"), "cpu").toString());
    m_python->setText(settings.value(QStringLiteral("sweep/python")).toString());
    m_workers->setValue(
        settings.value(QStringLiteral("sweep/workersPerGpu"), diode::SweepSession::kAutoWorkers).toInt());
    m_gpus->setText(settings.value(QStringLiteral("sweep/gpus")).toString());
    m_shards->setValue(settings.value(QStringLiteral("sweep/slurmShards"), 4).toInt());
    m_partition->setText(settings.value(QStringLiteral("sweep/slurmPartition")).toString());
    m_timeLimit->setText(settings.value(QStringLiteral("sweep/slurmTime")).toString());
    setTargetDatabase(settings.value(QStringLiteral("sweep/database")).toString());
    const QString lastPlan = settings.value(QStringLiteral("sweep/planPath")).toString();
    if (lastPlan.isEmpty() || !openPlan(lastPlan))
        openPlan(shippedCpuPlan());
    split->restoreState(settings.value(QStringLiteral("sweep/splitter")).toByteArray());
    connect(split, &QSplitter::splitterMoved, this,
            [split] { QSettings().setValue(QStringLiteral("sweep/splitter"), split->saveState()); });
    if (state->localGpusKnown())
        followGpus();
    loadRuns();
}

SweepPage::~SweepPage() {
    QSettings settings;
    settings.setValue(QStringLiteral("sweep/backend"), m_backend->currentText());
    settings.setValue(QStringLiteral("sweep/python"), m_python->text());
    settings.setValue(QStringLiteral("sweep/workersPerGpu"), m_workers->value());
    settings.setValue(QStringLiteral("sweep/gpus"), m_gpus->text());
    settings.setValue(QStringLiteral("sweep/slurmShards"), m_shards->value());
    settings.setValue(QStringLiteral("sweep/slurmPartition"), m_partition->text());
    settings.setValue(QStringLiteral("sweep/slurmTime"), m_timeLimit->text());
    settings.setValue(QStringLiteral("sweep/database"), m_database);
    settings.setValue(QStringLiteral("sweep/planPath"), m_planPath);
}

QWidget *SweepPage::planEditor() {
    auto *box = new QWidget(this);
    m_planFile = new QLabel(box);
    m_planFile->setObjectName(QStringLiteral("planFile"));
    auto *open = new QPushButton(tr("Open plan…"), box);
    open->setToolTip(tr("Ctrl+Shift+O"));
    auto *save = new QPushButton(tr("Save plan"), box);
    save->setToolTip(tr("Ctrl+S"));
    auto *saveAs = new QPushButton(tr("Save as…"), box);
    m_plan = new QPlainTextEdit(box);
    m_plan->setObjectName(QStringLiteral("planJson"));
    m_plan->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_plan->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_estimate = new QLabel(box);
    m_estimate->setObjectName(QStringLiteral("planEstimate"));
    m_estimate->setWordWrap(true);
    m_estimate->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto *bar = new QHBoxLayout;
    bar->addWidget(m_planFile, 1);
    bar->addWidget(open);
    bar->addWidget(save);
    bar->addWidget(saveAs);
    auto *layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(bar);
    layout->addWidget(m_plan, 1);
    layout->addWidget(m_estimate);
    connect(open, &QPushButton::clicked, this, &SweepPage::choosePlanToOpen);
    connect(save, &QPushButton::clicked, this, [this] { savePlan(false); });
    connect(saveAs, &QPushButton::clicked, this, [this] { savePlan(true); });
    connect(m_plan, &QPlainTextEdit::textChanged, this, &SweepPage::scheduleEstimate);
    return box;
}

QWidget *SweepPage::runPanel() {
    auto *box = new QWidget(this);
    m_runUi->setupUi(box);
    // The rest of the page names the panel's widgets by these members.
    m_error = m_runUi->sweepError;
    m_backend = m_runUi->backend;
    m_python = m_runUi->python;
    m_workers = m_runUi->workersPerGpu;
    m_gpus = m_runUi->gpus;
    m_onSlurm = m_runUi->slurmSubmit;
    m_shards = m_runUi->slurmShards;
    m_partition = m_runUi->slurmPartition;
    m_timeLimit = m_runUi->slurmTime;
    m_slurmState = m_runUi->slurmState;
    m_databaseLabel = m_runUi->targetDatabase;
    m_run = m_runUi->runSweep;
    m_resume = m_runUi->resumeSweep;
    m_cancel = m_runUi->cancelSweep;
    m_progress = m_runUi->sweepProgress;
    m_status = m_runUi->sweepStatus;
    m_results = m_runUi->results;
    m_plot = m_runUi->throughputPlot;
    m_compare = m_runUi->compareRun;

    m_error->hide();
    m_workers->setRange(diode::SweepSession::kAutoWorkers, diode::SweepSession::kMaxWorkersPerGpu);
    const QString sbatch = SlurmJobs::sbatch();
    m_onSlurm->setEnabled(!sbatch.isEmpty());
    m_onSlurm->setToolTip(
        sbatch.isEmpty() ? tr("sbatch is not on the PATH: this machine cannot submit to Slurm")
                         : tr("Run submits the plan to Slurm (%1) as an array job, one task a shard, each "
                              "task one GPU, and a merge job after it into the database; Resume submits "
                              "the unfinished shards again")
                               .arg(sbatch));
    m_runUi->failedView->setModel(m_failed);
    addTableExport(m_runUi->failedView, QStringLiteral("failed-problems"));
    connect(m_compare, &QComboBox::currentIndexChanged, this, &SweepPage::drawOverlay);

    // The interpreter, workers and GPUs are the inductor backend's (the cpu backend has none);
    // Slurm's fields matter only when it is on, and there the GPUs are the ones Slurm gives.
    const auto fieldsFollow = [this] {
        const bool inductor = m_backend->currentText() == QLatin1String("inductor");
        const bool slurm = m_onSlurm->isChecked();
        m_python->setEnabled(inductor);
        m_workers->setEnabled(inductor);
        m_gpus->setEnabled(inductor && !slurm);
        for (QWidget *w : {static_cast<QWidget *>(m_shards), static_cast<QWidget *>(m_partition),
                           static_cast<QWidget *>(m_timeLimit)})
            w->setEnabled(slurm);
    };
    connect(m_backend, &QComboBox::currentIndexChanged, this, [this, fieldsFollow] {
        fieldsFollow();
        scheduleEstimate();
    });
    connect(m_onSlurm, &QCheckBox::toggled, this, fieldsFollow);
    fieldsFollow();
    connect(m_slurmJobs, &SlurmJobs::submitted, this, [this](const QStringList &lines) {
        m_status->setText(tr("Submitted to Slurm; following its shards every few seconds."));
        m_slurmState->setPlainText(lines.join(QLatin1Char('\n')));
        m_results->setCurrentWidget(m_slurmState);
    });
    connect(m_slurmJobs, &SlurmJobs::failed, this, [this](const QString &message) {
        showError(message);
        sweepEnded(tr("Slurm sweep not followed any further."));
    });
    connect(m_slurmJobs, &SlurmJobs::states, this, &SweepPage::showSlurmStates);
    connect(m_runUi->chooseDatabase, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Database for sweeps"), m_database,
                                                          tr("Diode databases (*.db)"), nullptr,
                                                          QFileDialog::DontConfirmOverwrite);
        if (!path.isEmpty())
            setTargetDatabase(path);
    });
    connect(m_run, &QPushButton::clicked, this, &SweepPage::run);
    connect(m_resume, &QPushButton::clicked, this, &SweepPage::resume);
    connect(m_cancel, &QPushButton::clicked, this, &SweepPage::cancel);
    return box;
}

void SweepPage::setTargetDatabase(const QString &path) {
    m_database = path;
    m_databaseLabel->setText(path.isEmpty() ? tr("Writes to: (chosen when you run)")
                                            : tr("Writes to: %1").arg(QFileInfo(path).fileName()));
    m_databaseLabel->setToolTip(path);
}

void SweepPage::setBackend(const QString &backend) {
    m_backend->setCurrentText(backend);
}

void SweepPage::setWorkers(int perGpu, const QString &gpus) {
    m_workers->setValue(perGpu);
    m_gpus->setText(gpus);
}

void SweepPage::setPlanText(const QString &text, const QString &planDir) {
    m_planDir = planDir;
    m_planPath.clear();
    m_planFile->setText(tr("Plan: (unsaved)"));
    m_plan->setPlainText(text);
    try {
        m_form->showSettings(json::parse(text.toStdString()));
    } catch (const json::exception &) {
        // The estimate line names the parse error.
    }
    scheduleEstimate();
}

bool SweepPage::openPlan(const QString &path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        showError(tr("Cannot open plan %1: %2").arg(path, f.errorString()));
        return false;
    }
    setPlanText(QString::fromUtf8(f.readAll()), QFileInfo(path).absolutePath());
    m_planPath = QFileInfo(path).absoluteFilePath();
    m_planFile->setText(tr("Plan: %1").arg(QFileInfo(path).fileName()));
    m_planFile->setToolTip(m_planPath);
    return true;
}

void SweepPage::choosePlanToOpen() {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open sweep plan"), m_planDir, tr("Sweep plans (*.json)"));
    if (!path.isEmpty())
        openPlan(path);
}

bool SweepPage::savePlan(bool askForPath) {
    QString path = m_planPath;
    // Never overwrite a shipped plan without asking.
    if (askForPath || path.isEmpty() || path.startsWith(resourcesDir()))
        path = QFileDialog::getSaveFileName(this, tr("Save sweep plan"),
                                            QDir::homePath() + QStringLiteral("/plan.json"),
                                            tr("Sweep plans (*.json)"));
    if (path.isEmpty())
        return false;
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(m_plan->toPlainText().toUtf8()) < 0) {
        showError(tr("Cannot save plan %1: %2").arg(path, f.errorString()));
        return false;
    }
    m_planPath = QFileInfo(path).absoluteFilePath();
    m_planFile->setText(tr("Plan: %1").arg(QFileInfo(path).fileName()));
    m_planDir =
        QFileInfo(path).absolutePath(); // note: relative shape-set paths were written for the old folder
    return true;
}

void SweepPage::addEntry() {
    json plan;
    try {
        plan = json::parse(m_plan->toPlainText().toStdString());
    } catch (const json::exception &) {
        plan = json::object();
    }
    if (!plan.is_object())
        plan = json::object();
    try {
        json entry = m_form->entry(m_planDir);
        m_form->applySettings(plan);
        plan["entries"].push_back(std::move(entry));
    } catch (const std::exception &e) {
        showError(tr("Entry not added: %1").arg(QString::fromStdString(e.what())));
        return;
    }
    m_error->hide();
    m_plan->setPlainText(QString::fromStdString(plan.dump(2)));
}

void SweepPage::newPlan() {
    json plan = json::object();
    try {
        m_form->applySettings(plan);
    } catch (const std::exception &e) {
        showError(QString::fromStdString(e.what()));
        return;
    }
    m_planPath.clear();
    m_planFile->setText(tr("Plan: (unsaved)"));
    m_planDir = resourcesDir() + QStringLiteral("/plans");
    m_plan->setPlainText(QString::fromStdString(plan.dump(2)));
}

void SweepPage::settingsToPlan() {
    json plan;
    try {
        plan = json::parse(m_plan->toPlainText().toStdString());
        if (!plan.is_object())
            return;
        m_form->applySettings(plan);
    } catch (const std::exception &) {
        return; // an invalid setting or plan: the estimate line says what is wrong
    }
    const QString text = QString::fromStdString(plan.dump(2));
    if (text != m_plan->toPlainText())
        m_plan->setPlainText(text);
}

void SweepPage::scheduleEstimate() {
    m_planValid = false;
    m_run->setEnabled(false);
    m_estimate->setText(tr("Counting problems…"));
    // An estimate of the previous text still under way would otherwise arrive after this change,
    // show the old plan's count and enable Run for it.
    m_estimator->cancel();
    m_estimateDelay->start();
}

void SweepPage::showEstimate(const PlanEstimate &e) {
    m_planValid = e.error.isEmpty();
    m_run->setEnabled(m_planValid && !m_worker->isRunning());
    m_planProblems = m_planValid ? e.problems : 0;
    if (!m_worker->isRunning() && m_resultDatabase.isEmpty()) // before a run: the plan's problems
        resetProgress();
    if (!m_planValid) {
        m_estimate->setStyleSheet(QStringLiteral("QLabel { color: #c0392b; }"));
        m_estimate->setText(e.error);
    } else {
        m_estimate->setStyleSheet(QString());
        m_estimate->setText(
            tr("<b>%L1 problems</b> × %2 configs; estimated <b>%3</b> on the %4 backend. Based on %5.")
                .arg(e.problems)
                .arg(e.choicesPerProblem)
                .arg(duration(e.seconds), m_backend->currentText(), e.basis.toHtmlEscaped()));
    }
    emit estimateShown(e);
}

bool SweepPage::ensureDatabase() {
    if (m_database.isEmpty() && !m_state->databasePath().isEmpty() && !m_state->databaseReadOnly())
        setTargetDatabase(m_state->databasePath());
    if (!m_database.isEmpty() && !(m_database == m_state->databasePath() && m_state->databaseReadOnly()))
        return true;
    // The open database is the shipped, read-only dataset: sweeps go to a new file.
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
    QDir().mkpath(dir);
    const QString path = QFileDialog::getSaveFileName(
        this, tr("The open database is read-only: choose a database for this sweep"),
        dir + QStringLiteral("/sweeps.db"), tr("Diode databases (*.db)"), nullptr,
        QFileDialog::DontConfirmOverwrite);
    if (path.isEmpty()) {
        showError(tr("Sweep not started: it needs a writable database."));
        return false;
    }
    setTargetDatabase(path);
    return true;
}

void SweepPage::run() {
    if (!m_planValid || m_worker->isRunning() || m_slurmJobs->following())
        return;
    if (onSlurm())
        return startOnSlurm(false);
    start(false);
}

void SweepPage::resume() {
    if (m_worker->isRunning() || m_slurmJobs->following())
        return;
    if (onSlurm())
        return startOnSlurm(true);
    start(true);
}

bool SweepPage::onSlurm() const {
    return m_onSlurm->isChecked() && m_onSlurm->isEnabled(); // checked where sbatch is on the PATH
}

void SweepPage::setSlurm(bool on, int shards, const QString &partition, const QString &timeLimit) {
    m_onSlurm->setChecked(on);
    m_shards->setValue(shards);
    m_partition->setText(partition);
    m_timeLimit->setText(timeLimit);
}

// The plan as `diode sweep --slurm` submits it (core/sweep/diode/sweep/slurmsweep.h): the shards' stores,
// scripts and logs in DATABASE.shards/, the merge into the database.
void SweepPage::startOnSlurm(bool resume) {
    m_error->hide();
    if (!ensureDatabase())
        return;
    const QString bin = diodeBinary();
    if (bin.isEmpty())
        return showError(tr("The diode command line is not next to the workbench (%1): Slurm's tasks run it.")
                             .arg(QCoreApplication::applicationDirPath()));
    m_resultDatabase = m_database;
    m_run->setEnabled(false);
    m_resume->setEnabled(false);
    m_cancel->setEnabled(true);
    m_progress->setRange(0, 0);
    if (resume) {
        m_status->setText(tr("Submitting the unfinished shards of %1 again…").arg(m_database));
        m_slurmJobs->resubmit(m_database);
        return;
    }
    diode::SlurmSweep::Request r;
    try {
        r.plan = diode::SweepPlan::parse(m_plan->toPlainText().toStdString(), m_planDir.toStdString());
    } catch (const std::exception &e) {
        showError(QString::fromUtf8(e.what()));
        return sweepEnded(tr("Nothing submitted."));
    }
    r.db = m_database.toStdString();
    r.backend = m_backend->currentText().toStdString();
    r.shards = m_shards->value();
    r.python = m_python->text().trimmed().toStdString();
    if (r.backend == "inductor")
        r.workersPerGpu = m_workers->value();
    r.slurm.partition = m_partition->text().trimmed().toStdString();
    r.slurm.timeLimit = m_timeLimit->text().trimmed().toStdString();
    r.slurm.diode = bin.toStdString();
    m_status->setText(tr("Submitting %1 shards to Slurm…").arg(r.shards));
    m_slurmJobs->submit(std::move(r));
}

void SweepPage::showSlurmStates(const QStringList &rows, const QStringList &notes, int finished, int shards,
                                bool merged) {
    m_progress->setFormat(tr("%v / %m shards"));
    m_progress->setRange(0, shards);
    m_progress->setValue(finished);
    m_progress->setTextVisible(true);
    m_slurmState->setPlainText((rows + notes).join(QLatin1Char('\n')));
    if (!merged) {
        m_status->setText(tr("Slurm sweep into %1: %2 of %3 shards finished; the merge runs after them.")
                              .arg(m_resultDatabase)
                              .arg(finished)
                              .arg(shards));
        return;
    }
    if (m_state->databasePath() != m_resultDatabase)
        m_state->setDatabase(m_resultDatabase, false);
    m_state->notifyDataChanged();
    sweepEnded(tr("Slurm sweep merged into %1: %2 shards.").arg(m_resultDatabase).arg(shards));
}

// A run of another backend, GPU or timing method would be trained on and scored against as if it
// were the database's own data: added only when the user says it belongs there.
void SweepPage::confirmMixing(const QString &message) {
    sweepEnded(tr("Sweep not started: nothing was written."));
    auto *box =
        new QMessageBox(QMessageBox::Question, tr("Mix data in one database?"),
                        message + tr(".\n\nSweep into another database, or add this run here anyway?"),
                        QMessageBox::Cancel, this);
    box->setObjectName(QStringLiteral("mixedDataDialog"));
    box->addButton(tr("Add anyway"), QMessageBox::AcceptRole);
    box->setAttribute(Qt::WA_DeleteOnClose);
    // Not modal: a dialog's own event loop would hold back everything queued behind it.
    connect(box, &QMessageBox::buttonClicked, this, [this, box](QAbstractButton *b) {
        if (box->buttonRole(b) == QMessageBox::AcceptRole && !m_worker->isRunning())
            start(false, true);
        else
            showError(tr("Sweep not started: it would mix data in %1.").arg(m_database));
    });
    box->open();
}

void SweepPage::start(bool resume, bool allowMixedData) {
    m_error->hide();
    if (!ensureDatabase())
        return;
    SweepRequest r;
    r.database = m_database;
    r.backend = m_backend->currentText();
    r.python = m_python->text().trimmed();
    if (r.backend == QLatin1String("inductor")) {
        r.workersPerGpu = m_workers->value();
        r.gpus = m_gpus->text().trimmed();
    }
    r.planJson = m_plan->toPlainText().toUtf8();
    r.planDir = m_planDir;
    r.resume = resume;
    r.allowMixedData = allowMixedData;
    m_resultDatabase = m_database;
    m_failed->clear();
    m_results->setTabText(1, tr("Failed problems (0)"));
    m_plot->clear(tr("Measuring: each problem's best FLOP rate appears here as it finishes."));
    m_progress->setRange(0, 0); // busy until the run's size is known
    m_progress->setFormat(tr("%v / %m problems"));
    m_status->setText(resume ? tr("Resuming the newest unfinished run of %1…").arg(m_database)
                             : tr("Starting the %1 backend…").arg(r.backend));
    if (!m_worker->start(r))
        return;
    m_run->setEnabled(false);
    m_resume->setEnabled(false);
    m_cancel->setEnabled(true);
}

void SweepPage::cancel() {
    if (m_slurmJobs->following()) {
        m_slurmJobs->stop();
        return sweepEnded(tr("Stopped following the Slurm sweep; its jobs stay queued (scancel cancels them, "
                             "diode sweep --status --db %1 shows them).")
                              .arg(m_resultDatabase));
    }
    if (!m_worker->isRunning())
        return;
    m_worker->cancel();
    m_status->setText(tr("Cancelling after the current configuration…"));
}

void SweepPage::showStatus(const SweepStatus &s) {
    m_progress->setRange(0, int(s.total));
    m_progress->setValue(int(s.done));
    QString text = tr("Run %1: %2 of %3 problems, %4 failed, %5 measurements this session; %6 problems/min")
                       .arg(s.runId)
                       .arg(s.done)
                       .arg(s.total)
                       .arg(s.failed)
                       .arg(s.measurements)
                       .arg(s.problemsPerS * 60, 0, 'f', 1);
    if (s.etaS > 0)
        text += tr("; ETA %1").arg(duration(s.etaS));
    if (!s.current.isEmpty())
        text += tr("; measuring %1").arg(s.current);
    m_status->setText(text);
}

void SweepPage::sweepEnded(const QString &text) {
    m_status->setText(text);
    if (m_progress->maximum() == 0) // no run started: the plan's count again, not "0 / 1"
        resetProgress();
    m_run->setEnabled(m_planValid);
    m_resume->setEnabled(true);
    m_cancel->setEnabled(false);
    m_state->notifyDataChanged();
}

void SweepPage::clearResult(const QString &openDatabase) {
    m_resultDatabase.clear();
    m_plotRunId = 0;
    m_failed->clear();
    m_results->setTabText(1, tr("Failed problems (0)"));
    m_plot->clear(tr("%1 is open: a sweep run here shows each problem's best FLOP rate as it finishes.")
                      .arg(QFileInfo(openDatabase).fileName()));
    resetProgress();
    m_status->setText(tr("No sweep running."));
    m_error->hide();
}

// Before a run, and after one that never started, the bar counts the plan's problems.
void SweepPage::resetProgress() {
    m_progress->setFormat(tr("%v / %m problems"));
    m_progress->setRange(0, m_planProblems > 0 ? int(std::min<qint64>(m_planProblems, INT_MAX)) : 1);
    m_progress->setValue(0);
    m_progress->setTextVisible(m_planProblems > 0);
}

void SweepPage::followGpus() {
    auto *items = qobject_cast<QStandardItemModel *>(m_backend->model());
    QStandardItem *inductor = items ? items->item(m_backend->findText(QStringLiteral("inductor"))) : nullptr;
    if (!inductor)
        return;
    const bool gpu = !m_state->localGpus().isEmpty();
    inductor->setEnabled(gpu);
    inductor->setToolTip(gpu ? QString()
                             : tr("No GPU on this machine (the Hardware page): the inductor backend "
                                  "needs one"));
    if (!gpu && m_backend->currentText() == QLatin1String("inductor") && !m_worker->isRunning()) {
        m_backend->setCurrentText(QStringLiteral("cpu"));
        m_status->setText(
            tr("No GPU on this machine: the cpu backend is chosen (the inductor backend needs a "
               "GPU)."));
    }
}

void SweepPage::loadRuns() {
    const QString db = m_state->databasePath();
    m_runs = DataAnalysis{};
    m_plot->setOverlay(QString(), {});
    const QSignalBlocker quiet(m_compare);
    m_compare->clear();
    if (db.isEmpty()) {
        m_compare->addItem(tr("no database open"));
        return;
    }
    m_compare->addItem(tr("reading the runs of %1…").arg(QFileInfo(db).fileName()));
    m_runsLoader->load(db, std::nullopt);
}

void SweepPage::showRuns(const DataAnalysis &a) {
    if (a.path != m_state->databasePath())
        return;
    m_runs = a;
    {
        const QSignalBlocker quiet(m_compare);
        m_compare->clear();
        m_compare->addItem(tr("no earlier run"), QVariant());
        for (const auto &r : a.runs) {
            int problems = 0;
            for (const auto &b : a.best)
                problems += b.runId == r.id;
            m_compare->addItem(tr("run %1: %2 %3, %4 problems (%5)")
                                   .arg(r.id)
                                   .arg(QString::fromStdString(r.backend), QString::fromStdString(r.planName))
                                   .arg(problems)
                                   .arg(QString::fromStdString(r.gpuName.empty() ? r.host : r.gpuName)),
                               QVariant::fromValue(qint64(r.id)));
        }
        // The newest run other than the one under way (or just finished) here: the one to beat.
        int pick = 0;
        for (int i = m_compare->count() - 1; i > 0; --i)
            if (m_compare->itemData(i).toLongLong() != m_plotRunId) {
                pick = i;
                break;
            }
        m_compare->setCurrentIndex(pick);
    }
    drawOverlay();
    emit ready();
}

void SweepPage::drawOverlay() {
    const QVariant id = m_compare->currentData();
    std::vector<diode::ProblemBest> best;
    if (id.isValid())
        for (const auto &b : m_runs.best)
            if (b.runId == id.toLongLong())
                best.push_back(b);
    m_plot->setOverlay(id.isValid()
                           ? tr("run %1 of %2").arg(id.toLongLong()).arg(QFileInfo(m_runs.path).fileName())
                           : QString(),
                       best);
}

void SweepPage::showError(const QString &message) {
    m_error->setText(message);
    m_error->show();
}
