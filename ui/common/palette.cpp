// Model and split colours (see palette.h).
#include "ui/common/palette.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace ndrui {

namespace {
// The app's scheme: one per process, as the application palette is.
ColourScheme shownScheme = ColourScheme::Standard;
} // namespace

ColourScheme colourScheme() {
    return shownScheme;
}

void setColourScheme(ColourScheme scheme) {
    shownScheme = scheme;
}

QString schemeName(ColourScheme scheme) {
    return scheme == ColourScheme::ColourBlindSafe ? QStringLiteral("colour-blind")
                                                   : QStringLiteral("standard");
}

bool schemeNamed(const QString& name, ColourScheme* scheme) {
    const QString n = name.trimmed().toLower();
    if (n == "standard")
        *scheme = ColourScheme::Standard;
    else if (n == "colour-blind" || n == "color-blind")
        *scheme = ColourScheme::ColourBlindSafe;
    else
        return false;
    return true;
}

QPalette paperPalette() {
    QPalette p(QColor(Qt::white));
    for (auto role : {QPalette::Window, QPalette::Base, QPalette::Button, QPalette::AlternateBase})
        p.setColor(role, Qt::white);
    for (auto role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        p.setColor(role, Qt::black);
    p.setColor(QPalette::Disabled, QPalette::WindowText, QColor(140, 140, 140));
    return p;
}

QColor modelColor(int index) {
    // Tableau 10 hues without the splits' green, olive and red (a model must not read as a split),
    // and a dark indigo: eight models, as many as Table 1 has, before a colour comes again.
    static const QColor standard[] = {QColor(31, 119, 180), QColor(255, 127, 14),  QColor(148, 103, 189),
                                      QColor(140, 86, 75),  QColor(227, 119, 194), QColor(127, 127, 127),
                                      QColor(23, 190, 207), QColor(57, 59, 121)};
    // Okabe-Ito's blue, orange, reddish purple, sky blue and (for its black, which a dark window
    // would hide) a mid grey; its bluish green, yellow and vermillion are the splits'.
    static const QColor safe[] = {QColor(0, 114, 178), QColor(230, 159, 0), QColor(204, 121, 167),
                                  QColor(86, 180, 233), QColor(128, 128, 128)};
    const bool cb = shownScheme == ColourScheme::ColourBlindSafe;
    const int n = cb ? int(std::size(safe)) : int(std::size(standard));
    const int i = ((index % n) + n) % n;
    return cb ? safe[i] : standard[i];
}

QColor sequenceColor(int index, int count, const QPalette& palette) {
    const int n = std::max(count, 2);
    const double t = std::clamp(double(index) / (n - 1), 0.0, 1.0);
    if (shownScheme == ColourScheme::Standard) {
        const int hue = int(240 - 240.0 * t + 360) % 360;
        return QColor::fromHsl(hue, 190, isDark(palette) ? 165 : 105);
    }
    // matplotlib's viridis at 0, 1/8, ..., 1, without its pale yellow end on a light window (lost on
    // white) or its near-black start on a dark one.
    static const QColor viridis[] = {QColor(68, 1, 84),    QColor(71, 44, 122),  QColor(59, 81, 139),
                                     QColor(44, 113, 142), QColor(33, 144, 141), QColor(39, 173, 129),
                                     QColor(92, 200, 99),  QColor(170, 220, 50), QColor(253, 231, 37)};
    const double at = (isDark(palette) ? 0.25 + 0.75 * t : 0.85 * t) * 8;
    const int i = std::min(7, int(at));
    const double f = at - i;
    const QColor a = viridis[i], b = viridis[i + 1];
    return QColor(int(std::lround(a.red() + (b.red() - a.red()) * f)),
                  int(std::lround(a.green() + (b.green() - a.green()) * f)),
                  int(std::lround(a.blue() + (b.blue() - a.blue()) * f)));
}

bool isDark(const QPalette& palette) {
    return palette.color(QPalette::Window).lightness() < 128;
}

QColor splitColor(ndr::Split split) {
    const bool cb = shownScheme == ColourScheme::ColourBlindSafe;
    switch (split) {
    case ndr::Split::Train:
        return cb ? QColor(0, 158, 115) : QColor(44, 160, 44);
    case ndr::Split::Valid:
        return cb ? QColor(240, 228, 66) : QColor(188, 189, 34);
    case ndr::Split::Test:
        return cb ? QColor(213, 94, 0) : QColor(214, 39, 40);
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
