#pragma once

// Checks shared by the GUI page tests: a page rendered to a PNG is not blank; a plot's titles
// are not cut off.

#include <qcustomplot.h>

#include <QAbstractButton>
#include <QAbstractItemView>
#include <QComboBox>
#include <QDir>
#include <QGroupBox>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QSet>
#include <QStyle>
#include <QStyleOptionComboBox>
#include <QTabBar>
#include <QTabWidget>
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

/// Where `w` sits under `root`, by object names (or class names), for a message.
inline QString pathOf(const QWidget *w, const QWidget *root) {
    QStringList parts;
    for (const QWidget *p = w; p && p != root; p = p->parentWidget())
        parts.prepend(p->objectName().isEmpty() ? QString::fromLatin1(p->metaObject()->className())
                                                : p->objectName());
    return parts.join(QLatin1Char('/'));
}

/// Every text of `root`'s own widgets that is cut off as shown now: a label wider or (wrapped)
/// taller than it is, a button, a line edit's text or placeholder, a combo box's or spin box's
/// text, a tab's title or a group box's title that does not fit. Table cells and plots are not
/// widgets and are not looked at here (checkTitlesFit looks at plots). Only visible widgets count.
inline QStringList clippedTexts(QWidget *root) {
    QStringList out;
    auto report = [&](const QWidget *w, const QString &text, int need, int have) {
        out << QStringLiteral("%1 \"%2\" needs %3 px, has %4")
                   .arg(pathOf(w, root), text.left(60))
                   .arg(need)
                   .arg(have);
    };
    for (QWidget *w : root->findChildren<QWidget *>()) {
        if (!w->isVisible() || w->width() <= 0 || w->height() <= 0)
            continue;
        bool inView = false; // an item view's editors and viewport children are its cells
        for (const QWidget *p = w->parentWidget(); p && p != root; p = p->parentWidget())
            inView = inView || qobject_cast<const QAbstractItemView *>(p);
        if (inView)
            continue;
        const QFontMetrics fm = w->fontMetrics();
        if (auto *l = qobject_cast<QLabel *>(w)) {
            if (l->text().isEmpty())
                continue;
            if (l->wordWrap()) {
                const int need = l->heightForWidth(l->width());
                if (need > l->height() + 2)
                    report(l, l->text(), need, l->height()); // height: the lines that do not show
            } else if (l->sizeHint().width() > l->width() + 1) {
                report(l, l->text(), l->sizeHint().width(), l->width());
            }
        } else if (auto *b = qobject_cast<QAbstractButton *>(w)) {
            if (!b->text().isEmpty() && b->sizeHint().width() > b->width() + 1)
                report(b, b->text(), b->sizeHint().width(), b->width());
        } else if (auto *e = qobject_cast<QLineEdit *>(w)) {
            const QString text = e->text().isEmpty() ? e->placeholderText() : e->text();
            const QMargins m = e->textMargins();
            const int have = e->width() - m.left() - m.right() - 10; // frame and QLineEdit's own margin
            if (!text.isEmpty() && fm.horizontalAdvance(text) > have)
                report(e, text, fm.horizontalAdvance(text), have);
        } else if (auto *c = qobject_cast<QComboBox *>(w)) {
            // The style's own field for the current text (QComboBox elides it to that).
            QStyleOptionComboBox opt;
            opt.initFrom(c);
            opt.editable = c->isEditable();
            opt.frame = c->hasFrame();
            opt.currentText = c->currentText();
            const int have = c->style()
                                 ->subControlRect(QStyle::CC_ComboBox, &opt, QStyle::SC_ComboBoxEditField, c)
                                 .width();
            if (!c->isEditable() && !c->currentText().isEmpty() &&
                fm.horizontalAdvance(c->currentText()) > have)
                report(c, c->currentText(), fm.horizontalAdvance(c->currentText()), have);
        } else if (auto *t = qobject_cast<QTabBar *>(w)) {
            for (int i = 0; i < t->count(); ++i) {
                const int need = fm.horizontalAdvance(QString(t->tabText(i)).remove(QLatin1Char('&'))) + 8;
                if (t->tabRect(i).width() < need || t->tabRect(i).right() > t->width())
                    report(t, t->tabText(i), need, t->tabRect(i).width());
            }
        } else if (auto *g = qobject_cast<QGroupBox *>(w)) {
            if (!g->title().isEmpty() && fm.horizontalAdvance(g->title()) + 16 > g->width())
                report(g, g->title(), fm.horizontalAdvance(g->title()) + 16, g->width());
        }
    }
    return out;
}

/// clippedTexts of `page` with each tab of each of its tab widgets shown in turn; the tabs are
/// left as they were.
inline QStringList clippedTextsOnEveryTab(QWidget *page) {
    QStringList out;
    const auto tabs = page->findChildren<QTabWidget *>();
    QList<int> current;
    for (auto *t : tabs)
        current << t->currentIndex();
    out << clippedTexts(page);
    for (auto *t : tabs) {
        if (!t->isVisible())
            continue;
        for (int i = 0; i < t->count(); ++i) {
            t->setCurrentIndex(i);
            QTest::qWait(30);
            for (const QString &c : clippedTexts(page))
                if (!out.contains(c))
                    out << QStringLiteral("%1 (tab %2)").arg(c, t->tabText(i));
        }
    }
    for (int i = 0; i < tabs.size(); ++i)
        tabs[i]->setCurrentIndex(current[i]);
    return out;
}

} // namespace pagecheck
