#include "common/shippedfile.h"

#include "diode/config.h"

#include <QCoreApplication>
#include <QFileInfo>

QString shippedFile(const QString &relative) {
    for (const QString &dir : {QStringLiteral(DIODE_SOURCE_DIR), QStringLiteral(DIODE_INSTALL_DATADIR)}) {
        const QString path = dir + QLatin1Char('/') + relative;
        if (QFileInfo::exists(path))
            return path;
    }
    return {};
}

QString diodeBinary() {
    const QString dir = QCoreApplication::applicationDirPath();
    for (const QString &p : {dir + "/diode", dir + "/../app/diode", dir + "/../bin/diode"})
        if (QFileInfo(p).isExecutable())
            return QFileInfo(p).canonicalFilePath();
    return {};
}
