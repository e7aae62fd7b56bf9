#include "mainwindow.h"

#include "biaspage.h"
#include "datapage.h"
#include "hardwarepage.h"
#include "storeloader.h"
#include "summarypage.h"
#include "sweeppage.h"
#include "demopage.h"
#include "exportpage.h"
#include "trainpage.h"
#include "validatepage.h"
#include "workbenchstate.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QCloseEvent>
#include <QShortcut>
#include <QStackedWidget>
#include <QStatusBar>

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent)
    , m_state(new WorkbenchState(this))
    , m_pageList(new QListWidget(this))
    , m_pages(new QStackedWidget(this))
    , m_summary(new SummaryPage(this))
    , m_loader(new StoreLoader(this))
{
    setWindowTitle(tr("Diode Workbench"));
    auto *central = new QWidget(this);
    auto *layout = new QHBoxLayout(central);
    layout->setContentsMargins(0, 0, 0, 0);
    m_pageList->setObjectName(QStringLiteral("pageList"));
    m_pageList->setFixedWidth(150);
    layout->addWidget(m_pageList);
    layout->addWidget(m_pages, 1);
    setCentralWidget(central);
    connect(m_pageList, &QListWidget::currentRowChanged, m_pages, &QStackedWidget::setCurrentIndex);
    resize(1280, 800);

    auto *file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open database…"), QKeySequence::Open, this, &MainWindow::chooseDatabase);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

    m_summary->setObjectName(QStringLiteral("overviewPage"));
    addPage(m_summary, tr("Overview"));
    // Further pages are added here, one line each.
    addPage(new HardwarePage(m_state, this), tr("Hardware"));
    addPage(new SweepPage(m_state, this), tr("Sweep"));
    addPage(new DataPage(m_state, this), tr("Data"));
    addPage(new TrainPage(m_state, this), tr("Train"));
    addPage(new ValidatePage(m_state, this), tr("Validate"));
    addPage(new BiasPage(m_state, this), tr("Bias"));
    addPage(new ExportPage(m_state, this), tr("Export"));
    addPage(new DemoPage(m_state, this), tr("Demo"));

    connect(m_loader, &StoreLoader::loaded, this, [this](const DatasetSummary &s) {
        m_summary->setSummary(s);
        statusBar()->showMessage(tr("%1 problems, %2 measurements").arg(s.stats.problems).arg(s.stats.measurements));
        emit databaseShown(s.path);
    });
    connect(m_loader, &StoreLoader::failed, this, [this](const QString &msg) {
        m_summary->setMessage(tr("No database open."));
        statusBar()->showMessage(msg);
        if (isVisible()) QMessageBox::warning(this, tr("Cannot open database"), msg);
        emit databaseFailed(msg);
    });
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    connect(m_state, &WorkbenchState::dataChanged, this, [this] { m_loader->load(m_state->databasePath()); });
}

// Pages hold the shared state and save their settings when destroyed; QObject would delete the
// state first (it is the older child), so the pages go before it.
MainWindow::~MainWindow() { delete m_pages; }

void MainWindow::closeEvent(QCloseEvent *event)
{
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("window/page"), m_pageList->currentRow());
    QMainWindow::closeEvent(event);
}

void MainWindow::addPage(QWidget *page, const QString &title)
{
    m_pages->addWidget(page);
    m_pageList->addItem(title);
    const int n = m_pages->count();
    if (n <= 9) {
        auto *sc = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_0 + n)), this);
        connect(sc, &QShortcut::activated, this, [this, n] { m_pageList->setCurrentRow(n - 1); });
    }
    if (m_pageList->currentRow() < 0) m_pageList->setCurrentRow(0);
}

bool MainWindow::showPage(const QString &name)
{
    for (int i = 0; i < m_pages->count(); ++i) {
        if (m_pages->widget(i)->objectName() == name) {
            m_pageList->setCurrentRow(i);
            return true;
        }
    }
    return false;
}

QStringList MainWindow::pageNames() const
{
    QStringList names;
    for (int i = 0; i < m_pages->count(); ++i) names << m_pages->widget(i)->objectName();
    return names;
}

void MainWindow::openDatabase(const QString &path, bool readOnly)
{
    m_summary->setMessage(tr("Opening %1…").arg(path));
    m_state->setDatabase(path, readOnly);
    m_loader->load(path);
}

void MainWindow::chooseDatabase()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Open database"), QString(),
                                                      tr("Diode databases (*.db *.sqlite);;All files (*)"));
    if (!path.isEmpty()) openDatabase(path);
}
