#include "mainwindow.h"

#include "bias/biaspage.h"
#include "common/modellist.h"
#include "common/shippedfile.h"
#include "common/workbenchstate.h"
#include "data/datapage.h"
#include "demo/demopage.h"
#include "diode/infer/shippeddata.h"
#include "export/exportpage.h"
#include "hardware/hardwarepage.h"
#include "summary/storeloader.h"
#include "summary/summarypage.h"
#include "sweep/sweeppage.h"
#include "train/trainpage.h"
#include "validate/validatepage.h"

#include "diode/analysis/wording.h"
#include "diode/config.h"
#include "diode/infer/modelinstall.h"

#include <QCloseEvent>
#include <QDesktopServices>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QShortcut>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>
#include <QUrl>
#include <QVBoxLayout>

namespace {

// The data's GPU: the one most of its problems were measured on (none for cpu data).
QString dataGpu(const DatasetSummary &s) {
    QString gpu;
    int64_t most = -1;
    for (const auto &[name, n] : s.stats.problemsByGpu)
        if (n > most) {
            most = n;
            gpu = QString::fromStdString(name);
        }
    return gpu;
}

} // namespace

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent)
    , m_state(new WorkbenchState(this))
    , m_pageList(new QListWidget(this))
    , m_pageDescription(new QLabel(this))
    , m_pages(new QStackedWidget(this))
    , m_summary(new SummaryPage(this))
    , m_loader(new StoreLoader(this))
    , m_opener(new StoreLoader(this)) {
    setWindowTitle(tr("Diode Workbench"));
    auto *central = new QWidget(this);
    auto *layout = new QHBoxLayout(central);
    layout->setContentsMargins(0, 0, 0, 0);
    m_pageList->setObjectName(QStringLiteral("pageList"));
    m_pageList->setFixedWidth(150);
    layout->addWidget(m_pageList);
    auto *right = new QVBoxLayout;
    m_pageDescription->setObjectName(QStringLiteral("pageDescription"));
    m_pageDescription->setWordWrap(true);
    m_pageDescription->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_pageDescription->setContentsMargins(6, 4, 6, 0);
    m_pageDescription->setStyleSheet(QStringLiteral("QLabel { font-style: italic; }"));
    right->addWidget(m_pageDescription);
    right->addWidget(m_pages, 1);
    layout->addLayout(right, 1);
    setCentralWidget(central);
    connect(m_pageList, &QListWidget::currentRowChanged, this, [this](int row) {
        m_pages->setCurrentIndex(row);
        m_pageDescription->setText(m_descriptions.value(row));
    });
    resize(1280, 800);

    auto *file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open database…"), QKeySequence::Open, this, &MainWindow::chooseDatabase);
    m_recent = file->addMenu(tr("Open &recent"));
    m_recent->setObjectName(QStringLiteral("recentMenu"));
    fillRecentMenu();
    auto *shipped =
        file->addAction(tr("Open the &shipped in-graph data"), this, &MainWindow::openShippedData);
    shipped->setObjectName(QStringLiteral("openShippedData"));
    shipped->setStatusTip(tr("The H200 in-graph dataset (every candidate timed in CUDA graphs) and the "
                             "plugin's default package for it"));
    auto *earlier = file->addAction(tr("Open &earlier data (Inductor's own timings, v2)"), this,
                                    &MainWindow::openEarlierData);
    earlier->setObjectName(QStringLiteral("openEarlierData"));
    earlier->setStatusTip(QString::fromUtf8(diode::shipped::kEarlierDatasetAbout.data(),
                                            qsizetype(diode::shipped::kEarlierDatasetAbout.size())));
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
    auto *help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Documentation"), QKeySequence::HelpContents, this, &MainWindow::showDocumentation);
    help->addAction(tr("&About Diode Workbench"), this, &MainWindow::showAbout);

    m_summary->setObjectName(QStringLiteral("overviewPage"));
    addPage(m_summary, tr("Overview"),
            tr("What the open database holds: problems, measurements and their timing methods, GPUs, and one "
               "row per run."));
    // Further pages are added here, one line each.
    addPage(new HardwarePage(m_state, this), tr("Hardware"),
            tr("This machine's CPU and GPUs, and clock, power and temperature telemetry: live, or stored "
               "with a run."));
    addPage(
        new SweepPage(m_state, this), tr("Sweep"),
        tr("Design a sweep plan, see its size and duration, run it (cpu or inductor backend) and watch each "
           "problem's best FLOP rate arrive."));
    addPage(new DataPage(m_state, this), tr("Data"),
            tr("Every run, problem and measurement of the open database, filtered and sorted; best FLOP rate "
               "over (M, N) and the roofline."));
    addPage(new TrainPage(m_state, this), tr("Train"),
            tr("Train the runtime model on the open database: loss and validation top-1 efficiency per "
               "epoch, one "
               "curve per network of the ensemble."));
    addPage(
        new ValidatePage(m_state, this), tr("Validate"),
        tr("How well a model picks kernels on problems it never trained on: predicted against measured time, "
           "and top-1 efficiency against plain torch.compile (ATen) and max-autotune's pick."));
    addPage(new BiasPage(m_state, this), tr("Bias"),
            tr("Where Inductor's own autotune benchmark misleads max-autotune, against in-graph times."));
    addPage(
        new ExportPage(m_state, this), tr("Export"),
        tr("A model package's metrics on its held-out test split and its manifest; save it, or install it "
           "for the Inductor plugin."));
    addPage(
        new DemoPage(m_state, this), tr("Demo"),
        tr("diode demo: compile time and kernel speed-up against plain torch.compile and max-autotune, run "
           "on a local GPU or read from a saved result."));

    connect(m_loader, &StoreLoader::loaded, this, [this](const DatasetSummary &s) {
        if (s.path == m_state->databasePath()) // not one another database replaced meanwhile
            showSummary(s);
    });
    connect(m_loader, &StoreLoader::failed, this, [this](const QString &path, const QString &msg) {
        if (path == m_state->databasePath())
            showFailure(path, msg);
    });
    connect(m_opener, &StoreLoader::loaded, this, [this](const DatasetSummary &s) {
        // The model first: with no database open yet, nothing validates the old one on new data.
        fitPackageTo(s);
        // The same one again: its pages read it again.
        m_state->setDatabase(s.path, m_openingReadOnly,
                             QString::fromUtf8(diode::toString(s.stats.defaultMethod.method).data()),
                             dataGpu(s));
        rememberDatabase(s.path);
        showTitle();
        showSummary(s);
    });
    connect(m_opener, &StoreLoader::failed, this, &MainWindow::showFailure);
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    connect(m_state, &WorkbenchState::databaseChanged, this, &MainWindow::showTitle);
    connect(m_state, &WorkbenchState::dataChanged, this, [this] {
        if (!m_state->databasePath().isEmpty()) // none open yet: nothing to read again
            m_loader->load(m_state->databasePath());
    });
}

// Pages hold the shared state and save their settings when destroyed; QObject would delete the
// state first (it is the older child), so the pages go before it.
MainWindow::~MainWindow() {
    delete m_pages;
}

void MainWindow::closeEvent(QCloseEvent *event) {
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("window/page"), m_pageList->currentRow());
    QMainWindow::closeEvent(event);
}

void MainWindow::addPage(QWidget *page, const QString &title, const QString &description) {
    m_descriptions << description;
    m_pages->addWidget(page);
    m_pageList->addItem(title);
    m_pageList->item(m_pageList->count() - 1)->setToolTip(description);
    const int n = m_pages->count();
    if (n <= 9) {
        auto *sc = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_0 + n)), this);
        connect(sc, &QShortcut::activated, this, [this, n] { m_pageList->setCurrentRow(n - 1); });
    }
    if (m_pageList->currentRow() < 0)
        m_pageList->setCurrentRow(0);
}

QWidget *MainWindow::page(const QString &name) const {
    for (int i = 0; i < m_pages->count(); ++i)
        if (m_pages->widget(i)->objectName() == name ||
            m_pageList->item(i)->text().compare(name, Qt::CaseInsensitive) == 0)
            return m_pages->widget(i);
    return nullptr;
}

bool MainWindow::showPage(const QString &name) {
    QWidget *p = page(name);
    if (p)
        m_pageList->setCurrentRow(m_pages->indexOf(p));
    return p;
}

QStringList MainWindow::pageTitles() const {
    QStringList titles;
    for (int i = 0; i < m_pageList->count(); ++i)
        titles << m_pageList->item(i)->text();
    return titles;
}

QStringList MainWindow::pageNames() const {
    QStringList names;
    for (int i = 0; i < m_pages->count(); ++i)
        names << m_pages->widget(i)->objectName();
    return names;
}

void MainWindow::openDatabase(const QString &path, bool readOnly) {
    if (m_state->databasePath().isEmpty())
        m_summary->setMessage(tr("Opening %1…").arg(path));
    statusBar()->showMessage(tr("Opening %1…").arg(path));
    // Shipped data is only read, however it is opened (core/infer/diode/infer/shippeddata.h): the pages that
    // write (Sweep, Train's stored predictions) then ask for another database.
    m_openingReadOnly = readOnly || diode::shipped::isShippedPath(path.toStdString());
    m_opener->load(path);
}

namespace {

QString shippedOrSource(std::string_view relative) {
    const QString found = shippedFile(relative);
    return found.isEmpty() ? QStringLiteral(DIODE_SOURCE_DIR "/") +
                                 QString::fromUtf8(relative.data(), qsizetype(relative.size()))
                           : found;
}

} // namespace

void MainWindow::openShippedData() {
    openDatabase(shippedOrSource(diode::shipped::kDataset), true);
}

void MainWindow::openEarlierData() {
    openDatabase(shippedOrSource(diode::shipped::kEarlierDataset), true);
}

void MainWindow::fitPackageTo(const DatasetSummary &s) {
    const QString gpu = dataGpu(s);
    const QString method = QString::fromUtf8(diode::toString(s.stats.defaultMethod.method).data());
    auto *models = ModelList::of(m_state);
    if (!m_state->packagePath().isEmpty()) {
        models->add(m_state->packagePath());
        if (models->fitsData(m_state->packagePath(), gpu, method))
            return;
    }
    // None fits (cpu data and no cpu model yet): no model rather than a wrong one; the pages say so.
    m_state->setPackage(models->packageForData(gpu, method));
}

QStringList MainWindow::recentDatabases() const {
    QStringList out;
    for (const QString &p : QSettings().value(QStringLiteral("recent/databases")).toStringList())
        if (QFileInfo::exists(p))
            out << p;
    return out;
}

// Every database opened, the newest first.
void MainWindow::rememberDatabase(const QString &path) {
    QStringList list = QSettings().value(QStringLiteral("recent/databases")).toStringList();
    const QString abs = QFileInfo(path).absoluteFilePath();
    list.removeAll(abs);
    list.prepend(abs);
    while (list.size() > kRecentFiles)
        list.removeLast();
    QSettings().setValue(QStringLiteral("recent/databases"), list);
    fillRecentMenu();
}

void MainWindow::fillRecentMenu() {
    m_recent->clear();
    const QStringList list = recentDatabases();
    for (int i = 0; i < list.size(); ++i) {
        auto *a = m_recent->addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(QFileInfo(list[i]).fileName()));
        a->setToolTip(list[i]);
        a->setStatusTip(list[i]);
        a->setData(list[i]);
        connect(a, &QAction::triggered, this, [this, path = list[i]] { openDatabase(path); });
    }
    if (list.isEmpty())
        m_recent->addAction(tr("(none yet)"))->setEnabled(false);
    m_recent->addSeparator();
    m_recent->addAction(tr("Clear the list"), this, [this] {
        QSettings().remove(QStringLiteral("recent/databases"));
        fillRecentMenu();
    });
}

// The open file in the title bar, as every desktop application shows it.
void MainWindow::showTitle() {
    const QString db = m_state->databasePath();
    setWindowFilePath(db);
    setWindowTitle(db.isEmpty() ? tr("Diode Workbench")
                                : tr("%1%2 — Diode Workbench")
                                      .arg(QFileInfo(db).fileName(),
                                           m_state->databaseReadOnly() ? tr(" (read-only)") : QString()));
}

void MainWindow::showSummary(const DatasetSummary &s) {
    m_summary->setSummary(s);
    statusBar()->showMessage(tr("%1, %2 measurements")
                                 .arg(QString::fromStdString(diode::problemCount(
                                     size_t(s.stats.problems), size_t(s.stats.problemLines))))
                                 .arg(s.stats.measurements));
    emit databaseShown(s.path);
}

// A database that could not be opened leaves the open one as it was: its pages keep their data.
void MainWindow::showFailure(const QString &path, const QString &message) {
    const QString open = m_state->databasePath();
    QString shown = message;
    if (open.isEmpty())
        m_summary->setMessage(tr("No database open."));
    else if (open == path) // the open database itself became unreadable (deleted, replaced)
        m_summary->setMessage(message);
    else
        shown += tr(" (%1 stays open)").arg(QFileInfo(open).fileName());
    statusBar()->showMessage(shown);
    emit databaseFailed(message); // first: a --screenshot run ends on it, before any dialog
    if (isVisible()) {
        // Not modal: a dialog's own event loop would hold back everything queued behind it.
        auto *box =
            new QMessageBox(QMessageBox::Warning, tr("Cannot open database"), shown, QMessageBox::Ok, this);
        box->setObjectName(QStringLiteral("databaseErrorDialog"));
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    }
}

void MainWindow::chooseDatabase() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open database"), QString(),
                                                      tr("Diode databases (*.db *.sqlite);;All files (*)"));
    if (!path.isEmpty())
        openDatabase(path);
}

QString MainWindow::aboutText() {
    const QString models =
        QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/models");
    // Every hardware's folder of shipped data (trained_models/h100, h200, ...), not only the default's.
    QStringList shippedFolders;
    if (const QString root = shippedFile(diode::shipped::kModelDirectory); !root.isEmpty())
        for (const QFileInfo &d : QDir(root).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
            shippedFolders << QDir::toNativeSeparators(d.absoluteFilePath()).toHtmlEscaped();
    const QString readme = shippedFile(QStringLiteral("README.md"));
    auto yesNo = [](bool on) { return on ? tr("yes") : tr("no"); };
    return tr("<h3>Diode Workbench %1</h3>"
              "<p>GEMM sweeps, runtime models and kernel selection for PyTorch Inductor.</p>"
              "<p><b>Build</b>: Qt %2; training (LibTorch) %3; CUDA telemetry %4; ROCm SMI %5.</p>"
              "<p><b>Data</b><br>settings: %6<br>trained models: %7<br>plugin models (Install): %8<br>"
              "shipped data and models:<br>%9</p>"
              "<p><b>Documentation</b>: <a href=\"%10\">%11</a> and docs/ beside it.</p>")
        .arg(QStringLiteral(DIODE_VERSION), QString::fromLatin1(qVersion()), yesNo(DIODE_HAVE_TORCH),
             yesNo(DIODE_HAVE_CUDA), yesNo(DIODE_HAVE_ROCM_SMI), QSettings().fileName().toHtmlEscaped(),
             QDir::toNativeSeparators(models).toHtmlEscaped(),
             QString::fromStdString(diode::pluginModelDirectory().string()).toHtmlEscaped(),
             shippedFolders.isEmpty() ? tr("not found") : shippedFolders.join(QStringLiteral("<br>")))
        .arg(QUrl::fromLocalFile(readme).toString(),
             readme.isEmpty() ? tr("README.md (not found)") : readme.toHtmlEscaped());
}

void MainWindow::showDocumentation() {
    const QString readme = shippedFile(QStringLiteral("README.md"));
    if (!readme.isEmpty() && QDesktopServices::openUrl(QUrl::fromLocalFile(readme))) {
        statusBar()->showMessage(tr("Opened %1").arg(readme));
        return;
    }
    QString text;
    if (readme.isEmpty()) {
        text = tr("The documentation (README.md and docs/) was not found in %1 or %2.")
                   .arg(QStringLiteral(DIODE_SOURCE_DIR), QStringLiteral(DIODE_INSTALL_DATADIR));
    } else {
        const QString docs = QFileInfo(readme).absolutePath() + QStringLiteral("/docs");
        text =
            tr("No program to open files is set up here (xdg-open and a desktop's file handlers). "
               "The documentation is\n%1\nand the guides in\n%2")
                .arg(QDir::toNativeSeparators(readme),
                     QFileInfo::exists(docs) ? QDir::toNativeSeparators(docs) : tr("(no docs/ folder here)"));
    }
    statusBar()->showMessage(readme.isEmpty() ? tr("Documentation not found")
                                              : tr("Documentation: %1").arg(readme));
    auto *box =
        new QMessageBox(QMessageBox::Information, tr("Documentation"), text, QMessageBox::Close, this);
    box->setObjectName(QStringLiteral("documentationDialog"));
    box->setTextInteractionFlags(Qt::TextSelectableByMouse); // the path can be copied
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MainWindow::showAbout() {
    auto *box = new QMessageBox(QMessageBox::NoIcon, tr("About Diode Workbench"), aboutText(),
                                QMessageBox::Close, this);
    box->setObjectName(QStringLiteral("aboutDialog"));
    box->setTextFormat(Qt::RichText);
    box->setTextInteractionFlags(Qt::TextBrowserInteraction);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}
