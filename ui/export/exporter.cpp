// Dashboard exports (see exporter.h): drawn by a Dashboard of their own, never the window's.
#include "ui/export/exporter.h"

#include "ui/dashboard/dashboard.h"
#include "ui/export/gif_writer.h"
#include "ui/plots/plot_view.h"

#include <QApplication>
#include <QDir>
#include <QFileInfo>
#include <QSaveFile>

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

} // namespace

QStringList dashboardExportFiles(const ndr::RunRecord& record, const ExportOptions& options) {
    QStringList files;
    for (const char* name :
         {"learning-curves", "depth-accuracy", "length-generalisation", "attention-maps", "gate-map"})
        files << QString::fromLatin1(name) + ".png";
    files << "dashboard.png";
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

    for (const auto& [name, view] : dashboard.views()) {
        const QString path = dir.filePath(name + ".png");
        if (!savePngAtomic(view->render(options.viewSize), path, error))
            return written;
        written << path;
    }
    const QString whole = dir.filePath("dashboard.png");
    if (!savePngAtomic(dashboard.renderAll(options.dashboardSize), whole, error))
        return written;
    written << whole;

    if (!options.frames)
        return written;
    const int n = Dashboard::evaluationCount(record);
    std::vector<QImage> frames;
    for (int i = 0; i < n; ++i) {
        dashboard.showRecord(record, i);
        QApplication::processEvents();
        frames.push_back(dashboard.renderAll(options.dashboardSize));
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
