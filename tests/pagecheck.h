#pragma once

// Checks shared by the GUI page tests: a page rendered to a PNG is not blank; a plot's titles
// are not cut off.

#include <qcustomplot.h>

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

/// Every title of `plot` (the text elements of its layout) fits, as drawn (word-wrapped, centred),
/// inside its own rect, and that rect inside the widget; so do the axes (titles were clipped with
/// two models side by side). Call after a replot at the size to check.
inline void checkTitlesFit(QCustomPlot *plot, const QString &name) {
    const QRect widget = plot->rect();
    const QRect axes = plot->axisRect()->outerRect();
    QVERIFY2(widget.contains(axes),
             qPrintable(QStringLiteral("%1: the axes (%2 px wide) leave the %3 px plot")
                            .arg(name)
                            .arg(axes.right() + 1)
                            .arg(widget.width())));
    int titles = 0;
    for (QCPLayoutElement *element : plot->plotLayout()->elements(true)) {
        const auto *title = qobject_cast<QCPTextElement *>(element);
        if (!title || title->text().isEmpty())
            continue;
        ++titles;
        const QRect rect = title->rect();
        const QRect text = QFontMetrics(title->font())
                               .boundingRect(QRect(rect.left(), rect.top(), rect.width(), 0),
                                             title->textFlags() | Qt::TextWordWrap, title->text());
        const QString what = QStringLiteral("%1: title '%2' needs %3x%4 px, has %5x%6 in a %7x%8 plot")
                                 .arg(name, title->text())
                                 .arg(text.width())
                                 .arg(text.height())
                                 .arg(rect.width())
                                 .arg(rect.height())
                                 .arg(widget.width())
                                 .arg(widget.height());
        QVERIFY2(widget.contains(rect), qPrintable(what));
        QVERIFY2(text.width() <= rect.width() && text.height() <= rect.height(), qPrintable(what));
    }
    QVERIFY2(titles > 0, qPrintable(name + QStringLiteral(": no title to check")));
}

} // namespace pagecheck
