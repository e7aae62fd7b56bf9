#include "data/datapage.h"

#include "common/exportactions.h"
#include "common/flopunit.h"
#include "common/schemanames.h"
#include "common/workbenchstate.h"
#include "data/heatmapview.h"
#include "data/rooflineview.h"
#include "data/storetablemodel.h"

#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QShortcut>
#include <QSignalBlocker>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <map>

namespace {

QComboBox *choiceBox(const QStringList &items, const QString &name, QWidget *parent) {
    auto *box = new QComboBox(parent);
    box->setObjectName(name);
    box->addItems(items);
    return box;
}

QString anyToEmpty(const QComboBox *box) {
    return box->currentIndex() == 0 ? QString() : box->currentText();
}

} // namespace

DataPage::DataPage(WorkbenchState *state, QWidget *parent)
    : QWidget(parent)
    , m_state(state)
    , m_runs(new StoreTableModel(diode::DataTable::Runs, this))
    , m_problems(new StoreTableModel(diode::DataTable::Problems, this))
    , m_measurements(new StoreTableModel(diode::DataTable::Measurements, this))
    , m_kernels(new StoreTableModel(diode::DataTable::Kernels, this))
    , m_sites(new StoreTableModel(diode::DataTable::Sites, this))
    , m_loader(new AnalysisLoader(this))
    , m_error(new QLabel(this))
    , m_run(choiceBox({tr("All runs")}, QStringLiteral("runFilter"), this))
    , m_op(choiceBox(QStringList{tr("Any op")} + opNameList(), QStringLiteral("opFilter"), this))
    , m_dtype(choiceBox(QStringList{tr("Any dtype")} + dtypeNameList(), QStringLiteral("dtypeFilter"), this))
    , m_status(choiceBox({tr("Any status"), "ok", "failed", "timeout"}, QStringLiteral("statusFilter"), this))
    , m_method(choiceBox(QStringList{tr("Any method")} + timingMethodNameList(),
                         QStringLiteral("methodFilter"), this))
    , m_text(new QLineEdit(this))
    , m_problemChip(new QWidget(this))
    , m_problemLabel(new QLabel(this))
    , m_textDelay(new QTimer(this))
    , m_tabs(new QTabWidget(this)) {
    setObjectName(QStringLiteral("dataPage"));
    m_error->setObjectName(QStringLiteral("dataError"));
    m_error->setWordWrap(true);
    m_error->setStyleSheet(QStringLiteral("QLabel { color: #c0392b; font-weight: bold; }"));
    m_error->hide();
    m_text->setObjectName(QStringLiteral("textFilter"));
    m_text->setPlaceholderText(tr("config or error contains… (Ctrl+F)"));
    m_text->setClearButtonEnabled(true);
    m_textDelay->setSingleShot(true);
    m_textDelay->setInterval(300);
    auto *refresh = new QPushButton(tr("Refresh"), this);
    refresh->setToolTip(tr("Read the database again (F5)"));

    auto *filters = new QHBoxLayout;
    filters->addWidget(new QLabel(tr("Filter:"), this));
    m_run->setSizeAdjustPolicy(QComboBox::AdjustToContents); // its runs arrive after the first show
    m_method->setToolTip(tr("Measurements of one timing method: each candidate once, in the data's truth by "
                            "default (graph_warm for in-graph data)"));
    for (QWidget *w : std::initializer_list<QWidget *>{m_run, m_op, m_dtype, m_status, m_method})
        filters->addWidget(w);
    filters->addWidget(m_text, 1);
    filters->addWidget(refresh);
    // The problem another page selected (linked selection): the tables show its lines only.
    auto *chip = new QHBoxLayout(m_problemChip);
    chip->setContentsMargins(0, 0, 0, 0);
    m_problemLabel->setObjectName(QStringLiteral("problemFilter"));
    auto *clearProblem = new QPushButton(tr("Show every problem"), m_problemChip);
    clearProblem->setObjectName(QStringLiteral("clearProblemFilter"));
    chip->addWidget(m_problemLabel, 1);
    chip->addWidget(clearProblem);
    m_problemChip->hide();
    connect(clearProblem, &QPushButton::clicked, this, [this] {
        m_problem.reset();
        m_problemChip->hide();
        m_roofline->setHighlight(QString());
        applyFilter();
    });

    QTableView *view = nullptr;
    m_tabs->addTab(tablePage(m_runs, QStringLiteral("runs"), &view), tr("&Runs"));
    m_tabs->addTab(tablePage(m_problems, QStringLiteral("problems"), &view), tr("&Problems"));
    m_tabs->addTab(tablePage(m_measurements, QStringLiteral("measurements"), &view), tr("&Measurements"));
    m_tabs->addTab(heatmapPage(), tr("&Heatmap"));
    m_tabs->addTab(rooflinePage(), tr("R&oofline"));
    // The kernel and site lines (diode sweep-kernels, imported): what the decisions beside the
    // GEMM kernel are trained on. Only the text filter applies to them.
    const QString linesFrom =
        tr("Kernel and site lines come from `diode sweep-kernels` on a GPU; `diode import LINES.jsonl --db "
           "STORE` adds a file of them to a store (the shipped ones are "
           "trained_models/<gpu>/<gpu>-kernels.jsonl "
           "and -sites.jsonl).");
    m_tabs->addTab(tablePage(m_kernels, QStringLiteral("kernels"), &view, linesFrom), tr("&Kernel lines"));
    m_tabs->addTab(tablePage(m_sites, QStringLiteral("sites"), &view, linesFrom), tr("&Site lines"));
    // The GEMM filters say nothing of kernel and site lines: off while one of theirs is shown.
    const int firstLinesTab = m_tabs->count() - 2;
    connect(m_tabs, &QTabWidget::currentChanged, this, [this, firstLinesTab](int index) {
        const bool lines = index >= firstLinesTab;
        for (QWidget *w : std::initializer_list<QWidget *>{m_run, m_op, m_dtype, m_status, m_method})
            w->setEnabled(!lines);
    });

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_error);
    layout->addLayout(filters);
    layout->addWidget(m_problemChip);
    layout->addWidget(m_tabs, 1);
    for (auto [model, name] :
         {std::pair{m_problems, "problemsView"}, std::pair{m_measurements, "measurementsView"}}) {
        auto *v = findChild<QTableView *>(QString::fromLatin1(name));
        connect(v->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
                [this, model](const QModelIndex &current) {
                    if (current.isValid())
                        announceRow(model, current.row());
                });
    }
    connect(state, &WorkbenchState::problemSelected, this, [this](const QString &label, const QString &from) {
        if (from != objectName())
            showSelectedProblem(label);
    });

    connect(m_run, &QComboBox::currentIndexChanged, this, [this] {
        applyFilter();
        if (!m_analysis.path.isEmpty())
            m_loader->load(m_analysis.path, selectedRun());
    });
    connect(m_method, &QComboBox::currentIndexChanged, this, &DataPage::applyFilter);
    connect(m_method, &QComboBox::activated, this, [this] { m_methodChosen = true; }); // by hand only
    for (QComboBox *box : {m_op, m_dtype, m_status})
        connect(box, &QComboBox::currentIndexChanged, this, [this] {
            applyFilter();
            drawRoofline();
        });
    connect(m_text, &QLineEdit::textChanged, m_textDelay, qOverload<>(&QTimer::start));
    connect(m_textDelay, &QTimer::timeout, this, &DataPage::applyFilter);
    connect(refresh, &QPushButton::clicked, this, &DataPage::refresh);
    new QShortcut(QKeySequence::Refresh, this, this, &DataPage::refresh, Qt::WindowShortcut);
    new QShortcut(QKeySequence::Find, this, m_text, qOverload<>(&QWidget::setFocus), Qt::WindowShortcut);

    connect(m_loader, &AnalysisLoader::loaded, this, &DataPage::showAnalysis);
    connect(m_loader, &AnalysisLoader::failed, this, &DataPage::showError);
    for (StoreTableModel *m : tables()) {
        connect(m, &StoreTableModel::failed, this, &DataPage::showError);
        connect(m, &StoreTableModel::pageLoaded, this, &DataPage::emitReadyWhenLoaded);
    }
    connect(this, &DataPage::analysisShown, this, &DataPage::emitReadyWhenLoaded);
    connect(m_loader, &AnalysisLoader::failed, this, &DataPage::ready);
    connect(state, &WorkbenchState::databaseChanged, this, &DataPage::openDatabase);
    connect(state, &WorkbenchState::dataChanged, this, &DataPage::refresh);

    QSettings settings;
    m_tabs->setCurrentIndex(settings.value(QStringLiteral("data/tab"), 0).toInt());
    m_heatOp->setCurrentText(settings.value(QStringLiteral("data/heatmapOp"), "mm").toString());
    m_heatDtype->setCurrentText(settings.value(QStringLiteral("data/heatmapDtype"), "bf16").toString());
    m_roofDtype->setCurrentText(settings.value(QStringLiteral("data/rooflineDtype"), "bf16").toString());
    if (!state->databasePath().isEmpty())
        openDatabase(state->databasePath());
}

DataPage::~DataPage() {
    QSettings settings;
    settings.setValue(QStringLiteral("data/tab"), m_tabs->currentIndex());
    settings.setValue(QStringLiteral("data/heatmapOp"), m_heatOp->currentText());
    settings.setValue(QStringLiteral("data/heatmapDtype"), m_heatDtype->currentText());
    settings.setValue(QStringLiteral("data/rooflineDtype"), m_roofDtype->currentText());
}

QWidget *DataPage::tablePage(StoreTableModel *model, const QString &name, QTableView **viewOut,
                             const QString &emptyHint) {
    auto *page = new QWidget(this);
    auto *view = new QTableView(page);
    view->setObjectName(name + QStringLiteral("View"));
    view->setModel(model);
    view->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
    view->setSortingEnabled(true);
    view->setAlternatingRowColors(true);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 6);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    view->horizontalHeader()->setDefaultSectionSize(90);
    view->horizontalHeader()->setMaximumSectionSize(420);
    // The figures that matter next to the run, before the problem's ten columns, and which timing
    // method a time is (on screen at 1280 px); the model's column numbers
    // (and the SQL behind them) stay as they are.
    const auto &cols = diode::columns(model->table());
    int to = 1;
    for (const char *key : {"Time ms", "Method", "TFLOP/s", "Best ms", "Best TFLOP/s", "Status", "Kernel"}) {
        const auto it = std::find(cols.begin(), cols.end(), key);
        if (it == cols.end())
            continue;
        auto *header = view->horizontalHeader();
        header->moveSection(header->visualIndex(int(it - cols.begin())), to++);
    }
    // Columns as wide as their content (dates, versions, "extern_kernels.bias_addmm"), measured
    // once per reload on the first page: later pages keep the widths the user sees.
    connect(model, &StoreTableModel::pageLoaded, view, [view](qint64 loaded) {
        if (loaded <= StoreTableModel::kPageSize)
            view->resizeColumnsToContents();
    });
    // Not addTableExport: that writes the rows loaded so far; this writes every matching row.
    view->setContextMenuPolicy(Qt::ActionsContextMenu);
    auto *csv = new QAction(tr("Save table as CSV (all matching rows)…"), view);
    connect(csv, &QAction::triggered, this, [this, model, name] {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Save table"), name + QStringLiteral(".csv"), QStringLiteral("CSV (*.csv)"));
        if (!path.isEmpty())
            model->exportCsv(path);
    });
    view->addAction(csv);
    connect(model, &StoreTableModel::exported, this,
            [this](const QString &path, qint64 rows, const QString &error) {
                if (!error.isEmpty()) {
                    showError(error);
                    return;
                }
                reportSaved(this, tr("%L1 rows saved to %2").arg(rows).arg(QDir::toNativeSeparators(path)));
                emit exported(path, rows);
            });
    auto *count = new QLabel(page);
    count->setObjectName(name + QStringLiteral("Count"));
    count->setWordWrap(true); // an empty table's hint is a sentence: it wraps rather than widen the window
    connect(model, &StoreTableModel::pageLoaded, count, [count, emptyHint](qint64 loaded, qint64 total) {
        if (total == 0 && !emptyHint.isEmpty())
            count->setText(tr("0 rows. %1").arg(emptyHint));
        else
            count->setText(loaded < total
                               ? tr("%L1 of %L2 rows loaded; scroll for more").arg(loaded).arg(total)
                               : tr("%L1 rows").arg(total));
    });
    connect(model, &QAbstractItemModel::modelReset, count, [count] { count->setText(tr("Loading…")); });
    auto *layout = new QVBoxLayout(page);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(view, 1);
    layout->addWidget(count);
    *viewOut = view;
    return page;
}

QWidget *DataPage::heatmapPage() {
    auto *page = new QWidget(this);
    m_heatmap = new HeatmapView(page);
    m_heatmap->setObjectName(QStringLiteral("heatmap"));
    m_heatOp = choiceBox(opNameList(), QStringLiteral("heatmapOp"), page);
    m_heatDtype = choiceBox(dtypeNameList(), QStringLiteral("heatmapDtype"), page);
    auto *bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Op:"), page));
    bar->addWidget(m_heatOp);
    bar->addWidget(new QLabel(tr("DType:"), page));
    bar->addWidget(m_heatDtype);
    bar->addStretch(1);
    auto *layout = new QVBoxLayout(page);
    layout->addLayout(bar);
    layout->addWidget(m_heatmap, 1);
    for (QComboBox *box : {m_heatOp, m_heatDtype}) {
        connect(box, &QComboBox::currentIndexChanged, this, &DataPage::drawHeatmap);
        connect(box, &QComboBox::activated, this, [this] { m_heatChosen = true; }); // by hand only
    }
    return page;
}

QWidget *DataPage::rooflinePage() {
    auto *page = new QWidget(this);
    m_roofline = new RooflineView(page);
    m_roofline->setObjectName(QStringLiteral("roofline"));
    m_roofDtype = choiceBox({"bf16", "fp16", "fp32"}, QStringLiteral("rooflineDtype"), page);
    m_peakTflops = new QDoubleSpinBox(page);
    m_peakTflops->setObjectName(QStringLiteral("peakTflops"));
    m_peakTflops->setRange(0, 100000);
    m_peakTflops->setDecimals(1);
    m_peakTflops->setSuffix(tr(" TFLOP/s"));
    m_peakBandwidth = new QDoubleSpinBox(page);
    m_peakBandwidth->setObjectName(QStringLiteral("peakBandwidth"));
    m_peakBandwidth->setRange(0, 1000);
    m_peakBandwidth->setDecimals(2);
    m_peakBandwidth->setSuffix(tr(" TB/s"));
    m_peakSource = new QLabel(page);
    m_peakSource->setObjectName(QStringLiteral("peakSource"));
    auto *reset = new QPushButton(tr("Datasheet peaks"), page);
    reset->setToolTip(tr("Take the peaks from the GPU's datasheet again"));
    auto *bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("DType:"), page));
    bar->addWidget(m_roofDtype);
    bar->addWidget(new QLabel(tr("Peak compute:"), page));
    bar->addWidget(m_peakTflops);
    bar->addWidget(new QLabel(tr("Bandwidth:"), page));
    bar->addWidget(m_peakBandwidth);
    bar->addWidget(reset);
    bar->addWidget(m_peakSource, 1);
    auto *layout = new QVBoxLayout(page);
    layout->addLayout(bar);
    layout->addWidget(m_roofline, 1);
    connect(m_roofDtype, &QComboBox::currentIndexChanged, this, &DataPage::drawRoofline);
    connect(m_peakTflops, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        const auto dt =
            diode::parseDType(m_roofDtype->currentText().toStdString()).value_or(diode::DType::BF16);
        (dt == diode::DType::BF16   ? m_peaks.bf16Tflops
         : dt == diode::DType::FP16 ? m_peaks.fp16Tflops
                                    : m_peaks.fp32Tflops) = v;
        m_peaks.source = "user";
        drawRoofline();
    });
    connect(m_peakBandwidth, &QDoubleSpinBox::valueChanged, this, [this](double v) {
        m_peaks.bandwidthTBs = v;
        m_peaks.source = "user";
        drawRoofline();
    });
    connect(reset, &QPushButton::clicked, this, [this] {
        m_peaksGpu.clear();
        peaksForGpu();
        drawRoofline();
    });
    return page;
}

void DataPage::emitReadyWhenLoaded() {
    const auto all = tables();
    if (!m_analysis.path.isEmpty() && m_analysisLoaded &&
        std::none_of(all.begin(), all.end(), [](auto *m) { return m->isLoading(); }))
        emit ready();
}

void DataPage::openDatabase(const QString &path) {
    m_error->hide();
    m_analysisLoaded = false;
    if (path != m_analysis.path) {
        m_methodChosen = false; // another database: its own truth first
        m_heatChosen = false;   // and its own most measured op and dtype
        m_problem.reset();
        m_problemChip->hide();
    }
    m_analysis = DataAnalysis{};
    m_analysis.path = path;
    m_run->blockSignals(true);
    while (m_run->count() > 1)
        m_run->removeItem(1);
    m_run->setCurrentIndex(0);
    m_run->blockSignals(false);
    if (!m_methodChosen && !m_state->dataMethod().isEmpty()) {
        // The data's truth as the window read it: the tables load it first, with no flash of all.
        const QSignalBlocker quiet(m_method);
        m_method->setCurrentText(m_state->dataMethod());
    }
    applyFilter();
    for (StoreTableModel *m : tables())
        m->setDatabase(path);
    if (!path.isEmpty())
        m_loader->load(path, selectedRun());
}

void DataPage::refresh() {
    if (m_state->databasePath() != m_analysis.path) {
        openDatabase(m_state->databasePath());
        return;
    }
    m_error->hide();
    for (StoreTableModel *m : tables())
        m->reload();
    if (!m_analysis.path.isEmpty())
        m_loader->load(m_analysis.path, selectedRun());
}

std::optional<qint64> DataPage::selectedRun() const {
    const QVariant v = m_run->currentData();
    return v.isValid() ? std::optional<qint64>(v.toLongLong()) : std::nullopt;
}

void DataPage::applyFilter() {
    diode::DataFilter f;
    if (auto run = selectedRun())
        f.runId = *run;
    f.op = anyToEmpty(m_op).toStdString();
    f.dtype = anyToEmpty(m_dtype).toStdString();
    f.status = anyToEmpty(m_status).toStdString();
    f.method = anyToEmpty(m_method).toStdString(); // measurements only
    f.text = m_text->text().trimmed().toStdString();
    f.problem = m_problem;
    // Run statuses differ from measurement statuses: the runs table keeps only the run filter.
    diode::DataFilter runsFilter;
    runsFilter.runId = f.runId;
    runsFilter.text = f.text;
    m_runs->setFilter(runsFilter);
    m_problems->setFilter(f);
    m_measurements->setFilter(f);
    diode::DataFilter linesFilter;
    linesFilter.text = f.text;
    m_kernels->setFilter(linesFilter);
    m_sites->setFilter(linesFilter);
}

void DataPage::showAnalysis(const DataAnalysis &analysis) {
    if (analysis.path != m_analysis.path)
        return;
    const auto run = selectedRun();
    m_analysis = analysis;
    m_analysisLoaded = true;
    // The data's truth, which a sweep into it may have changed (an empty store has none yet),
    // unless the user chose a method for this database.
    if (!m_methodChosen)
        m_method->setCurrentText(QString::fromUtf8(diode::toString(analysis.method.method).data()));
    m_run->blockSignals(true);
    while (m_run->count() > 1)
        m_run->removeItem(1);
    for (const auto &r : analysis.runs) {
        m_run->addItem(tr("run %1: %2 %3")
                           .arg(r.id)
                           .arg(QString::fromStdString(r.backend), QString::fromStdString(r.planName)),
                       QVariant::fromValue(qint64(r.id)));
        if (run && *run == r.id)
            m_run->setCurrentIndex(m_run->count() - 1);
    }
    m_run->blockSignals(false);
    // The tables' rates in the unit the plots use for this data (GFLOP/s for a CPU's).
    double largest = 0;
    for (const auto &b : m_analysis.best)
        largest = std::max(largest, b.tflops());
    for (StoreTableModel *m : {m_problems, m_measurements})
        m->setFlopUnit(FlopUnit::forLargest(largest));
    peaksForGpu();
    if (!m_heatChosen)
        chooseHeatmapDefault();
    drawHeatmap();
    drawRoofline();
    emit analysisShown();
    if (!m_state->selectedProblem().isEmpty() && !m_problem)
        showSelectedProblem(m_state->selectedProblem()); // chosen elsewhere before this data came
}

void DataPage::chooseHeatmapDefault() {
    std::map<std::pair<diode::GemmOp, diode::DType>, int> counts;
    for (const auto &b : m_analysis.best)
        ++counts[{b.problem.op, b.problem.dtype}];
    const auto most = std::max_element(counts.begin(), counts.end(),
                                       [](const auto &a, const auto &b) { return a.second < b.second; });
    if (most == counts.end())
        return;
    const QSignalBlocker quietOp(m_heatOp), quietDtype(m_heatDtype); // drawn once, by the caller
    m_heatOp->setCurrentText(QString::fromUtf8(diode::toString(most->first.first).data()));
    m_heatDtype->setCurrentText(QString::fromUtf8(diode::toString(most->first.second).data()));
}

void DataPage::showSelectedProblem(const QString &label) {
    const auto it =
        std::find_if(m_analysis.best.begin(), m_analysis.best.end(), [&](const diode::ProblemBest &b) {
            return QString::fromStdString(b.problem.label()) == label;
        });
    if (it == m_analysis.best.end()) {
        if (m_analysisLoaded) {
            m_problemLabel->setText(tr("%1 (selected on another page) is not in this database.").arg(label));
            m_problemChip->show();
        }
        return;
    }
    m_problem = it->problem;
    m_problemLabel->setText(
        tr("Showing the lines of <b>%1</b>, selected on another page.").arg(label.toHtmlEscaped()));
    m_problemChip->show();
    ringOnRoofline(it->problem);
    applyFilter();
}

// The problem of a table row, from its cells: op, dtype, B, M, N, K and the two layouts.
void DataPage::announceRow(StoreTableModel *model, int row) {
    const auto &cols = diode::columns(model->table());
    auto cell = [&](const char *header) {
        const auto c = std::find(cols.begin(), cols.end(), header);
        return c == cols.end() ? QVariant() : model->index(row, int(c - cols.begin())).data(Qt::EditRole);
    };
    diode::GemmProblem p;
    const auto op = diode::parseOp(cell("Op").toString().toStdString());
    const auto dtype = diode::parseDType(cell("DType").toString().toStdString());
    if (!op || !dtype)
        return;
    p.op = *op;
    p.dtype = *dtype;
    p.batch = cell("B").toLongLong();
    p.m = cell("M").toLongLong();
    p.n = cell("N").toLongLong();
    p.k = cell("K").toLongLong();
    p.aTransposed = cell("A layout").toString() == QLatin1String("transposed");
    p.bTransposed = cell("B layout").toString() == QLatin1String("column-major");
    ringOnRoofline(p);
    m_state->selectProblem(QString::fromStdString(p.label()), objectName());
}

// The roofline shows one dtype: the selected problem's, so that its ring is in view.
void DataPage::ringOnRoofline(const diode::GemmProblem &p) {
    m_roofDtype->setCurrentText(QString::fromUtf8(diode::toString(p.dtype).data())); // redraws if another
    m_roofline->setHighlight(QString::fromStdString(p.label()));
}

void DataPage::peaksForGpu() {
    // The roofline's GPU: the selected run's, else the first run that names a GPU we know.
    QString gpu;
    const auto run = selectedRun();
    for (const auto &r : m_analysis.runs) {
        if (run && r.id != *run)
            continue;
        if (gpu.isEmpty() || (!diode::knownPeaks(gpu.toStdString()) && diode::knownPeaks(r.gpuName)))
            gpu = QString::fromStdString(r.gpuName);
    }
    if (gpu == m_peaksGpu && m_peaks.source == "user")
        return; // keep what the user set
    m_peaksGpu = gpu;
    const auto known = diode::knownPeaks(gpu.toStdString());
    m_peaks = known ? *known : diode::GpuPeaks{};
    m_peakSource->setText(known
                              ? tr("Peaks of %1 from the %2").arg(gpu, QString::fromStdString(known->source))
                          : gpu.isEmpty() ? tr("No GPU named in this database: set the peaks by hand")
                                          : tr("No datasheet peaks for '%1': set them by hand").arg(gpu));
}

void DataPage::drawHeatmap() {
    const auto op = diode::parseOp(m_heatOp->currentText().toStdString()).value_or(diode::GemmOp::Mm);
    const auto dt = diode::parseDType(m_heatDtype->currentText().toStdString()).value_or(diode::DType::BF16);
    const auto cells = diode::heatmapCells(m_analysis.best, op, dt);
    m_heatmap->setCells(cells, cells.empty() ? tr("No successful %1 %2 measurements in this selection")
                                                   .arg(m_heatOp->currentText(), m_heatDtype->currentText())
                                             : tr("Best FLOP rate of %1 %2 over (M, N), log2 bins")
                                                   .arg(m_heatOp->currentText(), m_heatDtype->currentText()));
}

void DataPage::drawRoofline() {
    const auto dt = diode::parseDType(m_roofDtype->currentText().toStdString()).value_or(diode::DType::BF16);
    const auto op = diode::parseOp(anyToEmpty(m_op).toStdString());
    std::vector<diode::ProblemBest> points;
    for (const auto &b : m_analysis.best)
        if (b.problem.dtype == dt && (!op || b.problem.op == *op))
            points.push_back(b);
    for (auto [box, value] :
         {std::pair{m_peakTflops, m_peaks.tflops(dt)}, std::pair{m_peakBandwidth, m_peaks.bandwidthTBs}}) {
        const QSignalBlocker block(box);
        box->setValue(value);
    }
    if (m_peaks.source == "user")
        m_peakSource->setText(tr("Peaks set by hand"));
    m_roofline->setPoints(points, m_peaks.tflops(dt), m_peaks.bandwidthTBs,
                          tr("%L1 %2 problem lines (a problem once per run)")
                              .arg(points.size())
                              .arg(m_roofDtype->currentText()));
}

void DataPage::showError(const QString &message) {
    m_error->setText(message);
    m_error->show();
}
