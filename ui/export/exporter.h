// Exports of a run's dashboard without the window: each view as PNG, PDF or SVG (the per-model views,
// length generalisation, head usage, steps used and accuracy per operation, once per model that has
// them), the whole dashboard, each model's steps figure (its gates and attention over all steps of the
// probe), the history as CSV tables (evaluations, accuracy per depth per evaluation, the loss log), one
// frame per evaluation, or 60 evenly spaced ones of a longer history (the training's dynamics, on fixed
// axes), and an animated GIF of those frames, in
// the screen's style or a paper's, in the standard or the colour-blind-safe colours. Every image says
// which step (or model) it shows. Used by File > Export in the app and by `ndr export` headless.
#pragma once

#include "core/records/records.h"
#include "ui/plots/figure.h"

#include <QSize>
#include <QString>
#include <QStringList>
#include <functional>
#include <vector>

namespace ndrui {

struct ExportOptions {
    QSize viewSize{960, 600};        // each view's figure in screen style
    QSize dashboardSize{1600, 1000}; // the whole dashboard in screen style, and the GIF frames
    bool frames = true;              // frames/frame-NNN.png and training.gif
    int frameDelayMs = 700;          // GIF: time per evaluation (the last one is held longer)
    bool overwrite = false;          // replace existing files; otherwise refuse before writing anything
    QList<FigureFormat> formats{FigureFormat::Png}; // each figure once in each (the frames: PNG)
    FigureStyle style = FigureStyle::Screen;
    ColourScheme scheme = ColourScheme::Standard;
};

// The training frames of a history of `evaluations`: every evaluation up to kMaxTrainingFrames, otherwise
// that many evenly spaced, the first and the last among them. Each frame is drawn on the GUI thread and
// held until the GIF is written (1600x1000 pixels, 6.4 MB), so the bound keeps an export of a long run
// to seconds and a few hundred MB.
constexpr int kMaxTrainingFrames = 60;
std::vector<int> trainingFrameEvaluations(int evaluations);

// Where an export's figures may not go: into the folder of a run another process trains (its lock
// is held), whose files that process alone writes. Empty when `folder` may be written; otherwise
// the message that says why not.
QString lockedFolderProblem(const QString& folder);

// The files exportDashboard would write into `folder`, relative to it, in order.
QStringList dashboardExportFiles(const ndr::RunRecord& record, const ExportOptions& options);

// Writes the exports into `folder` (created if needed). Refuses, writing nothing, when a file would be
// overwritten without options.overwrite. Each file is written atomically. Returns the paths written;
// on failure returns what was written so far and sets *error to a message naming the file and why.
// Needs a QApplication (any platform, offscreen included).
QStringList exportDashboard(const ndr::RunRecord& record, const QString& folder, const ExportOptions& options,
                            QString* error);

// The inspector's step frames of steps 0..lastStep and their GIF, as Inspector::exportFrames names them:
// step-00.png ... step-NN.png (as many digits as lastStep needs, at least two) in each of `formats`,
// inspector.gif last.
QStringList stepFrameFiles(int lastStep, const QList<FigureFormat>& formats = {FigureFormat::Png});

// File > Export in the app: the dashboard's files and, when the inspector shows a traced expression,
// its step frames in the subfolder "inspector". The window asks before replacing existing() files.
struct ExportPlan {
    QString folder;
    ExportOptions options;
    QStringList dashboardFiles; // relative to folder, as dashboardExportFiles gives them
    QStringList inspectorFiles; // relative to folder ("inspector/step-00.png", ...); none without a trace

    QStringList files() const { return dashboardFiles + inspectorFiles; }
    QStringList existing() const; // those of files() already in the folder
};

// `inspectorLastStep`: the last step of the inspector's traces, or -1 when it has none to export.
ExportPlan planExport(const ndr::RunRecord& record, const QString& folder, const ExportOptions& options,
                      int inspectorLastStep);

// Writes the inspector's frames into `folder` (Inspector::exportFrames) as the options say; false with
// *error on failure.
using InspectorFrameWriter =
    std::function<bool(const QString& folder, const ExportOptions& options, QString* error)>;

// Writes the plan: the dashboard (exportDashboard), then the inspector's frames through
// `writeInspector`. Returns how many files were written; on failure sets *error and returns how many
// were written before it.
int writeExport(const ndr::RunRecord& record, const ExportPlan& plan,
                const InspectorFrameWriter& writeInspector, QString* error);

} // namespace ndrui
