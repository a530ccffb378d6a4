// Figures as files: anything that paints itself with a QPainter at a size is written as PNG, PDF or
// SVG by one paint function, so the three formats show the same thing; text stays text and lines
// stay lines in the vector formats. Paper style's sizes, and the look an export is drawn in.
#pragma once

#include "ui/common/figure_options.h"
#include "ui/common/palette.h"

#include <QImage>
#include <QPainter>
#include <QSize>
#include <QString>
#include <functional>

class QCPPainter;
class QWidget;

namespace ndrui {

// The pixels per inch figures are laid out at: the screen's logical resolution, at which fonts are
// measured, so that a point is the same size in every format.
int figureDpi();
// What paper style draws everything scaled by: the app's font drawn at kPaperFontPoints.
double paperScale();
constexpr double kPaperFontPoints = 8.5;

// Paints a figure of `size` (in pixels at figureDpi) with `painter`, which the writers make a
// QCPPainter on its device (see PlotView::paint).
using PaintFigure = std::function<void(QPainter& painter, QSize size)>;
// `painter` as the QCustomPlot painter a writer made it, while it paints a figure; null for any other
// painter (QPainter has no virtual functions to tell them apart by).
QCPPainter* figurePainter(QPainter& painter);

// What a file holds: the figure's size, and what it is drawn scaled by.
struct FigurePage {
    FigurePage(QSize pixels = {}, double drawScale = 1, double pngPixels = 1)
        : size(pixels), scale(drawScale), pngScale(pngPixels) {}
    QSize size;          // pixels at figureDpi(): a PDF page of size / figureDpi() inches
    double scale = 1;    // the figure is painted at size / scale and scaled up by it (paper style)
    double pngScale = 1; // PNG pixels per pixel of `size` (paper style prints at ~300 dpi)
    QString title;       // the PDF's and SVG's title
};

// The figure drawn into an image of page.size * page.pngScale pixels.
QImage paintImage(const FigurePage& page, const PaintFigure& paint);
// Writes the figure to `path` in `format`, atomically (a temporary file, then a rename). False with
// *error naming the file and why when it cannot be written.
bool writeFigure(const QString& path, FigureFormat format, const FigurePage& page, const PaintFigure& paint,
                 QString* error);
// The file as `format` would write it, for tests and callers that keep it in memory.
QByteArray figureBytes(FigureFormat format, const FigurePage& page, const PaintFigure& paint);

// Draws the widgets under `root` in an export's style and colours while it lives, and as they were
// afterwards: paper style gives them a white palette with black text, and the colour scheme is the
// export's (see palette.h). The widgets repaint their colours on both changes.
class FigureLook {
public:
    FigureLook(QWidget* root, FigureStyle style, ColourScheme scheme);
    ~FigureLook();
    FigureLook(const FigureLook&) = delete;
    FigureLook& operator=(const FigureLook&) = delete;

private:
    QWidget* root_;
    QPalette palette_;
    bool ownPalette_;
    bool paper_;
    ColourScheme scheme_;
};

// Sends every widget under `root` (and `root`) a palette change, so that each draws its colours anew
// (the colour scheme changed; the palette itself may not have).
void recolour(QWidget* root);

} // namespace ndrui
