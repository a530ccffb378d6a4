// A depth field that shows the task's name of a depth where it has one (the multi-digit task's
// problem sizes: "2+2", "1×2") and the number elsewhere; a typed name or number reads back as its depth.
// Switched off itself (setEnabled(false), as the fields of a split that is off) it shows a dash: its
// value does not count then. Disabled with its window (while a run trains) it keeps showing the value.
#pragma once

#include <QSpinBox>
#include <QStringList>

namespace ndrui {

class DepthSpinBox : public QSpinBox {
    Q_OBJECT
public:
    using QSpinBox::QSpinBox;

    // names[i] names depth i + 1; empty: every depth shows as its number.
    void setNames(const QStringList& names);

    QString textFromValue(int value) const override;
    int valueFromText(const QString& text) const override;
    QValidator::State validate(QString& input, int& pos) const override;

protected:
    void changeEvent(QEvent* event) override;

private:
    // The depth `text` names (1-based), or 0 when it names none. "x" and "*" read as "×".
    int namedDepth(const QString& text) const;

    QStringList names_;
};

} // namespace ndrui
