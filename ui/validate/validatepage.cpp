#include "validate/validatepage.h"
#include "common/sortabletable.h"

#include "common/configlabel.h"
#include "common/curveplot.h"
#include "common/exportactions.h"
#include "common/metricsmodel.h"
#include "common/modellist.h"
#include "common/plotmessage.h"
#include "common/seriescolours.h"
#include "common/timingmethodbox.h"
#include "common/workbenchstate.h"
#include "ui_validatepage.h"
#include "validate/candidatemodel.h"
#include "validate/decisionpanel.h"
#include "validate/predictionscatter.h"

#include "diode/analysis/wording.h"
#include "diode/infer/shippeddata.h"

#include <QAction>
#include <QComboBox>
#include <QDateTime>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace {

QString problemText(const diode::GemmProblem &p) {
    return QString::fromStdString(p.label());
}

QVector<double> cdfY(size_t n) {
    QVector<double> y;
    for (size_t i = 0; i < n; ++i)
        y << double(i + 1) / double(n);
    return y;
}

// ", held out" or ", incl. training problems": every title says what its numbers are measured on.
QString scopeTag(const ModelValidation &m) {
    if (m.trainedOnShown == 0)
        return QObject::tr(", held out");
    if (m.trainedOnShown > 0)
        return QObject::tr(", incl. %1 training problems").arg(m.trainedOnShown);
    return {};
}

// How much slower than the best candidate a pick of top-1 efficiency e is, in percent; a pick
// within kSlowerFloor (a hit, or a difference below timing noise) sits at the floor.
constexpr double kSlowerFloor = 0.1;
double percentSlower(double efficiency) {
    return std::max(kSlowerFloor, efficiency > 0 ? (1.0 / efficiency - 1.0) * 100.0 : 1e6);
}

// The share of problems whose pick is at most x % slower than the best, x on a log axis: good
// selectors differ by a few percent on few problems, which a linear efficiency axis (0 to 1)
// crushes against 1. `sorted`: top-1 efficiencies, ascending.
Curve cdf(const QString &name, const std::vector<double> &sorted, Qt::PenStyle style, const QColor &colour) {
    QVector<double> x;
    for (auto it = sorted.rbegin(); it != sorted.rend(); ++it)
        x << percentSlower(*it);
    return {name, x, cdfY(sorted.size()), style, colour};
}

} // namespace

ValidatePage::ValidatePage(WorkbenchState *state, QWidget *parent)
    : QWidget(parent)
    , m_state(state)
    , m_models(ModelList::of(state))
    , m_worker(new ValidationWorker(this))
    , m_ui(std::make_unique<Ui::ValidatePage>())
    , m_histogram(new CurvePlot(tr("ln(predicted / measured)"), tr("candidates"), this))
    , m_cdf(new CurvePlot(
          tr("% slower than the best candidate (time of the pick / best time − 1; ≤ %1 %: a hit)")
              .arg(kSlowerFloor),
          tr("share of problems ≤ x"), this))
    , m_metrics(new MetricsModel(this))
    , m_candidates(new CandidateModel(this)) {
    m_ui->setupUi(this);
    // The rest of the page names its widgets by these members.
    m_modelA = m_ui->modelA;
    m_modelB = m_ui->modelB;
    m_problems = m_ui->problemSource;
    m_colourBy = m_ui->colourBy;
    m_method = m_ui->timingMethod;
    m_run = m_ui->runValidation;
    m_cancel = m_ui->cancelValidation;
    m_progress = m_ui->validateProgress;
    m_status = m_ui->validateStatus;
    m_error = m_ui->validateError;
    m_problemTitle = m_ui->validateProblemTitle;
    m_scope = m_ui->validateScope;
    m_split = m_ui->validateSplit;
    m_topSplit = m_ui->validateTopSplit;
    m_scatterA = m_ui->scatterA;
    m_scatterB = m_ui->scatterB;
    m_bottomTabs = m_ui->bottomTabs;
    m_curveTabs = m_ui->curveTabs;

    m_error->hide();
    m_scatterB->hide();
    m_cdf->setFixedYRange(0, 1.02); // a share of problems
    m_cdf->setLogX();               // its legend is below the axes, as every curve plot's (CurvePlot)
    m_cdf->setObjectName(QStringLiteral("efficiencyCdf"));
    m_histogram->setObjectName(QStringLiteral("residualHistogram"));
    // The end bins hold everything beyond ±2 (clamped): a margin keeps them off the border (F8).
    m_histogram->setFixedXRange(-2.4, 2.4);
    // The two tables (makeSortableTable, as every sortable table of the workbench) are made after the
    // .ui's widgets, so that Tab reaches them last, after the tabs and the Package… and Problems… buttons.
    m_metricsView = makeSortableTable(m_metrics, QStringLiteral("validationMetrics"), this);
    m_candidateView = makeSortableTable(m_candidates, QStringLiteral("problemCandidates"), this);
    m_bottomTabs->insertTab(0, m_metricsView, tr("Metrics"));
    m_ui->problemLayout->addWidget(m_candidateView);
    m_decisions = new DecisionPanel(this);
    m_bottomTabs->addTab(m_decisions, tr("Decisions"));
    m_bottomTabs->setTabToolTip(
        m_bottomTabs->indexOf(m_decisions),
        tr("How the kernel-config and small-M form decisions of model A (and B) did held out"));
    placeCurves(false);
    m_split->setStretchFactor(0, 3);
    m_split->setStretchFactor(1, 1);
    addPlotExport(m_scatterA, QStringLiteral("predicted-vs-measured"));
    addPlotExport(m_scatterB, QStringLiteral("predicted-vs-measured-b"));
    addPlotExport(m_histogram, QStringLiteral("residuals"));
    addPlotExport(m_cdf, QStringLiteral("efficiency-cdf"));

    auto *runAction = new QAction(tr("Validate"), this);
    runAction->setShortcuts({QKeySequence(Qt::Key_F5), QKeySequence(Qt::CTRL | Qt::Key_Return)});
    runAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    addAction(runAction);
    auto *cancelAction = new QAction(tr("Cancel"), this);
    cancelAction->setShortcut(Qt::Key_Escape);
    cancelAction->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    addAction(cancelAction);
    connect(runAction, &QAction::triggered, this, &ValidatePage::validate);
    connect(cancelAction, &QAction::triggered, this, &ValidatePage::cancel);
    connect(m_run, &QPushButton::clicked, this, &ValidatePage::validate);
    connect(m_cancel, &QPushButton::clicked, this, &ValidatePage::cancel);
    connect(m_ui->browsePackage, &QPushButton::clicked, this, &ValidatePage::addPackage);
    connect(m_ui->browseProblems, &QPushButton::clicked, this, &ValidatePage::chooseProblemsFile);
    connect(m_colourBy, &QComboBox::currentIndexChanged, this, &ValidatePage::drawScatters);
    // The measured times on screen would be another method's, the predictions another model's.
    for (QComboBox *box : {static_cast<QComboBox *>(m_method), m_modelA, m_modelB, m_problems})
        connect(box, &QComboBox::currentIndexChanged, this, &ValidatePage::inputsChanged);

    connect(m_worker, &ValidationWorker::progress, this, [this](int done, int total) {
        m_progress->setRange(0, total);
        m_progress->setValue(done);
    });
    connect(m_worker, &ValidationWorker::status, m_status, &QLabel::setText);
    connect(m_worker, &ValidationWorker::resultReady, this, &ValidatePage::showResult);
    connect(m_worker, &ValidationWorker::failed, this, &ValidatePage::fail);
    connect(m_worker, &ValidationWorker::finished, this, [this] {
        m_run->setEnabled(true);
        m_cancel->setEnabled(false);
        if (m_progress->maximum() == 0)
            m_progress->setRange(0, 1);
    });
    for (auto *s : {m_scatterA, m_scatterB}) {
        connect(s, &PredictionScatter::pointHovered, this, &ValidatePage::showHover);
        connect(s, &PredictionScatter::pointClicked, this, &ValidatePage::openCandidate);
    }

    auto refreshSources = [this] {
        const QString current = m_problems->currentData().toString();
        const QString db = QFileInfo(m_state->databasePath()).fileName();
        m_rebuildingSources = true;
        m_problems->clear();
        m_problems->addItem(tr("held-out problems of %1").arg(db), kHeldOutSource);
        m_problems->setItemData(
            0,
            tr("Only the problems the model never trained on (its test split), when %1 is its "
               "training data")
                .arg(db),
            Qt::ToolTipRole);
        m_problems->addItem(tr("all problems of %1").arg(db), kAllSource);
        m_problems->setItemData(1,
                                tr("Every problem, including those the model trained on: flatters the model"),
                                Qt::ToolTipRole);
        // The held-out problems kept beside the database (core/infer/diode/infer/shippeddata.h names them).
        const QFileInfo dbFile(m_state->databasePath());
        const QString heldOutName =
            QString::fromStdString(diode::shipped::heldOutFileName(dbFile.fileName().toStdString()));
        const QString heldOut = dbFile.dir().filePath(heldOutName);
        if (QFileInfo::exists(heldOut))
            m_problems->addItem(tr("held-out file %1").arg(heldOutName), heldOut);
        const QString saved = QSettings().value(QStringLiteral("validate/problemsFile")).toString();
        if (!saved.isEmpty() && saved != heldOut && QFileInfo::exists(saved))
            m_problems->addItem(QFileInfo(saved).fileName(), saved);
        // Another database: its own held-out problems (never trained on) when it has a file of
        // them, else the model's test split of it. The same database keeps the choice.
        const bool newDatabase = m_sourcesDatabase != m_state->databasePath();
        m_sourcesDatabase = m_state->databasePath();
        int index = newDatabase ? -1 : m_problems->findData(current);
        if (index < 0)
            index = std::max(0, m_problems->findData(heldOut));
        m_problems->setCurrentIndex(index);
        m_rebuildingSources = false;
    };
    connect(m_models, &QAbstractItemModel::rowsInserted, this, &ValidatePage::rebuildModels);
    connect(m_models, &QAbstractItemModel::dataChanged, this, &ValidatePage::rebuildModels);
    rebuildModels();
    connect(m_state, &WorkbenchState::databaseChanged, this, [this, refreshSources] {
        refreshSources();
        rebuildModels();
        inputsChanged();
    });
    connect(m_state, &WorkbenchState::problemSelected, this,
            [this](const QString &label, const QString &from) {
                if (from != objectName())
                    showProblem(label);
            });
    // Choosing the model shown already changes nothing; another one clears the view (inputsChanged).
    connect(m_state, &WorkbenchState::packageChanged, this, &ValidatePage::selectPackage);
    connect(m_state, &WorkbenchState::dataChanged, this, &ValidatePage::inputsChanged);
    refreshSources();
    selectPackage(m_state->packagePath());

    QSettings settings;
    m_colourBy->setCurrentIndex(settings.value(QStringLiteral("validate/colourBy"), 0).toInt());
    {
        const QSignalBlocker quiet(m_method);
        m_method->setSettingsValue(settings.value(QStringLiteral("validate/method")).toString());
    }
    m_modelB->setCurrentIndex(
        std::max(0, m_modelB->findData(settings.value(QStringLiteral("validate/modelB")).toString())));
    // The problems chosen last time, when they were chosen for this same database: another one
    // starts on its own held-out problems.
    if (settings.value(QStringLiteral("validate/problemsOf")).toString() == m_state->databasePath() &&
        !m_state->databasePath().isEmpty())
        m_problems->setCurrentIndex(std::max(
            0, m_problems->findData(settings.value(QStringLiteral("validate/problems")).toString())));
    m_split->restoreState(settings.value(QStringLiteral("validate/split")).toByteArray());
    m_topSplit->restoreState(settings.value(QStringLiteral("validate/topSplit")).toByteArray());
    clearViews(tr("Choose a model and press Validate (F5)."));
    m_stale = true;
}

ValidatePage::~ValidatePage() {
    QSettings settings;
    settings.setValue(QStringLiteral("validate/colourBy"), m_colourBy->currentIndex());
    settings.setValue(QStringLiteral("validate/method"), m_method->settingsValue());
    settings.setValue(QStringLiteral("validate/modelB"), packageAt(m_modelB));
    settings.setValue(QStringLiteral("validate/problems"), m_problems->currentData().toString());
    settings.setValue(QStringLiteral("validate/problemsOf"), m_state->databasePath());
    settings.setValue(QStringLiteral("validate/split"), m_split->saveState());
    settings.setValue(QStringLiteral("validate/topSplit"), m_topSplit->saveState());
}

QString ValidatePage::packageAt(QComboBox *combo) const {
    return combo->currentData().toString();
}

bool ValidatePage::fitsOpenData(const QString &path) const {
    // Data opened without saying whose it is (a page alone, in a test): every model is offered.
    if (m_state->dataMethod().isEmpty())
        return true;
    return m_models->fitsData(path, m_state->dataGpu(), m_state->dataMethod());
}

// Both model boxes offer the models made for the open data: its GPU (or one they transfer to) and
// its kind of times. A GPU model is never scored against cpu times, nor a cpu model against a GPU's.
void ValidatePage::rebuildModels() {
    const QString keepA = packageAt(m_modelA), keepB = packageAt(m_modelB);
    {
        const QSignalBlocker quietA(m_modelA), quietB(m_modelB); // a new model in the list changes no choice
        m_modelA->clear();
        m_modelB->clear();
        m_modelB->addItem(tr("(none)"), QString());
        for (const auto &m : m_models->models())
            if (fitsOpenData(m.path)) {
                m_modelA->addItem(m.label, m.path);
                m_modelB->addItem(m.label, m.path);
                m_modelA->setItemData(m_modelA->count() - 1, m.path, Qt::ToolTipRole);
            }
        m_modelA->setCurrentIndex(m_modelA->findData(keepA));
        m_modelB->setCurrentIndex(std::max(0, m_modelB->findData(keepB)));
    }
    if (packageAt(m_modelA) != keepA || packageAt(m_modelB) != keepB)
        inputsChanged();
}

bool ValidatePage::willValidate() const {
    return !packageAt(m_modelA).isEmpty();
}

void ValidatePage::showEvent(QShowEvent *event) {
    QWidget::showEvent(event);
    if (m_stale && !m_worker->isRunning() && !packageAt(m_modelA).isEmpty() &&
        !m_state->databasePath().isEmpty())
        validate();
}

void ValidatePage::validate() {
    ValidationRequest req;
    req.database = m_state->databasePath();
    const QString source = m_problems->currentData().toString();
    req.problemsFile = source.startsWith(QLatin1String("db:")) ? QString() : source;
    req.heldOutOnly = source != kAllSource;
    req.packages << packageAt(m_modelA);
    req.method = m_method->method();
    const QString b = packageAt(m_modelB);
    if (!b.isEmpty() && b != req.packages.first())
        req.packages << b;
    if (req.packages.first().isEmpty()) {
        fail(nextStep());
        return;
    }
    m_stale = false;
    m_error->hide();
    clearViews(tr("Validating %1 on %2…").arg(m_modelA->currentText(), m_problems->currentText()));
    m_scope->clear();
    m_run->setEnabled(false);
    m_cancel->setEnabled(true);
    m_progress->setRange(0, 0);
    m_startedMs = QDateTime::currentMSecsSinceEpoch();
    m_worker->start(req);
}

void ValidatePage::cancel() {
    if (!m_worker->isRunning())
        return;
    m_worker->cancel();
    m_stale = true;
    clearViews(tr("Cancelled. %1").arg(nextStep()));
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
}

// What Validate would show now, or what it lacks: with no model chosen there is nothing to see
// ("to see  on held-out problems" read as garbled).
QString ValidatePage::nextStep() const {
    if (packageAt(m_modelA).isEmpty())
        return tr("No model chosen: train one on the Train page or add a package with “Package…”.");
    return tr("Validate (F5) to see %1 on %2.").arg(m_modelA->currentText(), m_problems->currentText());
}

void ValidatePage::inputsChanged() {
    if (m_rebuildingSources)
        return;
    // The Decisions tab: model A's, then model B's where another.
    if (const auto chosen = DecisionPanel::distinctPackages({packageAt(m_modelA), packageAt(m_modelB)});
        chosen != m_decisions->packages())
        m_decisions->setPackages(chosen);
    if (m_worker->isRunning())
        m_worker->cancel();
    m_stale = true;
    // "Out of date" only where a result was on screen: with nothing shown yet, nothing changed.
    const bool shown = bool(m_result.table);
    clearViews(shown ? tr("Out of date: the model, problems or times changed. %1").arg(nextStep())
                     : nextStep());
    m_scope->setText(shown ? tr("Out of date.") : QString());
    if (isVisible() && !packageAt(m_modelA).isEmpty() && !m_state->databasePath().isEmpty())
        validate();
}

void ValidatePage::clearViews(const QString &sentence) {
    m_result = {};
    m_problemOf.clear();
    m_scatterA->clearPoints(QString());
    setPlotMessage(m_scatterA, sentence);
    m_scatterB->hide();
    m_histogram->showMessage(sentence);
    m_cdf->showMessage(sentence);
    m_metrics->setResults({});
    m_candidates->setResults({}, {});
    m_problemTitle->setText(tr("Click a point to open its problem."));
}

QString ValidatePage::scopeText() const {
    return m_scope->text();
}

// "769 problems in 789 lines": counted as `diode eval` and `diode stats` count (wording.h).
QString ValidatePage::shownCount() const {
    if (!m_result.table)
        return {};
    const auto &problems = m_result.table->problems;
    return QString::fromStdString(diode::problemCount(diode::distinctProblems(problems), problems.size()));
}

void ValidatePage::showScope() {
    if (m_result.models.empty() || !m_result.table)
        return m_scope->clear();
    const auto &a = m_result.models.front();
    const QString count = shownCount();
    const QString source = m_problems->currentText();
    QStringList lines;
    bool training = false;
    if (a.trainedOnShown == 0)
        lines << tr("Measured on %1 that %2 never trained on (its test split of %3).")
                     .arg(count, a.name, QFileInfo(m_state->databasePath()).fileName());
    else if (a.trainedOnShown > 0) {
        training = true;
        lines
            << tr("Includes %1 problem lines %2 trained on, of %3: training problems flatter a model; choose "
                  "“held-out problems” to measure it fairly.")
                   .arg(a.trainedOnShown)
                   .arg(a.name, count);
    } else
        lines << tr("Measured on %1 of %2 (%3).").arg(count, source, a.unknownWhy);
    if (m_result.method.method == diode::TimingMethod::Cpu)
        lines << tr(
            "cpu data has no torch.compile, ATen kernel or Inductor: the baseline is the plan's first "
            "tile.");
    // A handful of problems is noise, not a verdict: said in the colour of a warning.
    const QString few =
        QString::fromStdString(diode::fewProblemsWarning(diode::distinctProblems(m_result.table->problems)));
    if (!few.isEmpty()) {
        training = true;
        lines << tr("Warning: %1.").arg(few);
    }
    for (size_t k = 1; k < m_result.models.size(); ++k) {
        const auto &b = m_result.models[k];
        if (b.trainedOnShown > 0) {
            training = true;
            lines << tr("%1 trained on %2 of them.").arg(b.name).arg(b.trainedOnShown);
        }
    }
    m_scope->setStyleSheet(training ? QStringLiteral("color: #b35c00; font-weight: bold") : QString());
    m_scope->setText(lines.join(QLatin1Char(' ')));
}

void ValidatePage::fail(const QString &message) {
    m_error->setText(message);
    m_error->show();
    m_status->setText(tr("Validation failed."));
    clearViews(tr("Nothing to show: the validation failed (the message above says why)."));
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    emit ready();
}

void ValidatePage::showResult(const ValidationResult &result) {
    const bool newTable = !m_result.table || m_result.table != result.table;
    m_result = result;
    if (newTable) {
        const auto &t = *m_result.table;
        m_problemOf.assign(t.candidates(), 0);
        for (size_t p = 0; p < t.problems.size(); ++p)
            std::fill(m_problemOf.begin() + t.start[p], m_problemOf.begin() + t.start[p + 1], uint32_t(p));
        setPlotMessage(m_scatterA, QString());
        drawScatters();
        showScope();
        emit scatterShown((QDateTime::currentMSecsSinceEpoch() - m_startedMs) / 1000.0);
    }
    drawCurves();
    if (result.complete) {
        // The convention of the Demo page: speed-up ×, higher is better, plain torch.compile first.
        // Against the baseline by its name on this data: plain torch.compile on a GPU's, the plan's
        // first tile on cpu data (wording.h).
        const QString plain = baselineTitle("aten", result.method.method == diode::TimingMethod::Cpu);
        QStringList speedups;
        for (const auto &m : result.models) {
            if (!(m.speedupVsPlain > 0))
                continue;
            QString line = tr("%1's picks run %2× as fast as those of %3")
                               .arg(m.name)
                               .arg(QString::fromStdString(diode::speedupText(m.speedupVsPlain, 3)))
                               .arg(plain);
            if (m.speedupVsMaxAutotune > 0)
                line += tr(" and %1× as fast as max-autotune's (on its %2 problem lines)")
                            .arg(QString::fromStdString(diode::speedupText(m.speedupVsMaxAutotune, 3)))
                            .arg(result.maxAutotune.problems);
            speedups << line;
        }
        if (!speedups.isEmpty())
            m_scope->setText(m_scope->text() + QLatin1Char(' ') + speedups.join(QStringLiteral("; ")) +
                             tr(" (geomean of kernel time, higher is better)."));
        QStringList sources;
        for (const auto &m : result.models)
            sources << QStringLiteral("%1: %2").arg(m.name, m.source);
        m_status->setText(tr("%1, %2 timed candidates, %3; %4. %5 s.")
                              .arg(shownCount())
                              .arg(result.byMeasured.size())
                              .arg(QString::fromStdString(result.method.describe()))
                              .arg(sources.join(QStringLiteral("; ")))
                              .arg(result.seconds, 0, 'f', 2));
        emit ready();
    }
}

void ValidatePage::drawScatters() {
    if (!m_result.table)
        return;
    placeCurves(m_result.models.size() > 1);
    const auto &t = *m_result.table;
    const bool byOp = m_colourBy->currentIndex() == 0;
    auto groupOf = [&](uint32_t c) {
        const auto &p = t.problems[m_problemOf[c]];
        return byOp ? int(p.op) : int(p.dtype);
    };
    // Every op (or dtype) a group of its own, in its own colour: the same one whichever groups this
    // data has.
    const size_t groupCount = byOp ? diode::allOps().size() : diode::allDTypes().size();
    auto group = [&](int g) {
        ScatterGroup out;
        out.name = byOp ? QString::fromUtf8(diode::toString(diode::GemmOp(g)).data())
                        : QString::fromUtf8(diode::toString(diode::DType(g)).data());
        out.colour = byOp ? opColour(diode::GemmOp(g)) : dtypeColour(diode::DType(g));
        return out;
    };
    PredictionScatter *views[] = {m_scatterA, m_scatterB};
    for (size_t k = 0; k < 2; ++k) {
        if (k >= m_result.models.size()) {
            views[k]->setVisible(k == 0);
            if (k == 0)
                views[k]->clearPoints(tr("No result"));
            continue;
        }
        const auto &m = m_result.models[k];
        std::vector<ScatterGroup> groups;
        for (size_t g = 0; g < groupCount; ++g)
            groups.push_back(group(int(g)));
        for (uint32_t c : m_result.byMeasured) { // sorted by measured time: each group stays sorted
            const double pred = m.predictedMs[c];
            if (std::isnan(pred))
                continue;
            auto &g = groups[size_t(groupOf(c))];
            g.points.append(QCPGraphData(t.measuredMs[c], pred));
            g.candidates.push_back(c);
        }
        std::erase_if(groups, [](const ScatterGroup &g) { return g.points.isEmpty(); });
        views[k]->setVisible(true);
        views[k]->setGroups(tr("%1\npredicted vs measured (%L2 candidates%3)")
                                .arg(m.name)
                                .arg(m_result.byMeasured.size())
                                .arg(scopeTag(m)),
                            std::move(groups));
    }
}

void ValidatePage::drawCurves() {
    QVector<Curve> hist;
    for (size_t k = 0; k < m_result.models.size(); ++k) {
        const auto &m = m_result.models[k];
        Curve c{m.name, {}, {}, Qt::SolidLine, modelColour(int(k))};
        const double w = (m.residualHi - m.residualLo) / double(m.residualCounts.size());
        for (size_t i = 0; i < m.residualCounts.size(); ++i) {
            c.x << m.residualLo + (double(i) + 0.5) * w;
            c.y << m.residualCounts[i];
        }
        hist << c;
    }
    m_histogram->setCurves(tr("Residuals: ln(predicted / measured), clamped to ±2"), hist,
                           QCPGraph::lsStepCenter);
    if (!m_result.complete) {
        m_cdf->showMessage(tr("Computing efficiencies…"));
        return;
    }
    QVector<Curve> curves;
    QVector<MetricsRow> rows;
    const bool cpuData = m_result.method.method == diode::TimingMethod::Cpu;
    for (size_t k = 0; k < m_result.models.size(); ++k) {
        const auto &m = m_result.models[k];
        // The arg-min (the candidate predicted fastest) and the plugin's decision with the package's
        // ATen guard: the same rule `diode eval` reports (core/infer/diode/infer/selectionpolicy.h).
        const QString policy = tr("%1 policy (margin %2)").arg(m.name).arg(m.policyMargin, 0, 'f', 2);
        // A model and its policy in the model's colour (the histogram's too), the policy lighter; the
        // baselines in their colours on every page: a second model moves none of them.
        curves << cdf(m.name, m.top1, Qt::SolidLine, modelColour(int(k)));
        rows << MetricsRow{m.name, m.metrics, true};
        // cpu data has no ATen kernel to keep: the policy is the arg-min, and no row of its own.
        if (!cpuData) {
            curves << cdf(policy, m.policyTop1, Qt::SolidLine, modelColour(int(k)).lighter(150));
            rows << MetricsRow{policy, m.policyMetrics, false};
        }
    }
    // The baselines a user has, in the order every page lists them: plain torch.compile, then
    // max-autotune (on the problems where Inductor's benchmark ran), then Inductor's first config.
    if (baselineShown("aten", cpuData)) {
        curves << cdf(baselineTitle("aten"), m_result.atenTop1, Qt::DashLine,
                      selectorColour(baselineTitle("aten")));
        rows << MetricsRow{baselineTitle("aten"), m_result.aten, false};
    }
    if (m_result.maxAutotune.problems > 0) {
        const QString name = tr("%1 (%2 problem lines with Inductor's timings)")
                                 .arg(baselineTitle("max-autotune"))
                                 .arg(m_result.maxAutotune.problems);
        curves << cdf(name, m_result.maxAutotuneTop1, Qt::DashDotLine,
                      selectorColour(baselineTitle("max-autotune")));
        rows << MetricsRow{name, m_result.maxAutotune, false};
    }
    curves << cdf(baselineTitle("first-config", cpuData), m_result.defaultTop1, Qt::DotLine,
                  selectorColour(baselineTitle("first-config")));
    rows << MetricsRow{baselineTitle("first-config", cpuData), m_result.firstConfig, false};
    m_cdf->setCurves(tr("How much slower than the best each pick is (%1 problem lines%2)")
                         .arg(m_result.table->problems.size())
                         .arg(scopeTag(m_result.models.front())),
                     curves, QCPGraph::lsStepLeft);
    m_metrics->setResults(rows);
}

void ValidatePage::showHover(qint64 candidate, const QPoint &globalPos) {
    if (!m_result.table || candidate < 0 || size_t(candidate) >= m_problemOf.size())
        return;
    const auto &t = *m_result.table;
    QString text = QStringLiteral("<b>%1</b><br>%2<br>measured %3 ms")
                       .arg(problemText(t.problems[m_problemOf[candidate]]),
                            configLabel(t.configs[size_t(t.configOf[candidate])]))
                       .arg(t.measuredMs[candidate], 0, 'g', 4);
    for (const auto &m : m_result.models)
        text += QStringLiteral("<br>%1 predicts %2 ms").arg(m.name).arg(m.predictedMs[candidate], 0, 'g', 4);
    QToolTip::showText(globalPos, text, this);
}

void ValidatePage::openCandidate(qint64 candidate) {
    if (candidate >= 0 && size_t(candidate) < m_problemOf.size())
        openProblem(m_problemOf[candidate]);
}

void ValidatePage::openProblem(size_t index, bool announce) {
    if (!m_result.table || index >= m_result.table->problems.size())
        return;
    const auto &t = *m_result.table;
    if (announce) // the other pages select it too (linked selection)
        m_state->selectProblem(problemText(t.problems[index]), objectName());
    const uint32_t b = t.start[index], e = t.start[index + 1];
    std::vector<uint32_t> byTime;
    double best = INFINITY;
    for (uint32_t c = b; c < e; ++c)
        if (!std::isnan(t.measuredMs[c])) {
            byTime.push_back(c);
            best = std::min(best, t.measuredMs[c]);
        }
    std::stable_sort(byTime.begin(), byTime.end(),
                     [&](uint32_t x, uint32_t y) { return t.measuredMs[x] < t.measuredMs[y]; });
    QVector<CandidateRow> rows(int(e - b));
    for (uint32_t c = b; c < e; ++c) {
        CandidateRow &r = rows[int(c - b)];
        r.config = configLabel(t.configs[size_t(t.configOf[c])]);
        r.measuredMs = t.measuredMs[c];
        r.efficiency = std::isnan(r.measuredMs) ? 0.0 : best / r.measuredMs;
    }
    for (size_t i = 0; i < byTime.size(); ++i)
        rows[int(byTime[i] - b)].measuredRank = int(i) + 1;
    QStringList names;
    for (const auto &m : m_result.models) {
        names << m.name;
        std::vector<uint32_t> order(e - b);
        std::iota(order.begin(), order.end(), b);
        auto key = [&](uint32_t c) { return std::isnan(m.predictedMs[c]) ? INFINITY : m.predictedMs[c]; };
        std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return key(x) < key(y); });
        for (uint32_t c = b; c < e; ++c)
            rows[int(c - b)].predictedMs << m.predictedMs[c];
        for (size_t i = 0; i < order.size(); ++i)
            rows[int(order[i] - b)].modelRank << int(i) + 1;
    }
    m_candidates->setResults(names, rows);
    // Its candidates ringed in each model's scatter: the problem shown below, seen among the rest.
    PredictionScatter *views[] = {m_scatterA, m_scatterB};
    for (size_t k = 0; k < 2; ++k) {
        QVector<QCPGraphData> ring;
        if (k < m_result.models.size())
            for (uint32_t c = b; c < e; ++c)
                if (!std::isnan(t.measuredMs[c]) && !std::isnan(m_result.models[k].predictedMs[c]))
                    ring.append({t.measuredMs[c], m_result.models[k].predictedMs[c]});
        views[k]->setHighlight(ring, problemText(t.problems[index]));
    }
    m_candidateView->sortByColumn(names.isEmpty() ? 2 : 5, Qt::AscendingOrder); // the first model's ranking
    m_problemTitle->setText(tr("<b>%1</b>: %2 candidates, ranked by %3 and by measurement")
                                .arg(problemText(t.problems[index]))
                                .arg(e - b)
                                .arg(names.value(0)));
    m_bottomTabs->setCurrentIndex(m_bottomTabs->indexOf(m_candidateView->parentWidget())); // the Problem tab
}

void ValidatePage::placeCurves(bool below) {
    QTabWidget *to = below ? m_bottomTabs : m_curveTabs;
    if (to->indexOf(m_cdf) >= 0)
        return;
    const int current = m_bottomTabs->currentIndex();
    to->insertTab(0, m_cdf, tr("Efficiency CDF"));
    to->insertTab(1, m_histogram, tr("Residuals"));
    m_curveTabs->setVisible(!below);
    // Below, the curves have the page's width and half its height: their legend in four columns.
    for (CurvePlot *plot : {m_cdf, m_histogram})
        plot->legend->setWrap(below ? 4 : 2);
    if (below) {
        m_bottomTabs->setCurrentIndex(0);
        if (const int h = m_split->height(); h > 0) // not before the page has a size: 0 collapses a pane
            m_split->setSizes({h / 2, h - h / 2});
    } else {
        m_bottomTabs->setCurrentIndex(std::max(0, current - 2));
    }
}

bool ValidatePage::showProblem(const QString &label) {
    if (!m_result.table)
        return false;
    const auto &problems = m_result.table->problems;
    for (size_t i = 0; i < problems.size(); ++i)
        if (problemText(problems[i]) == label) {
            openProblem(i, false);
            return true;
        }
    for (auto *s : {m_scatterA, m_scatterB})
        s->setHighlight({}, QString());
    m_problemTitle->setText(tr("%1 is not among the problems shown here.").arg(label));
    return false;
}

void ValidatePage::chooseProblemsFile() {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Problems with timings"), QString(),
                                     tr("Problem JSON lines (*.jsonl *.json);;All files (*)"));
    if (path.isEmpty())
        return;
    QSettings().setValue(QStringLiteral("validate/problemsFile"), path);
    if (m_problems->findData(path) < 0)
        m_problems->addItem(QFileInfo(path).fileName(), path);
    m_problems->setCurrentIndex(m_problems->findData(path));
}

void ValidatePage::addPackage() {
    selectPackage(
        QFileDialog::getOpenFileName(this, tr("Model package"), QString(), tr("Diode packages (*.diode)")));
}

void ValidatePage::selectPackage(const QString &path) {
    if (path.isEmpty()) { // no model fits the open data: none rather than a wrong one
        m_modelA->setCurrentIndex(-1);
        m_stale = true;
        clearViews(tr("No model fits the open data: train one on the Train page, or add a package with "
                      "“Package…”."));
        return;
    }
    QString error;
    const int row = m_models->add(path, &error);
    if (row < 0)
        return fail(tr("Cannot read the model package %1").arg(error));
    if (!fitsOpenData(path)) {
        const auto &m = m_models->at(row);
        const bool cpuData = m_state->dataMethod() == QLatin1String("cpu");
        return fail(
            tr("%1 was trained on %2 times%3; the open data is %4 times%5: it would be scored on times it "
               "never learnt. Open data of its kind, or choose a model made for this data.")
                .arg(m.label, m.timingMethod, m.gpu.isEmpty() ? QString() : tr(" of %1").arg(m.gpu),
                     m_state->dataMethod(),
                     cpuData || m_state->dataGpu().isEmpty() ? QString()
                                                             : tr(" of %1").arg(m_state->dataGpu())));
    }
    m_modelA->setCurrentIndex(m_modelA->findData(m_models->at(row).path));
}
