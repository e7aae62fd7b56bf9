#include "mainwindow.h"

#include "storeloader.h"
#include "summarypage.h"

#include <QFileDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent)
    , m_summary(new SummaryPage(this))
    , m_loader(new StoreLoader(this))
{
    setWindowTitle(tr("Diode Workbench"));
    setCentralWidget(m_summary);
    resize(980, 620);
    auto *file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open database…"), QKeySequence::Open, this, &MainWindow::chooseDatabase);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

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
}

void MainWindow::openDatabase(const QString &path)
{
    m_summary->setMessage(tr("Opening %1…").arg(path));
    m_loader->load(path);
}

void MainWindow::chooseDatabase()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Open database"), QString(),
                                                      tr("Diode databases (*.db *.sqlite);;All files (*)"));
    if (!path.isEmpty()) openDatabase(path);
}
