// One heatmap (see heatmapplot.h).
#include "ui/plots/heatmap_plot.h"

#include "ui/plots/color_maps.h"
#include "ui/plots/plot_style.h"

#include <QMouseEvent>
#include <qcustomplot.h>

#include <cmath>

namespace ndrui {

HeatmapPlot::HeatmapPlot(QWidget* parent) : PlotView(parent) {
    QCustomPlot* p = plot();
    title_ = new QCPTextElement(p, QString(), QFont(font().family(), font().pointSize(), QFont::Bold));
    scale_ = unitColorScale(new QCPColorScale(p), QString());
    // The title in a row of its own above the map and its scale, so it is centred on (and elided to)
    // the plot's whole width rather than the map's column.
    QCPLayoutGrid* top = p->plotLayout();
    QCPAxisRect* rect = p->axisRect();
    top->take(rect);
    auto* body = new QCPLayoutGrid;
    top->addElement(0, 0, title_);
    top->addElement(1, 0, body);
    top->setRowStretchFactor(0, 0.001);
    body->addElement(0, 0, rect);
    body->addElement(0, 1, scale_);
    auto* margins = new QCPMarginGroup(p);
    p->axisRect()->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    scale_->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    map_ = addHeatmap(p->axisRect(), {}, {}, scale_);
    setNames(tr("row"), tr("column"), tr("value"));
    // Every n-th token label where the cells are narrower than a line of text, on both axes; the ticks
    // are placed again in the same replot.
    connect(p, &QCustomPlot::afterLayout, this, [this] {
        const bool across = thinCellLabels(map_->keyAxis(), columnLabels_);
        const bool down = thinCellLabels(map_->valueAxis(), rowLabels_);
        if (across || down)
            map_->keyAxis()->axisRect()->update(QCPLayoutElement::upPreparation);
    });

    connect(p, &QCustomPlot::mousePress, this, [this](QMouseEvent* e) { pressPos_ = e->pos(); });
    connect(p, &QCustomPlot::mouseRelease, this, [this](QMouseEvent* e) {
        int row = 0, col = 0;
        if ((e->pos() - pressPos_).manhattanLength() <= 3 && e->button() == Qt::LeftButton &&
            heatmapCellAt(map_, e->pos(), &row, &col))
            emit cellClicked(row, col, value(row, col));
    });
    applyPalette();
}

void HeatmapPlot::setMatrix(int rows, int cols, const std::vector<float>& values,
                            const QStringList& rowLabels, const QStringList& columnLabels) {
    const bool reshaped =
        rows != rows_ || cols != cols_ || rowLabels != rowLabels_ || columnLabels != columnLabels_;
    rows_ = rows;
    cols_ = cols;
    values_ = values;
    values_.resize(size_t(std::max(rows, 0)) * std::max(cols, 0), NAN);
    rowLabels_ = rowLabels;
    columnLabels_ = columnLabels;
    if (reshaped) {
        // A new shape or new labels: a fresh map with its tickers (animation frames keep the old one).
        plot()->removePlottable(map_);
        map_ = addHeatmap(plot()->axisRect(), columnLabels, rowLabels, scale_);
        squareCells(QSize());
        fitToData();
    }
    setHeatmapValues(map_, rows, cols, [this](int r, int c) { return value(r, c); });
    requestReplot();
}

void HeatmapPlot::setTitle(const QString& title) {
    fullTitle_ = title;
    fitTitle(plot()->width());
    requestReplot();
}

QString HeatmapPlot::shownTitle() const {
    return title_->text();
}

void HeatmapPlot::fitTitle(int width) {
    const QFontMetrics fm(title_->font());
    const QString shown = fm.elidedText(fullTitle_, Qt::ElideRight, std::max(40, width - 12));
    title_->setText(shown);
    plot()->setToolTip(shown == fullTitle_ ? QString() : fullTitle_);
}

void HeatmapPlot::setNames(const QString& rowName, const QString& columnName, const QString& valueName) {
    rowName_ = rowName;
    columnName_ = columnName;
    valueName_ = valueName;
    plot()->axisRect()->axis(QCPAxis::atLeft)->setLabel(rowName);
    plot()->axisRect()->axis(QCPAxis::atBottom)->setLabel(columnName);
    scale_->axis()->setLabel(valueName);
    requestReplot();
}

double HeatmapPlot::value(int row, int column) const {
    if (row < 0 || column < 0 || row >= rows_ || column >= cols_)
        return NAN;
    return values_[size_t(row) * cols_ + column];
}

QPoint HeatmapPlot::cellCenter(int row, int column) const {
    if (row < 0 || column < 0 || row >= rows_ || column >= cols_)
        return {-1, -1};
    const QPointF p(map_->keyAxis()->coordToPixel(column), map_->valueAxis()->coordToPixel(row));
    return plot()->mapTo(this, p.toPoint());
}

QString HeatmapPlot::toolTipAt(const QPoint& pos) const {
    int row = 0, col = 0;
    if (!heatmapCellAt(map_, pos, &row, &col))
        return {};
    return tr("%1 %2 (%3), %4 %5 (%6): %7 %8")
        .arg(rowName_, rowLabels_.value(row))
        .arg(row)
        .arg(columnName_, columnLabels_.value(col))
        .arg(col)
        .arg(valueName_, formatValue(value(row, col)));
}

void HeatmapPlot::fitRanges() {
    fitHeatmap(map_);
}

void HeatmapPlot::layoutFor(QSize size) {
    fitTitle(size.isValid() ? size.width() : plot()->width());
    squareCells(size);
}

void HeatmapPlot::resizeEvent(QResizeEvent* event) {
    PlotView::resizeEvent(event);
    fitTitle(plot()->width());
    squareCells(QSize());
}

void HeatmapPlot::squareCells(QSize size) {
    if (!size.isValid())
        size = plot()->size();
    QCPAxisRect* rect = plot()->axisRect();
    if (rows_ <= 0 || cols_ <= 0 || size.isEmpty())
        return;
    // Lay out once unconstrained to learn what labels and scale take, then hold the rect to whole,
    // square cells; what is left over stays blank.
    rect->setMaximumSize(QWIDGETSIZE_MAX, QWIDGETSIZE_MAX);
    QCPLayout* layout = plot()->plotLayout();
    layout->setOuterRect(QRect(QPoint(0, 0), size));
    for (auto phase :
         {QCPLayoutElement::upPreparation, QCPLayoutElement::upMargins, QCPLayoutElement::upLayout})
        layout->update(phase);
    const double cell =
        std::max(2.0, std::min(double(rect->width()) / cols_, double(rect->height()) / rows_));
    rect->setMaximumSize(int(cell * cols_), int(cell * rows_));
    requestReplot();
}

} // namespace ndrui
