// The inspector's step sequence as frames: one figure per step with every model's heatmap (or routing
// lines) and gate strip under a caption, written as PNG, PDF or SVG and an animated GIF (see
// inspector.h).
#include "ui/inspector/inspector.h"

#include "ui/common/palette.h"
#include "ui/export/exporter.h"
#include "ui/export/gif_writer.h"
#include "ui/inspector/model_step_view.h"
#include "ui/plots/figure.h"
#include "ui/training/training_session.h"

#include <QDir>
#include <QFileInfo>
#include <QPainter>
#include <QSaveFile>
#include <QSlider>
#include <cmath>

namespace ndrui {

bool Inspector::hasFrames() const {
    if (!session_.task() || !example_ || views_.empty())
        return false;
    for (int m = 0; m < modelCount(); ++m)
        if (trace(m))
            return true;
    return false;
}

void Inspector::paintStep(QPainter& p, QSize size, int step) {
    const ndr::Task* task = session_.task();
    const QColor window = palette().color(QPalette::Window), text = palette().color(QPalette::WindowText);
    p.fillRect(QRect(QPoint(0, 0), size), window);
    if (!hasFrames())
        return;
    QFont captionFont = font();
    captionFont.setPointSizeF(captionFont.pointSizeF() * 1.15);
    const int captionH = 2 * QFontMetrics(captionFont).height() + 14;
    const int columns = int(views_.size());
    const int colW = size.width() / columns;
    const QString expression = QString::fromStdString(task->format(*example_));
    const QString truth = QString::fromStdString(task->symbolName(task->answer(*example_)));
    QStringList answers;
    for (int m = 0; m < columns; ++m) {
        const ndr::Trace* t = trace(m);
        if (!t)
            continue;
        const int at = std::min(step, t->steps);
        answers << tr("%1 would answer %2")
                       .arg(modelName(session_.models()[size_t(m)]),
                            QString::fromStdString(task->symbolName(t->stepAnswers[size_t(at)])));
    }
    p.save();
    p.setFont(captionFont);
    p.setPen(text);
    p.drawText(QRect(0, 4, size.width(), captionH / 2), Qt::AlignCenter,
               tr("%1 = %2   ·   step %3 of %4").arg(expression, truth).arg(step).arg(maxStep()));
    p.drawText(QRect(0, captionH / 2, size.width(), captionH / 2), Qt::AlignCenter, answers.join("   ·   "));
    p.restore();
    const int shown = slider_->value();
    for (int m = 0; m < columns; ++m) {
        views_[size_t(m)]->setStep(step);
        p.save();
        p.translate(m * colW, captionH);
        views_[size_t(m)]->paint(p, QSize(colW, size.height() - captionH));
        p.restore();
    }
    for (auto* v : views_)
        v->setStep(shown);
}

std::vector<QImage> Inspector::stepFrames(QSize size) {
    std::vector<QImage> frames;
    if (!hasFrames() || size.width() < 100 || size.height() < 100)
        return frames;
    for (int s = 0; s <= maxStep(); ++s)
        frames.push_back(paintImage({size}, [&](QPainter& p, QSize at) { paintStep(p, at, s); }));
    return frames;
}

bool Inspector::exportFrames(const QString& folder, QString* error, bool overwrite) {
    ExportOptions options;
    options.overwrite = overwrite;
    options.scheme = colourScheme();
    return exportFrames(folder, options, error);
}

bool Inspector::exportFrames(const QString& folder, const ExportOptions& options, QString* error) {
    auto fail = [error](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    const int n = maxStep();
    if (!tracesComplete() && n == 0)
        return fail(tr("Nothing to export: type an expression and wait for its trace."));
    if (options.formats.isEmpty())
        return fail(tr("No format to export: choose one or more of PNG, PDF and SVG."));
    QDir dir(folder);
    const QStringList names = stepFrameFiles(n, options.formats); // the frames, then the GIF
    // Check every name before writing any, so a refusal leaves the folder as it was.
    if (!options.overwrite)
        for (const QString& name : names)
            if (QFileInfo::exists(dir.filePath(name)))
                return fail(tr("%1 already exists; choose another folder or allow overwriting.")
                                .arg(QDir::toNativeSeparators(dir.filePath(name))));
    if (const QString locked = lockedFolderProblem(folder); !locked.isEmpty())
        return fail(locked + ".");
    if (!hasFrames())
        return fail(tr("Nothing to export: no model has a trace of this expression."));
    if (!dir.exists() && !QDir().mkpath(folder))
        return fail(tr("Cannot create the folder %1.").arg(QDir::toNativeSeparators(folder)));
    // The columns in the export's style and colours while they draw; as they were afterwards.
    const FigureLook look(this, options.style, options.scheme);
    FigurePage page{kFrameSize};
    if (options.style == FigureStyle::Paper) {
        const int dpi = figureDpi();
        const double scale = paperScale();
        const int width = int(std::lround(columnInches(PaperColumn::Double) * dpi));
        page = {QSize(width, width * kFrameSize.height() / kFrameSize.width()), scale, 300.0 / dpi};
    }
    std::vector<QImage> gifFrames;
    size_t file = 0;
    for (int s = 0; s <= n; ++s) {
        const PaintFigure paint = [this, s](QPainter& p, QSize size) { paintStep(p, size, s); };
        for (FigureFormat f : options.formats) {
            FigurePage titled = page;
            titled.title = tr("step %1").arg(s);
            QString problem;
            if (!writeFigure(dir.filePath(names[int(file++)]), f, titled, paint, &problem))
                return fail(problem);
        }
        gifFrames.push_back(paintImage({kFrameSize}, paint));
    }
    const QString gif = dir.filePath(names.back());
    try {
        writeGif(gif, gifFrames, 700, 2000);
    } catch (const GifError& e) {
        return fail(
            tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(gif), QString::fromUtf8(e.what())));
    }
    return true;
}

} // namespace ndrui
