// Viridis, cividis and the shared heatmap look (see colormaps.h).
#include "ui/plots/color_maps.h"

#include "ui/common/palette.h"

#include <QFontMetrics>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <iterator>

namespace ndrui {

QCPColorGradient heatmapGradient() {
    QCPColorGradient g;
    g.clearColorStops();
    // matplotlib's viridis at 0, 1/8, ..., 1; linear RGB interpolation between them stays within a
    // few levels of the full table.
    static const QColor viridis[] = {QColor(68, 1, 84),    QColor(71, 44, 122),  QColor(59, 81, 139),
                                     QColor(44, 113, 142), QColor(33, 144, 141), QColor(39, 173, 129),
                                     QColor(92, 200, 99),  QColor(170, 220, 50), QColor(253, 231, 37)};
    // matplotlib's cividis at 0, 1/17, ..., 1 (the stops plotly publishes); nearly straight in RGB, so
    // these hold it closely.
    static const QColor cividis[] = {QColor(0, 32, 76),     QColor(0, 42, 102),    QColor(0, 52, 110),
                                     QColor(39, 63, 108),   QColor(60, 74, 107),   QColor(76, 85, 107),
                                     QColor(91, 95, 109),   QColor(104, 106, 112), QColor(117, 117, 117),
                                     QColor(131, 129, 120), QColor(146, 140, 120), QColor(161, 152, 118),
                                     QColor(176, 165, 114), QColor(192, 177, 109), QColor(209, 191, 102),
                                     QColor(225, 204, 92),  QColor(243, 219, 79),  QColor(255, 233, 69)};
    const bool safe = colourScheme() == ColourScheme::ColourBlindSafe;
    const QColor* stops = safe ? cividis : viridis;
    const int n = safe ? int(std::size(cividis)) : int(std::size(viridis));
    for (int i = 0; i < n; ++i)
        g.setColorStopAt(double(i) / (n - 1), stops[i]);
    g.setColorInterpolation(QCPColorGradient::ciRGB);
    g.setLevelCount(256);
    return g;
}

QSharedPointer<QCPAxisTickerText> labelTicker(const QStringList& labels, int every) {
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (int i = 0; i < labels.size(); i += std::max(1, every))
        ticker->addTick(i, labels[i]);
    return ticker;
}

bool thinCellLabels(QCPAxis* axis, const QStringList& labels) {
    const QRect rect = axis->axisRect()->rect();
    const int pixels = axis->orientation() == Qt::Horizontal ? rect.width() : rect.height();
    const int line = QFontMetrics(axis->tickLabelFont()).height();
    const int every =
        pixels > 0 ? std::max(1, int(std::ceil(double(line) * labels.size() / double(pixels)))) : 1;
    const QSharedPointer<QCPAxisTickerText> wanted = labelTicker(labels, every);
    auto* current = dynamic_cast<QCPAxisTickerText*>(axis->ticker().data()); // ticks() is not const
    if (current && current->ticks() == wanted->ticks())
        return false;
    axis->setTicker(wanted);
    return true;
}

QCPColorMap* addHeatmap(QCPAxisRect* rect, const QStringList& xLabels, const QStringList& yLabels,
                        QCPColorScale* scale) {
    QCPAxis* x = rect->axis(QCPAxis::atBottom);
    QCPAxis* y = rect->axis(QCPAxis::atLeft);
    x->setTicker(labelTicker(xLabels));
    y->setTicker(labelTicker(yLabels));
    // Long labels (bit strings of a large alphabet) would overlap along x.
    x->setTickLabelRotation(xLabels.size() > 6 ? -90 : 0);
    x->setSubTicks(false);
    y->setSubTicks(false);
    x->setTickLength(0, 3);
    y->setTickLength(0, 3);
    y->setRangeReversed(true); // row 0 (the first token, the first step) at the top, as read
    x->grid()->setVisible(false);
    y->grid()->setVisible(false);

    auto* map = new QCPColorMap(x, y);
    map->setInterpolate(false);
    map->setTightBoundary(false);
    map->setGradient(heatmapGradient());
    if (scale)
        map->setColorScale(scale);
    map->setDataRange(QCPRange(0, 1));
    setHeatmapValues(map, int(yLabels.size()), int(xLabels.size()), [](int, int) { return 0.0; });
    return map;
}

void setHeatmapValues(QCPColorMap* map, int rows, int cols, const std::function<double(int, int)>& value) {
    QCPColorMapData* data = map->data();
    data->setSize(std::max(cols, 1), std::max(rows, 1));
    // QCustomPlot widens the image by half a cell on each side only along a dimension of two or more
    // cells; a single row (the inspector's gate strip) or column would be drawn zero pixels thick, so
    // its range spans the one cell itself.
    auto span = [](int n) { return n > 1 ? QCPRange(0, n - 1) : QCPRange(-0.5, 0.5); };
    data->setRange(span(cols), span(rows));
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            data->setCell(c, r, value(r, c));
}

bool heatmapCellAt(const QCPColorMap* map, const QPointF& pos, int* row, int* col) {
    if (!map->keyAxis()->axisRect()->rect().contains(pos.toPoint()))
        return false;
    const double x = map->keyAxis()->pixelToCoord(pos.x());
    const double y = map->valueAxis()->pixelToCoord(pos.y());
    const QCPColorMapData* data = map->data();
    const int c = int(std::lround(x)), r = int(std::lround(y));
    if (c < 0 || r < 0 || c >= data->keySize() || r >= data->valueSize())
        return false;
    *row = r;
    *col = c;
    return true;
}

void fitHeatmap(QCPColorMap* map) {
    const QCPColorMapData* data = map->data();
    map->keyAxis()->setRange(-0.5, data->keySize() - 0.5);
    map->valueAxis()->setRange(-0.5, data->valueSize() - 0.5);
}

QCPColorScale* unitColorScale(QCPColorScale* scale, const QString& label) {
    scale->setType(QCPAxis::atRight);
    scale->setGradient(heatmapGradient());
    scale->setDataRange(QCPRange(0, 1));
    scale->setRangeDrag(false);
    scale->setRangeZoom(false);
    scale->setBarWidth(12);
    scale->axis()->setLabel(label);
    scale->axis()->setTicker(QSharedPointer<QCPAxisTickerFixed>::create());
    qSharedPointerCast<QCPAxisTickerFixed>(scale->axis()->ticker())->setTickStep(0.25);
    return scale;
}

} // namespace ndrui
