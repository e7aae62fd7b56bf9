#pragma once

#include <QString>

class QCustomPlot;

// An empty state is a sentence, not axes with nothing on them: a plot with no data to draw shows
// one centred sentence over its whole area instead, saying why it is empty.

/// Covers `plot` with `sentence`; an empty sentence shows the plot again.
void setPlotMessage(QCustomPlot *plot, const QString &sentence);
/// The sentence covering `plot`, or an empty string when the plot itself shows.
QString plotMessage(const QCustomPlot *plot);
