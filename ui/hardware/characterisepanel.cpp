#include "hardware/characterisepanel.h"

#include "common/shippedfile.h"

#include "diode/characterise.h"
#include "diode/config.h"
#include "diode/shippeddata.h"
#include "diode/sweepsession.h"
#if DIODE_HAVE_TORCH
#include "characterisejob.h"
#endif

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
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
#include <QStandardPaths>
#include <QTableWidget>
#include <QVBoxLayout>

namespace {

QString fileStem(const QString &gpu) {
    QString s = gpu.toLower();
    s.replace(QRegularExpression(QStringLiteral("[^a-z0-9]+")), QStringLiteral("-"));
    return s.isEmpty() ? QStringLiteral("this-gpu") : s;
}

QString efficiency(double v) {
    return v < 0 ? QObject::tr("n/a") : QString::number(v, 'f', 4);
}

} // namespace

CharacterisePanel::CharacterisePanel(QWidget *parent)
    : QWidget(parent)
    , m_worker(new CharacteriseWorker(this))
    , m_backend(new QComboBox(this))
    , m_package(new QLineEdit(this))
    , m_pool(new QLineEdit(this))
    , m_database(new QLineEdit(this))
    , m_out(new QLineEdit(this))
    , m_python(new QLineEdit(this))
    , m_count(new QSpinBox(this))
    , m_deadline(new QSpinBox(this))
    , m_workers(new QSpinBox(this))
    , m_epochs(new QSpinBox(this))
    , m_install(new QCheckBox(tr("install a better package for the plugin"), this))
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
    m_pool->setText(shippedFile(diode::shipped::kDataset));
    m_pool->setToolTip(
        tr("The problems to choose from: a store (the shipped H200 data carries its candidates), "
           "problem lines, or a cpu plan"));
    m_database->setObjectName(QStringLiteral("characteriseDatabase"));
    m_out->setObjectName(QStringLiteral("characteriseOut"));
    m_python->setPlaceholderText(tr("python3 ($DIODE_PYTHON)"));
    m_count->setObjectName(QStringLiteral("characteriseCount"));
    m_count->setRange(10, 100000);
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
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_progress->setObjectName(QStringLiteral("characteriseProgress"));
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    m_cancel->setEnabled(false);

    auto *form = new QFormLayout;
    form->addRow(tr("Backend"), m_backend);
    form->addRow(tr("Start package"), m_package);
    form->addRow(tr("Pool"), m_pool);
    form->addRow(tr("Sweep database"), m_database);
    form->addRow(tr("New package"), m_out);
    form->addRow(tr("Worker Python"), m_python);
    auto *budget = new QHBoxLayout;
    budget->addWidget(m_count);
    budget->addWidget(m_deadline);
    budget->addWidget(m_workers);
    budget->addWidget(m_epochs);
    form->addRow(tr("Budget"), budget);
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

    QString why;
    if (!CharacteriseWorker::available(&why)) {
        m_run->setEnabled(false);
        m_run->setToolTip(why);
        m_status->setText(why);
    }
    const auto backendFields = [this] {
        const bool inductor = m_backend->currentText() == QLatin1String("inductor");
        m_python->setEnabled(inductor);
        m_workers->setEnabled(inductor);
        m_package->setPlaceholderText(inductor ? tr("the plugin's package for this GPU, else the nearest")
                                               : tr("a cpu model (diode train on a cpu sweep)"));
    };
    connect(m_backend, &QComboBox::currentIndexChanged, this, backendFields);
    backendFields();
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
    connect(m_worker, &CharacteriseWorker::failed, this, &CharacterisePanel::fail);
    connect(m_worker, &CharacteriseWorker::finished, this, [this] {
        setRunning(false);
        emit ended();
    });
    setGpu(QString(), 0);
}

void CharacterisePanel::setGpu(const QString &name, int smCount) {
    m_gpu = name;
    m_smCount = smCount;
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
    m_database->setText(dir + QStringLiteral("/characterise-%1.db").arg(fileStem(name)));
    m_out->setText(dir + QStringLiteral("/%1-characterised.diode").arg(fileStem(name)));
    const auto start = diode::nearestStartPackage(name.toStdString(), smCount);
    m_start->setText(name.isEmpty() ? tr("No GPU found: the inductor backend needs one; the cpu backend "
                                         "characterises this CPU from a cpu model.")
                                    : tr("Start: %1").arg(QString::fromStdString(start.why)));
}

void CharacterisePanel::setBackend(const QString &backend) {
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
#if DIODE_HAVE_TORCH
    diode::CharacteriseRequest r;
    r.backend = m_backend->currentText().toStdString();
    r.package = m_package->text().trimmed().toStdString();
    if (r.package.empty()) {
        if (r.backend == "cpu")
            return fail(tr("The cpu backend has no GPU to find a package for: name the start package (a cpu "
                           "model, from diode train on a cpu sweep)."));
        const auto start = diode::nearestStartPackage(m_gpu.toStdString(), m_smCount);
        if (start.path.empty())
            return fail(QString::fromStdString(start.why));
        r.package = start.path;
    }
    r.pool = m_pool->text().trimmed().toStdString();
    r.db = m_database->text().trimmed().toStdString();
    r.out = m_out->text().trimmed().toStdString();
    r.python = m_python->text().trimmed().toStdString();
    if (r.pool.empty() || r.db.empty() || r.out.empty())
        return fail(tr("Name the pool, the sweep database and the new package."));
    QDir().mkpath(QFileInfo(m_database->text()).absolutePath());
    r.selection.count = size_t(m_count->value());
    r.deadlineS = m_deadline->value() * 60.0;
    if (r.backend == "inductor")
        r.workersPerGpu = m_workers->value();
    if (m_epochs->value() > 0)
        r.train.epochs = m_epochs->value();
    r.train.learningRate = 3e-4; // fine-tuning starts from a trained network, as diode characterise does
    r.install = m_install->isChecked();
    setRunning(true);
    m_status->setText(tr("Choosing the problems…"));
    m_worker->start(r);
#else
    QString why;
    CharacteriseWorker::available(&why);
    fail(why);
#endif
}

void CharacterisePanel::cancel() {
    m_worker->cancel();
}

void CharacterisePanel::setRunning(bool running) {
    m_run->setEnabled(!running && CharacteriseWorker::available());
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
    m_status->setText(tr("Sweep %1; trained on %2 problems measured here; held out: %3.")
                          .arg(o.sweepStatus)
                          .arg(o.trainingProblems)
                          .arg(o.heldOutSource));
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
