// The "Models" group of the experiment panel: one column per model (NDR and vanilla by default), every
// ModelConfig switch editable. A column shows the fields of its kind (encoder or LSTM) only, disables
// the encoder fields its switches make irrelevant, and has a picker that sets the switches of a row of
// the paper's Table 1.
#pragma once

#include "core/config/config.h"
#include "ui/panel/field_notes.h"

#include <QGroupBox>
#include <algorithm>
#include <vector>

class QCheckBox;
class QComboBox;
class QGridLayout;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace ndrui {

class RealSpinBox;

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
    struct Column {
        QLabel* header = nullptr;
        QComboBox* row = nullptr; // Table 1 row; "custom" when the switches match none
        QLineEdit* name = nullptr;
        QComboBox* kind = nullptr;
        QComboBox* attention = nullptr;
        QComboBox* geomNorm = nullptr;
        QComboBox* update = nullptr;
        QComboBox* positional = nullptr;
        QCheckBox* shared = nullptr;
        QComboBox* readout = nullptr;
        QSpinBox* dModel = nullptr;
        QSpinBox* heads = nullptr;
        QSpinBox* dFF = nullptr;
        QSpinBox* steps = nullptr;
        QSpinBox* evalSteps = nullptr;
        RealSpinBox* dropout = nullptr;
        RealSpinBox* attentionDropout = nullptr;
        RealSpinBox* gateDropout = nullptr;
        RealSpinBox* gateBias = nullptr;
        RealSpinBox* learningRate = nullptr;
        RealSpinBox* weightDecay = nullptr;
        QCheckBox* routing = nullptr;
        QSpinBox* routeTopK = nullptr;
        QComboBox* routeDropped = nullptr;
        RealSpinBox* routeEntropy = nullptr;
        RealSpinBox* thoughtCost = nullptr;
        RealSpinBox* haltThreshold = nullptr;
        QComboBox* haltOn = nullptr;
        QSpinBox* lstmHidden = nullptr;
        QSpinBox* lstmEmbedding = nullptr;
        QSpinBox* operators = nullptr;
        QSpinBox* positionDims = nullptr;
    };
    // A row of fields that only some kinds of model have: its label and each column's editor and note.
    struct KindRow {
        std::vector<ndr::ModelKind> kinds;
        QLabel* label;
        std::vector<QWidget*> editors; // (columns)
        bool has(ndr::ModelKind k) const { return std::find(kinds.begin(), kinds.end(), k) != kinds.end(); }
    };

    void buildColumns(int count);
    void fillColumn(Column& c, const ndr::ModelConfig& m);
    ndr::ModelConfig readColumn(const Column& c) const;
    // Shows the fields of a column's kind and disables those its switches make irrelevant (and
    // restyles its header); a row no column shows is hidden with its label.
    void updateColumn(int index);
    // Sets a column's switches, name and gate dropout to those of a Table 1 row; sizes stay.
    void applyRow(int index, const std::string& row);

    QWidget* grid_ = nullptr; // rebuilt with the columns
    std::vector<Column> columns_;
    std::vector<KindRow> kindRows_;
    FieldNotes notes_;
};

} // namespace ndrui
