// `ndr export`: draws a saved run's dashboard without a display: a PNG per view, the whole dashboard,
// one frame per evaluation and an animated GIF of the training.
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
};

int runExport(const ExportCliOptions& o) {
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
    cmd->add_flag("--no-frames", o->noFrames, "Only the view PNGs and the dashboard, no frames or GIF");
    cmd->footer(
        "Writes learning-curves.png, depth-accuracy.png, attention-maps.png, gate-map.png, change-map.png, "
        "length-generalisation-<model>.png (one per model), dashboard.png, evaluations.csv, "
        "depth-accuracy.csv, loss.csv, frames/frame-NNN.png (one per evaluation) and training.gif; for "
        "each model with head routing or halting head-usage-<model>.png and steps-used-<model>.png, and "
        "for arithmetic and ListOps operation-accuracy-<model>.png (one per model) and "
        "operation-accuracy.csv.\n");
    return {cmd, [o] { return runExport(*o); }};
}

} // namespace ndrcli
