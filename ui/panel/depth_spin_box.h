// A depth field that shows the task's name of a depth where it has one (the multi-digit task's
// problem sizes: "2+2", "1×2") and the number elsewhere; a typed name or number reads back as its depth.
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

private:
    // The depth `text` names (1-based), or 0 when it names none. "x" and "*" read as "×".
    int namedDepth(const QString& text) const;

    QStringList names_;
};

} // namespace ndrui
