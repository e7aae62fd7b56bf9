#include "common/plotmessage.h"

#include <qcustomplot.h>

#include <QEvent>
#include <QLabel>

namespace {

// A label that keeps the size of the plot it covers.
class PlotMessage : public QLabel {
public:
    explicit PlotMessage(QCustomPlot *plot)
        : QLabel(plot) {
        setObjectName(QStringLiteral("plotMessage"));
        setAlignment(Qt::AlignCenter);
        setWordWrap(true);
        setMargin(24);
        setAutoFillBackground(true);
        setBackgroundRole(QPalette::Base);
        setForegroundRole(QPalette::WindowText);
        setGeometry(plot->rect());
        plot->installEventFilter(this);
    }

protected:
    bool eventFilter(QObject *watched, QEvent *event) override {
        if (event->type() == QEvent::Resize)
            setGeometry(static_cast<QWidget *>(watched)->rect());
        return false;
    }
};

QLabel *messageOf(const QCustomPlot *plot) {
    return plot->findChild<QLabel *>(QStringLiteral("plotMessage"), Qt::FindDirectChildrenOnly);
}

} // namespace

void setPlotMessage(QCustomPlot *plot, const QString &sentence) {
    QLabel *label = messageOf(plot);
    if (sentence.isEmpty()) {
        if (label)
            label->hide();
        return;
    }
    if (!label)
        label = new PlotMessage(plot);
    label->setText(sentence);
    label->raise();
    label->show();
}

QString plotMessage(const QCustomPlot *plot) {
    const QLabel *label = messageOf(plot);
    return label && !label->isHidden() ? label->text() : QString();
}
