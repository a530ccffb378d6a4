// Shortest round-trip text for a QDoubleSpinBox (see realspinbox.h).
#include "ui/panel/real_spin_box.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

namespace ndrui {

namespace {

// Parses the whole of `text` as a C-locale number; false when anything is left over.
bool parseNumber(const QString& text, double* value) {
    const std::string s = text.trimmed().toStdString();
    if (s.empty())
        return false;
    const char* first = s.data();
    if (*first == '+')
        ++first;
    const auto [end, ec] = std::from_chars(first, s.data() + s.size(), *value);
    return ec == std::errc() && end == s.data() + s.size();
}

} // namespace

RealSpinBox::RealSpinBox(QWidget* parent) : QDoubleSpinBox(parent) {
    // QDoubleSpinBox rounds every value to `decimals`; 15 keeps small learning rates intact.
    setDecimals(15);
    setLocale(QLocale::c());
    setKeyboardTracking(true);
}

void RealSpinBox::setFloat(float value) {
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
    double d = value;
    if (ec == std::errc())
        parseNumber(QString::fromLatin1(buf, int(end - buf)), &d);
    setValue(d);
}

QString RealSpinBox::textFromValue(double value) const {
    // Shortest digits that read back as `value`, fixed or scientific as printf's %g would choose
    // ("0.0005", "1e-05"); the exponent loses its leading zeros ("1e-5").
    char buf[40];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::general);
    if (ec != std::errc())
        return QString::number(value, 'g', 17);
    QString text = QString::fromLatin1(buf, int(end - buf));
    const int e = text.indexOf('e');
    if (e >= 0) {
        int digits = e + 2; // after "e+" or "e-"
        while (digits < text.size() - 1 && text[digits] == '0')
            text.remove(digits, 1);
        if (text[e + 1] == '+')
            text.remove(e + 1, 1);
    }
    return text;
}

double RealSpinBox::valueFromText(const QString& text) const {
    if (!specialValueText().isEmpty() && text == specialValueText())
        return minimum();
    double v = value();
    parseNumber(text, &v);
    return v;
}

QValidator::State RealSpinBox::validate(QString& input, int& /*pos*/) const {
    if (!specialValueText().isEmpty() && input == specialValueText())
        return QValidator::Acceptable;
    double v = 0;
    if (parseNumber(input, &v))
        return v >= minimum() && v <= maximum() ? QValidator::Acceptable : QValidator::Intermediate;
    // Text on its way to a number ("", "-", "1e", "0.") may still become one.
    for (QChar c : input)
        if (!(c.isDigit() || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+' || c.isSpace()))
            return QValidator::Invalid;
    return QValidator::Intermediate;
}

void RealSpinBox::fixup(QString& input) const {
    input = textFromValue(value());
}

void RealSpinBox::stepBy(int steps) {
    if (stepType() == AdaptiveDecimalStepType && value() == 0 && steps > 0) {
        setValue(std::min(maximum(), singleStep() * steps));
        selectAll();
        return;
    }
    QDoubleSpinBox::stepBy(steps);
}

} // namespace ndrui
