// One column per model, a row per field key of every kind, so NDR and vanilla read side by side (see
// models_group.h).
#include "ui/panel/models_group.h"

#include "ui/common/palette.h"
#include "ui/panel/form_fields.h"
#include "ui/panel/real_spin_box.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFrame>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <utility>

namespace ndrui {

namespace {

// A real field whose special value lies below 0 (a model's weight decay, -1: the run's) shows it one
// step below 0, so one step up from it is 0.
bool specialBelowZero(const ndr::ModelField& f) {
    return !f.zeroText.empty() && f.min < 0;
}

QWidget* makeEditor(const ndr::ModelField& f, QWidget* parent) {
    switch (f.type) {
    case ndr::FieldType::Int: {
        QSpinBox* s = makeIntField(int(f.min), int(f.max), 1, parent);
        if (!f.zeroText.empty())
            s->setSpecialValueText(QString::fromStdString(f.zeroText));
        return s;
    }
    case ndr::FieldType::Real: {
        const bool adaptive = f.key == "learningRate";
        RealSpinBox* s = makeRealField(specialBelowZero(f) ? -f.step : f.min, f.max, f.step, false, parent);
        if (adaptive)
            s->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
        if (!f.zeroText.empty())
            s->setSpecialValueText(QString::fromStdString(f.zeroText));
        return s;
    }
    case ndr::FieldType::Bool:
        return new QCheckBox(parent);
    case ndr::FieldType::Choice: {
        QComboBox* c = makeComboField({}, parent);
        for (const ndr::FieldChoice& choice : f.choices)
            c->addItem(QString::fromStdString(choice.label), QString::fromStdString(choice.name));
        return c;
    }
    case ndr::FieldType::Text:
        break;
    }
    return narrow(new QLineEdit(parent));
}

void setEditor(QWidget* editor, const ndr::ModelField& f, const ndr::FieldValue& v) {
    switch (f.type) {
    case ndr::FieldType::Int:
        static_cast<QSpinBox*>(editor)->setValue(int(std::get<long long>(v)));
        return;
    case ndr::FieldType::Real: {
        auto* s = static_cast<RealSpinBox*>(editor);
        const double x = std::get<double>(v);
        if (specialBelowZero(f) && x == f.min)
            s->setValue(s->minimum());
        else if (f.floatStorage)
            s->setFloat(float(x));
        else
            s->setValue(x);
        return;
    }
    case ndr::FieldType::Bool:
        static_cast<QCheckBox*>(editor)->setChecked(std::get<bool>(v));
        return;
    case ndr::FieldType::Choice: {
        auto* c = static_cast<QComboBox*>(editor);
        c->setCurrentIndex(std::max(0, c->findData(QString::fromStdString(std::get<std::string>(v)))));
        return;
    }
    case ndr::FieldType::Text:
        break;
    }
    static_cast<QLineEdit*>(editor)->setText(QString::fromStdString(std::get<std::string>(v)));
}

ndr::FieldValue editorValue(const QWidget* editor, const ndr::ModelField& f) {
    switch (f.type) {
    case ndr::FieldType::Int:
        return (long long)static_cast<const QSpinBox*>(editor)->value();
    case ndr::FieldType::Real: {
        const auto* s = static_cast<const RealSpinBox*>(editor);
        if (specialBelowZero(f) && s->value() < 0)
            return f.min;
        return f.floatStorage ? double(float(s->value())) : s->value();
    }
    case ndr::FieldType::Bool:
        return static_cast<const QCheckBox*>(editor)->isChecked();
    case ndr::FieldType::Choice:
        return static_cast<const QComboBox*>(editor)->currentData().toString().toStdString();
    case ndr::FieldType::Text:
        break;
    }
    return static_cast<const QLineEdit*>(editor)->text().toStdString();
}

void connectEdits(QWidget* editor, const ndr::ModelField& f, QObject* context,
                  const std::function<void()>& changed) {
    switch (f.type) {
    case ndr::FieldType::Int:
        QObject::connect(static_cast<QSpinBox*>(editor), &QSpinBox::valueChanged, context, changed);
        return;
    case ndr::FieldType::Real:
        QObject::connect(static_cast<QDoubleSpinBox*>(editor), &QDoubleSpinBox::valueChanged, context,
                         changed);
        return;
    case ndr::FieldType::Bool:
        QObject::connect(static_cast<QCheckBox*>(editor), &QCheckBox::toggled, context, changed);
        return;
    case ndr::FieldType::Choice:
        QObject::connect(static_cast<QComboBox*>(editor), &QComboBox::currentIndexChanged, context, changed);
        return;
    case ndr::FieldType::Text:
        break;
    }
    QObject::connect(static_cast<QLineEdit*>(editor), &QLineEdit::textChanged, context, changed);
}

// Every kind's fields, built once: the rows point into them.
const std::vector<std::vector<ndr::ModelField>>& kindFields() {
    static const std::vector<std::vector<ndr::ModelField>> all = [] {
        std::vector<std::vector<ndr::ModelField>> v;
        for (const ndr::ModelKindInfo* k : ndr::modelKinds())
            v.push_back(ndr::modelFieldsOf(*k));
        return v;
    }();
    return all;
}

size_t kindIndex(const ndr::ModelConfig& m) {
    return m.kind.index();
}

} // namespace

ModelsGroup::ModelsGroup(QWidget* parent) : QGroupBox(tr("Models"), parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
}

const ndr::ModelField* ModelsGroup::fieldOf(const Row& row, const ndr::ModelConfig& m) const {
    return row.byKind[kindIndex(m)];
}

void ModelsGroup::buildColumns(int count) {
    delete grid_;
    notes_.reset();
    columns_.assign(size_t(count), Column{});
    rows_.clear();
    grid_ = new QWidget(this);
    layout()->addWidget(grid_);
    auto* g = new QGridLayout(grid_);
    g->setContentsMargins(0, 0, 0, 0);
    g->setHorizontalSpacing(6);
    g->setVerticalSpacing(3);
    for (int i = 0; i < count; ++i)
        g->setColumnStretch(i + 1, 1);

    int row = 0;
    for (int i = 0; i < count; ++i) {
        // The model's colour, as in every plot: the name in that colour over a bar of it.
        auto* cell = new QWidget(grid_);
        auto* v = new QVBoxLayout(cell);
        v->setContentsMargins(0, 0, 0, 2);
        v->setSpacing(2);
        auto* header = new QLabel(cell);
        header->setObjectName(QString("models[%1].header").arg(i));
        header->setAlignment(Qt::AlignCenter);
        header->setTextFormat(Qt::PlainText);
        header->setMinimumWidth(48);
        QFont bold = header->font();
        bold.setBold(true);
        header->setFont(bold);
        QPalette text = header->palette();
        text.setColor(QPalette::WindowText, modelColor(i).darker(isDark(text) ? 70 : 115));
        header->setPalette(text);
        auto* bar = new QFrame(cell);
        bar->setFixedHeight(3);
        bar->setAutoFillBackground(true);
        QPalette fill = bar->palette();
        fill.setColor(QPalette::Window, modelColor(i));
        bar->setPalette(fill);
        v->addWidget(header);
        v->addWidget(bar);
        columns_[size_t(i)].header = header;
        g->addWidget(cell, row, i + 1);
    }
    ++row;

    // The rows: every key of every kind, in the order the kinds list them (the first kind's place
    // wins), each with a label, an editor per column and a row of notes below.
    const auto& kinds = kindFields();
    for (size_t k = 0; k < kinds.size(); ++k)
        for (const ndr::ModelField& f : kinds[k]) {
            auto it = std::find_if(rows_.begin(), rows_.end(), [&](const Row& r) { return r.key == f.key; });
            if (it == rows_.end()) {
                rows_.push_back(
                    Row{f.key, std::vector<const ndr::ModelField*>(kinds.size(), nullptr), nullptr, {}});
                it = rows_.end() - 1;
            }
            it->byKind[k] = &f;
        }
    auto addRow = [&](const QString& label, const QString& key, const QString& tip, auto make) {
        auto* l = new QLabel(label, grid_);
        l->setToolTip(tip);
        g->addWidget(l, row, 0);
        std::vector<QWidget*> editors;
        for (int i = 0; i < count; ++i) {
            QWidget* editor = make();
            QLabel* note = notes_.add(QString("models[%1].%2").arg(i).arg(key), editor, tip, grid_);
            g->addWidget(editor, row, i + 1);
            g->addWidget(note, row + 1, i + 1);
            editors.push_back(editor);
        }
        row += 2;
        return std::make_pair(l, editors);
    };
    for (size_t r = 0; r < rows_.size(); ++r) {
        Row& rw = rows_[r];
        const ndr::ModelField* first =
            *std::find_if(rw.byKind.begin(), rw.byKind.end(), [](auto* f) { return f; });
        // One help when the kinds that have the field say the same, else each kind's line.
        const bool same = std::all_of(rw.byKind.begin(), rw.byKind.end(),
                                      [&](const ndr::ModelField* f) { return !f || f->help == first->help; });
        QString tip = same ? QString::fromStdString(first->help) : QString();
        for (size_t k = 0; k < rw.byKind.size() && !same; ++k)
            if (rw.byKind[k])
                tip += (tip.isEmpty() ? "" : "\n") + QString::fromStdString(ndr::modelKinds()[k]->label) +
                       ": " + QString::fromStdString(rw.byKind[k]->help);
        auto [label, editors] = addRow(QString::fromStdString(first->label), QString::fromStdString(rw.key),
                                       tip, [&] { return makeEditor(*first, grid_); });
        rw.label = label;
        rw.editors = editors;
        // The preset picker goes under the kind.
        if (rw.key == "kind") {
            auto [presetLabel, pickers] =
                addRow(tr("preset"), "row",
                       tr("Sets this column to a model preset: a row of the paper's Table 1 (its switches, "
                          "name and gate "
                          "dropout; sizes, dropouts and rates stay), the LSTM or ThoughtNet. 'custom' when "
                          "the column "
                          "matches none."),
                       [&] {
                           QComboBox* c = makeComboField({}, grid_);
                           c->addItem(tr("custom"), QString());
                           for (const ndr::ModelPreset* p : ndr::modelPresets())
                               c->addItem(QString::fromStdString(p->label), QString::fromStdString(p->id));
                           return c;
                       });
            for (int i = 0; i < count; ++i)
                columns_[size_t(i)].preset = static_cast<QComboBox*>(pickers[size_t(i)]);
        }
    }

    for (int i = 0; i < count; ++i) {
        connect(columns_[size_t(i)].preset, &QComboBox::activated, this, [this, i](int index) {
            const std::string id = columns_[size_t(i)].preset->itemData(index).toString().toStdString();
            if (!id.empty())
                applyPreset(i, id);
        });
        for (Row& rw : rows_) {
            const ndr::ModelField* first =
                *std::find_if(rw.byKind.begin(), rw.byKind.end(), [](auto* f) { return f; });
            connectEdits(rw.editors[size_t(i)], *first, this, [this, i] { onEdited(i); });
        }
    }
}

void ModelsGroup::setModels(const std::vector<ndr::ModelConfig>& models) {
    if (int(models.size()) != count())
        buildColumns(int(models.size()));
    for (size_t i = 0; i < models.size(); ++i)
        fillColumn(int(i), models[i]);
}

std::vector<ndr::ModelConfig> ModelsGroup::models() const {
    std::vector<ndr::ModelConfig> out;
    for (int i = 0; i < count(); ++i)
        out.push_back(readColumn(i));
    return out;
}

void ModelsGroup::fillColumn(int index, const ndr::ModelConfig& m) {
    Column& c = columns_[size_t(index)];
    const bool wasFilling = std::exchange(filling_, true);
    c.shown = m;
    for (const Row& r : rows_)
        if (const ndr::ModelField* f = fieldOf(r, m))
            setEditor(r.editors[size_t(index)], *f, f->get(m)); // each changed field emits edited()
    filling_ = wasFilling;
    updateColumn(index);
    if (!filling_)
        emit edited();
}

ndr::ModelConfig ModelsGroup::readColumn(int index) const {
    const Column& c = columns_[size_t(index)];
    ndr::ModelConfig m = c.shown;
    for (const Row& r : rows_)
        if (const ndr::ModelField* f = fieldOf(r, m); f && f->key != "kind")
            f->set(m, editorValue(r.editors[size_t(index)], *f));
    return m;
}

void ModelsGroup::onEdited(int index) {
    if (filling_) {
        emit edited();
        return;
    }
    Column& c = columns_[size_t(index)];
    const ndr::ModelConfig before = c.shown;
    ndr::ModelConfig m = readColumn(index);
    // A new kind: that kind's defaults, keeping the name and the optimiser settings.
    for (const Row& r : rows_)
        if (r.key == "kind") {
            const ndr::ModelField& kind = *r.byKind[kindIndex(m)];
            kind.set(m, editorValue(r.editors[size_t(index)], kind));
        }
    if (m.kind.index() == before.kind.index())
        if (const auto& edited = ndr::kindOf(m).edited)
            edited(m, before);
    if (m.kind.index() != before.kind.index() || !(readColumn(index) == m)) {
        fillColumn(index, m);
        return;
    }
    c.shown = m;
    updateColumn(index);
    emit edited();
}

void ModelsGroup::updateColumn(int index) {
    const Column& c = columns_[size_t(index)];
    const ndr::ModelConfig& m = c.shown;
    c.header->setText(m.name.empty() ? tr("model %1").arg(index + 1) : QString::fromStdString(m.name));
    for (const Row& r : rows_) {
        const ndr::ModelField* f = fieldOf(r, m);
        QWidget* editor = r.editors[size_t(index)];
        editor->setVisible(f != nullptr);
        // Fields that do not apply are disabled, not hidden, so the columns stay aligned.
        editor->setEnabled(f && (!f->applies || f->applies(m)));
        const bool used = std::any_of(columns_.begin(), columns_.end(), [&](const Column& other) {
            return fieldOf(r, other.shown) != nullptr;
        });
        r.label->setVisible(used);
    }
    // Only user choices (activated) apply a preset, so showing the matching one here changes nothing.
    const ndr::ModelPreset* p = ndr::modelPresetOf(m);
    c.preset->setCurrentIndex(std::max(0, c.preset->findData(p ? QString::fromStdString(p->id) : QString())));
}

void ModelsGroup::applyPreset(int index, const std::string& id) {
    const ndr::ModelPreset* p = ndr::modelPresetNamed(id);
    if (!p)
        return;
    ndr::ModelConfig m = readColumn(index);
    p->apply(m);
    fillColumn(index, m);
}

} // namespace ndrui
