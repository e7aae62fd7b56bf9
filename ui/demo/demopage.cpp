#include "demo/demopage.h"

#include "common/exportactions.h"
#include "common/messagelabel.h"
#include "common/pageshortcut.h"
#include "common/shippedfile.h"
#include "common/workbenchstate.h"
#include "demo/demochart.h"
#include "demo/demorunner.h"
#include "demo/demotablemodel.h"
#include "demo/scenarioview.h"
#include "diode/infer/shippeddata.h"

#include "diode/analysis/demoresult.h"
#include "diode/analysis/wording.h"
#include "diode/config.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSignalBlocker>
#include <QSplitter>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <numeric>

DemoPage::DemoPage(WorkbenchState *state, QWidget *parent)
    : QWidget(parent)
    , m_state(state)
    , m_runner(new DemoRunner(this))
    , m_table(new DemoTableModel(this))
    , m_compile(new DemoChart(this))
    , m_kernel(new DemoChart(this))
    , m_scenarios(new ScenarioView(this))
    , m_tabs(new QTabWidget(this))
    , m_case(new QComboBox(this))
    , m_view(new QTableView(this))
    , m_run(new QPushButton(tr("&Run demo on this GPU"), this))
    , m_cancel(new QPushButton(tr("Cancel"), this))
    , m_header(new QLabel(this))
    , m_reason(new QLabel(tr("Looking for a GPU…"), this))
    , m_message(new MessageLabel(this))
    , m_summary(new QLabel(this))
    , m_timerNote(new QLabel(this)) {
    setObjectName(QStringLiteral("demoPage"));
    auto *open = new QPushButton(tr("&Open result…"), this);
    m_run->setEnabled(false);
    m_cancel->setEnabled(false);
    m_run->setToolTip(tr("diode demo --json on the local GPU (F5)"));
    auto *bar = new QHBoxLayout;
    bar->addWidget(open);
    bar->addWidget(m_run);
    bar->addWidget(m_cancel);
    bar->addWidget(m_reason, 1);
    m_header->setTextFormat(Qt::RichText);
    m_header->setObjectName(QStringLiteral("demoHeader"));
    m_message->setObjectName(QStringLiteral("demoMessage"));
    m_summary->setObjectName(QStringLiteral("demoSummary"));
    m_summary->setTextFormat(Qt::RichText);
    m_summary->setWordWrap(true);
    m_summary->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_timerNote->setObjectName(QStringLiteral("demoTimerNote"));
    m_timerNote->setWordWrap(true);
    m_timerNote->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_timerNote->setStyleSheet(QStringLiteral("QLabel { color: #b35c00; }"));
    m_timerNote->hide();
    m_reason->setWordWrap(true);
    m_reason->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_compile->setObjectName(QStringLiteral("demoCompileChart"));
    m_kernel->setObjectName(QStringLiteral("demoKernelChart"));
    m_tabs->setObjectName(QStringLiteral("demoTabs"));

    auto *view = m_view;
    view->setModel(m_table);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setObjectName(QStringLiteral("demoTable"));
    view->verticalHeader()->hide();
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    addTableExport(view, QStringLiteral("demo"));
    addPlotExport(m_compile, QStringLiteral("demo-compile-time"));
    addPlotExport(m_kernel, QStringLiteral("demo-kernel-time"));
    // The speed-ups: every case by kind, or one case's modes, with the summary under them.
    auto *speedups = new QWidget(this);
    auto *sl = new QVBoxLayout(speedups);
    auto *caseRow = new QHBoxLayout;
    caseRow->addWidget(new QLabel(tr("Charts show"), this));
    caseRow->addWidget(m_case, 1);
    m_case->setObjectName(QStringLiteral("demoCase"));
    m_case->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_case->setMinimumContentsLength(30);
    m_case->setToolTip(tr("All cases summarised, or one case's modes"));
    auto *charts = new QSplitter(Qt::Horizontal, this);
    charts->addWidget(m_compile);
    charts->addWidget(m_kernel);
    sl->addLayout(caseRow);
    sl->addWidget(charts, 1);
    sl->addWidget(m_summary);
    // The table on a tab of its own: under the charts at 1280 x 800 it showed about one row.
    m_tabs->addTab(speedups, tr("Speed-ups"));
    m_tabs->addTab(m_scenarios, tr("Model steps"));
    m_tabs->addTab(view, tr("Every case and mode"));

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_header);
    layout->addWidget(m_timerNote);
    layout->addWidget(m_message);
    layout->addWidget(m_tabs, 1);

    auto choose = [this] {
        const QString p =
            QFileDialog::getOpenFileName(this, tr("Demo result"), QString(), tr("Demo results (*.json)"));
        if (!p.isEmpty())
            openResult(p);
    };
    connect(open, &QPushButton::clicked, this, choose);
    addPageShortcut(this, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), choose);
    connect(m_run, &QPushButton::clicked, this, &DemoPage::run);
    connect(m_case, &QComboBox::currentIndexChanged, this, &DemoPage::showCase);
    connect(view, &QTableView::doubleClicked, this, [this](const QModelIndex &i) {
        const QString name = m_table->index(i.row(), 0).data().toString();
        for (int k = 0; k < int(m_result.cases.size()); ++k)
            if (QString::fromStdString(m_result.cases[size_t(k)].name) == name) {
                m_case->setCurrentIndex(k + 1);
                m_tabs->setCurrentIndex(0);
            }
    });
    view->setToolTip(tr("Double-click a row to chart its case"));
    addPageShortcut(this, QKeySequence(Qt::Key_F5), [this] { run(); });
    connect(m_cancel, &QPushButton::clicked, m_runner, &DemoRunner::cancel);
    connect(m_runner, &DemoRunner::gpuChecked, this, [this](bool ok, const QString &reason) {
        m_gpu = ok;
        m_run->setEnabled(canRun());
        m_reason->setText(canRun() ? tr("Compiles on the local GPU; takes minutes.")
                                   : tr("Run disabled: %1").arg(runReason()));
        if (!ok)
            m_run->setToolTip(reason);
    });
    connect(m_runner, &DemoRunner::status, this, [this](const QString &s) { setMessage(s, false); });
    connect(m_runner, &DemoRunner::failed, this, [this](const QString &s) { setMessage(s, true); });
    connect(m_runner, &DemoRunner::resultReady, this, &DemoPage::openResult);
    connect(m_runner, &DemoRunner::finished, this, [this] {
        m_run->setEnabled(canRun());
        m_cancel->setEnabled(false);
    });
    m_runner->checkGpu();

    const QString last = QSettings().value(QStringLiteral("demo/result")).toString();
    const QString initial = QFileInfo::exists(last) ? last : shippedResult();
    if (!initial.isEmpty())
        openResult(initial);
    else
        setMessage(tr("No saved demo result: run one on a GPU, or open a result file."), false);
}

QString DemoPage::shippedResult() {
    return shippedFile(diode::shipped::kDemoResult);
}

bool DemoPage::canRun() const {
    return m_gpu && !diodeBinary().isEmpty() && !m_runner->isRunning();
}

QString DemoPage::runReason() const {
    if (!m_gpu)
        return tr("this machine has no GPU; showing a saved result instead");
    if (diodeBinary().isEmpty())
        return tr("the diode command line is not next to the workbench");
    return {};
}

QString DemoPage::message() const {
    return m_message->text();
}

void DemoPage::setMessage(const QString &text, bool error) {
    m_message->showMessage(text, error);
}

void DemoPage::run() {
    if (!canRun())
        return setMessage(tr("Cannot run the demo: %1.").arg(runReason()), true);
    QStringList args;
    const QString problems = shippedFile(diode::shipped::kDemoProblems);
    if (!problems.isEmpty())
        args << QStringLiteral("--problems") << problems << QStringLiteral("--limit") << QStringLiteral("8");
    // One real model block keeps a run from the page to a few minutes (diode demo --blocks runs all).
    args << QStringLiteral("--block-cases") << QStringLiteral("llama:decode:8:bf16");
    if (!m_state->packagePath().isEmpty())
        args << QStringLiteral("--package") << m_state->packagePath();
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
    QDir().mkpath(dir);
    m_run->setEnabled(false);
    m_cancel->setEnabled(true);
    m_runner->start(args, dir + QStringLiteral("/diode-demo.json"));
}

namespace {

// Two decimals under 10×, whole above (compile speed-ups against max-autotune reach tens).
QString speedupLabel(double v, const std::string &mode, const std::string &reference) {
    return speedupBarLabel(v, v < 10 ? 2 : 0, mode, reference);
}

QString speedup(double v, int decimals) {
    return QString::fromStdString(diode::speedupText(v, decimals));
}

QString referenceName(const std::string &reference) {
    return QString::fromStdString(diode::DemoResult::modeTitle(reference));
}

// The legend names plain torch.compile as such: its mode is called "default".
QStringList modeTitles(const std::vector<std::string> &modes) {
    QStringList titles;
    for (const auto &m : modes)
        titles << QString::fromStdString(diode::DemoResult::modeTitle(m));
    return titles;
}

QString kindName(const std::string &kind, size_t n) {
    if (kind == "gemm")
        return QObject::tr("%1 GEMMs").arg(n);
    if (kind == "block")
        return QObject::tr("%1 model blocks").arg(n);
    if (kind == "model")
        return QObject::tr("%1 model steps").arg(n);
    return QObject::tr("%1 %2 cases").arg(n).arg(QString::fromStdString(kind));
}

} // namespace

void DemoPage::showCase(int index) {
    if (index <= 0 || index > int(m_result.cases.size()))
        return showSummary();
    const auto &c = m_result.cases[size_t(index - 1)];
    const std::string ref = m_result.baseline();
    const auto modes = m_result.modesBaselinesFirst();
    QVector<QVector<double>> compile(1), kernel(1);
    QVector<QVector<QString>> compileLabel(1), kernelLabel(1);
    for (const auto &m : modes) {
        const auto it = c.results.find(m);
        const bool ok = it != c.results.end() && it->second.error.empty();
        compile[0] << (ok ? it->second.compileS.value_or(NAN) : NAN);
        kernel[0] << (ok ? it->second.kernelMs.value_or(NAN) * 1000 : NAN);
        compileLabel[0] << speedupLabel(diode::DemoResult::compileSpeedup(c, m, ref), m, ref);
        kernelLabel[0] << speedupLabel(diode::DemoResult::kernelSpeedup(c, m, ref), m, ref);
    }
    const QStringList name{QString::fromStdString(c.name)};
    // Times from zero: on a log axis 155 µs and 140 µs made bars of one height.
    m_compile->setBars(tr("Compile time (label: speed-up × against %1)").arg(referenceName(ref)),
                       tr("compile (s)"), name, modeTitles(modes), compile, compileLabel, false);
    m_kernel->setBars(tr("Kernel time (label: speed-up × against %1)").arg(referenceName(ref)),
                      tr("kernel (µs)"), name, modeTitles(modes), kernel, kernelLabel, false);
    for (int row = 0; row < m_table->rowCount(); ++row)
        if (m_table->index(row, 0).data().toString() == name[0]) {
            m_view->scrollTo(m_table->index(row, 0), QAbstractItemView::PositionAtTop);
            break;
        }
}

void DemoPage::showSummary() {
    // One bar group per kind of case (GEMMs, model blocks, model steps): their speed-ups differ in kind.
    QStringList groups;
    const auto kinds = m_result.kinds();
    const std::string ref = m_result.baseline();
    const auto modes = m_result.modesBaselinesFirst();
    QVector<QVector<double>> compile(int(kinds.size())), kernel(int(kinds.size()));
    QVector<QVector<QString>> compileLabel(int(kinds.size())), kernelLabel(int(kinds.size()));
    for (size_t k = 0; k < kinds.size(); ++k) {
        groups << kindName(kinds[k], m_result.caseCount(kinds[k]));
        for (const auto &m : modes) {
            const bool isRef = m == ref;
            const diode::DemoModeSummary s = m_result.summaryOf(m, ref, kinds[k]);
            compile[int(k)] << (isRef ? 1.0 : s.compileSpeedupMedian);
            kernel[int(k)] << (isRef ? 1.0 : s.kernelSpeedupGeomean);
            compileLabel[int(k)] << speedupLabel(s.compileSpeedupMedian, m, ref);
            kernelLabel[int(k)] << speedupLabel(s.kernelSpeedupGeomean, m, ref);
        }
    }
    m_compile->setBars(tr("Compile speed-up × against %1 (median; higher is better)").arg(referenceName(ref)),
                       tr("compile speed-up ×"), groups, modeTitles(modes), compile, compileLabel, true);
    m_kernel->setBars(tr("Kernel speed-up × against %1 (geomean; higher is better)").arg(referenceName(ref)),
                      tr("kernel speed-up ×"), groups, modeTitles(modes), kernel, kernelLabel, false);
}

bool DemoPage::openResult(const QString &path) {
    diode::DemoResult r;
    try {
        r = diode::DemoResult::load(path.toStdString());
        // The model steps measured beside the shipped result (diode demo --models) show with it.
        const QString modelCases = shippedFile(diode::shipped::kDemoModelCases);
        if (!modelCases.isEmpty() && QFileInfo(path) == QFileInfo(shippedResult()))
            r.appendCases(modelCases.toStdString());
    } catch (const std::exception &e) {
        setMessage(tr("Cannot open the demo result: %1").arg(QString::fromUtf8(e.what())), true);
        return false;
    }
    QSettings().setValue(QStringLiteral("demo/result"), path);
    m_table->setResults(r);
    m_result = r;
    {
        const QSignalBlocker block(m_case);
        m_case->clear();
        m_case->addItem(tr("All %1 cases, by kind: compile and kernel speed-up against %2")
                            .arg(r.cases.size())
                            .arg(referenceName(r.baseline())));
        for (const auto &c : r.cases)
            m_case->addItem(QString::fromStdString(c.name));
        m_case->setCurrentIndex(0);
    }
    showCase(0);
    m_header->setText(tr("<b>%1</b> &nbsp; torch %2 &nbsp; %3 &nbsp; <i>%4</i>")
                          .arg(QString::fromStdString(r.gpu), QString::fromStdString(r.torch),
                               QString::fromStdString(r.createdAt), QFileInfo(path).fileName()));
    // A result from before timings started from a flushed L2 says so where it is read.
    const QString note = QString::fromStdString(r.timerNote());
    m_timerNote->setText(note.isEmpty() ? QString() : tr("Note: %1.").arg(note));
    m_timerNote->setVisible(!note.isEmpty());
    m_scenarios->setResult(r);
    // A result with model steps measured in several processes opens on them: what the product is
    // judged on (step time and compile time of real model work).
    bool steps = false;
    for (const auto &c : r.cases)
        for (const auto &[mode, t] : c.results)
            steps = steps || (c.kind == "model" && (t.kernelMsSpread || !t.breakdown.empty()));
    m_tabs->setCurrentIndex(steps ? 1 : 0);
    // Per kind of case: against plain torch.compile and against max-autotune, warm (and with L2
    // flushed where the result has it), one convention: speed-up ×, higher is better.
    QStringList lines;
    const bool cold = r.hasColdTimes();
    for (const auto &kind : r.kinds()) {
        for (const char *ref : {diode::DemoResult::kPlain, diode::DemoResult::kReference}) {
            if (std::find(r.modes.begin(), r.modes.end(), ref) == r.modes.end())
                continue;
            QStringList parts;
            for (const auto &mode : r.modesBaselinesFirst()) {
                if (mode == ref ||
                    (std::string(ref) == diode::DemoResult::kPlain && mode == diode::DemoResult::kReference))
                    continue;
                const diode::DemoModeSummary s = r.summaryOf(mode, ref, kind);
                if (s.cases == 0) // a mode not run on this kind of case
                    continue;
                QString part = tr("<b>%1</b> compile %2×, kernel %3× (worst %4×)")
                                   .arg(QString::fromStdString(mode))
                                   .arg(speedup(s.compileSpeedupMedian, 1))
                                   .arg(speedup(s.kernelSpeedupGeomean, 3))
                                   .arg(speedup(s.kernelSpeedupWorst, 3));
                if (cold)
                    part += tr(", L2 flushed %1×")
                                .arg(speedup(r.summaryOf(mode, ref, kind, true).kernelSpeedupGeomean, 3));
                parts << part;
            }
            lines << tr("%1 against %2: ")
                             .arg(kindName(kind, r.caseCount(kind)),
                                  std::string(ref) == diode::DemoResult::kPlain ? tr("plain torch.compile")
                                                                                : tr("max-autotune")) +
                         parts.join(QStringLiteral(" · "));
        }
    }
    m_summary->setText(tr("Speed-up × (higher is better; compile: median, kernel: geomean)<br>") +
                       lines.join(QStringLiteral("<br>")));
    setMessage(tr("Showing %1.").arg(path), false);
    emit resultShown(path);
    return true;
}
