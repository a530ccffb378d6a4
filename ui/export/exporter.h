// Exports of a run's dashboard without the window: one PNG per view, the whole dashboard as one PNG,
// one frame per evaluation (the training's dynamics) and an animated GIF of those frames. Used by
// File > Export in the app and by `ndr export` headless.
#pragma once

#include "core/records/records.h"

#include <QSize>
#include <QString>
#include <QStringList>

namespace ndrui {

struct ExportOptions {
    QSize viewSize{960, 600};        // each view's PNG
    QSize dashboardSize{1600, 1000}; // the whole dashboard and the GIF frames
    bool frames = true;              // frames/frame-NNN.png and training.gif
    int frameDelayMs = 700;          // GIF: time per evaluation (the last one is held longer)
    bool overwrite = false;          // replace existing files; otherwise refuse before writing anything
};

// The files exportDashboard would write into `folder`, relative to it, in order.
QStringList dashboardExportFiles(const ndr::RunRecord& record, const ExportOptions& options);

// Writes the exports into `folder` (created if needed). Refuses, writing nothing, when a file would be
// overwritten without options.overwrite. Each file is written atomically. Returns the paths written;
// on failure returns what was written so far and sets *error to a message naming the file and why.
// Needs a QApplication (any platform, offscreen included).
QStringList exportDashboard(const ndr::RunRecord& record, const QString& folder, const ExportOptions& options,
                            QString* error);

} // namespace ndrui
