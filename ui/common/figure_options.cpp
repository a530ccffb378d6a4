// Export options and their names (see figure_options.h).
#include "ui/common/figure_options.h"

#include <QObject>

namespace ndrui {

QString formatName(FigureFormat format) {
    switch (format) {
    case FigureFormat::Png:
        return QStringLiteral("png");
    case FigureFormat::Pdf:
        return QStringLiteral("pdf");
    case FigureFormat::Svg:
        return QStringLiteral("svg");
    }
    return {};
}

std::optional<FigureFormat> formatNamed(const QString& name) {
    for (FigureFormat f : {FigureFormat::Png, FigureFormat::Pdf, FigureFormat::Svg})
        if (name.compare(formatName(f), Qt::CaseInsensitive) == 0)
            return f;
    return std::nullopt;
}

std::optional<QList<FigureFormat>> parseFormats(const QString& list, QString* error) {
    QList<FigureFormat> formats;
    for (const QString& part : list.split(',')) {
        const QString word = part.trimmed();
        if (word.isEmpty())
            continue;
        const auto f = formatNamed(word);
        if (!f) {
            *error = QObject::tr("unknown format '%1': the formats are png, pdf and svg").arg(word);
            return std::nullopt;
        }
        if (!formats.contains(*f))
            formats << *f;
    }
    if (formats.isEmpty()) {
        *error = QObject::tr("no format given: name one or more of png, pdf and svg");
        return std::nullopt;
    }
    return formats;
}

QStringList formatNames(const QList<FigureFormat>& formats) {
    QStringList names;
    for (FigureFormat f : formats)
        names << formatName(f);
    return names;
}

QString styleName(FigureStyle style) {
    return style == FigureStyle::Paper ? QStringLiteral("paper") : QStringLiteral("screen");
}

std::optional<FigureStyle> styleNamed(const QString& name) {
    for (FigureStyle s : {FigureStyle::Screen, FigureStyle::Paper})
        if (name.compare(styleName(s), Qt::CaseInsensitive) == 0)
            return s;
    return std::nullopt;
}

double columnInches(PaperColumn column) {
    return column == PaperColumn::Double ? 7.0 : 3.5;
}

} // namespace ndrui
