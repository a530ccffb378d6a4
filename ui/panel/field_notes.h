// Inline validation notes for a form: a message naming a field ("models[1].heads: 5 does not divide
// dModel 64") is shown in red under that field and added to its tooltip.
#pragma once

#include <QHash>
#include <QString>

class QLabel;
class QWidget;

namespace ndrui {

class FieldNotes {
public:
    // Registers `editor` as the field `path`: sets its objectName to `path` and its tooltip, and returns
    // a hidden red note label (objectName `path` + ".problem", parented to `noteParent`) for the caller
    // to place under the field.
    QLabel* add(const QString& path, QWidget* editor, const QString& tooltip, QWidget* noteParent);
    // Forgets every field (their widgets are owned elsewhere).
    void reset() { fields_.clear(); }

    // Hides every note and restores the plain tooltips.
    void clear();
    // Shows `message` under the field `path` (appending when it already has one); false when no field
    // has that path.
    bool show(const QString& path, const QString& message);

private:
    struct Field {
        QWidget* editor;
        QLabel* note;
        QString tooltip;
    };
    QHash<QString, Field> fields_;
};

} // namespace ndrui
