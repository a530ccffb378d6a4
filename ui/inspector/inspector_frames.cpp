// The inspector's step sequence as frames: one image per step with every model's heatmap and gate
// strip under a caption, written as PNGs and an animated GIF (see inspector.h).
#include "ui/inspector/inspector.h"

#include "ui/common/palette.h"
#include "ui/export/exporter.h"
#include "ui/export/gif_writer.h"
#include "ui/inspector/model_step_view.h"
#include "ui/training/training_session.h"

#include <QDir>
#include <QFileInfo>
#include <QPainter>
#include <QSaveFile>
#include <QSlider>

namespace ndrui {

std::vector<QImage> Inspector::stepFrames(QSize size) {
    std::vector<QImage> frames;
    const ndr::Task* task = session_.task();
    const int n = maxStep();
    if (!task || !example_ || views_.empty() || size.width() < 100 || size.height() < 100)
        return frames;
    bool any = false;
    for (int m = 0; m < modelCount(); ++m)
        any = any || trace(m) != nullptr;
    if (!any)
        return frames;
    const int shown = slider_->value();
    const QColor window = palette().color(QPalette::Window), text = palette().color(QPalette::WindowText);
    QFont captionFont = font();
    captionFont.setPointSizeF(captionFont.pointSizeF() * 1.15);
    const int captionH = 2 * QFontMetrics(captionFont).height() + 14;
    const int columns = int(views_.size());
    const int colW = size.width() / columns;
    const QString expression = QString::fromStdString(task->format(*example_));
    const QString truth = QString::fromStdString(task->symbolName(task->answer(*example_)));
    for (int s = 0; s <= n; ++s) {
        QImage frame(size, QImage::Format_ARGB32_Premultiplied);
        frame.fill(window);
        QPainter p(&frame);
        p.setFont(captionFont);
        p.setPen(text);
        QStringList answers;
        for (int m = 0; m < columns; ++m) {
            const ndr::Trace* t = trace(m);
            if (!t)
                continue;
            const int at = std::min(s, t->steps);
            answers << tr("%1 would answer %2")
                           .arg(session_.models()[size_t(m)].name,
                                QString::fromStdString(task->symbolName(t->stepAnswers[size_t(at)])));
        }
        p.drawText(QRect(0, 4, size.width(), captionH / 2), Qt::AlignCenter,
                   tr("%1 = %2   ·   step %3 of %4").arg(expression, truth).arg(s).arg(n));
        p.drawText(QRect(0, captionH / 2, size.width(), captionH / 2), Qt::AlignCenter,
                   answers.join("   ·   "));
        for (int m = 0; m < columns; ++m) {
            views_[size_t(m)]->setStep(s);
            p.drawImage(QPoint(m * colW, captionH),
                        views_[size_t(m)]->render(QSize(colW, size.height() - captionH)));
        }
        p.end();
        frames.push_back(std::move(frame));
    }
    for (auto* v : views_)
        v->setStep(shown);
    return frames;
}

bool Inspector::exportFrames(const QString& folder, QString* error, bool overwrite) {
    auto fail = [error](const QString& message) {
        if (error)
            *error = message;
        return false;
    };
    const int n = maxStep();
    if (!tracesComplete() && n == 0)
        return fail(tr("Nothing to export: type an expression and wait for its trace."));
    QDir dir(folder);
    const QStringList names = stepFrameFiles(n); // the frames, then the GIF
    // Check every name before writing any, so a refusal leaves the folder as it was.
    if (!overwrite)
        for (const QString& name : names)
            if (QFileInfo::exists(dir.filePath(name)))
                return fail(tr("%1 already exists; choose another folder or allow overwriting.")
                                .arg(QDir::toNativeSeparators(dir.filePath(name))));
    if (!dir.exists() && !QDir().mkpath(folder))
        return fail(tr("Cannot create the folder %1.").arg(QDir::toNativeSeparators(folder)));
    const std::vector<QImage> frames = stepFrames(kFrameSize);
    if (frames.empty())
        return fail(tr("Nothing to export: no model has a trace of this expression."));
    for (size_t s = 0; s < frames.size(); ++s) {
        QSaveFile file(dir.filePath(names[int(s)]));
        if (!file.open(QIODevice::WriteOnly) || !frames[s].save(&file, "PNG") || !file.commit())
            return fail(
                tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(file.fileName()), file.errorString()));
    }
    const QString gif = dir.filePath(names.back());
    try {
        writeGif(gif, frames, 700, 2000);
    } catch (const GifError& e) {
        return fail(
            tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(gif), QString::fromUtf8(e.what())));
    }
    return true;
}

} // namespace ndrui
