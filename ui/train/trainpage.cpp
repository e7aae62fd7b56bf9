#include "train/trainpage.h"

#include "common/exportactions.h"
#include "common/metricsmodel.h"
#include "common/modellist.h"
#include "common/schemanames.h"
#include "common/timingmethodbox.h"
#include "common/trainingavailable.h"
#include "common/workbenchstate.h"
#include "diode/analysis/wording.h"
#include "train/trainingcurves.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardPaths>
#include <QTableView>
#include <QVBoxLayout>

namespace {

QSpinBox *spin(int lo, int hi, int value, QWidget *parent) {
    auto *s = new QSpinBox(parent);
    s->setRange(lo, hi);
    s->setValue(value);
    return s;
}

QDoubleSpinBox *dspin(double lo, double hi, double value, int decimals, double step, QWidget *parent) {
    auto *s = new QDoubleSpinBox(parent);
    s->setRange(lo, hi);
    s->setDecimals(decimals);
    s->setSingleStep(step);
    s->setValue(value);
    return s;
}

} // namespace

TrainPage::TrainPage(WorkbenchState *state, QWidget *parent)
    : QWidget(parent)
    , m_state(state)
    , m_models(ModelList::of(state))
    , m_worker(new TrainWorker(this))
    , m_database(new QLabel(this))
    , m_status(new QLabel(this))
    , m_error(new QLabel(this))
    , m_out(new QLineEdit(this))
    , m_store(new QCheckBox(tr("Store predictions in the database"), this))
    , m_method(new TimingMethodBox(this))
    , m_train(new QPushButton(tr("&Train"), this))
    , m_cancel(new QPushButton(tr("Cancel"), this))
    , m_progress(new QProgressBar(this))
    , m_compare(new QComboBox(this))
    , m_curves(new TrainingCurves(this))
    , m_modelView(new QTableView(this)) {
    setObjectName(QStringLiteral("trainPage"));
    const diode::TrainOptions d;
    QSettings s;
    s.beginGroup(QStringLiteral("train"));
    m_epochs = spin(1, 100000, s.value("epochs", d.epochs).toInt(), this);
    m_patience = spin(1, 100000, s.value("patience", d.patience).toInt(), this);
    m_seed = spin(0, 1 << 30, s.value("seed", int(d.seed)).toInt(), this);
    m_hidden = spin(4, 1024, s.value("hidden", d.hidden).toInt(), this);
    m_members = spin(1, 64, s.value("members", d.members).toInt(), this);
    m_batch = spin(0, 100000, s.value("batchProblems", d.batchProblems).toInt(), this);
    m_batch->setSpecialValueText(tr("all (full batch)"));
    m_epochs->setObjectName(QStringLiteral("epochs"));
    m_patience->setObjectName(QStringLiteral("patience"));
    m_members->setObjectName(QStringLiteral("members"));
    m_listWeight = dspin(0, 100, s.value("listWeight", d.listWeight).toDouble(), 3, 0.1, this);
    m_lr = dspin(1e-5, 1, s.value("lr", d.learningRate).toDouble(), 5, 1e-4, this);
    m_rankWeight = dspin(0, 100, s.value("rankWeight", d.rankWeight).toDouble(), 3, 0.1, this);
    m_weightDecay = dspin(0, 1, s.value("weightDecay", d.weightDecay).toDouble(), 6, 1e-5, this);
    m_valFraction = dspin(0.05, 0.4, s.value("valFraction", d.validationFraction).toDouble(), 2, 0.05, this);
    m_testFraction = dspin(0.05, 0.4, s.value("testFraction", d.testFraction).toDouble(), 2, 0.05, this);
    const QStringList ops = s.value("ops", opNameList()).toStringList();
    const QStringList dtypes = s.value("dtypes", dtypeNameList()).toStringList();
    m_method->setSettingsValue(s.value("method").toString());
    s.endGroup();

    auto *data = new QGroupBox(tr("Data"), this);
    auto *df = new QFormLayout(data);
    m_database->setWordWrap(true);
    df->addRow(tr("Database"), m_database);
    // Three a row: the four ops in one row were cut ("baddbm…") in the 380 px panel.
    auto checks = [this](const QStringList &names, const QStringList &on, QList<QCheckBox *> &out) {
        auto *grid = new QGridLayout;
        for (int i = 0; i < names.size(); ++i) {
            auto *c = new QCheckBox(names[i], this);
            c->setChecked(on.contains(names[i]));
            out << c;
            grid->addWidget(c, i / 3, i % 3);
        }
        return grid;
    };
    df->addRow(tr("Ops"), checks(opNameList(), ops, m_ops));
    df->addRow(tr("Dtypes"), checks(dtypeNameList(), dtypes, m_dtypes));
    df->addRow(tr("Times"), m_method);
    df->addRow(m_store);

    auto *hp = new QGroupBox(tr("Hyper-parameters"), this);
    auto *hf = new QFormLayout(hp);
    hf->addRow(tr("Most epochs"), m_epochs);
    hf->addRow(tr("Patience (epochs)"), m_patience);
    hf->addRow(tr("Ensemble members"), m_members);
    hf->addRow(tr("Hidden width"), m_hidden);
    hf->addRow(tr("Problems per step"), m_batch);
    hf->addRow(tr("Learning rate"), m_lr);
    hf->addRow(tr("Pairwise ranking weight"), m_rankWeight);
    hf->addRow(tr("Listwise ranking weight"), m_listWeight);
    hf->addRow(tr("Weight decay"), m_weightDecay);
    hf->addRow(tr("Validation share"), m_valFraction);
    hf->addRow(tr("Test share"), m_testFraction);
    hf->addRow(tr("Seed"), m_seed);

    auto *outBox = new QGroupBox(tr("Package"), this);
    auto *of = new QHBoxLayout(outBox);
    m_out->setPlaceholderText(tr("a new file in the model folder"));
    m_out->setToolTip(tr("The package to write; empty: a new file in the workbench's model folder (%1)")
                          .arg(QFileInfo(defaultOutput()).absolutePath()));
    auto *browse = new QPushButton(tr("…"), this);
    of->addWidget(m_out, 1);
    of->addWidget(browse);

    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_train);
    buttons->addWidget(m_cancel);
    m_train->setToolTip(tr("Train (Ctrl+Return)"));
    m_cancel->setToolTip(tr("Stop after the current epoch, keeping the best network (Esc)"));
    m_cancel->setEnabled(false);
    m_error->setStyleSheet(QStringLiteral("color: #d62728; font-weight: bold"));
    m_error->setWordWrap(true);
    m_error->setObjectName(QStringLiteral("trainError"));
    m_error->hide();
    m_status->setWordWrap(true);
    m_status->setObjectName(QStringLiteral("trainStatus"));
    // Epochs over all networks once a run starts; before that no "0 %" of nothing.
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    m_progress->setTextVisible(false);
    m_progress->setFormat(tr("%v / %m epochs"));

    auto *left = new QWidget(this);
    auto *ll = new QVBoxLayout(left);
    ll->addWidget(data);
    ll->addWidget(hp);
    ll->addWidget(outBox);
    ll->addStretch(1);
    // The form scrolls rather than push the window past 800 px high (twelve hyper-parameters); the
    // buttons, the progress and what the run says stay below it, always in sight.
    auto *leftScroll = new QScrollArea(this);
    leftScroll->setWidget(left);
    leftScroll->setWidgetResizable(true);
    leftScroll->setFrameShape(QFrame::NoFrame);
    leftScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    leftScroll->setMinimumWidth(left->minimumSizeHint().width() +
                                leftScroll->verticalScrollBar()->sizeHint().width());
    leftScroll->setMaximumWidth(400);
    auto *leftColumn = new QWidget(this);
    auto *lc = new QVBoxLayout(leftColumn);
    lc->setContentsMargins(0, 0, 0, 0);
    lc->addWidget(leftScroll, 1);
    lc->addLayout(buttons);
    lc->addWidget(m_progress);
    lc->addWidget(m_status);
    lc->addWidget(m_error);
    leftColumn->setMaximumWidth(400);

    m_modelView->setModel(m_models);
    m_modelView->setObjectName(QStringLiteral("modelList"));
    m_modelView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_modelView->horizontalHeader()->setStretchLastSection(true);
    m_modelView->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_modelView->verticalHeader()->hide();
    m_modelView->setToolTip(tr("Double-click a model to make it the workbench's current model"));
    addTableExport(m_modelView, QStringLiteral("models"));
    addPlotExport(m_curves, QStringLiteral("training-curves"));
    // TensorBoard's overlay of runs: an earlier run of this session under the current one.
    m_compare->setObjectName(QStringLiteral("compareRun"));
    m_compare->setToolTip(
        tr("Draw an earlier training run of this session under the current curves (dashed)"));
    m_compare->addItem(tr("no earlier run"));
    m_compare->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_compare->setMinimumContentsLength(24);
    auto *curvesBox = new QWidget(this);
    auto *cl = new QVBoxLayout(curvesBox);
    cl->setContentsMargins(0, 0, 0, 0);
    auto *compareRow = new QHBoxLayout;
    compareRow->addWidget(new QLabel(tr("Compare with"), this));
    compareRow->addWidget(m_compare, 1);
    cl->addLayout(compareRow);
    cl->addWidget(m_curves, 1);
    connect(m_compare, &QComboBox::currentIndexChanged, this, [this](int i) { compareWith(i - 1); });
    auto *right = new QSplitter(Qt::Vertical, this);
    right->addWidget(curvesBox);
    auto *modelsBox = new QGroupBox(tr("Models"), this);
    auto *ml = new QVBoxLayout(modelsBox);
    ml->addWidget(m_modelView);
    right->addWidget(modelsBox);
    right->setStretchFactor(0, 3);
    right->setStretchFactor(1, 1);
    auto *layout = new QHBoxLayout(this);
    layout->addWidget(leftColumn);
    layout->addWidget(right, 1);

    auto *trainAction = new QAction(tr("Train"), this);
    trainAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return));
    trainAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    addAction(trainAction);
    auto *cancelAction = new QAction(tr("Cancel"), this);
    cancelAction->setShortcut(Qt::Key_Escape);
    cancelAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    addAction(cancelAction);
    connect(trainAction, &QAction::triggered, this, &TrainPage::train);
    connect(cancelAction, &QAction::triggered, this, &TrainPage::cancel);
    connect(m_train, &QPushButton::clicked, this, &TrainPage::train);
    connect(m_cancel, &QPushButton::clicked, this, &TrainPage::cancel);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString p = QFileDialog::getSaveFileName(this, tr("Package to write"), defaultOutput(),
                                                       tr("Diode packages (*.diode)"));
        if (!p.isEmpty())
            m_out->setText(p);
    });
    connect(m_modelView, &QTableView::doubleClicked, this,
            [this](const QModelIndex &i) { m_state->setPackage(m_models->at(i.row()).path); });
    connect(m_worker, &TrainWorker::progress, this, &TrainPage::showProgress);
    connect(m_worker, &TrainWorker::status, m_status, &QLabel::setText);
    connect(m_worker, &TrainWorker::resultReady, this, &TrainPage::showOutcome);
    connect(m_worker, &TrainWorker::failed, this, &TrainPage::fail);
    connect(m_worker, &TrainWorker::finished, this, [this] {
        m_train->setEnabled(true);
        m_cancel->setEnabled(false);
    });
    connect(m_state, &WorkbenchState::databaseChanged, this, &TrainPage::updateDatabase);
    updateDatabase();

    QString why;
    if (!trainingAvailable(&why)) {
        m_train->setEnabled(false);
        trainAction->setEnabled(false);
        m_error->setText(why);
        m_error->show();
        m_curves->clearEpochs(tr("Training is disabled in this build"));
    }
}

TrainPage::~TrainPage() {
    QSettings s;
    s.beginGroup(QStringLiteral("train"));
    const TrainRequest r = request();
    s.setValue("epochs", r.options.epochs);
    s.setValue("patience", r.options.patience);
    s.setValue("seed", int(r.options.seed));
    s.setValue("hidden", r.options.hidden);
    s.setValue("members", r.options.members);
    s.setValue("batchProblems", r.options.batchProblems);
    s.setValue("listWeight", r.options.listWeight);
    s.setValue("lr", r.options.learningRate);
    s.setValue("rankWeight", r.options.rankWeight);
    s.setValue("weightDecay", r.options.weightDecay);
    s.setValue("valFraction", r.options.validationFraction);
    s.setValue("testFraction", r.options.testFraction);
    s.setValue("ops", r.ops);
    s.setValue("dtypes", r.dtypes);
    s.setValue("method", m_method->settingsValue());
}

// Another database: what the page shows of a run on the previous one (its curves, "Wrote …",
// a full bar) is not about this one. The runs stay in "Compare with", named with their database.
void TrainPage::updateDatabase() {
    const QString db = m_state->databasePath();
    if (!m_worker->isRunning()) {
        m_epochLog.clear();
        m_curves->clearEpochs(
            db.isEmpty()
                ? tr("No database open.")
                : tr("%1 is open: Train (Ctrl+Return) draws its loss and validation top-1 here, epoch by "
                     "epoch.")
                      .arg(QFileInfo(db).fileName()));
        m_status->clear();
        m_error->hide();
        m_progress->setRange(0, 1);
        m_progress->setValue(0);
        m_progress->setFormat(tr("%v / %m epochs at most"));
        m_progress->setTextVisible(false);
    }
    m_database->setText(db.isEmpty() ? tr("none open")
                                     : QFileInfo(db).fileName() +
                                           (m_state->databaseReadOnly() ? tr(" (read-only)") : QString()));
    m_database->setToolTip(db);
    m_store->setEnabled(!m_state->databaseReadOnly() && !db.isEmpty());
    m_store->setChecked(m_store->isEnabled());
    if (!m_store->isEnabled())
        m_store->setToolTip(
            tr("The shipped dataset is only read; open a database of your own to keep predictions in it"));
}

QString TrainPage::defaultOutput() const {
    const QString dir =
        QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/models");
    return dir + QStringLiteral("/model-%1.diode")
                     .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")));
}

TrainRequest TrainPage::request() const {
    TrainRequest r;
    r.database = m_state->databasePath();
    r.out = m_out->text().trimmed();
    for (auto *c : m_ops)
        if (c->isChecked())
            r.ops << c->text();
    for (auto *c : m_dtypes)
        if (c->isChecked())
            r.dtypes << c->text();
    r.options.epochs = m_epochs->value();
    r.options.patience = m_patience->value();
    r.options.seed = uint64_t(m_seed->value());
    r.options.hidden = m_hidden->value();
    r.options.members = m_members->value();
    r.options.batchProblems = m_batch->value();
    r.options.listWeight = m_listWeight->value();
    r.options.learningRate = m_lr->value();
    r.options.rankWeight = m_rankWeight->value();
    r.options.weightDecay = m_weightDecay->value();
    r.options.validationFraction = m_valFraction->value();
    r.options.testFraction = m_testFraction->value();
    r.storePredictions = m_store->isEnabled() && m_store->isChecked();
    r.method = m_method->method();
    return r;
}

void TrainPage::setEpochs(int epochs) {
    m_epochs->setValue(epochs);
}

void TrainPage::train() {
    if (m_worker->isRunning())
        return;
    TrainRequest r = request();
    if (r.database.isEmpty())
        return fail(tr("No database is open: open one with File ▸ Open database."));
    if (r.ops.isEmpty() || r.dtypes.isEmpty())
        return fail(tr("Choose at least one op and one dtype to train on."));
    if (r.out.isEmpty())
        r.out = defaultOutput();
    if (!QDir().mkpath(QFileInfo(r.out).absolutePath()))
        return fail(tr("Cannot create the folder of %1.").arg(r.out));
    m_error->hide();
    m_train->setEnabled(false);
    m_cancel->setEnabled(true);
    m_stepsPlanned = r.options.epochs * r.options.members; // early stopping ends sooner
    m_progress->setRange(0, m_stepsPlanned);
    m_progress->setValue(0);
    m_progress->setFormat(tr("%v / %m epochs at most"));
    m_progress->setTextVisible(true);
    m_epochLog.clear();
    m_startedMs = QDateTime::currentMSecsSinceEpoch();
    m_curves->clearEpochs(tr("Training %1").arg(QFileInfo(r.out).fileName()));
    m_worker->start(r);
}

void TrainPage::cancel() {
    m_worker->cancel();
}

// The time left as the epochs so far took it, for every epoch that may still run: early stopping
// can only make it shorter, and the line says so.
void TrainPage::showProgress(const diode::EpochReport &e) {
    m_curves->addEpoch(e);
    m_epochLog << e;
    m_progress->setValue(e.step);
    QString text = tr("Network %1 of %2, epoch %3: loss %4, validation top-1 %5")
                       .arg(e.member + 1)
                       .arg(e.members)
                       .arg(e.epoch)
                       .arg(e.loss, 0, 'f', 5)
                       .arg(e.valTop1, 0, 'f', 4);
    const double elapsed = (QDateTime::currentMSecsSinceEpoch() - m_startedMs) / 1000.0;
    // From the second epoch on: one epoch's time (start-up included) is too rough to extrapolate.
    if (e.step >= 2 && elapsed > 0 && m_stepsPlanned > e.step)
        text += tr("; at most %1 left (early stopping may end it sooner)")
                    .arg(QString::fromStdString(
                        diode::durationText(elapsed / e.step * double(m_stepsPlanned - e.step))));
    m_status->setText(text);
}

QStringList TrainPage::earlierRuns() const {
    QStringList names;
    for (const Run &r : m_runs)
        names << r.name;
    return names;
}

void TrainPage::compareWith(int index) {
    if (index >= 0 && index < m_runs.size())
        m_curves->setOverlay(m_runs[index].name, m_runs[index].epochs);
    else
        m_curves->setOverlay(QString(), {});
    if (m_compare->currentIndex() != index + 1) {
        const QSignalBlocker quiet(m_compare);
        m_compare->setCurrentIndex(index + 1);
    }
}

void TrainPage::fail(const QString &message) {
    m_error->setText(message);
    m_error->show();
    m_status->setText(tr("Training stopped."));
}

void TrainPage::showOutcome(const TrainOutcome &o) {
    m_last = o;
    QString error;
    const int row = m_models->add(o.package, &error);
    if (row < 0)
        return fail(tr("The package was written but cannot be read back: %1").arg(error));
    m_modelView->selectRow(row);
    m_curves->replot(); // the last epochs, not only those of the last throttled repaint
    // What ran, not what was allowed: early stopping ends most runs before the most epochs.
    m_progress->setRange(0, std::max(1, o.epochsRun));
    m_progress->setValue(std::max(1, o.epochsRun));
    m_progress->setFormat(o.epochsRun < m_stepsPlanned
                              ? tr("%1 epochs run of at most %2 (%3)")
                                    .arg(o.epochsRun)
                                    .arg(m_stepsPlanned)
                                    .arg(o.cancelled ? tr("cancelled") : tr("early stopping"))
                              : tr("%1 epochs run").arg(o.epochsRun));
    // The test split is counted in problem lines, as the trainer splits them (wording.h).
    const QString few = QString::fromStdString(diode::fewProblemsWarning(size_t(o.testProblems)));
    m_status->setText(
        tr("%1 %2: %3 network(s), %4 epochs in all, on %5 problem lines (%6) in %7 s. Test "
           "split of %8 problem "
           "lines: top-1 %9 (%10: %11), top-3 %12.%13%14")
            .arg(o.cancelled ? tr("Cancelled; wrote the best network so far to") : tr("Wrote"))
            .arg(QFileInfo(o.package).fileName())
            .arg(o.members)
            .arg(o.epochsRun)
            .arg(o.problems)
            .arg(o.method)
            .arg(o.seconds, 0, 'f', 1)
            .arg(o.testProblems)
            .arg(o.testTop1, 0, 'f', 4)
            .arg(baselineTitle("aten", o.cpuData))
            .arg(o.atenTop1, 0, 'f', 4)
            .arg(o.testTop3, 0, 'f', 4)
            .arg(o.modelId ? tr(" Predictions stored as model %1.").arg(o.modelId) : QString())
            .arg(few.isEmpty() ? QString() : tr(" Warning: %1.").arg(few)) +
        (o.cancelled ? tr(" It stays out of the other pages until you choose it in the list.") : QString()));
    m_runs.append(
        {tr("%1 on %2")
             .arg(QFileInfo(o.package).completeBaseName(), QFileInfo(m_state->databasePath()).fileName()),
         m_epochLog});
    m_compare->addItem(m_runs.last().name);
    // A finished run's package becomes the one every page shows; a cancelled run's is written and
    // listed, but a run the user stopped does not replace the model the other pages judge.
    if (!o.cancelled)
        m_state->setPackage(o.package);
    if (o.modelId)
        m_state->notifyDataChanged();
    emit trained();
}
