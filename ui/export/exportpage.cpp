#include "export/exportpage.h"

#include "common/exportactions.h"
#include "common/messagelabel.h"
#include "common/metricsmodel.h"
#include "common/modellist.h"
#include "common/pageshortcut.h"
#include "common/workbenchstate.h"

#include "diode/analysis/wording.h"
#include "diode/infer/modelinstall.h"
#include "diode/infer/modelpackage.h"
#include "diode/infer/shippeddata.h"
#include "diode/infer/timingmethod.h"

#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSaveFile>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

ExportPage::ExportPage(WorkbenchState *state, QWidget *parent)
    : QWidget(parent)
    , m_state(state)
    , m_models(ModelList::of(state))
    , m_package(new QComboBox(this))
    , m_summary(new QLabel(this))
    , m_target(new QLabel(this))
    , m_message(new MessageLabel(this))
    , m_metrics(new MetricsModel(this))
    , m_view(new QTableView(this))
    , m_raw(new QPlainTextEdit(this)) {
    setObjectName(QStringLiteral("exportPage"));
    m_package->setModel(m_models);
    auto *open = new QPushButton(tr("Open…"), this);
    auto *save = new QPushButton(tr("&Save as .diode…"), this);
    auto *install = new QPushButton(tr("&Install into the plugin"), this);
    save->setToolTip(tr("Write the package to a file (Ctrl+S)"));
    install->setToolTip(tr("Copy the package into the plugin's model directory (Ctrl+I)"));
    auto *bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Package"), this));
    bar->addWidget(m_package, 1);
    bar->addWidget(open);
    bar->addWidget(save);
    bar->addWidget(install);

    m_summary->setObjectName(QStringLiteral("packageSummary"));
    m_summary->setTextFormat(Qt::RichText);
    m_summary->setWordWrap(true);
    m_summary->setObjectName(QStringLiteral("packageSummary"));
    m_target->setWordWrap(true);
    m_target->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_message->setObjectName(QStringLiteral("exportMessage"));
    m_view->setModel(m_metrics);
    m_view->setObjectName(QStringLiteral("packageMetrics"));
    m_view->verticalHeader()->hide();
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    addTableExport(m_view, QStringLiteral("package-metrics"));
    m_raw->setReadOnly(true);
    m_raw->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_raw->setObjectName(QStringLiteral("manifestJson"));
    auto *metricsBox = new QWidget(this);
    auto *ml = new QVBoxLayout(metricsBox);
    ml->setContentsMargins(0, 0, 0, 0);
    auto *metricsTitle =
        new QLabel(tr("<b>Metrics on the test split</b> (problem lines the model never trained on, as the "
                      "trainer counts them: a problem measured in two runs is two lines; <tt>diode eval</tt> "
                      "says how many distinct problems they are)"),
                   this);
    metricsTitle->setObjectName(QStringLiteral("metricsTitle"));
    metricsTitle->setWordWrap(true); // the page must fit a 1280x800 screen
    ml->addWidget(metricsTitle);
    ml->addWidget(m_view, 1);
    auto *rawBox = new QWidget(this);
    auto *rl = new QVBoxLayout(rawBox);
    rl->setContentsMargins(0, 0, 0, 0);
    rl->addWidget(new QLabel(
        tr("<b>Manifest</b> (JSON; metrics in the table, tensors and feature names left out)"), this));
    rl->addWidget(m_raw, 1);
    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(metricsBox);
    split->addWidget(rawBox);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 2);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_summary);
    layout->addWidget(m_target);
    layout->addWidget(m_message);
    layout->addWidget(split, 1);

    addPageShortcut(this, QKeySequence::Save, [this] { chooseSaveTarget(); });
    connect(save, &QPushButton::clicked, this, &ExportPage::chooseSaveTarget);
    addPageShortcut(this, QKeySequence(Qt::CTRL | Qt::Key_I), [this] { installInteractive(); });
    connect(install, &QPushButton::clicked, this, &ExportPage::installInteractive);
    connect(open, &QPushButton::clicked, this, [this] {
        const QString p = QFileDialog::getOpenFileName(this, tr("Model package"), QString(),
                                                       tr("Diode packages (*.diode)"));
        if (!p.isEmpty())
            showPackage(p);
    });
    connect(m_package, &QComboBox::activated, this, [this](int row) { showPackage(m_models->at(row).path); });
    connect(m_state, &WorkbenchState::packageChanged, this, &ExportPage::showPackage);
    if (!m_state->packagePath().isEmpty())
        showPackage(m_state->packagePath());
    else {
        m_package->setCurrentIndex(-1);
        setMessage(tr("No package yet: choose one, train one or open a .diode file."), false);
    }
}

QString ExportPage::manifestText() const {
    return m_raw->toPlainText();
}

void ExportPage::setMessage(const QString &text, bool error) {
    m_message->showMessage(text, error);
}

QString ExportPage::message() const {
    return m_message->text();
}

bool ExportPage::showPackage(const QString &path) {
    if (path.isEmpty()) { // no model fits the open data (MainWindow::fitPackageTo)
        m_path.clear();
        m_package->setCurrentIndex(-1);
        m_summary->clear();
        m_target->clear();
        m_metrics->setResults({});
        m_raw->clear();
        setMessage(tr("No model fits the open data: train one, or choose or open a package."), false);
        return false;
    }
    nlohmann::json m;
    try {
        m = diode::ModelPackage::load(path.toStdString()).manifest(); // verifies checksums and schema
    } catch (const std::exception &e) {
        setMessage(tr("Cannot use %1: %2").arg(path, QString::fromUtf8(e.what())), true);
        return false;
    }
    m_path = QFileInfo(path).absoluteFilePath();
    const int row = m_models->add(m_path);
    if (row >= 0)
        m_package->setCurrentIndex(row);
    // Each fact once: the metrics go to the table, the rest of the manifest stays JSON.
    nlohmann::json preview = m;
    preview.erase("tensors");
    preview.erase("feature_names");
    preview.erase("metrics");
    QVector<MetricsRow> rows;
    const auto test = m.value("/metrics/test_split"_json_pointer, nlohmann::json::object());
    const QString name =
        QString::fromStdString(diode::packageName(m_path.toStdString())); // as every list names it
    const auto model = test.value("model", nlohmann::json::object());
    rows << MetricsRow::fromJson(name, model.value("all", nlohmann::json::object()), true);
    const auto groups = model.value("by", nlohmann::json::object()); // named: items() must not outlive it
    for (const auto &[group, g] : groups.items())
        rows << MetricsRow::fromJson(QStringLiteral("%1, %2").arg(name, QString::fromStdString(group)), g,
                                     true);
    // Baselines in the order every page lists them (plain torch.compile first), then any other.
    // A cpu model's data has no ATen and no Inductor: its baselines say so.
    const bool cpuModel =
        m.value("timing_method", std::string()) == diode::toString(diode::TimingMethod::Cpu);
    const auto baselines = test.value("baselines", nlohmann::json::object());
    const auto testProblems = model.value("/all/problems"_json_pointer, nlohmann::json());
    for (const char *key : diode::kBaselineOrder)
        if (baselines.contains(key) && baselineShown(key, cpuModel)) {
            // max-autotune's pick exists only where Inductor's own benchmark ran: say on how many.
            QString title = baselineTitle(key, cpuModel);
            if (const auto n = baselines[key].value("problems", nlohmann::json()); n != testProblems)
                title = tr("%1 (%2 problem lines with Inductor's timings)").arg(title).arg(n.dump().c_str());
            rows << MetricsRow::fromJson(title, baselines[key], false);
        }
    for (const auto &[baseline, b] : baselines.items())
        if (std::find(std::begin(diode::kBaselineOrder), std::end(diode::kBaselineOrder), baseline) ==
            std::end(diode::kBaselineOrder))
            rows << MetricsRow::fromJson(baselineTitle(baseline), b, false);
    m_metrics->setResults(rows);
    m_raw->setPlainText(QString::fromStdString(preview.dump(2)));
    auto list = [](const nlohmann::json &a) {
        QStringList s;
        for (const auto &x : a)
            s << QString::fromStdString(x.get<std::string>());
        return s.join(QStringLiteral(", "));
    };
    const auto top1 =
        m.value("/metrics/test_split/model/all/top1_efficiency/mean"_json_pointer, nlohmann::json());
    // A cpu model's "GPU" is the CPU it was measured on, its SM count that CPU's cores.
    const int units = m.value("/hardware/sm_count"_json_pointer, 0);
    m_summary->setText(
        tr("<b>%1</b> &nbsp; %2 (%3) &nbsp; ops %4 &nbsp; dtypes %5 &nbsp; feature schema %6 &nbsp; "
           "test top-1 %7 &nbsp; created %8 &nbsp; %9 KB, checksums verified%10")
            .arg(name)
            .arg(QString::fromStdString(m.value("/hardware/gpu"_json_pointer, std::string("?"))))
            .arg(cpuModel ? tr("%1 cores").arg(units) : tr("%1 SMs").arg(units))
            .arg(list(m.value("ops", nlohmann::json::array())),
                 list(m.value("dtypes", nlohmann::json::array())))
            .arg(m.value("feature_schema_version", 0))
            .arg(top1.is_number() ? QString::number(top1.get<double>(), 'f', 4) : QStringLiteral("–"))
            .arg(QString::fromStdString(m.value("created_at", "")))
            .arg(QFileInfo(m_path).size() / 1024)
            .arg(testProblems.is_number_integer() &&
                         !diode::fewProblemsWarning(testProblems.get<size_t>()).empty()
                     ? tr("<br><span style=\"color:#b35c00\">Warning: %1 (the test split, counted in problem "
                          "lines).</span>")
                           .arg(QString::fromStdString(diode::fewProblemsWarning(testProblems.get<size_t>())))
                     : QString()));
    const QString dir = QString::fromStdString(diode::pluginModelDirectory().string());
    const QString target = dir + '/' + QFileInfo(m_path).fileName();
    m_target->setText(
        tr("Install target: %1%2 (from $TORCH_DIODE_MODEL_PATH, else $XDG_DATA_HOME/torch_diode/models)")
            .arg(target, QFileInfo::exists(target) ? tr(", which exists") : QString()));
    setMessage(tr("Package %1 loaded.").arg(m_path), false);
    return true;
}

QString ExportPage::saveAs(const QString &target) {
    if (m_path.isEmpty())
        return tr("No package is shown.");
    if (QFileInfo(target).absoluteFilePath() == m_path)
        return {};
    try { // a shipped package is only read (core/infer/diode/infer/shippeddata.h), whatever replaces it
        diode::shipped::refuseWritingShipped(target.toStdString(), "package");
    } catch (const std::exception &e) {
        return QString::fromUtf8(e.what());
    }
    QFile in(m_path);
    if (!in.open(QIODevice::ReadOnly))
        return tr("Cannot read %1: %2").arg(m_path, in.errorString());
    // QSaveFile writes beside the target and renames at commit: a failed write leaves an
    // existing file as it was.
    QSaveFile out(target);
    if (!out.open(QIODevice::WriteOnly))
        return tr("Cannot write %1: %2").arg(target, out.errorString());
    const QByteArray bytes = in.readAll();
    if (out.write(bytes) != bytes.size() || !out.commit())
        return tr("Cannot write %1: %2").arg(target, out.errorString());
    return {};
}

QString ExportPage::install(bool overwrite, QString *error, const QString &directory) {
    if (m_path.isEmpty()) {
        if (error)
            *error = tr("No package is shown.");
        return {};
    }
    try {
        const auto dir = directory.isEmpty() ? diode::pluginModelDirectory()
                                             : std::filesystem::path(directory.toStdString());
        return QString::fromStdString(diode::installPackage(m_path.toStdString(), dir, overwrite).string());
    } catch (const std::exception &e) {
        if (error)
            *error = QString::fromUtf8(e.what());
        return {};
    }
}

void ExportPage::chooseSaveTarget() {
    if (m_path.isEmpty())
        return setMessage(tr("No package is shown."), true);
    // The dialog asks before replacing an existing file.
    const QString target = QFileDialog::getSaveFileName(
        this, tr("Save package"), QFileInfo(m_path).fileName(), tr("Diode packages (*.diode)"));
    if (target.isEmpty())
        return;
    const QString err = saveAs(target);
    setMessage(err.isEmpty() ? tr("Wrote %1.").arg(target) : err, !err.isEmpty());
}

void ExportPage::installInteractive() {
    QString error;
    QString installed = install(false, &error);
    if (installed.isEmpty() && error.contains(QStringLiteral("already exists"))) {
        const auto answer = QMessageBox::question(this, tr("Replace installed model?"),
                                                  tr("%1\n\nReplace it with %2?").arg(error, m_path));
        if (answer != QMessageBox::Yes)
            return setMessage(tr("Not installed: %1").arg(error), true);
        installed = install(true, &error);
    }
    if (installed.isEmpty())
        return setMessage(tr("Cannot install: %1").arg(error), true);
    setMessage(tr("Installed %1. New Python processes that import torch_diode pick it up.").arg(installed),
               false);
    showPackage(m_path); // refresh the "exists" note
    setMessage(tr("Installed %1. New Python processes that import torch_diode pick it up.").arg(installed),
               false);
}
