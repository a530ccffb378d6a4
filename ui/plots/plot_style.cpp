// Shared plot styling and hit testing (see plotstyle.h).
#include "ui/plots/plot_style.h"

#include "ui/common/palette.h"
#include "ui/plots/color_maps.h"

#include <qcustomplot.h>

namespace ndrui {

namespace {
// A legend's column spacing and line-sample width, and the compact ones of a narrow plot (pixels).
constexpr int kLegendColumnSpacing = 16, kLegendIconWidth = 28;
constexpr int kCompactColumnSpacing = 8, kCompactIconWidth = 18;
} // namespace

void styleAxis(QCPAxis* axis, const QPalette& palette) {
    const QColor text = palette.color(QPalette::WindowText);
    QColor line = text;
    line.setAlpha(170);
    QColor grid = text;
    grid.setAlpha(40);
    QColor subGrid = text;
    subGrid.setAlpha(18);
    axis->setBasePen(QPen(line, 1));
    axis->setTickPen(QPen(line, 1));
    axis->setSubTickPen(QPen(line, 1));
    axis->setLabelColor(text);
    axis->setTickLabelColor(text);
    axis->grid()->setPen(QPen(grid, 1, Qt::DotLine));
    axis->grid()->setSubGridPen(QPen(subGrid, 1, Qt::DotLine));
    axis->grid()->setZeroLinePen(Qt::NoPen);
}

void stylePlot(QCustomPlot* plot, const QPalette& palette) {
    const QColor text = palette.color(QPalette::WindowText);
    plot->setBackground(palette.brush(QPalette::Window));
    for (QCPLayoutElement* element : plot->plotLayout()->elements(true)) {
        if (auto* rect = qobject_cast<QCPAxisRect*>(element)) {
            rect->setBackground(palette.brush(QPalette::Base));
            for (QCPAxis* axis : rect->axes())
                styleAxis(axis, palette);
        } else if (auto* legend = qobject_cast<QCPLegend*>(element)) {
            legend->setBrush(Qt::NoBrush);
            legend->setBorderPen(Qt::NoPen);
            legend->setTextColor(text);
            // A legend wrapped into rows has empty cells after its last item: item() is null there.
            for (int i = 0; i < legend->itemCount(); ++i)
                if (QCPAbstractLegendItem* item = legend->item(i))
                    item->setTextColor(text);
        } else if (auto* title = qobject_cast<QCPTextElement*>(element)) {
            title->setTextColor(text);
        } else if (auto* scale = qobject_cast<QCPColorScale*>(element)) {
            styleAxis(scale->axis(), palette);
            scale->axis()->grid()->setVisible(false);
            scale->setGradient(heatmapGradient());
        }
    }
    // Heatmaps in the colour scheme's gradient (a map with a scale takes the scale's).
    for (int i = 0; i < plot->plottableCount(); ++i)
        if (auto* map = qobject_cast<QCPColorMap*>(plot->plottable(i)))
            map->setGradient(heatmapGradient());
}

QCPLegend* legendRowOnTop(QCustomPlot* plot, int columns) {
    QCPLegend* legend = plot->legend;
    legend->setVisible(true);
    if (QCPLayoutInset* inset = plot->axisRect()->insetLayout(); inset->elements(false).contains(legend))
        inset->take(legend);
    // In a row of its own beside an empty element, so the legend keeps its natural width at the left
    // instead of spreading its entries over the whole plot.
    auto* row = new QCPLayoutGrid;
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(0, 0, row);
    plot->plotLayout()->setRowStretchFactor(0, 0.001);
    row->addElement(0, 0, legend);
    row->addElement(0, 1, new QCPLayoutElement(plot));
    row->setColumnStretchFactor(0, 0.001);
    legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    legend->setWrap(columns);
    legend->setColumnSpacing(kLegendColumnSpacing);
    legend->setRowSpacing(0);
    legend->setMargins(QMargins(6, 2, 6, 0));
    legend->setIconSize(kLegendIconWidth, 10);
    legend->setProperty("ndrMaxColumns", columns);
    return legend;
}

void addTitleRow(QCustomPlot* plot, const QString& title) {
    QFont bold = plot->font();
    bold.setBold(true);
    auto* text = new QCPTextElement(plot, title, bold);
    text->setObjectName("title");
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(0, 0, text);
    plot->plotLayout()->setRowStretchFactor(0, 0.001);
}

void setTitle(QCustomPlot* plot, const QString& title) {
    if (auto* text = plot->findChild<QCPTextElement*>("title"))
        text->setText(title);
}

void wrapLegend(QCustomPlot* plot, int width) {
    QCPLegend* legend = plot->legend; // null once a view has cleared its layout
    if (!legend || !legend->visible() || legend->property("ndrMaxColumns").toInt() < 1)
        return;
    const int most = legend->property("ndrMaxColumns").toInt();
    // The chance entry last, and only while the line shows: views rebuild their entries freely.
    for (int i = 0; i < plot->plottableCount(); ++i) {
        QCPAbstractPlottable* key = plot->plottable(i);
        if (!key->property("ndrChanceKey").toBool())
            continue;
        QCPAbstractLegendItem* last = nullptr;
        for (int j = 0; j < legend->itemCount(); ++j)
            if (legend->item(j))
                last = legend->item(j);
        auto* lastItem = qobject_cast<QCPPlottableLegendItem*>(last);
        const bool isLast = lastItem && lastItem->plottable() == key;
        if (!isLast || !key->visible())
            key->removeFromLegend(legend);
        if (!isLast && key->visible())
            key->addToLegend(legend);
    }
    // Entries fill rows left to right, so column k holds entries k, k + n, k + 2n... The most columns
    // that fit the width, at the legend's usual spacing or, when that leaves columns out, at a compact
    // one (shorter line samples, closer columns): fewer rows keep each row its full height where the
    // plot is short too.
    auto columnsAt = [&](int spacing, int iconWidth) {
        legend->setColumnSpacing(spacing);
        legend->setIconSize(iconWidth, legend->iconSize().height());
        std::vector<int> widths; // of the entries in order; the legend's grid may have empty cells
        for (int i = 0; i < legend->itemCount(); ++i)
            if (QCPAbstractLegendItem* item = legend->item(i))
                widths.push_back(item->minimumOuterSizeHint().width());
        auto fits = [&](int n) {
            int total = legend->margins().left() + legend->margins().right() + (n - 1) * spacing;
            for (int k = 0; k < n; ++k) {
                int column = 0;
                for (size_t i = size_t(k); i < widths.size(); i += size_t(n))
                    column = std::max(column, widths[i]);
                total += column;
            }
            return total <= width;
        };
        int n = std::max(1, std::min<int>(most, int(widths.size())));
        while (n > 1 && !fits(n))
            --n;
        return std::pair{n, int(widths.size())};
    };
    auto [n, entries] = columnsAt(kLegendColumnSpacing, kLegendIconWidth);
    if (n < std::min(most, entries)) {
        const int compact = columnsAt(kCompactColumnSpacing, kCompactIconWidth).first;
        if (compact > n)
            n = compact;
        else
            columnsAt(kLegendColumnSpacing, kLegendIconWidth);
    }
    if (n != legend->wrap()) {
        legend->setWrap(n);
        legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);
    }
}

QCPAbstractPlottable* nearestPoint(const QCustomPlot* plot, const QPoint& pos, int* index,
                                   const QCPAxisRect* rect, double maxPixels) {
    QCPAbstractPlottable* best = nullptr;
    double bestDistance = maxPixels;
    for (int i = 0; i < plot->plottableCount(); ++i) {
        QCPAbstractPlottable* p = const_cast<QCustomPlot*>(plot)->plottable(i);
        if (!p->realVisibility() || (rect && p->keyAxis()->axisRect() != rect))
            continue;
        if (!p->keyAxis()->axisRect()->rect().contains(pos))
            continue;
        QVariant details;
        const double d = p->selectTest(pos, false, &details);
        if (d >= 0 && d < bestDistance) {
            const QCPDataSelection sel = details.value<QCPDataSelection>();
            if (sel.isEmpty())
                continue;
            best = p;
            bestDistance = d;
            *index = sel.dataRange().begin();
        }
    }
    return best;
}

ChanceMark addChanceMark(QCustomPlot* plot, QCPAxisRect* rect) {
    QCPAxis* x = rect->axis(QCPAxis::atBottom);
    QCPAxis* y = rect->axis(QCPAxis::atLeft);
    ChanceMark mark{new QCPItemStraightLine(plot), new QCPCurve(x, y)};
    mark.line->setClipAxisRect(rect);
    mark.line->setLayer("overlay"); // over bars and curves, so it can always be found
    for (QCPItemPosition* pos : {mark.line->point1, mark.line->point2}) {
        pos->setAxes(x, y);
        pos->setAxisRect(rect);
        pos->setTypeX(QCPItemPosition::ptAxisRectRatio);
    }
    mark.key->setProperty("ndrChanceKey", true);
    mark.key->removeFromLegend();
    setChance(mark, 0);
    return mark;
}

namespace {

void setReferenceLine(const ChanceMark& mark, double value, const QString& name) {
    const bool shown = value > 0;
    mark.line->setVisible(shown);
    mark.key->setVisible(shown); // in the legend while visible (see wrapLegend)
    mark.line->point1->setCoords(0, value);
    mark.line->point2->setCoords(1, value);
    mark.key->setName(name);
}

} // namespace

void setChance(const ChanceMark& mark, double chance) {
    // A chance that rounds to 0.000 (a whole nine-digit answer, 1e-9) would lie on the axis and read
    // "chance 0.000": not drawn.
    setReferenceLine(mark, chance >= 0.0005 ? chance : 0, QObject::tr("chance %1").arg(formatValue(chance)));
}

void setReference(const ChanceMark& mark, double chance, double longerBaseline) {
    if (longerBaseline > 0) // false for NaN
        setReferenceLine(mark, longerBaseline, QObject::tr("majority %1").arg(formatValue(longerBaseline)));
    else
        setChance(mark, chance);
}

void styleChanceMark(const ChanceMark& mark, const QPalette& palette) {
    const QPen pen(referenceColor(palette), 1.2, Qt::DashDotLine);
    mark.line->setPen(pen);
    mark.key->setPen(pen);
}

QString formatValue(double value) {
    return QString::number(value, 'f', 3);
}

} // namespace ndrui
