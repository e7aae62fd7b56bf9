#pragma once

#include <qcustomplot.h>

/// A plot's bold title, in a first row of its own above the axes, wrapped to the plot's width.
/// QCPTextElement asks for the width and height of its text on one line: a title wider than its
/// plot (two models side by side on Validate) widened the layout past the widget, so the axes
/// and both ends of the title were cut off, and lines it did wrap were cut at the bottom. This one asks for
/// the height its lines take at the width the plot has.
class PlotTitle : public QCPTextElement {
    Q_OBJECT
public:
    /// Inserts the title as the first row of `plot`'s layout; `pointSizeDelta` over the plot's font.
    explicit PlotTitle(QCustomPlot *plot, int pointSizeDelta = 0);
    /// Width and height of the text wrapped to `width` pixels, margins included.
    QSize sizeForWidth(int width) const;
    /// The width the plot's layout gives the title's column.
    int columnWidth() const;

protected:
    QSize minimumOuterSizeHint() const override;
    QSize maximumOuterSizeHint() const override;
};
