// Dashboard exports (see exporter.h): drawn by a Dashboard of their own, never the window's.
#include "ui/export/exporter.h"

#include "core/io/files.h"
#include "core/io/run_csv.h"
#include "ui/dashboard/dashboard.h"
#include "ui/export/gif_writer.h"
#include "ui/plots/gate_map_view.h"
#include "ui/plots/length_generalisation_view.h"
#include "ui/plots/model_history_views.h"
#include "ui/plots/plot_view.h"

#include <QApplication>
#include <QDir>
#include <QFileInfo>
#include <QFontMetrics>
#include <QPainter>
#include <QSaveFile>
#include <algorithm>
#include <map>

namespace ndrui {

namespace {

constexpr const char* kInspectorFolder = "inspector";

QString frameName(int i) {
    return QStringLiteral("frames/frame-%1.png").arg(i, 3, 10, QLatin1Char('0'));
}

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

// Writes what the image shows at its right end, on a plate of the window colour, so that a file says
// which step (and model) it is of without its file name: at the bottom right of the whole dashboard
// (below the gate map, where it leaves room), or on a strip at the top of one view (see labelled).
void stamp(QImage& image, const QString& text, bool bottom = false) {
    if (text.isEmpty())
        return;
    QPainter p(&image);
    QFont font = QApplication::font();
    font.setBold(true);
    p.setFont(font);
    const QFontMetrics fm(font);
    const int h = labelStripHeight();
    const QRect box(image.width() - fm.horizontalAdvance(text) - 16, bottom ? image.height() - h - 4 : 0,
                    fm.horizontalAdvance(text) + 12, h);
    const QPalette palette = QApplication::palette();
    p.fillRect(box, palette.color(QPalette::Window));
    p.setPen(palette.color(QPalette::WindowText));
    p.drawText(box, Qt::AlignCenter, text);
}

// One view drawn at `size` with its label on a strip of its own above the plot, so that the label
// covers nothing the view draws (a colour scale's top tick sits in the corner). Without a label the
// view fills the whole size.
QImage labelled(PlotView& view, QSize size, const QString& label) {
    if (label.isEmpty())
        return view.render(size);
    const int strip = labelStripHeight();
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(QApplication::palette().color(QPalette::Window));
    {
        QPainter p(&image);
        p.drawImage(0, strip, view.render(QSize(size.width(), std::max(1, size.height() - strip))));
    }
    stamp(image, label);
    return image;
}

using EvalFilter = bool (*)(const ndr::EvalRecord&);

// A per-model view's files, "<view>-<model stem>.png", for each model (index into the run's models)
// with an evaluation holding the view's figures; every model without a filter.
std::vector<std::pair<int, QString>> perModelFiles(const ndr::RunRecord& record, const QString& view,
                                                   EvalFilter hasFigures = nullptr) {
    std::vector<ndr::ModelConfig> models;
    for (const auto& m : record.models)
        models.push_back(m.config);
    const std::vector<std::string> stems = ndr::checkpointStems(models);
    std::vector<std::pair<int, QString>> files;
    for (size_t m = 0; m < record.models.size(); ++m) {
        const auto& h = record.models[m].history;
        if (!hasFigures || std::any_of(h.begin(), h.end(), hasFigures))
            files.emplace_back(int(m), view + "-" + QString::fromStdString(stems[m]) + ".png");
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

constexpr const char* kTables[] = {"evaluations.csv", "depth-accuracy.csv", "loss.csv"};
// Written for tasks with operations at the root of their expressions (arithmetic, ListOps).
constexpr const char* kOperationTable = "operation-accuracy.csv";

} // namespace

QStringList dashboardExportFiles(const ndr::RunRecord& record, const ExportOptions& options) {
    QStringList files;
    for (const char* name : {"learning-curves", "depth-accuracy", "attention-maps", "gate-map", "change-map"})
        files << QString::fromLatin1(name) + ".png";
    for (const PerModelView& v : kPerModelViews)
        for (const auto& [model, file] : perModelFiles(record, v.stem, v.hasFigures))
            files << file;
    files << "dashboard.png";
    for (const char* table : kTables)
        files << table;
    if (ndr::hasOperationCounts(record))
        files << kOperationTable;
    if (options.frames) {
        const int n = Dashboard::evaluationCount(record);
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
    dashboard.resize(options.dashboardSize);
    dashboard.show();
    dashboard.showRecord(record);
    QApplication::processEvents();

    // Each view says what it shows: the evaluation's step on the per-evaluation views, the model's
    // name on the per-model ones (an empty label: none).
    const QString caption = dashboard.caption();
    auto save = [&](PlotView& view, const QString& file, const QString& label) {
        const QImage image = labelled(view, options.viewSize, label);
        const QString path = dir.filePath(file);
        if (!savePngAtomic(image, path, error))
            return false;
        written << path;
        return true;
    };
    // The per-model views once per model, each labelled with the model's name, for the models the
    // view offers (those with its figures).
    std::map<QString, ModelHistoryView*> perModel = {{"head-usage", &dashboard.headUsage()},
                                                     {"steps-used", &dashboard.stepsUsed()},
                                                     {"operation-accuracy", &dashboard.operationAccuracy()}};
    for (const auto& [name, view] : dashboard.views()) {
        if (view == &dashboard.lengthGeneralisation() || perModel.count(name))
            continue;
        if (!save(*view, name + ".png", name != "learning-curves" ? caption : QString()))
            return written;
    }
    // The gate map once more, switched to the change per step.
    dashboard.showChangeMap(true);
    QApplication::processEvents();
    if (!save(dashboard.gates(), "change-map.png", caption))
        return written;
    dashboard.showChangeMap(false);
    auto savePerModel = [&](auto& view, const PerModelView& v) {
        const int shownModel = view.currentModel();
        for (const auto& [model, file] : perModelFiles(record, v.stem, v.hasFigures)) {
            view.setCurrentModel(model);
            QApplication::processEvents();
            if (!save(view, file, QString::fromStdString(record.models[size_t(model)].config.name)))
                return false;
        }
        view.setCurrentModel(shownModel);
        return true;
    };
    for (const PerModelView& v : kPerModelViews) {
        const bool saved = v.hasFigures ? savePerModel(*perModel.at(v.stem), v)
                                        : savePerModel(dashboard.lengthGeneralisation(), v);
        if (!saved)
            return written;
    }
    QImage whole = dashboard.renderAll(options.dashboardSize);
    stamp(whole, caption, true);
    if (!savePngAtomic(whole, dir.filePath("dashboard.png"), error))
        return written;
    written << dir.filePath("dashboard.png");
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
    const int n = Dashboard::evaluationCount(record);
    std::vector<QImage> frames;
    for (int i = 0; i < n; ++i) {
        dashboard.showRecord(record, i);
        QApplication::processEvents();
        frames.push_back(dashboard.renderAll(options.dashboardSize));
        stamp(frames.back(), dashboard.caption(), true);
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

QStringList stepFrameFiles(int lastStep) {
    const int digits = std::max(2, int(QString::number(lastStep).size()));
    QStringList names;
    for (int s = 0; s <= lastStep; ++s)
        names << QStringLiteral("step-%1.png").arg(s, digits, 10, QLatin1Char('0'));
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
        for (const QString& f : stepFrameFiles(inspectorLastStep))
            plan.inspectorFiles << QString::fromLatin1(kInspectorFolder) + "/" + f;
    return plan;
}

int writeExport(const ndr::RunRecord& record, const ExportPlan& plan,
                const InspectorFrameWriter& writeInspector, QString* error) {
    QString problem;
    int count = int(exportDashboard(record, plan.folder, plan.options, &problem).size());
    if (problem.isEmpty() && !plan.inspectorFiles.isEmpty()) {
        if (writeInspector(QDir(plan.folder).filePath(kInspectorFolder), plan.options.overwrite, &problem))
            count += int(plan.inspectorFiles.size());
    }
    if (!problem.isEmpty() && error)
        *error = problem;
    return count;
}

} // namespace ndrui
