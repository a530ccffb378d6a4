// The expression field (see expressioninput.h).
#include "ui/inspector/expression_input.h"
#include "ui/common/split_name.h"

#include <QAbstractItemView>
#include <QComboBox>
#include <QCompleter>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QStringListModel>

namespace ndrui {

namespace {

// The parser reports UTF-8 byte offsets; the field counts UTF-16 units. Tokens split at ASCII spaces,
// so both offsets fall on character boundaries.
int utf16Index(const QByteArray& utf8, int byteOffset) {
    return int(QString::fromUtf8(utf8.left(std::clamp(byteOffset, 0, int(utf8.size())))).size());
}

} // namespace

ExpressionInput::ExpressionInput(QWidget* parent) : QWidget(parent) {
    field_ = new QLineEdit(this);
    field_->setObjectName("inspector.expression");
    field_->setClearButtonEnabled(true);
    field_->setToolTip(tr("An expression in the run's notation and order, tokens separated by spaces"));
    problem_ = new QLabel(this);
    problem_->setObjectName("inspector.problem");
    problem_->setWordWrap(true);
    problem_->setTextFormat(Qt::RichText);
    problem_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    problem_->hide();
    depth_ = new QComboBox(this);
    depth_->setObjectName("inspector.depth");
    depth_->setToolTip(tr("Depth of the random example (train, validation or test split)"));
    random_ = new QPushButton(tr("Random example"), this);
    random_->setObjectName("inspector.random");

    words_ = new QStringListModel(this);
    completer_ = new QCompleter(words_, this);
    completer_->setWidget(field_);
    completer_->setCaseSensitivity(Qt::CaseInsensitive);
    completer_->setCompletionMode(QCompleter::PopupCompletion);

    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Expression"), this));
    row->addWidget(field_, 1);
    row->addWidget(depth_);
    row->addWidget(random_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(row);
    layout->addWidget(problem_);

    connect(field_, &QLineEdit::textChanged, this, &ExpressionInput::parse);
    connect(field_, &QLineEdit::textEdited, this, &ExpressionInput::updateCompletions);
    connect(completer_, qOverload<const QString&>(&QCompleter::activated), this,
            &ExpressionInput::insertCompletion);
    connect(random_, &QPushButton::clicked, this, [this] { randomExample(); });
    connect(depth_, &QComboBox::activated, this, [this] { randomExample(); });
    setTask(nullptr);
}

void ExpressionInput::setTask(const ndr::Task* task) {
    task_ = task;
    depth_->clear();
    field_->blockSignals(true);
    field_->clear();
    field_->blockSignals(false);
    example_.reset();
    problemText_.clear();
    problem_->hide();
    field_->setStyleSheet({});
    setEnabled(task != nullptr);
    if (!task) {
        field_->setPlaceholderText(tr("Start or open a run to inspect it"));
        return;
    }
    // Seeded from the task so the same run offers the same random examples (tests and demos repeat).
    rng_.seed(task->config().seed * 7919 + 17);
    for (int d : task->allDepths())
        depth_->addItem(
            tr("%1 (%2)").arg(depthName(task->config(), d)).arg(splitName(task->splitOf(d), tr("untrained"))),
            d);
    field_->setPlaceholderText(tr("e.g. %1").arg(QString::fromStdString(task->hint())));
}

QString ExpressionInput::text() const {
    return field_->text();
}

void ExpressionInput::setText(const QString& text) {
    field_->setText(text);
}

QString ExpressionInput::problem() const {
    return problemText_;
}

int ExpressionInput::pickedDepth() const {
    return depth_->currentData().toInt();
}

void ExpressionInput::randomExample(int depth) {
    if (!task_ || depth_->count() == 0)
        return;
    if (depth < 0)
        depth = pickedDepth();
    else if (int i = depth_->findData(depth); i >= 0)
        depth_->setCurrentIndex(i);
    if (depth < 1)
        return;
    field_->setText(QString::fromStdString(task_->format(task_->sample(depth, rng_))));
}

void ExpressionInput::parse() {
    if (!task_)
        return;
    const QString text = field_->text();
    const ndr::ParseResult r = task_->parseQuestion(text.toStdString());
    std::optional<ndr::Example> next = r.example;
    if (next) {
        // The depth box names the depth of the expression shown, typed or drawn.
        if (const int i = depth_->findData(next->depth()); i >= 0)
            depth_->setCurrentIndex(i);
        problem_->hide();
        problem_->clear();
        problemText_.clear();
        field_->setStyleSheet({});
    } else {
        showProblem(text, r);
    }
    if (next != example_) {
        example_ = next;
        emit exampleChanged(example_);
    }
}

void ExpressionInput::showProblem(const QString& text, const ndr::ParseResult& r) {
    const QString message = QString::fromStdString(r.error);
    problemText_ = message;
    QString html = QStringLiteral("<span style='color:#d62728'>%1</span>").arg(message.toHtmlEscaped());
    if (r.charBegin >= 0 && r.charEnd > r.charBegin) {
        // The offending token in its context, underlined: a long paste shows only its neighbourhood.
        const QByteArray utf8 = text.toUtf8();
        const int b = utf16Index(utf8, r.charBegin), e = utf16Index(utf8, r.charEnd);
        constexpr int kContext = 24, kToken = 32;
        const int from = std::max(0, b - kContext), to = std::min(int(text.size()), e + kContext);
        const QString token = text.mid(b, std::min(e - b, kToken)) + (e - b > kToken ? "…" : "");
        html += QStringLiteral("<br><code>%1%2<span style='color:#d62728; text-decoration:underline; "
                               "font-weight:bold'>%3</span>%4%5</code>")
                    .arg(from > 0 ? "…" : "", text.mid(from, b - from).toHtmlEscaped(), token.toHtmlEscaped(),
                         text.mid(e, to - e).toHtmlEscaped(), to < text.size() ? "…" : "");
    }
    problem_->setText(html);
    problem_->show();
    // An empty field is a question, not a mistake: no red frame until something is typed.
    field_->setStyleSheet(
        text.trimmed().isEmpty() ? QString() : QStringLiteral("QLineEdit { border: 1px solid #d62728; }"));
}

std::pair<int, int> ExpressionInput::currentWord() const {
    const QString t = field_->text();
    int b = field_->cursorPosition(), e = b;
    while (b > 0 && !t[b - 1].isSpace())
        --b;
    while (e < t.size() && !t[e].isSpace())
        ++e;
    return {b, e};
}

void ExpressionInput::updateCompletions() {
    if (!task_)
        return;
    const auto [b, e] = currentWord();
    const QString t = field_->text();
    const QString prefix = t.mid(b, field_->cursorPosition() - b);
    const bool first = t.left(b).trimmed().isEmpty();
    QStringList names;
    for (const auto& w : task_->completions(first))
        names << QString::fromStdString(w);
    words_->setStringList(names);
    if (prefix.isEmpty() || prefix.size() > 16) {
        completer_->popup()->hide();
        return;
    }
    completer_->setCompletionPrefix(prefix);
    const bool exact = completer_->completionCount() == 1 && completer_->currentCompletion() == prefix;
    if (completer_->completionCount() == 0 || exact) {
        completer_->popup()->hide();
        return;
    }
    completer_->complete();
}

void ExpressionInput::insertCompletion(const QString& completion) {
    const auto [b, e] = currentWord();
    QString t = field_->text();
    t.replace(b, e - b, completion);
    field_->setText(t);
    field_->setCursorPosition(b + int(completion.size()));
}

} // namespace ndrui
