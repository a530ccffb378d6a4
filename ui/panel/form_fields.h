// Editors shared by the experiment panel's forms, made to shrink into a narrow (~400 px) dock.
#pragma once

#include <QComboBox>
#include <QSizePolicy>
#include <QString>
#include <initializer_list>
#include <utility>

class QSpinBox;
class QWidget;

namespace ndrui {

class RealSpinBox;

// Makes the mouse wheel scroll the form over an editor instead of changing the editor's value, unless
// the editor has the keyboard focus (a click or Tab gives it): scrolling through the panel must not
// change a field, or switch the preset, that happens to pass under the pointer.
void wheelOnlyWhenFocused(QWidget* editor);

// Lets an editor shrink well below its size hint and grow with its column; the wheel changes it only
// when it has the focus.
template <typename W> W* narrow(W* w) {
    w->setMinimumWidth(48);
    w->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    wheelOnlyWhenFocused(w);
    return w;
}

QSpinBox* makeIntField(int lo, int hi, int step = 1, QWidget* parent = nullptr);
// adaptiveSteps: the arrows step by a tenth of the value's decade (learning rates, weight decay).
RealSpinBox* makeRealField(double lo, double hi, double step, bool adaptiveSteps = false,
                           QWidget* parent = nullptr);
// Items with an int each (an enum's value), selected with selectData().
QComboBox* makeComboField(std::initializer_list<std::pair<QString, int>> items, QWidget* parent = nullptr);
void selectData(QComboBox* combo, int value);
// The enum value of the selected item of a makeComboField.
template <typename E> E comboValue(const QComboBox* combo) {
    return E(combo->currentData().toInt());
}

} // namespace ndrui
