// diode-workbench: the Qt GUI. With no argument it opens the shipped H200 dataset.

#include "mainwindow.h"

#include "diode/config.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QTimer>

#include <cstdio>
#include <cstdlib>

namespace {

bool haveDisplay()
{
    const char *platform = std::getenv("QT_QPA_PLATFORM");
    if (platform && *platform) return true; // offscreen, vnc, ... chosen explicitly
    const char *x = std::getenv("DISPLAY");
    const char *wl = std::getenv("WAYLAND_DISPLAY");
    return (x && *x) || (wl && *wl);
}

QString shippedDataset()
{
    for (const QString &dir : {QStringLiteral(DIODE_SOURCE_DIR "/trained_models"),
                               QStringLiteral(DIODE_INSTALL_DATADIR "/trained_models")}) {
        const QString p = dir + QStringLiteral("/h200/h200-dataset.db");
        if (QFileInfo::exists(p)) return p;
    }
    return QStringLiteral(DIODE_SOURCE_DIR "/trained_models/h200/h200-dataset.db");
}

} // namespace

int main(int argc, char **argv)
{
    if (!haveDisplay()) {
        std::fprintf(stderr, "diode-workbench: no display (DISPLAY and WAYLAND_DISPLAY are unset). Run it on a desktop, "
                             "under xvfb-run, or with QT_QPA_PLATFORM=offscreen; the CLI 'diode' needs no display.\n");
        return 2;
    }
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("diode"));
    QApplication::setApplicationName(QStringLiteral("diode-workbench"));
    QApplication::setApplicationVersion(QStringLiteral(DIODE_VERSION));
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Diode Workbench: GEMM sweeps, runtime models, kernel selection"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("database"), QStringLiteral("SQLite database to open (default: the shipped H200 dataset)"));
    QCommandLineOption shot(QStringLiteral("screenshot"), QStringLiteral("Save a PNG of the window once the database is shown, then quit."),
                            QStringLiteral("file"));
    parser.addOption(shot);
    parser.process(app);

    MainWindow window;
    const QString db = parser.positionalArguments().value(0, shippedDataset());
    if (parser.isSet(shot)) {
        const QString out = parser.value(shot);
        auto save = [&window, out](bool ok) {
            window.grab().save(out);
            QApplication::exit(ok ? 0 : 1);
        };
        QObject::connect(&window, &MainWindow::databaseShown, &window, [save] { QTimer::singleShot(100, [save] { save(true); }); });
        QObject::connect(&window, &MainWindow::databaseFailed, &window, [save] { save(false); });
    }
    window.show();
    window.openDatabase(db, parser.positionalArguments().isEmpty()); // the shipped dataset is only read
    return app.exec();
}
