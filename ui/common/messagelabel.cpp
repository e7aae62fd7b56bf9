#include "common/messagelabel.h"

MessageLabel::MessageLabel(QWidget *parent)
    : QLabel(parent) {
    setWordWrap(true);
    setTextInteractionFlags(Qt::TextSelectableByMouse);
}

void MessageLabel::showMessage(const QString &text, bool error) {
    setStyleSheet(error ? QStringLiteral("color: #d62728; font-weight: bold") : QString());
    setText(text);
}
