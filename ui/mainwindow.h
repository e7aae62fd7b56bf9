#pragma once

#include <QMainWindow>

class StoreLoader;
class SummaryPage;
struct DatasetSummary;

/// The workbench window. In this version: open a database and show its summary.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    void openDatabase(const QString &path);
    SummaryPage *summaryPage() const { return m_summary; }

signals:
    void databaseShown(const QString &path);
    void databaseFailed(const QString &message);

private:
    void chooseDatabase();

    SummaryPage *m_summary;
    StoreLoader *m_loader;
};
