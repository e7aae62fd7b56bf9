#include "screenshotrun.h"

#include "mainwindow.h"

#include <QMetaMethod>
#include <QPixmap>
#include <QProgressBar>
#include <QTimer>

ScreenshotRun::ScreenshotRun(MainWindow *window, QWidget *page, const QString &out)
    : QObject(window)
    , m_window(window)
    , m_out(out) {
    if (!page || !waitForPage(page))
        connect(window, &MainWindow::databaseShown, this,
                [this] { QTimer::singleShot(300, this, [this] { save(QString()); }); });
    // A database that cannot be opened ends the run at once (not after the hang watchdog), with
    // the reason and no picture: there is nothing of what was asked for to show.
    connect(window, &MainWindow::databaseFailed, this, [this](const QString &message) {
        if (m_done)
            return;
        m_done = true;
        emit finished(2, message);
    });
    watchForHang(page ? page : window);
}

void ScreenshotRun::save(const QString &failure) {
    if (m_done)
        return;
    m_done = true;
    QString message = failure;
    int code = failure.isEmpty() ? 0 : 1;
    if (!m_window->grab().save(m_out)) {
        message = tr("cannot write %1").arg(m_out);
        code = 1;
    }
    emit finished(code, message);
}

bool ScreenshotRun::waitForPage(QWidget *page) {
    if (page->metaObject()->indexOfSignal("ready()") < 0)
        return false;
    auto *delay = new QTimer(this); // a moment for the last replot to reach the screen
    delay->setSingleShot(true);
    delay->setInterval(300);
    connect(delay, &QTimer::timeout, this, [this] { save(QString()); });
    connect(page, SIGNAL(ready()), delay, SLOT(start()));
    if (page->metaObject()->indexOfMethod("willValidate()") >= 0)
        connect(
            m_window, &MainWindow::databaseShown, delay,
            [page, delay] {
                bool will = true;
                QMetaObject::invokeMethod(page, "willValidate", Q_RETURN_ARG(bool, will));
                if (!will)
                    delay->start();
            },
            Qt::SingleShotConnection);
    return true;
}

// Never hang a screenshot script, and never give up on a page still loading: its progress bars
// moving restart the clock. Only a page with no progress for kHangSeconds is saved as it is.
void ScreenshotRun::watchForHang(QWidget *page) {
    auto *watchdog = new QTimer(this);
    watchdog->setSingleShot(true);
    watchdog->setInterval(kHangSeconds * 1000);
    connect(watchdog, &QTimer::timeout, this, [this] {
        save(tr("nothing progressed for %1 s; saved the window as it was").arg(kHangSeconds));
    });
    for (auto *bar : page->findChildren<QProgressBar *>())
        connect(bar, &QProgressBar::valueChanged, watchdog, qOverload<>(&QTimer::start));
    watchdog->start();
}
