// Dashboard exports (see exporter.h): drawn by a Dashboard of their own, never the window's, each
// figure by one paint function in every format.
#include "ui/export/exporter.h"

#include "core/io/files.h"
#include "core/io/run_csv.h"
#include "ui/dashboard/dashboard.h"
#include "ui/export/gif_writer.h"
#include "ui/plots/attention_grid_view.h"
#include "ui/plots/depth_bars_view.h"
#include "ui/plots/gate_map_view.h"
#include "ui/plots/learning_curves_view.h"
#include "ui/plots/length_generalisation_view.h"
#include "ui/plots/model_history_views.h"
#include "ui/plots/plot_view.h"
#include "ui/plots/steps_figure.h"

#include <QApplication>
#include <QDir>
#include <QFileInfo>
#include <QFontMetrics>
#include <QPainter>
#include <QSaveFile>
#include <algorithm>
#include <cmath>
#include <map>

namespace ndrui {

namespace {

constexpr const char* kInspectorFolder = "inspector";
// PNG pixels per inch of a figure in paper style: a print's resolution.
constexpr double kPaperPngDpi = 300;

QString frameName(int i) {
    return QStringLiteral("frames/frame-%1.png").arg(i, 3, 10, QLatin1Char('0'));
}

} // namespace

std::vector<int> trainingFrameEvaluations(int evaluations) {
    std::vector<int> out;
    if (evaluations <= kMaxTrainingFrames) {
        for (int i = 0; i < evaluations; ++i)
            out.push_back(i);
        return out;
    }
    // Evenly spaced, the first and the last among them.
    for (int k = 0; k < kMaxTrainingFrames; ++k)
        out.push_back(int(std::lround(double(k) * (evaluations - 1) / (kMaxTrainingFrames - 1))));
    return out;
}

namespace {

bool savePngAtomic(const QImage& image, const QString& path, QString* error) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || !image.save(&file, "PNG") || !file.commit()) {
        *error = QObject::tr("cannot write %1: %2").arg(QDir::toNativeSeparators(path), file.errorString());
        return false;
    }
    return true;
}

// The height of the strip a label is written on: the application font's, bold, with a margin.
int labelStripHeight() {
    QFont font = QApplication::font();
    font.setBold(true);
    return QFontMetrics(font).height() + 6;
}

// Writes what the figure shows at its right end, on a plate of the window colour, so that a file says
// which step (and model) it is of without its file name: at the bottom right of the whole dashboard
// (below the gate map, where it leaves room), or on a strip at the top of one view (see paintLabelled).
void stamp(QPainter& p, QSize size, const QPalette& palette, const QString& text, bool bottom = false) {
    if (text.isEmpty())
        return;
    QFont font = QApplication::font();
    font.setBold(true);
    p.save();
    p.setFont(font);
    const QFontMetrics fm(font);
    const int h = labelStripHeight();
    const QRect box(size.width() - fm.horizontalAdvance(text) - 16, bottom ? size.height() - h - 4 : 0,
                    fm.horizontalAdvance(text) + 12, h);
    p.fillRect(box, palette.color(QPalette::Window));
    p.setPen(palette.color(QPalette::WindowText));
    p.drawText(box, Qt::AlignCenter, text);
    p.restore();
}

// A figure drawn at `size` with its label on a strip of its own above it, so that the label covers
// nothing the figure draws (a colour scale's top tick sits in the corner). Without a label the figure
// fills the whole size.
void paintLabelled(QPainter& p, QSize size, const QPalette& palette, const QString& label,
                   const PaintFigure& figure) {
    if (label.isEmpty()) {
        figure(p, size);
        return;
    }
    const int strip = labelStripHeight();
    p.fillRect(QRect(QPoint(0, 0), size), palette.color(QPalette::Window));
    p.save();
    p.translate(0, strip);
    figure(p, QSize(size.width(), std::max(1, size.height() - strip)));
    p.restore();
    stamp(p, size, palette, label);
}

using EvalFilter = bool (*)(const ndr::EvalRecord&);

// The stems of the run's models' files ("ndr", "transformer").
std::vector<std::string> modelStems(const ndr::RunRecord& record) {
    std::vector<ndr::ModelConfig> models;
    for (const auto& m : record.models)
        models.push_back(m.config);
    return ndr::checkpointStems(models);
}

// A per-model view's figures, "<view>-<model stem>", for each model (index into the run's models)
// with an evaluation holding the view's figures; every model without a filter.
std::vector<std::pair<int, QString>> perModelFiles(const ndr::RunRecord& record, const QString& view,
                                                   EvalFilter hasFigures = nullptr) {
    const std::vector<std::string> stems = modelStems(record);
    std::vector<std::pair<int, QString>> files;
    for (size_t m = 0; m < record.models.size(); ++m) {
        const auto& h = record.models[m].history;
        if (!hasFigures || std::any_of(h.begin(), h.end(), hasFigures))
            files.emplace_back(int(m), view + "-" + QString::fromStdString(stems[m]));
    }
    return files;
}

// The views drawn once per model, in the order they are written, with the figures a model needs.
struct PerModelView {
    const char* stem;
    EvalFilter hasFigures;
};
constexpr PerModelView kPerModelViews[] = {{"length-generalisation", nullptr},
                                           {"head-usage", &HeadUsageView::figuresIn},
                                           {"steps-used", &StepsUsedView::figuresIn},
                                           {"operation-accuracy", &OperationAccuracyView::figuresIn}};
constexpr const char* kDashboardViews[] = {"learning-curves", "depth-accuracy", "attention-maps", "gate-map",
                                           "change-map"};

// The probe's trace each model's steps figure draws: its latest evaluation's, as the dashboard shows it
// live. Models whose trace has no attention (an LSTM's) have none.
std::vector<std::pair<int, QString>> stepsFiles(const ndr::RunRecord& record) {
    std::vector<std::pair<int, QString>> files;
    for (const auto& [model, file] : perModelFiles(record, "steps")) {
        const auto& h = record.models[size_t(model)].history;
        if (!h.empty() && StepsFigure::drawable(h.back().probe))
            files.emplace_back(model, file);
    }
    return files;
}

constexpr const char* kTables[] = {"evaluations.csv", "depth-accuracy.csv", "loss.csv"};
// Written for tasks with operations at the root of their expressions (arithmetic, ListOps).
constexpr const char* kOperationTable = "operation-accuracy.csv";

// The figure stems an export writes, in order (each once per format).
QStringList figureStems(const ndr::RunRecord& record) {
    QStringList stems;
    for (const char* name : kDashboardViews)
        stems << QString::fromLatin1(name);
    for (const PerModelView& v : kPerModelViews)
        for (const auto& [model, file] : perModelFiles(record, v.stem, v.hasFigures))
            stems << file;
    for (const auto& [model, file] : stepsFiles(record))
        stems << file;
    stems << "dashboard";
    return stems;
}

// The page of a figure: in screen style `screen` pixels; in paper style a column wide (the grids and
// the whole dashboard two) and `paperInches` tall, its text at kPaperFontPoints, printed at 300 dpi.
FigurePage pageOf(const ExportOptions& o, QSize screen, PaperColumn column, double paperInches) {
    FigurePage page;
    if (o.style == FigureStyle::Screen) {
        page.size = screen;
        return page;
    }
    const int dpi = figureDpi();
    page.size = QSize(int(std::lround(columnInches(column) * dpi)), int(std::lround(paperInches * dpi)));
    page.scale = paperScale();
    page.pngScale = kPaperPngDpi / dpi;
    return page;
}

// A page as tall as its content needs at its width: `innerHeight` of the width it is painted at.
FigurePage fittedPage(FigurePage page, const std::function<int(int)>& innerHeight) {
    const int inner = std::max(1, int(std::lround(page.size.width() / page.scale)));
    page.size.setHeight(std::max(1, int(std::lround(innerHeight(inner) * page.scale))));
    return page;
}

} // namespace

QString lockedFolderProblem(const QString& folder) {
    const ndr::RunFileHolder holder = ndr::folderHolder(folder.toStdString());
    if (!holder.held)
        return {};
    return QObject::tr("%1 is the folder of a run that another process trains (%2): nothing is written "
                       "there while it does; export into another folder")
        .arg(QDir::toNativeSeparators(folder), QString::fromStdString(holder.line));
}

QStringList dashboardExportFiles(const ndr::RunRecord& record, const ExportOptions& options) {
    QStringList files;
    for (const QString& stem : figureStems(record))
        for (FigureFormat f : options.formats)
            files << stem + "." + formatName(f);
    for (const char* table : kTables)
        files << table;
    if (ndr::hasOperationCounts(record))
        files << kOperationTable;
    if (options.frames) {
        const int n = int(trainingFrameEvaluations(Dashboard::evaluationCount(record)).size());
        for (int i = 0; i < n; ++i)
            files << frameName(i);
        if (n > 0)
            files << "training.gif";
    }
    return files;
}

QStringList exportDashboard(const ndr::RunRecord& record, const QString& folder, const ExportOptions& options,
                            QString* error) {
    QStringList written;
    const QDir dir(folder);
    if (options.formats.isEmpty()) {
        *error = QObject::tr("no format to export: choose one or more of PNG, PDF and SVG");
        return written;
    }
    if (const QString locked = lockedFolderProblem(folder); !locked.isEmpty()) {
        *error = locked;
        return written;
    }
    const QStringList files = dashboardExportFiles(record, options);
    if (!options.overwrite)
        for (const QString& f : files)
            if (QFileInfo::exists(dir.filePath(f))) {
                *error = QObject::tr("%1 already exists; choose another folder or allow overwriting")
                             .arg(QDir::toNativeSeparators(dir.filePath(f)));
                return written;
            }
    if (!dir.mkpath(options.frames ? "frames" : ".")) {
        *error = QObject::tr("cannot create the folder %1").arg(QDir::toNativeSeparators(dir.filePath(".")));
        return written;
    }

    Dashboard dashboard;
    dashboard.setAttribute(Qt::WA_DontShowOnScreen);
    // In the export's style and colours from the start: the views set their colours up as they fill.
    const FigureLook look(&dashboard, options.style, options.scheme);
    dashboard.resize(options.dashboardSize);
    dashboard.show();
    dashboard.showRecord(record);
    QApplication::processEvents();
    const QPalette palette = dashboard.palette();

    // Writes one figure in every format asked for, each drawn by `paint` from the views as they are.
    const auto save = [&](const QString& stem, const FigurePage& page, const PaintFigure& paint) {
        for (FigureFormat f : options.formats) {
            const QString path = dir.filePath(stem + "." + formatName(f));
            FigurePage titled = page;
            titled.title = stem;
            if (!writeFigure(path, f, titled, paint, error))
                return false;
            written << path;
        }
        return true;
    };
    const auto view = [&](PlotView& v, const QString& label) -> PaintFigure {
        return [&v, label, palette](QPainter& p, QSize size) {
            paintLabelled(p, size, palette, label, [&v](QPainter& q, QSize s) { v.paint(q, s); });
        };
    };
    const int strip = labelStripHeight();

    // Each view says what it shows: the evaluation's step on the per-evaluation views, the model's
    // name on the per-model ones (an empty label: none).
    const QString caption = dashboard.caption();
    const FigurePage single = pageOf(options, options.viewSize, PaperColumn::Single, 2.5);
    const FigurePage curvesPage = pageOf(options, options.viewSize, PaperColumn::Single, 3.2);
    const FigurePage gatesPage = pageOf(options, options.viewSize, PaperColumn::Double, 2.6);
    const FigurePage gridPage =
        options.style == FigureStyle::Screen
            ? pageOf(options, options.viewSize, PaperColumn::Double, 0)
            : fittedPage(pageOf(options, options.viewSize, PaperColumn::Double, 0), [&](int width) {
                  return dashboard.attention().heightFor(width, StepsFigure::kColumns) + strip;
              });
    if (!save("learning-curves", curvesPage, view(dashboard.learningCurves(), QString())) ||
        !save("depth-accuracy", single, view(dashboard.depthBars(), caption)) ||
        !save("attention-maps", gridPage, view(dashboard.attention(), caption)) ||
        !save("gate-map", gatesPage, view(dashboard.gates(), caption)))
        return written;
    // The gate map once more, switched to the change per step.
    dashboard.showChangeMap(true);
    QApplication::processEvents();
    if (!save("change-map", gatesPage, view(dashboard.gates(), caption)))
        return written;
    dashboard.showChangeMap(false);

    // The per-model views once per model, each labelled with the model's name, for the models the
    // view offers (those with its figures).
    std::map<QString, ModelHistoryView*> perModel = {{"head-usage", &dashboard.headUsage()},
                                                     {"steps-used", &dashboard.stepsUsed()},
                                                     {"operation-accuracy", &dashboard.operationAccuracy()}};
    auto savePerModel = [&](auto& v, const PerModelView& kind) {
        const int shownModel = v.currentModel();
        for (const auto& [model, file] : perModelFiles(record, kind.stem, kind.hasFigures)) {
            v.setCurrentModel(model);
            QApplication::processEvents();
            if (!save(file, single,
                      view(v, QString::fromStdString(record.models[size_t(model)].config.name))))
                return false;
        }
        v.setCurrentModel(shownModel);
        return true;
    };
    for (const PerModelView& v : kPerModelViews) {
        const bool saved = v.hasFigures ? savePerModel(*perModel.at(v.stem), v)
                                        : savePerModel(dashboard.lengthGeneralisation(), v);
        if (!saved)
            return written;
    }

    // Each model's routing of the probe over all its steps, as one figure.
    {
        StepsFigure steps;
        steps.setPalette(palette);
        for (const auto& [model, file] : stepsFiles(record)) {
            const auto& m = record.models[size_t(model)];
            steps.setTrace(m.history.back().probe, QString::fromStdString(m.config.name));
            const FigurePage page = fittedPage(
                pageOf(options, QSize(options.viewSize.width() * 5 / 4, 0), PaperColumn::Double, 0),
                [&](int width) { return steps.heightFor(width) + strip; });
            const QString label = QObject::tr("%1, evaluation at step %2")
                                      .arg(QString::fromStdString(m.config.name))
                                      .arg(m.history.back().step);
            const PaintFigure paint = [&](QPainter& p, QSize size) {
                paintLabelled(p, size, palette, label, [&](QPainter& q, QSize s) { steps.paint(q, s); });
            };
            if (!save(file, page, paint))
                return written;
        }
    }

    // The whole dashboard; in paper style laid out at the page's size, so that its text is a paper's.
    const FigurePage wholePage = pageOf(options, options.dashboardSize, PaperColumn::Double, 4.6);
    const QSize wholeInner(int(std::lround(wholePage.size.width() / wholePage.scale)),
                           int(std::lround(wholePage.size.height() / wholePage.scale)));
    if (wholeInner != options.dashboardSize) {
        dashboard.resize(wholeInner);
        QApplication::processEvents();
    }
    const PaintFigure whole = [&](QPainter& p, QSize size) {
        dashboard.paintAll(p, size);
        stamp(p, size, palette, caption, true);
    };
    if (!save("dashboard", wholePage, whole))
        return written;
    if (wholeInner != options.dashboardSize) {
        dashboard.resize(options.dashboardSize);
        QApplication::processEvents();
    }

    std::vector<std::pair<QString, std::string>> tables = {{kTables[0], ndr::evaluationsCsv(record)},
                                                           {kTables[1], ndr::depthAccuracyCsv(record)},
                                                           {kTables[2], ndr::lossCsv(record)}};
    if (ndr::hasOperationCounts(record))
        tables.emplace_back(kOperationTable, ndr::operationAccuracyCsv(record));
    for (const auto& [name, table] : tables) {
        const QString path = dir.filePath(name);
        try {
            ndr::writeFileAtomic(path.toStdString(), table);
        } catch (const std::exception& e) {
            *error = QString::fromUtf8(e.what());
            return written;
        }
        written << path;
    }

    if (!options.frames)
        return written;
    const std::vector<int> shown = trainingFrameEvaluations(Dashboard::evaluationCount(record));
    const int n = int(shown.size());
    std::vector<QImage> frames;
    for (int i = 0; i < n; ++i) {
        dashboard.showRecord(record, shown[size_t(i)]);
        QApplication::processEvents();
        const QString frameCaption = dashboard.caption();
        frames.push_back(paintImage({options.dashboardSize}, [&](QPainter& p, QSize size) {
            dashboard.paintAll(p, size);
            stamp(p, size, palette, frameCaption, true);
        }));
        const QString path = dir.filePath(frameName(i));
        if (!savePngAtomic(frames.back(), path, error))
            return written;
        written << path;
    }
    if (n > 0) {
        const QString gif = dir.filePath("training.gif");
        try {
            writeGif(gif, frames, options.frameDelayMs, 3 * options.frameDelayMs);
        } catch (const std::exception& e) {
            *error = QString::fromUtf8(e.what());
            return written;
        }
        written << gif;
    }
    return written;
}

QStringList stepFrameFiles(int lastStep, const QList<FigureFormat>& formats) {
    const int digits = std::max(2, int(QString::number(lastStep).size()));
    QStringList names;
    for (int s = 0; s <= lastStep; ++s)
        for (FigureFormat f : formats)
            names << QStringLiteral("step-%1.%2").arg(s, digits, 10, QLatin1Char('0')).arg(formatName(f));
    names << "inspector.gif";
    return names;
}

QStringList ExportPlan::existing() const {
    const QDir dir(folder);
    QStringList found;
    for (const QString& f : files())
        if (QFileInfo::exists(dir.filePath(f)))
            found << f;
    return found;
}

ExportPlan planExport(const ndr::RunRecord& record, const QString& folder, const ExportOptions& options,
                      int inspectorLastStep) {
    ExportPlan plan;
    plan.folder = folder;
    plan.options = options;
    plan.dashboardFiles = dashboardExportFiles(record, options);
    if (inspectorLastStep >= 0)
        for (const QString& f : stepFrameFiles(inspectorLastStep, options.formats))
            plan.inspectorFiles << QString::fromLatin1(kInspectorFolder) + "/" + f;
    return plan;
}

int writeExport(const ndr::RunRecord& record, const ExportPlan& plan,
                const InspectorFrameWriter& writeInspector, QString* error) {
    QString problem;
    int count = int(exportDashboard(record, plan.folder, plan.options, &problem).size());
    if (problem.isEmpty() && !plan.inspectorFiles.isEmpty()) {
        if (writeInspector(QDir(plan.folder).filePath(kInspectorFolder), plan.options, &problem))
            count += int(plan.inspectorFiles.size());
    }
    if (!problem.isEmpty() && error)
        *error = problem;
    return count;
}

} // namespace ndrui
