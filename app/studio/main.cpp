// ndr-studio, the desktop app: the main window, plus a few options for scripted use (open a run,
// start a preset, take a screenshot, measure how long the event loop ever stalls while training).
#include "core/nn/allocator.h"
#include "core/nn/isa.h"
#include "ui/common/guarded_application.h"
#include "ui/common/platform_notices.h"
#include "ui/common/stall_meter.h"
#include "ui/compare/compare_view.h"
#include "ui/dashboard/dashboard.h"
#include "ui/inspector/inspector.h"
#include "ui/shell/main_window.h"

#include "crash_report.h"
#include "headless.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QStandardPaths>
#include <QTimer>
#include <cstdio>
#include <memory>

int main(int argc, char** argv) {
    // NDR_ISA: the engine's level (docs/design.md §8); a wrong value is reported and the program goes on.
    if (const std::string problem = ndr::applyLevelRequest(argv); !problem.empty())
        std::fprintf(stderr, "ndr-studio: %s\n", problem.c_str());
    ndr::keepFreedMemoryForReuse();
    // Without a display the window cannot open: say so and train headless with the command-line tool.
    if (const auto code = runHeadlessIfNoDisplay(argc, argv))
        return *code;
    ndrui::hidePlatformNotices();
    // An exception out of an event handler is caught and reported instead of ending the process.
    ndrui::GuardedApplication app(argc, argv);
    QApplication::setOrganizationName("NDR Studio");
    QApplication::setApplicationName("ndr-studio");
    QApplication::setApplicationDisplayName("NDR Studio");
    QApplication::setApplicationVersion(NDR_VERSION);
    QApplication::setWindowIcon(QIcon(":/icons/ndr-studio.svg"));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        "Train a Neural Data Router and a Transformer side by side and watch them route.");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument("run", "A run file (run.json) to open.", "[run]");
    QStringList presets;
    for (const std::string& name : ndr::presetNames())
        presets << QString::fromStdString(name);
    QCommandLineOption preset(
        "preset", "Fill the experiment panel from a preset (" + presets.join(", ") + ").", "name");
    QCommandLineOption start("start", "Start training at once.");
    QCommandLineOption screenshot("screenshot", "Save a screenshot of the window to FILE, then quit.",
                                  "file");
    QCommandLineOption after(
        "after", "Seconds to wait before the screenshot or the end of the measurement (default 20).",
        "seconds", "20");
    QCommandLineOption measure(
        "measure-stalls",
        "Report the longest event-loop stall and each model's steps/s on stdout, then quit.");
    QCommandLineOption noSettings(
        "no-settings", "Neither read nor write settings (window layout, last configuration, recent runs), "
                       "and keep no recovery copies of unsaved runs.");
    QCommandLineOption inspect(
        "inspect", "Show the inspector tab with this expression (in the run's notation and order).",
        "expression");
    QCommandLineOption inspectDepth(
        "inspect-depth", "Show the inspector tab with a random expression of this depth.", "depth");
    QCommandLineOption step("step", "With --inspect or --inspect-depth and --screenshot: the step to show.",
                            "step");
    QCommandLineOption picture(
        "picture",
        "With --inspect or --inspect-depth: show attention as heatmaps (the default), "
        "lines (routing lines of the step) or every-step (routing lines of all steps).",
        "picture");
    QCommandLineOption exportDir(
        "export", "After the wait, export the dashboard (and the inspector's steps) to FOLDER, then quit.",
        "folder");
    QCommandLineOption overwrite("overwrite", "With --export: replace files already in the folder.");
    QCommandLineOption compare(
        "compare", "Show the Compare tab with this run file or sweep folder (may be repeated).", "path");
    QCommandLineOption evaluation(
        "evaluation", "The dashboard's history slider on evaluation N of the run (1: the first).", "n");
    QCommandLineOption map("map",
                           "The dashboard's map: gates (the copy gates, the default) or change (how far each "
                           "step moved each position's state).",
                           "map");
    for (const auto& o : {preset, start, screenshot, after, measure, noSettings, inspect, inspectDepth, step,
                          picture, exportDir, overwrite, evaluation, compare, map})
        parser.addOption(o);
    parser.process(app);

    const bool scripted = parser.isSet(screenshot) || parser.isSet(measure) || parser.isSet(exportDir);
    ndrui::MainWindow window(!parser.isSet(noSettings));
    // Scripted runs have nobody to answer a question: nothing is asked, and nothing is replaced.
    window.setAskBeforeDiscarding(!scripted);
    // Runs with unsaved training are kept where a crash cannot take them (off with --no-settings).
    const QString recovery =
        parser.isSet(noSettings)
            ? QString()
            : QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)).filePath("recovery");
    if (!recovery.isEmpty())
        window.setRecoveryFolder(recovery);
    installCrashReport(recovery);
    app.setErrorHandler([&window](const QString& what) { window.reportUnhandledError(what); });
    window.show();
    if (!scripted)
        QTimer::singleShot(0, &window, &ndrui::MainWindow::offerRecovery);
    if (!parser.positionalArguments().isEmpty())
        window.openRun(parser.positionalArguments().front());
    if (parser.isSet(preset)) {
        try {
            window.showConfig(ndr::presetConfig(parser.value(preset).toStdString()));
        } catch (const std::exception& e) {
            std::fprintf(stderr, "ndr-studio: %s\n", e.what());
            return 2;
        }
    }
    if (parser.isSet(map)) {
        const QString name = parser.value(map);
        if (name != "gates" && name != "change") {
            std::fprintf(stderr, "ndr-studio: --map is gates or change, not '%s'\n", qPrintable(name));
            return 2;
        }
        window.dashboard().showChangeMap(name == "change");
    }
    if (parser.isSet(compare)) {
        window.showCompare();
        for (const QString& path : parser.values(compare)) {
            QString error;
            if (!window.compare().addSource(path, &error))
                std::fprintf(stderr, "ndr-studio: --compare: %s\n", qPrintable(error));
        }
    }
    if (parser.isSet(start))
        QTimer::singleShot(0, &window, [&] { window.startTraining(); });
    if (parser.isSet(inspect) || parser.isSet(inspectDepth)) {
        window.showInspector();
        QString problem;
        if (parser.isSet(inspect)) {
            problem = window.inspectExpression(parser.value(inspect));
        } else {
            bool ok = false;
            const int depth = parser.value(inspectDepth).toInt(&ok);
            if (!ok || depth < 1) {
                std::fprintf(stderr, "ndr-studio: --inspect-depth needs a depth of at least 1, got '%s'\n",
                             qPrintable(parser.value(inspectDepth)));
                return 2;
            }
            problem = window.inspectRandom(depth);
        }
        if (!problem.isEmpty())
            std::fprintf(stderr, "ndr-studio: --inspect: %s\n", qPrintable(problem));
        if (parser.isSet(picture)) {
            const QString name = parser.value(picture);
            if (name == "heatmaps")
                window.inspector().setPicture(ndrui::StepPicture::Heatmap);
            else if (name == "lines")
                window.inspector().setPicture(ndrui::StepPicture::Lines);
            else if (name == "every-step")
                window.inspector().setPicture(ndrui::StepPicture::AllSteps);
            else {
                std::fprintf(stderr, "ndr-studio: --picture is heatmaps, lines or every-step, not '%s'\n",
                             qPrintable(name));
                return 2;
            }
        }
    }

    ndrui::StallMeter meter;
    if (scripted) {
        bool ok = false;
        const double seconds = parser.value(after).toDouble(&ok);
        if (!ok || seconds < 0) {
            std::fprintf(stderr, "ndr-studio: --after needs a number of seconds, got '%s'\n",
                         qPrintable(parser.value(after)));
            return 2;
        }
        if (parser.isSet(measure))
            meter.start();
        QTimer::singleShot(int(seconds * 1000), &window, [&] {
            if (parser.isSet(step))
                window.setInspectorStep(parser.value(step).toInt());
            if (parser.isSet(evaluation))
                window.dashboard().selectEvaluation(parser.value(evaluation).toInt() - 1);
            if (parser.isSet(exportDir)) {
                QString error;
                if (window.exportTo(parser.value(exportDir), parser.isSet(overwrite), &error))
                    std::fprintf(stderr, "ndr-studio: exported to %s\n", qPrintable(parser.value(exportDir)));
                else
                    std::fprintf(stderr, "ndr-studio: the export failed: %s\n", qPrintable(error));
            }
            if (parser.isSet(screenshot)) {
                const QString file = parser.value(screenshot);
                if (!window.screenshot(file))
                    std::fprintf(stderr, "ndr-studio: cannot write %s\n", qPrintable(file));
                else
                    std::fprintf(stderr, "ndr-studio: screenshot in %s\n",
                                 qPrintable(QDir::toNativeSeparators(file)));
            }
            if (parser.isSet(measure)) {
                meter.stop();
                std::printf("%s", qPrintable(meter.report()));
                const auto& models = window.session().models();
                for (size_t i = 0; i < models.size(); ++i) {
                    const auto& m = models[i];
                    std::printf("%s: step %d, %.1f steps/s (training time only)\n",
                                qPrintable(ndrui::modelName(m)), m.stepsDone,
                                m.history.empty() ? window.session().progress(i).stepsPerSecond
                                                  : m.history.back().stepsPerSecond);
                }
            }
            auto& session = window.session();
            const bool training = session.state() == ndrui::TrainingSession::State::Training ||
                                  session.state() == ndrui::TrainingSession::State::Paused;
            if (!parser.isSet(measure) || !training) {
                session.stop();
                QApplication::quit();
                return;
            }
            // How long Stop takes to be answered: from the request to both workers reporting done.
            auto clock = std::make_shared<QElapsedTimer>();
            clock->start();
            QObject::connect(&session, &ndrui::TrainingSession::stateChanged, &window,
                             [clock](ndrui::TrainingSession::State s) {
                                 if (!clock->isValid() || s == ndrui::TrainingSession::State::Training ||
                                     s == ndrui::TrainingSession::State::Paused)
                                     return;
                                 std::printf("stop answered in %.1f ms\n", clock->nsecsElapsed() / 1e6);
                                 clock->invalidate();
                                 QApplication::quit();
                             });
            session.stop();
        });
    }
    return app.exec();
}
