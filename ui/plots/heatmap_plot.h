// One heatmap with the dashboard's look (viridis, crisp square cells, labels on both axes, a 0..1 colour
// scale), for views that show one matrix at a time, such as the inspector's attention of one step.
#pragma once

#include "ui/plots/plot_view.h"

#include <QStringList>
#include <vector>

class QCPColorMap;
class QCPColorScale;
class QCPTextElement;

namespace ndrui {

class HeatmapPlot : public PlotView {
    Q_OBJECT

public:
    explicit HeatmapPlot(QWidget* parent = nullptr);

    // `values` is (rows, cols) row-major in 0..1; the labels name the rows (down) and columns (across).
    void setMatrix(int rows, int cols, const std::vector<float>& values, const QStringList& rowLabels,
                   const QStringList& columnLabels);
    void setTitle(const QString& title);
    QString shownTitle() const; // the title as drawn (elided to the plot's width)
    // What rows, columns and values are ("target", "source", "attention weight"): axis labels,
    // colour scale label and tooltips use them.
    void setNames(const QString& rowName, const QString& columnName, const QString& valueName);

    int rows() const { return rows_; }
    int columns() const { return cols_; }
    double value(int row, int column) const;
    // The centre of cell (row, column) in this widget's coordinates as last laid out, so a caller (the
    // inspector's tests) can click a cell; (-1, -1) when there is no such cell.
    QPoint cellCenter(int row, int column) const;

    QString toolTipAt(const QPoint& pos) const override;

signals:
    void cellClicked(int row, int column, double value);

protected:
    void fitRanges() override;
    void layoutFor(QSize size) override;
    void resizeEvent(QResizeEvent* event) override;

private:
    void squareCells(QSize size);
    // Fits the title to `width` pixels: elided with "…" when it is longer (the whole title is the
    // plot's tooltip then), never clipped at both ends.
    void fitTitle(int width);

    int rows_ = 0, cols_ = 0;
    std::vector<float> values_;
    QStringList rowLabels_, columnLabels_;
    QString rowName_, columnName_, valueName_;
    QCPColorMap* map_;
    QCPColorScale* scale_;
    QCPTextElement* title_;
    QString fullTitle_;
    QPoint pressPos_;
};

} // namespace ndrui
