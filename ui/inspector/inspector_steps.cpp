// The inspector's step slider, playback and clicked cells (see inspector.h).
#include "ui/inspector/inspector.h"

#include "ui/inspector/model_step_view.h"
#include "ui/training/training_session.h"

#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QTimer>

namespace ndrui {

int Inspector::step() const {
    return slider_->value();
}

void Inspector::setStep(int step) {
    slider_->setValue(step);
}

QString Inspector::cellInfo() const {
    return cell_->text();
}

void Inspector::showStep() {
    const int s = slider_->value();
    stepLabel_->setText(tr("%1 of %2").arg(s).arg(slider_->maximum()));
    for (auto* v : views_)
        v->setStep(s);
    markReadoutStep();
}

void Inspector::showCell(int model, int step, int target, int source, double value, CellKind kind) {
    const ndr::Trace* t = trace(model);
    if (!t || target < 0 || target >= t->positions)
        return;
    auto token = [t](int p) {
        return QString("<b>%1</b> (position %2)")
            .arg(QString::fromStdString(t->tokenNames[size_t(p)]).toHtmlEscaped())
            .arg(p);
    };
    const QString who = modelName(session_.models()[size_t(model)]).toHtmlEscaped();
    if (kind == CellKind::Gate) {
        cell_->setText(tr("%1, step %2: the gate of %3 is %4 (1 = the column takes its update, 0 = copied)")
                           .arg(who)
                           .arg(step)
                           .arg(token(target))
                           .arg(value, 0, 'f', 3));
        highlightTokens(target, -1);
    } else if (kind == CellKind::Change) {
        cell_->setText(tr("%1, step %2 moved the state of %3 by %4 of its size (|after - before| / |before|; "
                          "0 = unchanged)")
                           .arg(who)
                           .arg(step)
                           .arg(token(target))
                           .arg(value, 0, 'f', 3));
        highlightTokens(target, -1);
    } else {
        if (source < 0 || source >= t->positions)
            return;
        const QString heads = head_->currentData().toInt() < 0 ? tr("mean over heads") : head_->currentText();
        cell_->setText(tr("%1, step %2 (%3): target %4 reads source %5 with weight %6")
                           .arg(who)
                           .arg(step)
                           .arg(heads)
                           .arg(token(target), token(source))
                           .arg(value, 0, 'f', 3));
        highlightTokens(target, source);
    }
}

void Inspector::clearCell() {
    cell_->setText(picture() == StepPicture::Heatmap
                       ? tr("Click a heatmap, gate or change cell to see what it is.")
                       : tr("Hover a token to see only the lines into and out of it; a line's opacity is its "
                            "attention weight."));
    highlightTokens(-1, -1);
}

void Inspector::togglePlay() {
    if (playTimer_->isActive()) {
        playTimer_->stop();
        play_->setText(tr("Play"));
        return;
    }
    if (slider_->maximum() == 0)
        return;
    if (slider_->value() >= slider_->maximum())
        slider_->setValue(0);
    playTimer_->start();
    play_->setText(tr("Pause"));
}

void Inspector::tick() {
    if (slider_->value() >= slider_->maximum()) {
        playTimer_->stop();
        play_->setText(tr("Play"));
        return;
    }
    slider_->setValue(slider_->value() + 1);
}

} // namespace ndrui
