// Editors shared by the experiment panel's forms (see formfields.h).
#include "ui/panel/form_fields.h"

#include "ui/panel/real_spin_box.h"

#include <QComboBox>
#include <QEvent>
#include <QSpinBox>
#include <algorithm>

namespace ndrui {

namespace {

// Ignores a wheel event on an editor without focus and stops it there: Qt then offers it to the
// editor's parents, up to the scroll area.
class WheelGuard final : public QObject {
public:
    bool eventFilter(QObject* watched, QEvent* event) override {
        if (event->type() != QEvent::Wheel)
            return false;
        const auto* editor = qobject_cast<QWidget*>(watched);
        if (!editor || editor->hasFocus())
            return false;
        event->ignore();
        return true;
    }
};

} // namespace

void wheelOnlyWhenFocused(QWidget* editor) {
    static WheelGuard guard;                 // one filter for every editor; it keeps no state
    editor->setFocusPolicy(Qt::StrongFocus); // the wheel does not take the focus
    editor->installEventFilter(&guard);
}

QSpinBox* makeIntField(int lo, int hi, int step, QWidget* parent) {
    auto* s = new QSpinBox(parent);
    s->setRange(lo, hi);
    s->setSingleStep(step);
    return narrow(s);
}

RealSpinBox* makeRealField(double lo, double hi, double step, bool adaptiveSteps, QWidget* parent) {
    auto* s = new RealSpinBox(parent);
    s->setRange(lo, hi);
    s->setSingleStep(step);
    if (adaptiveSteps)
        s->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
    return narrow(s);
}

QComboBox* makeComboField(std::initializer_list<std::pair<QString, int>> items, QWidget* parent) {
    auto* c = new QComboBox(parent);
    for (const auto& [text, value] : items)
        c->addItem(text, value);
    // Without this a combo is as wide as its longest item; two model columns share the dock.
    c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    c->setMinimumContentsLength(6);
    return narrow(c);
}

void selectData(QComboBox* combo, int value) {
    combo->setCurrentIndex(std::max(0, combo->findData(value)));
}

} // namespace ndrui
