#pragma once

#include <qcustomplot.h>

/// A plot on a page that may be hidden: a hidden plot has no paint buffer yet, so it draws when
/// shown, not before. Subclasses call redraw() after changing their data.
class LazyPlot : public QCustomPlot {
public:
    using QCustomPlot::QCustomPlot;

protected:
    void showEvent(QShowEvent *event) override {
        QCustomPlot::showEvent(event);
        replot(rpQueuedReplot);
    }
    void redraw() {
        if (isVisible())
            replot(rpQueuedReplot);
    }
};
