#pragma once

// Checks shared by the GUI page tests: a page rendered to a PNG is not blank.

#include <QDir>
#include <QImage>
#include <QSet>
#include <QWidget>
#include <QtTest>

namespace pagecheck {

/// Distinct colours in `image`, counted up to `cap`.
inline int distinctColours(const QImage &image, int cap = 5000) {
    QSet<QRgb> seen;
    const QImage img = image.convertToFormat(QImage::Format_RGB32);
    for (int y = 0; y < img.height(); y += 2) {
        const auto *line = reinterpret_cast<const QRgb *>(img.constScanLine(y));
        for (int x = 0; x < img.width(); x += 2) {
            seen.insert(line[x]);
            if (seen.size() >= cap)
                return int(seen.size());
        }
    }
    return int(seen.size());
}

/// Share of pixels that differ from the most common colour (the background).
inline double nonBackgroundShare(const QImage &image) {
    QHash<QRgb, int> counts;
    const QImage img = image.convertToFormat(QImage::Format_RGB32);
    int total = 0;
    for (int y = 0; y < img.height(); y += 2)
        for (int x = 0; x < img.width(); x += 2, ++total)
            ++counts[img.pixel(x, y)];
    int most = 0;
    for (int c : counts)
        most = std::max(most, c);
    return total ? 1.0 - double(most) / total : 0;
}

/// Grabs `widget` to `<build dir>/page-shots/<name>.png` and checks that it shows something.
inline void checkRendered(QWidget *widget, const QString &name, int minColours,
                          double minNonBackground = 0.02) {
    const QImage img = widget->grab().toImage();
    QVERIFY2(!img.isNull(), qPrintable(name));
    QDir().mkpath(QStringLiteral("page-shots"));
    const QString path = QStringLiteral("page-shots/%1.png").arg(name);
    QVERIFY2(img.save(path), qPrintable(path));
    const int colours = distinctColours(img);
    const double share = nonBackgroundShare(img);
    qInfo("%s: %dx%d, %d colours, %.1f%% non-background, saved to %s", qPrintable(name), img.width(),
          img.height(), colours, share * 100, qPrintable(QDir::current().absoluteFilePath(path)));
    QVERIFY2(colours >= minColours,
             qPrintable(QStringLiteral("%1 has only %2 colours").arg(name).arg(colours)));
    QVERIFY2(share >= minNonBackground, qPrintable(QStringLiteral("%1 is nearly blank").arg(name)));
}

} // namespace pagecheck
