// What ndr-studio does where there is no display: it says so, trains the default preset with the
// command-line tool beside it and writes the dashboard PNGs and GIF to a folder it names.
#pragma once

#include <optional>

// Returns the exit status when there is no display (after the headless run), nothing when the window
// can open. A display is: DISPLAY or WAYLAND_DISPLAY set, or a Qt platform chosen in QT_QPA_PLATFORM.
std::optional<int> runHeadlessIfNoDisplay(int argc, char** argv);
