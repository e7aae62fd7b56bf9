#pragma once

#include <QObject>
#include <QString>

#include <functional>

class MainWindow;
class QWidget;

/// `diode-workbench --screenshot FILE`: saves the window once the page's data is shown, and says
/// how it ended. It only waits: it starts no work (no sweep, no training) that the user did not
/// ask for. A page that shows results after work of its own (Validate, Bias, Data, Sweep's runs)
/// has a ready() signal, awaited; Validate's willValidate() says when no validation will come
/// (data no model fits), and the shot is taken then. A database that cannot be opened ends it at
/// once, with the reason and no picture; a page with no progress for kHangSeconds is saved as it is.
class ScreenshotRun : public QObject {
    Q_OBJECT
public:
    static constexpr int kHangSeconds = 240;
    /// `page`: the page shown, or null for the window as it opens.
    ScreenshotRun(MainWindow *window, QWidget *page, const QString &out);

signals:
    /// The run ended: 0 saved, 1 saved after a failure (`message` says which), 2 nothing saved.
    void finished(int exitCode, const QString &message);

private:
    void save(const QString &failure);
    bool waitForPage(QWidget *page);
    void watchForHang(QWidget *page);

    MainWindow *m_window;
    QString m_out;
    bool m_done = false;
};
