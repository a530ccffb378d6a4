// The "Models" group of the experiment panel: one column per model (NDR and vanilla by default). The rows
// are the fields of every model kind (core/config/model_kind.h), a row per field key shared by the kinds
// that have it; a column shows the rows of its kind, each editor enabled where the field applies to the
// column's other fields, and a picker that applies a model preset (a row of the paper's Table 1, the
// LSTM, ThoughtNet). Nothing here knows a kind: the kinds' field tables say what to show.
#pragma once

#include "core/config/model_kind.h"
#include "ui/panel/field_notes.h"

#include <QGroupBox>
#include <map>
#include <string>
#include <vector>

class QComboBox;
class QLabel;

namespace ndrui {

class ModelsGroup : public QGroupBox {
    Q_OBJECT
public:
    explicit ModelsGroup(QWidget* parent = nullptr);

    // Fills every field; rebuilds the columns when the number of models changes.
    void setModels(const std::vector<ndr::ModelConfig>& models);
    std::vector<ndr::ModelConfig> models() const;
    int count() const { return int(columns_.size()); }

    // Inline notes: `field` is a path such as "models[1].heads".
    void clearProblems() { notes_.clear(); }
    bool showProblem(const QString& field, const QString& message) { return notes_.show(field, message); }

signals:
    // Any field was edited (also while setModels fills them).
    void edited();

private:
    // A row: the fields of that key (one per kind that has it, null for the others), its label and
    // each column's editor.
    struct Row {
        std::string key;
        std::vector<const ndr::ModelField*> byKind; // (kinds)
        QLabel* label = nullptr;
        std::vector<QWidget*> editors; // (columns)
    };
    struct Column {
        QLabel* header = nullptr;
        QComboBox* preset = nullptr; // a model preset; "custom" when the column matches none
        ndr::ModelConfig shown;      // what the column was last filled with or read as
    };

    void buildColumns(int count);
    void fillColumn(int index, const ndr::ModelConfig& m);
    ndr::ModelConfig readColumn(int index) const;
    // Shows the rows of a column's kind, enables each editor by whether its field applies, restyles the
    // header and shows the preset it matches; a row no column shows is hidden with its label.
    void updateColumn(int index);
    // After an edit of column `index`: what follows from it (the kind's `edited` rule, a new kind's
    // defaults), then the column's notes and header.
    void onEdited(int index);
    void applyPreset(int index, const std::string& id);
    const ndr::ModelField* fieldOf(const Row& row, const ndr::ModelConfig& m) const;

    std::vector<ndr::ModelField> fields_; // every kind's fields, each of them once per kind
    QWidget* grid_ = nullptr;             // rebuilt with the columns
    std::vector<Column> columns_;
    std::vector<Row> rows_;
    bool filling_ = false;
    FieldNotes notes_;
};

} // namespace ndrui
