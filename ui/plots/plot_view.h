// The base of every dashboard plot: a widget around one QCustomPlot that follows the system palette,
// coalesces redraws, fits its ranges until the user zooms or pans, shows hover tooltips and paints
// itself for exports (an image, a PDF or an SVG: see figure.h).
#pragma once

#include <QImage>
#include <QWidget>

class QCustomPlot;
class QHBoxLayout;
class QPainter;
class QVBoxLayout;

namespace ndrui {

class PlotView : public QWidget {
    Q_OBJECT

public:
    // The plot alone (without the view's controls) laid out at `size` and drawn with `painter`, on
    // any device: what every export of the view, PNG, PDF or SVG, draws with (see figure.h).
    void paint(QPainter& painter, QSize size);
    // paint() into an image of `size` pixels.
    QImage render(QSize size);

    // What the hover tooltip says at `pos` (in the plot's coordinates); empty over nothing.
    virtual QString toolTipAt(const QPoint& pos) const = 0;

    // Ranges follow the data until the user drags or zooms; a double click (or this) fits again.
    void fitToData();

protected:
    static constexpr QSize kMinimumPlotSize{120, 90};
    // Room for two or three tick labels up a rect's left axis (see setLeastRectHeight).
    static constexpr int kLeastRectHeight = 40;

    explicit PlotView(QWidget* parent = nullptr);

    QCustomPlot* plot() const { return plot_; }
    // A row above the plot for the view's own controls (smoothing, head, model).
    QHBoxLayout* controls();
    QVBoxLayout* rootLayout() const { return root_; }

    // The least height each axis rect keeps inside its axes, for views whose rects stand one above
    // the other: the plot's minimum height follows its legend, title and axis labels so that the
    // rects keep this much however many rows the legend wraps to (the dashboard's splitters then give
    // the row more room). 0 (the default): the small fixed minimum alone.
    void setLeastRectHeight(int pixels);

    // Asks for one redraw on the next event-loop turn; many calls before it make one replot.
    void requestReplot();
    // Recolours axes, grids, legends, text and colour scales from palette(); views extend it for
    // their own items and call it back.
    virtual void applyPalette();
    // Sets the ranges to show all the data; called before a replot while following the data.
    virtual void fitRanges() {}
    // Lays the plot out for an export of `size`, or back for the screen when `size` is invalid; most
    // views need not (QCustomPlot scales its layout), views that choose a grid by size do.
    virtual void layoutFor(QSize size) { Q_UNUSED(size); }
    // Draws the plot as it is laid out, at `size`, with `painter` (a QCPPainter or any other).
    void drawPlot(QPainter& painter, QSize size);

    void changeEvent(QEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QCustomPlot* plot_;
    QVBoxLayout* root_;
    QHBoxLayout* controls_ = nullptr;
    bool following_ = true;
    int leastRectHeight_ = 0;

    void keepRectHeight();
};

} // namespace ndrui
