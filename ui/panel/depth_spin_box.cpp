// Depth fields that show a task's names of its depths (see depth_spin_box.h).
#include "ui/panel/depth_spin_box.h"

#include <QEvent>
#include <QLineEdit>

namespace ndrui {

namespace {

// "×" for the "x" and "*" a keyboard types.
QString withTimesSign(QString text) {
    return text.trimmed().replace('x', QChar(0x00D7)).replace('X', QChar(0x00D7)).replace('*', QChar(0x00D7));
}

} // namespace

void DepthSpinBox::changeEvent(QEvent* event) {
    QSpinBox::changeEvent(event);
    if (event->type() == QEvent::EnabledChange)
        lineEdit()->setText(textFromValue(value()));
}

void DepthSpinBox::setNames(const QStringList& names) {
    if (names == names_)
        return;
    names_ = names;
    lineEdit()->setText(textFromValue(value())); // the value stays; its text gains or loses its name
}

int DepthSpinBox::namedDepth(const QString& text) const {
    const QString typed = withTimesSign(text);
    for (int i = 0; i < names_.size(); ++i)
        if (names_[i] == typed)
            return i + 1;
    return 0;
}

QString DepthSpinBox::textFromValue(int value) const {
    if (testAttribute(Qt::WA_ForceDisabled)) // set before the change event, and kept while off
        return QStringLiteral("\u2013");
    if (value >= 1 && value <= names_.size())
        return names_[value - 1];
    return QSpinBox::textFromValue(value);
}

int DepthSpinBox::valueFromText(const QString& text) const {
    if (const int depth = namedDepth(text))
        return depth;
    return QSpinBox::valueFromText(text);
}

QValidator::State DepthSpinBox::validate(QString& input, int& pos) const {
    if (names_.isEmpty())
        return QSpinBox::validate(input, pos);
    const int depth = namedDepth(input);
    if (depth > 0 && depth >= minimum() && depth <= maximum())
        return QValidator::Acceptable;
    QString number = input;
    int numberPos = pos;
    const QValidator::State asNumber = QSpinBox::validate(number, numberPos);
    if (asNumber != QValidator::Invalid)
        return asNumber;
    // A name being typed: "2+", "1×".
    const QString typed = withTimesSign(input);
    for (const QString& name : names_)
        if (name.startsWith(typed))
            return QValidator::Intermediate;
    return QValidator::Invalid;
}

} // namespace ndrui
