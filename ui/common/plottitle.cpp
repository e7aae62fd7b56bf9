#include "common/plottitle.h"

#include <algorithm>

PlotTitle::PlotTitle(QCustomPlot *plot, int pointSizeDelta)
    : QCPTextElement(plot, QString(),
                     QFont(plot->font().family(), plot->font().pointSize() + pointSizeDelta, QFont::Bold)) {
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(0, 0, this);
    setTextColor(plot->palette().color(QPalette::WindowText));
}

QSize PlotTitle::sizeForWidth(int width) const {
    const int margins = mMargins.left() + mMargins.right();
    const QFontMetrics metrics(mFont);
    // Word-wrapped as draw() wraps it (mTextFlags has Qt::TextWordWrap); a single word wider than
    // the plot keeps its own line.
    const QRect text = mText.isEmpty() ? QRect()
                                       : metrics.boundingRect(QRect(0, 0, std::max(1, width - margins), 0),
                                                              mTextFlags | Qt::TextWordWrap, mText);
    return {std::min(width, text.width() + margins), text.height() + mMargins.top() + mMargins.bottom()};
}

int PlotTitle::columnWidth() const {
    // The plot's layout fills the plot; the title's column gets what the other columns (a colour
    // scale beside the axes) leave. Asking for more than that pushed the axes out of the widget.
    QCPLayoutGrid *grid = mParentPlot->plotLayout(); // hasElement() is not const
    int width = mParentPlot->viewport().width() - grid->margins().left() - grid->margins().right();
    int own = -1;
    for (int c = 0; c < grid->columnCount() && own < 0; ++c)
        for (int r = 0; r < grid->rowCount(); ++r)
            if (grid->hasElement(r, c) && grid->element(r, c) == this)
                own = c;
    for (int c = 0; c < grid->columnCount(); ++c) {
        if (c == own)
            continue;
        int w = 0;
        for (int r = 0; r < grid->rowCount(); ++r)
            if (grid->hasElement(r, c)) {
                const QCPLayoutElement *e = grid->element(r, c);
                w = std::max({w, e->minimumSize().width(), e->minimumOuterSizeHint().width()});
            }
        width -= w + grid->columnSpacing();
    }
    return std::max(1, width);
}

QSize PlotTitle::minimumOuterSizeHint() const {
    return {0, sizeForWidth(columnWidth()).height()};
}

QSize PlotTitle::maximumOuterSizeHint() const {
    return {QWIDGETSIZE_MAX, sizeForWidth(columnWidth()).height()};
}
