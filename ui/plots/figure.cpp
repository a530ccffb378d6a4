// Figure files (see figure.h): one QCPPainter on an image, a PDF writer or an SVG generator, and the
// same paint function on each.
#include "ui/plots/figure.h"

#include <QBuffer>
#include <QCoreApplication>
#include <QDir>
#include <QEvent>
#include <QFont>
#include <QFontInfo>
#include <QGuiApplication>
#include <QPageLayout>
#include <QPdfWriter>
#include <QRegularExpression>
#include <QSaveFile>
#include <QScreen>
#include <QSvgGenerator>
#include <QWidget>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace ndrui {

namespace {

constexpr double kMetresPerInch = 0.0254;

// The painter of the figure this thread paints now (figures may nest: an image inside a figure).
thread_local QCPPainter* activePainter = nullptr;

// Paints `paint` with a painter already begun on its device, which is page.size * deviceScale
// device pixels. QCustomPlot draws text as text and skips its pixel-grid fixes in vectorized mode;
// non-cosmetic pens keep their width when the figure is scaled (a cosmetic pen is a hairline in a
// PDF, thinner the finer the printer).
void paintPage(QCPPainter& painter, const FigurePage& page, double deviceScale, bool vector,
               const PaintFigure& paint) {
    painter.setMode(QCPPainter::pmNoCaching);
    painter.setMode(QCPPainter::pmVectorized, vector);
    painter.setMode(QCPPainter::pmNonCosmetic, vector || deviceScale * page.scale > 1);
    const double scale = deviceScale * page.scale;
    painter.scale(scale, scale);
    const QSize inner(std::max(1, int(std::lround(page.size.width() / page.scale))),
                      std::max(1, int(std::lround(page.size.height() / page.scale))));
    QCPPainter* outer = std::exchange(activePainter, &painter);
    paint(painter, inner);
    activePainter = outer;
}

// A family name only fontconfig knows ("Sans Serif") is no font to a browser showing the SVG: the
// family it stands for here first, then the CSS generic family.
QByteArray portableFontFamilies(const QByteArray& svg) {
    static const QRegularExpression family(QStringLiteral("font-family=\"([^\"]*)\""));
    QString text = QString::fromUtf8(svg);
    QString out;
    qsizetype last = 0;
    for (auto it = family.globalMatch(text); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        const QString asked = m.captured(1);
        const QString found = QFontInfo(QFont(asked)).family();
        QStringList names;
        for (const QString& name : {found, asked})
            if (!name.isEmpty() && !names.contains(name))
                names << name;
        names << QStringLiteral("sans-serif");
        out += QStringView(text).mid(last, m.capturedStart() - last);
        out += QStringLiteral("font-family=\"%1\"").arg(names.join(QStringLiteral(", ")));
        last = m.capturedEnd();
    }
    out += QStringView(text).mid(last);
    return out.toUtf8();
}

} // namespace

QCPPainter* figurePainter(QPainter& painter) {
    return &painter == activePainter ? activePainter : nullptr;
}

int figureDpi() {
    if (const QScreen* screen = QGuiApplication::primaryScreen())
        return std::max(1, int(std::lround(screen->logicalDotsPerInchY())));
    return 96;
}

double paperScale() {
    const double points = QGuiApplication::font().pointSizeF();
    return points > 0 ? kPaperFontPoints / points : 1.0;
}

QImage paintImage(const FigurePage& page, const PaintFigure& paint) {
    const QSize pixels(std::max(1, int(std::lround(page.size.width() * page.pngScale))),
                       std::max(1, int(std::lround(page.size.height() * page.pngScale))));
    QImage image(pixels, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    // Fonts are sized by the device's resolution: the layout's, so that text measures as laid out.
    const int dotsPerMetre = int(std::lround(figureDpi() / kMetresPerInch));
    image.setDotsPerMeterX(dotsPerMetre);
    image.setDotsPerMeterY(dotsPerMetre);
    {
        QCPPainter painter(&image);
        paintPage(painter, page, page.pngScale, false, paint);
    }
    // What a viewer or a printer reads as the image's size: the page's in inches.
    image.setDotsPerMeterX(int(std::lround(dotsPerMetre * page.pngScale)));
    image.setDotsPerMeterY(int(std::lround(dotsPerMetre * page.pngScale)));
    return image;
}

QByteArray figureBytes(FigureFormat format, const FigurePage& page, const PaintFigure& paint) {
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    const int dpi = figureDpi();
    switch (format) {
    case FigureFormat::Png:
        paintImage(page, paint).save(&buffer, "PNG");
        break;
    case FigureFormat::Pdf: {
        QPdfWriter writer(&buffer);
        writer.setResolution(dpi);
        writer.setCreator(QStringLiteral("NDR Studio"));
        writer.setTitle(page.title);
        // Exactly the figure's size: a fuzzy match would round it to the nearest paper size.
        const QSizeF points(page.size.width() * 72.0 / dpi, page.size.height() * 72.0 / dpi);
        writer.setPageLayout(
            QPageLayout(QPageSize(points, QPageSize::Point, QString(), QPageSize::ExactMatch),
                        QPageLayout::Portrait, QMarginsF(0, 0, 0, 0)));
        QCPPainter painter(&writer);
        paintPage(painter, page, 1, true, paint);
        break;
    }
    case FigureFormat::Svg: {
        QSvgGenerator svg;
        svg.setOutputDevice(&buffer);
        svg.setResolution(dpi);
        svg.setSize(page.size);
        svg.setViewBox(QRect(QPoint(0, 0), page.size));
        svg.setTitle(page.title);
        svg.setDescription(QStringLiteral("Drawn by NDR Studio"));
        {
            QCPPainter painter(&svg);
            paintPage(painter, page, 1, true, paint);
        }
        buffer.close();
        return portableFontFamilies(bytes);
    }
    }
    return bytes;
}

bool writeFigure(const QString& path, FigureFormat format, const FigurePage& page, const PaintFigure& paint,
                 QString* error) {
    const QByteArray bytes = figureBytes(format, page, paint);
    QSaveFile file(path);
    if (bytes.isEmpty() || !file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() ||
        !file.commit()) {
        if (error)
            *error = QObject::tr("cannot write %1: %2")
                         .arg(QDir::toNativeSeparators(path),
                              bytes.isEmpty() ? QObject::tr("nothing was drawn") : file.errorString());
        return false;
    }
    return true;
}

FigureLook::FigureLook(QWidget* root, FigureStyle style, ColourScheme scheme)
    : root_(root), palette_(root->palette()), ownPalette_(root->testAttribute(Qt::WA_SetPalette)),
      paper_(style == FigureStyle::Paper), scheme_(colourScheme()) {
    setColourScheme(scheme);
    if (paper_)
        root_->setPalette(paperPalette());
    recolour(root_);
}

FigureLook::~FigureLook() {
    setColourScheme(scheme_);
    if (paper_)
        root_->setPalette(ownPalette_ ? palette_ : QPalette());
    recolour(root_);
}

void recolour(QWidget* root) {
    QList<QWidget*> widgets = root->findChildren<QWidget*>();
    widgets.prepend(root);
    for (QWidget* w : widgets) {
        QEvent change(QEvent::PaletteChange);
        QCoreApplication::sendEvent(w, &change);
    }
}

} // namespace ndrui
