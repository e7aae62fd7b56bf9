#pragma once

#include <QMainWindow>

class QLabel;
class QListWidget;
class QMenu;
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
    /// Opens `path` once it has been read: until then, and if it cannot be read, the database
    /// that was open stays open (a failure is shown and signalled with databaseFailed). Shipped
    /// data (core/infer/diode/infer/shippeddata.h) is opened read-only whatever `readOnly` says.
    void openDatabase(const QString &path, bool readOnly = false);
    /// What the workbench opens with no database named: the shipped in-graph data, read-only, and
    /// the model it shows is the plugin's default for the data's GPU (see fitPackageTo).
    void openShippedData();
    /// The Inductor-timed dataset of two turns ago and the v2 model trained on it, read-only.
    void openEarlierData();
    SummaryPage *summaryPage() const { return m_summary; }
    WorkbenchState *state() const { return m_state; }

    /// Adds a page under `title`; `description` (one sentence: what the page shows) stands
    /// above it. Ctrl+<n> switches to the n-th page.
    void addPage(QWidget *page, const QString &title, const QString &description);
    /// The page called `name`: its title in the page list ("Overview", any case), which is the
    /// one name docs and `--page` use, or its objectName ("overviewPage"); null if there is none.
    QWidget *page(const QString &name) const;
    /// Shows the page called `name` (see page()); false if there is none.
    bool showPage(const QString &name);
    QStringList pageNames() const;  ///< objectNames, in list order
    QStringList pageTitles() const; ///< titles, in list order
    /// The About box's text: version, build features, where data lives, the documentation.
    static QString aboutText();
    void showAbout();
    /// Databases opened lately, the newest first (File ▸ Open recent), at most kRecentFiles.
    QStringList recentDatabases() const;
    static constexpr int kRecentFiles = 8;
    /// Help ▸ Documentation: README.md in the desktop's viewer; where no program can open it (no
    /// xdg-open, a server under Xvfb), a dialog that names the file and the docs/ folder.
    void showDocumentation();

protected:
    void closeEvent(QCloseEvent *event) override;

signals:
    void databaseShown(const QString &path);
    void databaseFailed(const QString &message);

private:
    void chooseDatabase();
    void showSummary(const DatasetSummary &summary);
    void showFailure(const QString &path, const QString &message);
    /// Makes the model in use one that fits the data just opened (same GPU, same kind of truth):
    /// a package of another GPU or timing method would be validated against times it never meant.
    void fitPackageTo(const DatasetSummary &summary);
    void rememberDatabase(const QString &path);
    void fillRecentMenu();
    void showTitle();

    WorkbenchState *m_state;
    QListWidget *m_pageList;
    QLabel *m_pageDescription;
    QStringList m_descriptions;
    QStackedWidget *m_pages;
    SummaryPage *m_summary;
    StoreLoader *m_loader; ///< reads the open database again after a sweep or training run
    StoreLoader *m_opener; ///< reads a database asked to open; only its success makes it the open one
    bool m_openingReadOnly = false;
    QMenu *m_recent;
};
