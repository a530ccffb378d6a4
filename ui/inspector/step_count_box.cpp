// The inspector's step count box (see step_count_box.h).
#include "ui/inspector/step_count_box.h"

namespace ndrui {

StepCountBox::StepCountBox(QWidget* parent) : QSpinBox(parent) {
    setSpecialValueText(tr("as trained"));
}

void StepCountBox::stepBy(int steps) {
    if (value() == minimum() && steps > 0 && trained_ > 0) {
        setValue(trained_ + steps);
        return;
    }
    QSpinBox::stepBy(steps);
}

} // namespace ndrui
