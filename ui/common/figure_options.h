// What an export is asked for: its formats (PNG, PDF, SVG), its style (the screen's or a paper's) and
// a paper's column, with the names the command line and the settings give them.
#pragma once

#include <QList>
#include <QString>
#include <QStringList>
#include <optional>

namespace ndrui {

enum class FigureFormat { Png, Pdf, Svg };

// "png", "pdf", "svg": the file suffix and the name `--format` takes.
QString formatName(FigureFormat format);
// The format of a name as formatName gives it (any case); none for another name.
std::optional<FigureFormat> formatNamed(const QString& name);
// "png,pdf,svg" into its formats in that order, each once; none, with *error naming the word, for a
// word that is no format or an empty list.
std::optional<QList<FigureFormat>> parseFormats(const QString& list, QString* error);
QStringList formatNames(const QList<FigureFormat>& formats);

// How an export is laid out: as on screen (the app's fonts, the window's colours), or for a paper:
// a column's width (3.5 in single, 7 in double), 8-9 pt text, thin lines on white.
enum class FigureStyle { Screen, Paper };
QString styleName(FigureStyle style); // "screen", "paper"
std::optional<FigureStyle> styleNamed(const QString& name);

// A paper's column: single (3.5 in) or double (7 in).
enum class PaperColumn { Single, Double };
double columnInches(PaperColumn column);

} // namespace ndrui
