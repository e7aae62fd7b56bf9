#include "common/pageshortcut.h"

#include <QShortcut>
#include <QWidget>

QShortcut *addPageShortcut(QWidget *page, const QKeySequence &keys, std::function<void()> action) {
    auto *sc = new QShortcut(keys, page);
    sc->setContext(Qt::WindowShortcut);
    QObject::connect(sc, &QShortcut::activated, page, std::move(action));
    return sc;
}
