#pragma once

#include <QKeySequence>

#include <functional>

class QShortcut;
class QWidget;

/// A key for a page's main action: window-wide, but only while `page` is shown (a hidden
/// widget's shortcuts never fire), so each page can use F5 or Ctrl+S for its own action.
QShortcut *addPageShortcut(QWidget *page, const QKeySequence &keys, std::function<void()> action);
