// Colours shared by every view, so a model and a split look the same everywhere in the app. Derived
// from the application palette where it matters, so views follow a light or a dark theme; a
// colour-blind-safe scheme (View menu, exports) swaps every hue for the Okabe-Ito set.
#pragma once

#include "core/task/task.h"

#include <QColor>
#include <QPalette>

namespace ndrui {

// The hues of models, splits and heatmaps: the standard ones (Tableau hues, viridis), or the
// Okabe-Ito set and cividis, which readers with any kind of colour blindness tell apart.
enum class ColourScheme { Standard, ColourBlindSafe };
// The scheme every view draws in (Standard until set): the app's choice, or an export's while it
// draws (FigureLook). Views read it when they paint their colours (on a palette change).
ColourScheme colourScheme();
void setColourScheme(ColourScheme scheme);
QString schemeName(ColourScheme scheme); // "standard", "colour-blind"
// The scheme of a name as schemeName gives it ("color-blind" too); false for another name.
bool schemeNamed(const QString& name, ColourScheme* scheme);

// White paper, black text: what figures in paper style are drawn on.
QPalette paperPalette();

// The colour of model `index` (0: NDR blue, 1: vanilla orange, then further hues, none a split's), in
// the current scheme.
QColor modelColor(int index);
// The colour of item `index` of `count` in order (depths shallow to deep, heads, operations): hues
// around the wheel, lighter on a dark window; in the colour-blind-safe scheme a ramp of viridis,
// which tells them apart by lightness as well as hue.
QColor sequenceColor(int index, int count, const QPalette& palette);
// The colour of a split (train green, valid olive, test red): figures of a split as a whole, such as
// Compare's IID and Longer bars, which the model colours would confuse with models.
QColor splitColor(ndr::Split split);
// Background shading of a depth's split: its colour, faint enough to sit behind bars.
QColor splitShade(ndr::Split split, const QPalette& palette);
// The colour of the chance line and other reference marks.
QColor referenceColor(const QPalette& palette);
// True when the palette's window is dark.
bool isDark(const QPalette& palette);

} // namespace ndrui
