// The inspector's expression field: typing in the run's notation with completion of the current word,
// an inline message naming the offending token, and "Random example" with a depth picker.
#pragma once

#include "core/task/task.h"

#include <QWidget>
#include <optional>
#include <random>

class QComboBox;
class QCompleter;
class QLabel;
class QLineEdit;
class QPushButton;
class QStringListModel;

namespace ndrui {

class ExpressionInput : public QWidget {
    Q_OBJECT

public:
    explicit ExpressionInput(QWidget* parent = nullptr);

    // The run's task (null: no run; the field is disabled). Expressions up to the task's
    // maxAskedDepth() parse (Task::parseQuestion).
    void setTask(const ndr::Task* task);

    // The parsed expression, empty while the text is not a valid one.
    const std::optional<ndr::Example>& example() const { return example_; }
    QString text() const;
    void setText(const QString& text);
    QString problem() const; // the inline message (plain text), empty when the text parses
    QLineEdit* field() const { return field_; }
    QCompleter* completer() const { return completer_; }

    // Fills the field with a random example of `depth` (the picker's depth when depth < 0).
    void randomExample(int depth = -1);
    int pickedDepth() const;

signals:
    // The text now parses to `example`, or (nullopt) no longer does.
    void exampleChanged(const std::optional<ndr::Example>& example);

private:
    void parse();
    void showProblem(const QString& text, const ndr::ParseResult& r);
    void updateCompletions();
    void insertCompletion(const QString& completion);
    // The word under the cursor: [begin, end) in the field's text.
    std::pair<int, int> currentWord() const;

    const ndr::Task* task_ = nullptr;
    std::optional<ndr::Example> example_;
    QString problemText_;
    std::mt19937_64 rng_{1};
    QLineEdit* field_;
    QLabel* problem_;
    QComboBox* depth_;
    QPushButton* random_;
    QCompleter* completer_;
    QStringListModel* words_;
};

} // namespace ndrui
