#pragma once

#include <QLabel>

/// The line under a page's toolbar that says what happened: plain for progress and results, red
/// and bold for an error, which must always reach the user visibly.
class MessageLabel : public QLabel {
    Q_OBJECT
public:
    explicit MessageLabel(QWidget *parent = nullptr);
    void showMessage(const QString &text, bool error);
};
