// Red notes under the fields a validation message names (see field_notes.h).
#include "ui/panel/field_notes.h"

#include "ui/common/palette.h"

#include <QLabel>
#include <QWidget>

namespace ndrui {

namespace {
QColor noteColor(const QPalette& palette) {
    // Brighter on a dark window so the text stays readable.
    return isDark(palette) ? QColor(255, 120, 110) : QColor(190, 25, 25);
}
} // namespace

QLabel* FieldNotes::add(const QString& path, QWidget* editor, const QString& tooltip, QWidget* noteParent) {
    editor->setObjectName(path);
    editor->setToolTip(tooltip);
    auto* note = new QLabel(noteParent);
    note->setObjectName(path + ".problem");
    note->setWordWrap(true);
    note->setTextFormat(Qt::PlainText);
    QPalette p = note->palette();
    p.setColor(QPalette::WindowText, noteColor(p));
    note->setPalette(p);
    QFont f = note->font();
    f.setPointSizeF(f.pointSizeF() * 0.9);
    note->setFont(f);
    note->hide();
    fields_.insert(path, Field{editor, note, tooltip});
    return note;
}

void FieldNotes::clear() {
    for (const Field& f : std::as_const(fields_)) {
        if (!f.note->isHidden()) {
            f.note->clear();
            f.note->hide();
            f.editor->setToolTip(f.tooltip);
        }
    }
}

bool FieldNotes::show(const QString& path, const QString& message) {
    const auto it = fields_.constFind(path);
    if (it == fields_.constEnd())
        return false;
    const Field& f = *it;
    const QString text = f.note->isHidden() ? message : f.note->text() + "\n" + message;
    f.note->setText(text);
    f.note->show();
    f.editor->setToolTip(f.tooltip + "\n\nProblem: " + text);
    return true;
}

} // namespace ndrui
