// A spin box for real numbers that shows the shortest text that reads back as the same number
// ("0.0005", "1e-05", "0.1"), so learning rates and dropouts round-trip exactly through the panel.
#pragma once

#include <QDoubleSpinBox>

namespace ndrui {

class RealSpinBox : public QDoubleSpinBox {
    Q_OBJECT
public:
    explicit RealSpinBox(QWidget* parent = nullptr);

    // Sets a value held as float in the config: the float's shortest text, so that reading it back and
    // narrowing to float gives the same float, and tabbing through the field does not change it.
    void setFloat(float value);

    QString textFromValue(double value) const override;
    double valueFromText(const QString& text) const override;
    QValidator::State validate(QString& input, int& pos) const override;
    void fixup(QString& input) const override;
    // Adaptive steps from 0 would be 1e-15; step to singleStep() instead.
    void stepBy(int steps) override;
};

} // namespace ndrui
