#pragma once

#include <QMainWindow>

class QLabel;
class QListWidget;
class QStackedWidget;
class StoreLoader;
class SummaryPage;
class WorkbenchState;
struct DatasetSummary;

/// The workbench window: a list of pages on the left, the current page on the right. Pages
/// share one WorkbenchState (open database, model package).
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;
    void openDatabase(const QString &path, bool readOnly = false);
    SummaryPage *summaryPage() const { return m_summary; }
    WorkbenchState *state() const { return m_state; }

    /// Adds a page under `title`; `description` (one sentence: what the page shows) stands
    /// above it. Ctrl+<n> switches to the n-th page.
    void addPage(QWidget *page, const QString &title, const QString &description);
    /// Shows the page whose objectName is `name`; false if there is none.
    bool showPage(const QString &name);
    QStringList pageNames() const;
    /// The About box's text: version, build features, where data lives, the documentation.
    static QString aboutText();
    void showAbout();

protected:
    void closeEvent(QCloseEvent *event) override;

signals:
    void databaseShown(const QString &path);
    void databaseFailed(const QString &message);

private:
    void chooseDatabase();

    WorkbenchState *m_state;
    QListWidget *m_pageList;
    QLabel *m_pageDescription;
    QStringList m_descriptions;
    QStackedWidget *m_pages;
    SummaryPage *m_summary;
    StoreLoader *m_loader;
};
