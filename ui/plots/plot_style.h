// Helpers the plot views share: palette styling of a whole plot, a legend row above the plots, and
// finding the data point under the mouse, the chance line. Views-internal: the views and their
// headers use it; it names QCustomPlot types without including qcustomplot.h.
#pragma once

#include <QPalette>
#include <QPoint>
#include <QString>

class QCustomPlot;
class QCPAbstractPlottable;
class QCPCurve;
class QCPAxis;
class QCPAxisRect;
class QCPItemStraightLine;
class QCPLegend;

namespace ndrui {

// Colours axes, grids, legends, text elements and colour scales of `plot` from `palette`.
void stylePlot(QCustomPlot* plot, const QPalette& palette);
void styleAxis(QCPAxis* axis, const QPalette& palette);

// Moves the plot's legend out of the axis rect into a row of its own at the top, laid out left to
// right with at most `columns` entries per line, so it never covers data. PlotView wraps it to fewer
// columns when the plot is narrow (wrapLegend).
QCPLegend* legendRowOnTop(QCustomPlot* plot, int columns);
// Wraps a legend made by legendRowOnTop to as many columns (up to the one it was made with) as fit
// in `width` pixels, so no entry is cut off, with the chance entry (if shown) last. Does nothing to
// other legends.
void wrapLegend(QCustomPlot* plot, int width);

// A bold title in a row of its own above everything else of the plot (legend row included).
void addTitleRow(QCustomPlot* plot, const QString& title);
// Changes the text of the title addTitleRow() added.
void setTitle(QCustomPlot* plot, const QString& title);

// The visible plottable with a data point within `maxPixels` of `pos` (nearest wins) and the point's
// index, or nullptr. Only plottables of `rect` count when it is given.
QCPAbstractPlottable* nearestPoint(const QCustomPlot* plot, const QPoint& pos, int* index,
                                   const QCPAxisRect* rect = nullptr, double maxPixels = 12);

// The chance line across an accuracy axis rect, named in the legend ("chance 0.250", last) rather
// than labelled on the plot, where its label sat over bars and curves near chance.
struct ChanceMark {
    QCPItemStraightLine* line = nullptr;
    QCPCurve* key = nullptr; // no data: only its legend entry shows
};
ChanceMark addChanceMark(QCustomPlot* plot, QCPAxisRect* rect);
// At `chance` (hidden when it would read 0.000).
void setChance(const ChanceMark& mark, double chance);
// The reference of an accuracy plot of the Longer (test) depths: their majority baseline ("majority
// 0.268") when positive, which is never below chance; otherwise (0 or NaN) chance (see setChance).
void setReference(const ChanceMark& mark, double chance, double longerBaseline);
void styleChanceMark(const ChanceMark& mark, const QPalette& palette);

// "0.994": accuracies and gate values as the tooltips show them.
QString formatValue(double value);

} // namespace ndrui
