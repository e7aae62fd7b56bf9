#include "bias/biaspage.h"
#include "common/sortabletable.h"

#include "bias/biasgroupmodel.h"
#include "bias/biasproblemmodel.h"
#include "bias/biasscatter.h"
#include "common/exportactions.h"
#include "common/messagelabel.h"
#include "common/pageshortcut.h"
#include "common/timingmethodbox.h"
#include "common/workbenchstate.h"

#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace {

QString methodName(diode::TimingMethod m) {
    return QString::fromUtf8(diode::toString(m).data());
}

QString heldMethods(const diode::MethodCounts &held) {
    QStringList names;
    for (const auto &[m, n] : held)
        if (n > 0)
            names << QObject::tr("%1 (%L2)").arg(methodName(m)).arg(n);
    return names.isEmpty() ? QObject::tr("no successful times at all") : names.join(QStringLiteral(", "));
}

} // namespace

BiasPage::BiasPage(WorkbenchState *state, QWidget *parent)
    : QWidget(parent)
    , m_state(state)
    , m_worker(new BiasWorker(this))
    , m_method(new TimingMethodBox(this))
    , m_message(new MessageLabel(this))
    , m_stack(new QStackedWidget(this))
    , m_empty(new QLabel(this))
    , m_split(new QSplitter(Qt::Vertical, this))
    , m_tables(new QTabWidget(this))
    , m_scatter(new BiasScatter(this))
    , m_groups(new BiasGroupModel(this))
    , m_problems(new BiasProblemModel(this)) {
    setObjectName(QStringLiteral("biasPage"));
    m_method->offerOnly({diode::TimingMethod::GraphWarm, diode::TimingMethod::GraphCold});
    m_method->setToolTip(
        tr("The in-graph times taken as truth: warm L2 (graph_warm) or flushed L2 (graph_cold)"));
    auto *refreshButton = new QPushButton(tr("&Refresh"), this);
    refreshButton->setToolTip(tr("Recompute from the database (F5)"));

    auto *bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Truth: in-graph times"), this));
    bar->addWidget(m_method);
    bar->addWidget(refreshButton);
    bar->addStretch(1);
    m_message->setObjectName(QStringLiteral("biasMessage"));

    m_empty->setObjectName(QStringLiteral("biasEmpty"));
    m_empty->setWordWrap(true);
    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QFont big = m_empty->font();
    big.setPointSizeF(big.pointSizeF() * 1.3);
    m_empty->setFont(big);

    m_groupView = makeSortableTable(m_groups, QStringLiteral("biasGroups"), this);
    m_problemView = makeSortableTable(m_problems, QStringLiteral("biasProblems"), this);
    m_scatter->setObjectName(QStringLiteral("biasScatter"));
    m_scatter->setMinimumSize(300, 220);
    m_tables->addTab(m_groupView, tr("Groups"));
    m_tables->addTab(m_problemView, tr("Problems, worst loss first"));
    m_split->addWidget(m_scatter);
    m_split->addWidget(m_tables);
    m_split->setSizes({480, 300});
    m_stack->addWidget(m_empty);
    m_stack->addWidget(m_split);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_message);
    layout->addWidget(m_stack, 1);

    addPageShortcut(this, QKeySequence(Qt::Key_F5), [this] { refresh(); });
    connect(refreshButton, &QPushButton::clicked, this, &BiasPage::refresh);
    connect(m_method, &QComboBox::currentIndexChanged, this, [this] {
        markStale();
        if (isVisible())
            refresh();
    });
    connect(m_state, &WorkbenchState::databaseChanged, this, [this] {
        markStale();
        if (isVisible())
            refresh();
    });
    connect(m_state, &WorkbenchState::dataChanged, this, [this] {
        markStale();
        if (isVisible())
            refresh();
    });
    // Linked selection: a problem chosen here is chosen on Validate and Data, and the other way.
    connect(m_problemView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) {
                if (!current.isValid() || m_selecting)
                    return;
                const QString label = current.siblingAtColumn(BiasProblemModel::Problem).data().toString();
                selectProblem(label);
                m_state->selectProblem(label, objectName());
            });
    connect(m_scatter, &BiasScatter::problemClicked, this, [this](int problem) {
        if (problem < 0 || size_t(problem) >= m_result.report.problems.size())
            return;
        const QString label =
            QString::fromStdString(m_result.report.problems[size_t(problem)].problem.label());
        selectProblem(label);
        m_state->selectProblem(label, objectName());
    });
    connect(m_state, &WorkbenchState::problemSelected, this,
            [this](const QString &label, const QString &from) {
                if (from != objectName())
                    selectProblem(label);
            });
    connect(m_worker, &BiasWorker::resultReady, this, &BiasPage::showResult);
    connect(m_worker, &BiasWorker::failed, this, [this](const QString &msg) {
        m_message->showMessage(tr("Cannot compute the bias: %1").arg(msg), true);
        showEmpty(tr("No bias report: %1").arg(msg));
        emit ready();
    });

    QSettings settings;
    {
        const QSignalBlocker quiet(m_method);
        m_method->setSettingsValue(settings.value(QStringLiteral("bias/method")).toString());
    }
    m_split->restoreState(settings.value(QStringLiteral("bias/split")).toByteArray());
    markStale();
}

BiasPage::~BiasPage() {
    QSettings settings;
    settings.setValue(QStringLiteral("bias/method"), m_method->settingsValue());
    settings.setValue(QStringLiteral("bias/split"), m_split->saveState());
}

QString BiasPage::emptyText() const {
    return m_stack->currentWidget() == m_empty ? m_empty->text() : QString();
}

void BiasPage::showEvent(QShowEvent *event) {
    QWidget::showEvent(event);
    if (m_stale && !m_worker->isRunning())
        refresh();
}

// What is on screen belongs to the old controls: take it down before anything else runs.
void BiasPage::markStale() {
    m_stale = true;
    m_shown = false;
    m_worker->cancel();
    m_result = {};
    m_scatter->clearPoints();
    m_groups->setResults({});
    m_problems->setResults({});
    showEmpty(tr("Out of date: press Refresh (F5)."));
}

bool BiasPage::selectProblem(const QString &label) {
    int problem = -1;
    const auto &problems = m_result.report.problems;
    for (size_t i = 0; i < problems.size(); ++i)
        if (QString::fromStdString(problems[i].problem.label()) == label) {
            problem = int(i);
            break;
        }
    m_scatter->setHighlight(problem);
    if (problem < 0) {
        if (m_shown && !label.isEmpty())
            m_message->showMessage(
                tr("%1 has no in-graph times in this database: not in the Bias view.").arg(label), false);
        return false;
    }
    // The problem's row in the table as it is sorted now; selecting it says nothing back.
    auto *proxy = qobject_cast<QSortFilterProxyModel *>(m_problemView->model());
    const QModelIndex source = m_problems->index(problem, 0);
    const QModelIndex row = proxy ? proxy->mapFromSource(source) : source;
    m_selecting = true;
    m_problemView->setCurrentIndex(row);
    m_problemView->scrollTo(row);
    m_selecting = false;
    m_tables->setCurrentIndex(1);
    return true;
}

void BiasPage::showEmpty(const QString &text) {
    m_empty->setText(text);
    m_stack->setCurrentWidget(m_empty);
}

void BiasPage::refresh() {
    markStale();
    m_stale = false;
    const QString db = m_state->databasePath();
    if (db.isEmpty()) {
        // Not ready: the window is opening one (a screenshot waits for its bias).
        showEmpty(tr("No database open."));
        m_message->showMessage(QString(), false);
        return;
    }
    const auto method = m_method->method().value_or(diode::TimingMethod::GraphWarm);
    showEmpty(tr("Computing the bias over %1 in %2 time…").arg(QFileInfo(db).fileName(), methodName(method)));
    m_message->showMessage(QString(), false);
    m_worker->start(db, method);
}

void BiasPage::showResult(const BiasResult &result) {
    // The worker drops stale jobs; this also refuses a result for other controls than shown.
    if (result.database != m_state->databasePath() ||
        result.method != m_method->method().value_or(diode::TimingMethod::GraphWarm))
        return;
    m_result = result;
    m_shown = true;
    const auto &r = result.report;
    const QString method = methodName(result.method);
    const QString db = QFileInfo(result.database).fileName();
    if (!result.hasInGraphTimes()) {
        showEmpty(tr("This database has no in-graph times (graph_warm/graph_cold): sweep with the in-graph "
                     "worker to see where Inductor's own benchmark misleads max-autotune. %1 holds %2.")
                      .arg(db, heldMethods(result.held)));
        m_message->showMessage(QString(), false);
    } else if (r.problems.empty()) {
        showEmpty(tr("This database has no %1 times; it holds %2. Choose another method.")
                      .arg(method, heldMethods(result.held)));
        m_message->showMessage(QString(), false);
    } else {
        const auto &all = r.groups.front();
        std::vector<QString> labels;
        labels.reserve(r.problems.size());
        for (const auto &p : r.problems)
            labels.push_back(QString::fromStdString(p.problem.label()));
        m_scatter->setPoints(r.points, method, all.atenInflation, all.tritonInflation, std::move(labels));
        m_groups->setResults(r.groups);
        m_problems->setResults(r.problems);
        m_problemView->sortByColumn(BiasProblemModel::PickLoss, Qt::DescendingOrder);
        m_groupView->sortByColumn(BiasGroupModel::Op, Qt::AscendingOrder);
        m_stack->setCurrentWidget(m_split);
        QString text =
            tr("%1: %L2 problem lines (a problem once per run that measured it, as on the Data page), %L3 "
               "candidates with Inductor's and %4 times; max-autotune picks the fastest in %L5 of %L6 "
               "problem "
               "lines where Inductor's benchmark ran")
                .arg(db)
                .arg(r.problems.size())
                .arg(r.points.size())
                .arg(method)
                .arg(all.pickIsFastest)
                .arg(all.maxAutotune.count);
        if (r.skipped)
            text += r.skipped == 1
                        ? tr("; 1 problem without %1 times left out").arg(method)
                        : tr("; %L1 problems without %2 times left out").arg(r.skipped).arg(method);
        m_message->showMessage(text + tr(" (%1 s).").arg(result.seconds, 0, 'f', 2), false);
        if (!m_state->selectedProblem().isEmpty()) // chosen on another page before this result came
            selectProblem(m_state->selectedProblem());
    }
    emit ready();
}
