// Model and split colours (see palette.h).
#include "ui/common/palette.h"

namespace ndrui {

QColor modelColor(int index) {
    // Tableau 10 hues without the splits' green, olive and red (a model must not read as a split),
    // and a dark indigo: eight models, as many as Table 1 has, before a colour comes again.
    static const QColor colors[] = {QColor(31, 119, 180), QColor(255, 127, 14),  QColor(148, 103, 189),
                                    QColor(140, 86, 75),  QColor(227, 119, 194), QColor(127, 127, 127),
                                    QColor(23, 190, 207), QColor(57, 59, 121)};
    constexpr int n = int(sizeof colors / sizeof colors[0]);
    return colors[((index % n) + n) % n];
}

bool isDark(const QPalette& palette) {
    return palette.color(QPalette::Window).lightness() < 128;
}

QColor splitColor(ndr::Split split) {
    switch (split) {
    case ndr::Split::Train:
        return QColor(44, 160, 44);
    case ndr::Split::Valid:
        return QColor(188, 189, 34);
    case ndr::Split::Test:
        return QColor(214, 39, 40);
    case ndr::Split::None:
        break;
    }
    return QColor(0, 0, 0, 0);
}

QColor splitShade(ndr::Split split, const QPalette& palette) {
    QColor shade = splitColor(split);
    if (split != ndr::Split::None)
        shade.setAlpha(isDark(palette) ? 60 : 40);
    return shade;
}

QColor referenceColor(const QPalette& palette) {
    return isDark(palette) ? QColor(170, 170, 170) : QColor(110, 110, 110);
}

} // namespace ndrui
