// Editors shared by the experiment panel's forms (see formfields.h).
#include "ui/panel/form_fields.h"

#include "ui/panel/real_spin_box.h"

#include <QComboBox>
#include <QSpinBox>
#include <algorithm>

namespace ndrui {

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
