// Colour maps and the one heatmap look shared by the attention grid, the gate map and the inspector:
// a perceptually uniform gradient (viridis, or cividis in the colour-blind-safe scheme), crisp cells
// at integer coordinates, token labels on both axes.
// Views-internal: only views/*.cpp include it.
#pragma once

#include <QPointF>
#include <QSharedPointer>
#include <QStringList>

#include <functional>

class QCPAxis;
class QCPAxisRect;
class QCPAxisTickerText;
class QCPColorGradient;
class QCPColorMap;
class QCPColorScale;

namespace ndrui {

// The heatmaps' gradient in the current colour scheme (palette.h): viridis (perceptually uniform,
// readable in grey and by most colour-blind readers), or cividis (made to look the same to readers
// with red-green colour blindness as to others). QCustomPlot 2.1 has neither as a preset; both are
// built from colour stops sampled from matplotlib's tables.
QCPColorGradient heatmapGradient();

// A colour map in `rect`: columns along x labelled `xLabels`, rows along y labelled `yLabels` with
// row 0 at the top, cells centred on integer coordinates, no interpolation, coloured by `scale`.
QCPColorMap* addHeatmap(QCPAxisRect* rect, const QStringList& xLabels, const QStringList& yLabels,
                        QCPColorScale* scale);
// Tick labels at 0, every, 2 every, ...: labels[i] at coordinate i.
QSharedPointer<QCPAxisTickerText> labelTicker(const QStringList& labels, int every = 1);
// Labels `axis` (one tick per cell, `labels`) with every n-th label, n the smallest that leaves each a line
// of its axis's tick-label font along the axis as laid out: token labels of many cells in a small map
// would otherwise overlap. Returns whether the labels changed (the caller then places the ticks again).
bool thinCellLabels(QCPAxis* axis, const QStringList& labels);
// Fills the map with value(row, col) for rows x cols cells.
void setHeatmapValues(QCPColorMap* map, int rows, int cols, const std::function<double(int, int)>& value);
// The cell under pixel `pos`, or false when `pos` is outside the map.
bool heatmapCellAt(const QCPColorMap* map, const QPointF& pos, int* row, int* col);
// Shows the whole map (one cell of margin is half a cell on each side).
void fitHeatmap(QCPColorMap* map);
// A vertical colour scale for values 0..1 with the heatmaps' gradient.
QCPColorScale* unitColorScale(QCPColorScale* scale, const QString& label);

} // namespace ndrui
