// The inspector's "Run" box: how many steps to run each model for, 0 shown as "as trained". Its up
// arrow from "as trained" goes to one more than trained, not to 1.
#pragma once

#include <QSpinBox>

namespace ndrui {

class StepCountBox : public QSpinBox {
    Q_OBJECT

public:
    explicit StepCountBox(QWidget* parent = nullptr);
    // The steps the run's models were trained with (the most of any model).
    void setTrained(int steps) { trained_ = steps; }
    void stepBy(int steps) override;

private:
    int trained_ = 0;
};

} // namespace ndrui
