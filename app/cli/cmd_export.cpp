// `ndr export`: draws a saved run's dashboard without a display: each view as PNG, PDF or SVG, the
// whole dashboard, each model's steps figure, one frame per evaluation and an animated GIF of the
// training, in the screen's or a paper's style and the standard or colour-blind-safe colours.
#include "commands.h"
#include "common.h"

#include "ui/common/platform_notices.h"
#include "ui/export/exporter.h"

#include <QApplication>
#include <QDir>
#include <QFileInfo>
#include <iostream>
#include <memory>

namespace ndrcli {

namespace {

struct ExportCliOptions {
    std::string runFile, out;
    bool overwrite = false, noFrames = false;
    int width = 1600, height = 1000;
    std::string formats = "png", style = "screen", colours = "standard";
};

int runExport(const ExportCliOptions& o) {
    // The options first: a wrong word is refused before the run file is read.
    QString problem;
    const auto formats = ndrui::parseFormats(QString::fromStdString(o.formats), &problem);
    if (!formats)
        throw CliError("--format: " + problem.toStdString());
    const auto style = ndrui::styleNamed(QString::fromStdString(o.style));
    if (!style)
        throw CliError("--style: unknown style '" + o.style + "': the styles are screen and paper");
    ndrui::ColourScheme scheme = ndrui::ColourScheme::Standard;
    if (!ndrui::schemeNamed(QString::fromStdString(o.colours), &scheme))
        throw CliError("--colours: unknown colours '" + o.colours +
                       "': the colours are standard and colour-blind");
    ndr::RunRecord record;
    try {
        record = ndr::loadRunRecord(o.runFile);
    } catch (const std::exception& e) {
        throw CliError(e.what());
    }
    const fs::path out = o.out.empty() ? fs::path(o.runFile).parent_path() / "dashboard" : fs::path(o.out);
    // Drawing needs a GUI application but never a display.
    qputenv("QT_QPA_PLATFORM", "offscreen");
    ndrui::hidePlatformNotices();
    int argc = 1;
    char name[] = "ndr";
    char* argv[] = {name, nullptr};
    QApplication app(argc, argv);
    ndrui::ExportOptions options;
    options.dashboardSize = QSize(o.width, o.height);
    options.overwrite = o.overwrite;
    options.frames = !o.noFrames;
    options.formats = *formats;
    options.style = *style;
    options.scheme = scheme;
    QString error;
    const QStringList files =
        ndrui::exportDashboard(record, QString::fromStdString(out.string()), options, &error);
    if (!error.isEmpty())
        throw CliError(error.toStdString());
    std::cout << "Wrote " << files.size() << " files to " << out.string() << ":";
    const QDir dir(QString::fromStdString(fs::absolute(out).string()));
    for (const QString& f : files)
        std::cout << "\n  " << dir.relativeFilePath(QFileInfo(f).absoluteFilePath()).toStdString();
    std::cout << std::endl;
    return 0;
}

} // namespace

Command addExportCommand(CLI::App& root) {
    auto o = std::make_shared<ExportCliOptions>();
    auto* cmd = root.add_subcommand(
        "export", "Draw a saved run's dashboard as PNGs and an animated GIF, without a display");
    cmd->add_option("run", o->runFile, "The run file (run.json)")->required();
    cmd->add_option("--out", o->out, "Output folder (default: a 'dashboard' folder beside the run file)");
    cmd->add_option("--width", o->width, "Width of the dashboard image and GIF frames")
        ->check(CLI::Range(320, 8000));
    cmd->add_option("--height", o->height, "Height of the dashboard image and GIF frames")
        ->check(CLI::Range(240, 8000));
    cmd->add_flag("--overwrite", o->overwrite,
                  "Replace files that already exist (otherwise nothing is written)");
    cmd->add_flag("--no-frames", o->noFrames, "Only the views and the dashboard, no frames or GIF");
    cmd->add_option("--format", o->formats,
                    "The figures' formats, comma-separated: png, pdf, svg (default png); PDF and SVG keep "
                    "text as text and lines as lines");
    cmd->add_option("--style", o->style,
                    "screen (default: the window's look) or paper: a column wide (3.5 in; 7 in for the "
                    "grids and the dashboard), 8.5 pt text, thin lines on white, PNGs at 300 dpi");
    cmd->add_option("--colours,--colors", o->colours,
                    "standard (default) or colour-blind: Okabe-Ito colours for models and splits, "
                    "cividis for heatmaps");
    cmd->footer(
        "Writes, in each format: learning-curves, depth-accuracy, attention-maps, gate-map, change-map, "
        "length-generalisation-<model> (one per model), steps-<model> (each model's gates and attention "
        "over every step of the probe, one figure) and dashboard; then evaluations.csv, "
        "depth-accuracy.csv, loss.csv, frames/frame-NNN.png (one per evaluation) and training.gif; for "
        "each model with head routing or halting head-usage-<model> and steps-used-<model>, and for "
        "arithmetic and ListOps operation-accuracy-<model> (one per model) and operation-accuracy.csv.\n"
        "A paper's figure: ndr export RUN --style paper --format pdf,svg --no-frames --out DIR\n");
    return {cmd, [o] { return runExport(*o); }};
}

} // namespace ndrcli
