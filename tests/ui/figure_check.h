// Checks of exported figures for the tests: an SVG parses as XML and holds its words as <text>, a PDF
// is a PDF whose text poppler's pdftotext finds and whose page pdftoppm draws, and the PNG, the PDF
// and the SVG of one figure look alike when shrunk to grey thumbnails.
#pragma once

#include <QDir>
#include <QFile>
#include <QImage>
#include <QPainter>
#include <QProcess>
#include <QStandardPaths>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <cmath>

namespace figtest {

// Whether poppler's tools are installed (packaging/install-deps.sh installs them).
inline bool havePoppler() {
    return !QStandardPaths::findExecutable("pdftotext").isEmpty() &&
           !QStandardPaths::findExecutable("pdftoppm").isEmpty();
}

// Runs `program` with `args`; its standard output, or a message starting with "failed:".
inline QString run(const QString& program, const QStringList& args) {
    QProcess p;
    p.start(program, args);
    if (!p.waitForFinished(60000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        return "failed: " + program + " " + args.join(' ') + ": " +
               QString::fromUtf8(p.readAllStandardError());
    return QString::fromUtf8(p.readAllStandardOutput());
}

// Words separated by single spaces, so that a label found across a line break still matches.
inline QString squeezed(const QString& text) {
    return text.simplified();
}

// The text of every <text> element of the SVG at `path`, joined by spaces; *error says why it is no SVG.
inline QString svgText(const QString& path, QString* error) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = "cannot open " + path;
        return {};
    }
    QXmlStreamReader xml(&file);
    QStringList texts;
    bool root = false;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement()) {
            if (!root && xml.name() != QLatin1String("svg")) {
                *error = path + ": the root element is " + xml.name().toString() + ", not svg";
                return {};
            }
            root = true;
            if (xml.name() == QLatin1String("text"))
                texts << xml.readElementText(QXmlStreamReader::IncludeChildElements);
        }
    }
    if (xml.hasError())
        *error = path + ": not well-formed XML: " + xml.errorString();
    else if (!root)
        *error = path + ": no svg element";
    return squeezed(texts.join(' '));
}

// What pdftotext reads from the PDF at `path`.
inline QString pdfText(const QString& path) {
    return squeezed(run("pdftotext", {path, "-"}));
}

// The PDF's first page drawn by pdftoppm at `dpi`; null when it cannot be drawn.
inline QImage pdfImage(const QString& path, int dpi) {
    QTemporaryDir dir;
    const QString out = dir.filePath("page");
    if (run("pdftoppm", {"-png", "-r", QString::number(dpi), "-singlefile", path, out}).startsWith("failed:"))
        return {};
    return QImage(out + ".png");
}

// The SVG at `path` drawn by Qt SVG into an image of `size`.
inline QImage svgImage(const QString& path, QSize size) {
    QSvgRenderer renderer(path);
    if (!renderer.isValid())
        return {};
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    QPainter p(&image);
    renderer.render(&p);
    return image;
}

// A thumbnail of `size`, grey, over white: what a coarse comparison looks at.
inline QImage thumbnail(const QImage& image, QSize size) {
    QImage white(image.size(), QImage::Format_RGB32);
    white.fill(Qt::white);
    QPainter(&white).drawImage(0, 0, image);
    return white.scaled(size, Qt::IgnoreAspectRatio, Qt::SmoothTransformation)
        .convertToFormat(QImage::Format_Grayscale8);
}

// The mean absolute difference of two images' grey thumbnails (0..255), 96 pixels wide; 255 when
// their shapes differ by more than a pixel's rounding.
inline double meanDifference(const QImage& a, const QImage& b) {
    if (a.isNull() || b.isNull() ||
        std::abs(double(a.height()) / a.width() - double(b.height()) / b.width()) > 0.02)
        return 255;
    const QSize size(96, std::max(1, 96 * a.height() / a.width()));
    const QImage x = thumbnail(a, size), y = thumbnail(b, size);
    double sum = 0;
    for (int r = 0; r < x.height(); ++r) {
        const uchar* p = x.constScanLine(r);
        const uchar* q = y.constScanLine(r);
        for (int c = 0; c < x.width(); ++c)
            sum += std::abs(int(p[c]) - int(q[c]));
    }
    return sum / (double(x.width()) * x.height());
}

// How far apart an image may be from another of the same figure in another format: fonts are
// rasterised differently, lines antialiased differently; a different picture differs by far more.
constexpr double kSameFigure = 10;

// Checks the PNG, PDF and SVG of `stem` in `folder`: each is what its format says, the SVG and the PDF
// hold every one of `words` as text, and the three look alike. Empty when all hold, otherwise what
// failed. The PDF's text and picture are checked only where poppler is installed.
inline QString checkFigure(const QString& folder, const QString& stem, const QStringList& words, int dpi) {
    const QDir dir(folder);
    const QImage png(dir.filePath(stem + ".png"));
    if (png.isNull())
        return stem + ".png does not read as an image";
    QString error;
    const QString svg = svgText(dir.filePath(stem + ".svg"), &error);
    if (!error.isEmpty())
        return error;
    QFile pdfFile(dir.filePath(stem + ".pdf"));
    if (!pdfFile.open(QIODevice::ReadOnly) || pdfFile.read(4) != "%PDF")
        return stem + ".pdf does not start with %PDF";
    for (const QString& w : words)
        if (!svg.contains(w))
            return QString("%1.svg has no text \"%2\"; its text: %3").arg(stem, w, svg.left(600));
    const QImage fromSvg = svgImage(dir.filePath(stem + ".svg"), png.size());
    if (fromSvg.isNull())
        return stem + ".svg cannot be drawn";
    if (const double d = meanDifference(png, fromSvg); d > kSameFigure)
        return QString("%1: the SVG drawn differs from the PNG by %2 grey levels on average")
            .arg(stem)
            .arg(d);
    if (!havePoppler())
        return {};
    const QString pdf = pdfText(dir.filePath(stem + ".pdf"));
    if (pdf.startsWith("failed:"))
        return pdf;
    for (const QString& w : words)
        if (!pdf.contains(w))
            return QString("pdftotext finds no \"%2\" in %1.pdf; it reads: %3").arg(stem, w, pdf.left(600));
    const QImage fromPdf = pdfImage(dir.filePath(stem + ".pdf"), dpi);
    if (fromPdf.isNull())
        return "pdftoppm cannot draw " + stem + ".pdf";
    if (const double d = meanDifference(png, fromPdf); d > kSameFigure)
        return QString("%1: the PDF drawn differs from the PNG by %2 grey levels on average")
            .arg(stem)
            .arg(d);
    return {};
}

} // namespace figtest
