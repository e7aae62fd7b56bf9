// diode-workbench: the Qt GUI. With no argument it opens the shipped H200 in-graph dataset.

#include "common/workbenchstate.h"
#include "demo/demopage.h"
#include "mainwindow.h"
#include "screenshotrun.h"

#include "diode/config.h"
#include "diode/infer/shippeddata.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QTabWidget>
#include <QTemporaryDir>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string_view>

namespace {

bool haveDisplay() {
    const char *platform = std::getenv("QT_QPA_PLATFORM");
    if (platform && *platform)
        return true; // offscreen, vnc, ... chosen explicitly
    const char *x = std::getenv("DISPLAY");
    const char *wl = std::getenv("WAYLAND_DISPLAY");
    return (x && *x) || (wl && *wl);
}

// The model last used; once the data is open, MainWindow replaces it when it does not fit the
// data (another GPU or truth), and on first start chooses the plugin's default for the data.
QString startPackage() {
    const QString saved = QSettings().value(QStringLiteral("state/package")).toString();
    return !saved.isEmpty() && QFileInfo::exists(saved) ? saved : QString();
}

// The command line; --help and --version answer without a display.
struct CommandLine {
    QCommandLineParser parser;
    QCommandLineOption shot{
        QStringLiteral("screenshot"),
        QStringLiteral("Save a PNG of the window once the page's data is shown, then quit."),
        QStringLiteral("file")};
    QCommandLineOption page{
        QStringLiteral("page"),
        QStringLiteral("Show the page of this name, as the page list calls it (Overview, Hardware, Sweep, "
                       "Data, Train, Validate, Bias, Export, Demo; any case); NAME/TAB also shows a tab "
                       "of it (Data/Heatmap)."),
        QStringLiteral("name")};
    QCommandLineOption demo{QStringLiteral("demo"),
                            QStringLiteral("Open this diode demo result (JSON) on the Demo page."),
                            QStringLiteral("file")};

    CommandLine() {
        parser.setApplicationDescription(
            QStringLiteral("Diode Workbench: GEMM sweeps, runtime models, kernel selection"));
        parser.addHelpOption();
        parser.addVersionOption();
        parser.addPositionalArgument(
            QStringLiteral("database"),
            QStringLiteral("SQLite database to open (default: the shipped H200 in-graph dataset)"));
        parser.addOption(shot);
        parser.addOption(page);
        parser.addOption(demo);
    }
};

bool asksForScreenshot(int argc, char **argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view a(argv[i]);
        if (a == "--screenshot" || a.starts_with("--screenshot="))
            return true;
    }
    return false;
}

// A --screenshot run opens files and reads the shipped models to show real content, and must leave
// the user's world as it was: settings, recent files, the model folder, the current model. It
// runs with settings and data folders of its own, removed when it ends. Called before the
// application object exists, so nothing has read the real locations yet.
std::unique_ptr<QTemporaryDir> useThrowAwayLocations() {
    auto dir = std::make_unique<QTemporaryDir>(QDir::tempPath() + QStringLiteral("/diode-screenshot-XXXXXX"));
    if (!dir->isValid())
        return nullptr;
    for (const char *name : {"config", "data", "cache"})
        QDir(dir->path()).mkpath(QString::fromLatin1(name));
    qputenv("XDG_CONFIG_HOME", dir->filePath(QStringLiteral("config")).toUtf8());
    qputenv("XDG_DATA_HOME", dir->filePath(QStringLiteral("data")).toUtf8());
    qputenv("XDG_CACHE_HOME", dir->filePath(QStringLiteral("cache")).toUtf8());
    for (auto format : {QSettings::NativeFormat, QSettings::IniFormat})
        QSettings::setPath(format, QSettings::UserScope, dir->filePath(QStringLiteral("config")));
    return dir;
}

// "dataPage/Heatmap": the page, then the tab of that title (without its & accelerator) in it.
void showTab(QWidget *page, const QString &title) {
    for (auto *tabs : page->findChildren<QTabWidget *>())
        for (int i = 0; i < tabs->count(); ++i)
            if (tabs->tabText(i).remove(QLatin1Char('&')).compare(title, Qt::CaseInsensitive) == 0) {
                tabs->setCurrentIndex(i);
                return;
            }
}

bool asksForHelpOrVersion(int argc, char **argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string_view a(argv[i]);
        if (a == "--help" || a == "-h" || a == "--help-all" || a == "--version" || a == "-v")
            return true;
    }
    return false;
}

} // namespace

// Started by diode-workbench (launcher.cpp), which has set the thread environment already.
int main(int argc, char **argv) {
    CommandLine cl;
    if (asksForHelpOrVersion(argc, argv)) {
        QCoreApplication core(argc, argv);
        QCoreApplication::setApplicationName(QStringLiteral("diode-workbench"));
        QCoreApplication::setApplicationVersion(QStringLiteral(DIODE_VERSION));
        cl.parser.process(core); // prints and exits
    }
    if (!haveDisplay()) {
        std::fprintf(
            stderr,
            "diode-workbench: no display (DISPLAY and WAYLAND_DISPLAY are unset). Run it on a desktop, "
            "under xvfb-run, or with QT_QPA_PLATFORM=offscreen; the CLI 'diode' needs no display.\n");
        return 2;
    }
    // Lives until main returns: the window's settings are written on close, into it.
    const std::unique_ptr<QTemporaryDir> throwAway =
        asksForScreenshot(argc, argv) ? useThrowAwayLocations() : nullptr;
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("diode"));
    QApplication::setApplicationName(QStringLiteral("diode-workbench"));
    QApplication::setApplicationVersion(QStringLiteral(DIODE_VERSION));
    QCommandLineParser &parser = cl.parser;
    const QCommandLineOption &shot = cl.shot, &page = cl.page, &demo = cl.demo;
    parser.process(app);

    MainWindow window;
    QObject::connect(window.state(), &WorkbenchState::packageChanged,
                     [](const QString &p) { QSettings().setValue(QStringLiteral("state/package"), p); });
    const QString db = parser.positionalArguments().value(0);
    QWidget *shown = nullptr;
    if (parser.isSet(page)) {
        const QString name = parser.value(page).section(QLatin1Char('/'), 0, 0);
        if (!window.showPage(name)) {
            std::fprintf(stderr, "diode-workbench: no page '%s'; pages: %s\n", qPrintable(name),
                         qPrintable(window.pageTitles().join(QStringLiteral(", "))));
            return 2;
        }
        shown = window.page(name);
        if (parser.value(page).contains(QLatin1Char('/')))
            showTab(shown, parser.value(page).section(QLatin1Char('/'), 1));
    }
    if (parser.isSet(demo)) {
        // The page shows why a result cannot be read; the command line says so too, and a
        // screenshot of the page without it would show something else than was asked for.
        auto *demoPage = window.findChild<DemoPage *>();
        if (demoPage && !demoPage->openResult(parser.value(demo))) {
            std::fprintf(stderr, "diode-workbench: --demo %s: %s\n", qPrintable(parser.value(demo)),
                         qPrintable(demoPage->message()));
            if (parser.isSet(shot))
                return 2;
        }
    }
    if (parser.isSet(shot)) {
        // It waits for the page's data and starts no work of its own (ui/screenshotrun.h).
        auto *run = new ScreenshotRun(&window, shown, parser.value(shot));
        QObject::connect(run, &ScreenshotRun::finished, &app, [](int code, const QString &message) {
            if (!message.isEmpty())
                std::fprintf(stderr, "diode-workbench: --screenshot: %s\n", qPrintable(message));
            QApplication::exit(code);
        });
    }
    window.show();
    window.state()->setPackage(startPackage());
    // The shipped dataset is only read; so is any database a screenshot shows.
    if (db.isEmpty())
        window.openShippedData();
    else
        window.openDatabase(db, parser.isSet(shot));
    return app.exec();
}
