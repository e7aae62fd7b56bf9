#include "demo/scenarioview.h"

#include "common/exportactions.h"
#include "common/sortabletable.h"
#include "demo/breakdownchart.h"
#include "demo/demochart.h"
#include "demo/demokernelmodel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

ScenarioView::ScenarioView(QWidget *parent)
    : QWidget(parent)
    , m_scenario(new QComboBox(this))
    , m_note(new QLabel(this))
    , m_step(new DemoChart(this))
    , m_compile(new DemoChart(this))
    , m_breakdown(new BreakdownChart(this))
    , m_kernels(new DemoKernelModel(this)) {
    setObjectName(QStringLiteral("scenarioView"));
    m_scenario->setObjectName(QStringLiteral("demoScenario"));
    m_scenario->setToolTip(tr("The model step shown"));
    m_scenario->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_scenario->setMinimumContentsLength(24);
    m_note->setObjectName(QStringLiteral("scenarioNote"));
    m_note->setWordWrap(true);
    m_note->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_step->setObjectName(QStringLiteral("scenarioStep"));
    m_compile->setObjectName(QStringLiteral("scenarioCompile"));
    m_breakdown->setObjectName(QStringLiteral("scenarioBreakdown"));
    m_kernelView = makeSortableTable(m_kernels, QStringLiteral("scenarioKernels"), this);
    // A kernel's name can run to hundreds of characters (a templated ATen kernel): its column takes
    // what the others leave, the name shortened in the middle (whole in its tooltip), so that its kind
    // and time stay in view.
    m_kernelView->horizontalHeader()->setSectionResizeMode(DemoKernelModel::Kernel, QHeaderView::Stretch);
    m_kernelView->setTextElideMode(Qt::ElideMiddle);
    addTableExport(m_kernelView, QStringLiteral("demo-kernels"));
    addPlotExport(m_step, QStringLiteral("demo-step-time"));
    addPlotExport(m_compile, QStringLiteral("demo-step-compile"));
    addPlotExport(m_breakdown, QStringLiteral("demo-where-the-time-goes"));
    for (QWidget *w : std::initializer_list<QWidget *>{m_step, m_compile, m_breakdown})
        w->setMinimumSize(240, 220);

    auto *top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Model step"), this));
    top->addWidget(m_scenario, 1);
    auto *charts = new QSplitter(Qt::Horizontal, this);
    charts->addWidget(m_step);
    charts->addWidget(m_compile);
    charts->addWidget(m_breakdown);
    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(charts);
    split->addWidget(m_kernelView);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(top);
    layout->addWidget(m_note);
    layout->addWidget(split, 1);
    connect(m_scenario, &QComboBox::currentIndexChanged, this, &ScenarioView::showScenario);
}

QStringList ScenarioView::scenarios() const {
    QStringList out;
    for (size_t i : m_cases)
        out << QString::fromStdString(m_result.cases[i].name);
    return out;
}

void ScenarioView::setResult(const diode::DemoResult &result) {
    m_result = result;
    m_cases.clear();
    for (size_t i = 0; i < m_result.cases.size(); ++i)
        if (m_result.cases[i].kind == "model")
            m_cases.push_back(i);
    // It opens on the first step that says where its time goes, where one does: a result gathered
    // over time (the shipped one) lists older steps, measured without their kernels, first.
    int first = m_cases.empty() ? -1 : 0;
    for (size_t k = 0; k < m_cases.size(); ++k) {
        const auto &results = m_result.cases[m_cases[k]].results;
        if (std::any_of(results.begin(), results.end(),
                        [](const auto &r) { return !r.second.breakdown.empty(); })) {
            first = int(k);
            break;
        }
    }
    {
        const QSignalBlocker quiet(m_scenario);
        m_scenario->clear();
        m_scenario->addItems(scenarios());
        m_scenario->setCurrentIndex(first);
    }
    showScenario(first);
}

void ScenarioView::showScenario(int index) {
    if (index < 0 || size_t(index) >= m_cases.size()) {
        const QString why = tr("This result has no model steps (diode demo --models measures them).");
        m_step->setBars(QString(), QString(), {}, {}, {}, {});
        m_compile->setBars(QString(), QString(), {}, {}, {}, {});
        m_breakdown->setBreakdown(QString(), {}, {}, why);
        m_kernels->setResults({}, {});
        m_note->setText(why);
        return;
    }
    const diode::DemoCase &c = m_result.cases[m_cases[size_t(index)]];
    const auto modes = m_result.modesBaselinesFirst();
    const std::string ref = m_result.baseline();
    QStringList titles;
    QVector<QVector<double>> step(1), compile(1);
    QVector<QVector<QString>> stepLabel(1), compileLabel(1);
    QVector<QVector<QPair<double, double>>> stepSpread(1), compileSpread(1);
    // The breakdown has a bar for each mode whose kernels this step recorded, not for every mode of
    // the result (a scenario measured in two of six modes would be two bars among six labels).
    QStringList measured;
    std::vector<std::vector<std::pair<std::string, double>>> breakdown;
    int processes = 0;
    bool spreads = false;
    for (const auto &m : modes) {
        titles << QString::fromStdString(diode::DemoResult::modeTitle(m));
        const auto it = c.results.find(m);
        const bool ok = it != c.results.end() && it->second.error.empty();
        const diode::DemoTiming t = ok ? it->second : diode::DemoTiming{};
        step[0] << (ok && t.kernelMs ? *t.kernelMs * 1000 : NAN);
        compile[0] << (ok && t.compileS ? *t.compileS : NAN);
        stepLabel[0] << speedupBarLabel(diode::DemoResult::kernelSpeedup(c, m, ref), 3, m, ref);
        compileLabel[0] << speedupBarLabel(diode::DemoResult::compileSpeedup(c, m, ref), 3, m, ref);
        const QPair<double, double> none(NAN, NAN);
        stepSpread[0] << (t.kernelMsSpread ? QPair<double, double>(t.kernelMsSpread->first * 1000,
                                                                   t.kernelMsSpread->second * 1000)
                                           : none);
        compileSpread[0] << (t.compileSSpread ? QPair<double, double>(*t.compileSSpread) : none);
        spreads = spreads || t.kernelMsSpread || t.compileSSpread;
        processes = std::max(processes, ok ? t.processes : 0);
        if (auto kinds = ok ? diode::DemoResult::timeByCategory(t) : decltype(breakdown)::value_type{};
            !kinds.empty()) {
            measured << titles.back();
            breakdown.push_back(std::move(kinds));
        }
    }
    const QStringList name{QString::fromStdString(c.name)};
    const QString against = QString::fromStdString(diode::DemoResult::modeTitle(ref));
    // Two short lines: what the bar is, then what its whisker and label are.
    const QString median = processes > 1 ? tr("median of %1 processes").arg(processes) : tr("one process");
    const QString marks =
        (spreads ? tr("whiskers: min–max; ") : QString()) + tr("labels: × vs %1").arg(against);
    m_step->setBars(tr("Step time, %1\n%2").arg(median, marks), tr("step (µs)"), name, titles, step,
                    stepLabel, false, spreads ? stepSpread : decltype(stepSpread){});
    m_compile->setBars(tr("Compile time, %1\n%2").arg(median, marks), tr("compile (s)"), name, titles,
                       compile, compileLabel, false, spreads ? compileSpread : decltype(compileSpread){});
    m_breakdown->setBreakdown(
        tr("Where the step's time goes, by kind of kernel"), measured, breakdown,
        tr("No kernel breakdown in this result: diode-demo/3 results record each step's "
           "kernels (%1 is %2).")
            .arg(QString::fromStdString(c.name), QString::fromStdString(m_result.schema)));
    m_kernels->setResults(c, modes);
    m_note->setText(
        processes > 1
            ? tr("%1: each mode compiled and timed in %2 processes; times are their median.")
                  .arg(QString::fromStdString(c.name))
                  .arg(processes)
            : tr("%1: each mode measured once (no spread recorded).").arg(QString::fromStdString(c.name)));
}
