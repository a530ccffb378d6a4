// Colours shared by every view, so a model and a split look the same everywhere in the app. Derived
// from the application palette where it matters, so views follow a light or a dark theme.
#pragma once

#include "core/task/task.h"

#include <QColor>
#include <QPalette>

namespace ndrui {

// The colour of model `index` (0: NDR blue, 1: vanilla orange, then further hues, none a split's).
QColor modelColor(int index);
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
