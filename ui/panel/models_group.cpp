// One column per model, rows shared so NDR and vanilla read side by side (see models_group.h).
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
#include <utility>

namespace ndrui {

ModelsGroup::ModelsGroup(QWidget* parent) : QGroupBox(tr("Models"), parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
}

void ModelsGroup::buildColumns(int count) {
    delete grid_;
    notes_.reset();
    columns_.assign(size_t(count), Column{});
    kindRows_.clear();
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

    // One row per field: a label shared by the columns, an editor per column, and a row of notes below.
    auto addSharedRow = [&](const QString& label, const char* field, const QString& tip, auto make) {
        KindRow r{{ndr::ModelKind::Encoder}, new QLabel(label, grid_), {}};
        r.label->setToolTip(tip);
        g->addWidget(r.label, row, 0);
        for (int i = 0; i < count; ++i) {
            QWidget* editor = make(columns_[size_t(i)]);
            QLabel* note = notes_.add(QString("models[%1].%2").arg(i).arg(field), editor, tip, grid_);
            g->addWidget(editor, row, i + 1);
            g->addWidget(note, row + 1, i + 1);
            r.editors.push_back(editor);
        }
        row += 2;
        return r;
    };
    // A row of fields only some kinds of model have: shown in the columns of those kinds.
    auto addKindsRow = [&](std::vector<ndr::ModelKind> kinds, const QString& label, const char* field,
                           const QString& tip, auto make) {
        KindRow r = addSharedRow(label, field, tip, make);
        r.kinds = std::move(kinds);
        kindRows_.push_back(std::move(r));
    };
    auto addKindRow = [&](ndr::ModelKind kind, const QString& label, const char* field, const QString& tip,
                          auto make) { addKindsRow({kind}, label, field, tip, make); };
    // The sizes and the thought-cost fields, which the encoder and ThoughtNet share.
    auto addSizeRow = [&](auto&&... args) {
        addKindsRow({ndr::ModelKind::Encoder, ndr::ModelKind::ThoughtNet}, args...);
    };
    // Most rows are the encoder's switches and sizes.
    auto addRow = [&](auto&&... args) { addKindRow(ndr::ModelKind::Encoder, args...); };
    QWidget* p = grid_;
    addSharedRow(tr("name"), "name", tr("The model's name in plots and the inspector; names must be unique."),
                 [&](Column& c) { return c.name = narrow(new QLineEdit(p)); });
    addSharedRow(
        tr("kind"), "kind",
        tr("encoder: the Transformer family configured by the switches below (NDR, vanilla).\n"
           "LSTM: the paper's recurrent baseline, one LSTM layer over the tokens without [B] and [E]. "
           "The paper trains it with Adam at lr 1e-3, no weight decay and dropout 0.5 on the "
           "embeddings (the \"lstm\" model preset).\n"
           "ThoughtNet: learned operators mixed per token by a selector with a zero (identity) operator, "
           "iterated until a fixed point (the \"thoughtnet\" model preset)."),
        [&](Column& c) {
            return c.kind = makeComboField({{"encoder", int(ndr::ModelKind::Encoder)},
                                            {"LSTM", int(ndr::ModelKind::Lstm)},
                                            {"ThoughtNet", int(ndr::ModelKind::ThoughtNet)}});
        });
    addRow(tr("Table 1 row"), "row",
           tr("Sets this column's switches (attention, update, positions), name and gate dropout to a row "
              "of the paper's Table 1; sizes, dropouts and rates stay. 'custom' when the switches match no "
              "row."),
           [&](Column& c) {
               c.row = makeComboField({}, p);
               c.row->addItem(tr("custom"), QString());
               for (const std::string& r : ndr::tableOneRows())
                   c.row->addItem(QString::fromStdString(ndr::tableOneModel(r, 4, 1, 4, 1).name),
                                  QString::fromStdString(r));
               return c.row;
           });
    addRow(tr("attention"), "attention",
           tr("softmax: scaled dot-product attention (vanilla Transformer); with relative or abs/rel "
              "positions, Transformer-XL style relative attention.\n"
              "geometric: NDR's geometric attention with directional encoding: a column attends to the "
              "closest matching column, preferring left or right."),
           [&](Column& c) {
               return c.attention = makeComboField({{"softmax", int(ndr::AttentionKind::Softmax)},
                                                    {"geometric", int(ndr::AttentionKind::Geometric)}});
           });
    addRow(tr("geom. norm"), "geomNorm",
           tr("Normalisation of geometric attention. off: each row of weights sums to at most 1 (the "
              "paper's NDR); L1: rows rescaled to sum to 1. Geometric attention only."),
           [&](Column& c) {
               return c.geomNorm =
                          makeComboField({{"off", int(ndr::GeomNorm::Off)}, {"L1", int(ndr::GeomNorm::L1)}});
           });
    addRow(tr("update"), "update",
           tr("copy gate: h' = g*u + (1-g)*h with u = LN(FFN), a column changes only where its gate opens "
              "(NDR).\n"
              "copy gate, tanh: the same with u = tanh(FFN) (the gated relative layer, +rel+gate).\n"
              "residual: post-LN residual layer (vanilla Transformer)."),
           [&](Column& c) {
               return c.update = makeComboField({{"residual", int(ndr::UpdateKind::Residual)},
                                                 {"copy gate", int(ndr::UpdateKind::CopyGate)},
                                                 {"copy gate, tanh", int(ndr::UpdateKind::CopyGateTanh)}});
           });
    addRow(tr("positional"), "positional",
           tr("none: no absolute positions; geometric attention's direction is enough (NDR).\n"
              "sinusoidal: sinusoidal encoding added to the embeddings (vanilla Transformer).\n"
              "relative: the offset key - query inside softmax attention's scores (+rel).\n"
              "abs/rel: relative, mixed per query and head with the absolute key position (+abs/rel).\n"
              "relative and abs/rel need softmax attention."),
           [&](Column& c) {
               return c.positional = makeComboField({{"none", int(ndr::PositionalKind::None)},
                                                     {"sinusoidal", int(ndr::PositionalKind::Sinusoidal)},
                                                     {"relative", int(ndr::PositionalKind::Relative)},
                                                     {"abs/rel", int(ndr::PositionalKind::AbsRel)}});
           });
    addRow(tr("shared"), "sharedWeights",
           tr("One layer unrolled for every step (weights shared across steps). Needed to run more steps "
              "at evaluation than in training."),
           [&](Column& c) { return c.shared = new QCheckBox(tr("weights"), p); });
    addRow(tr("readout"), "readout",
           tr("The column the answer is read from after the last step: [E] at the end (the paper's table "
              "lookup and arithmetic NDR), or [B] at the start (the authors' ListOps models, where the "
              "outermost operation comes first)."),
           [&](Column& c) {
               return c.readout = makeComboField({{"[E] (last)", int(ndr::ReadoutColumn::Last)},
                                                  {"[B] (first)", int(ndr::ReadoutColumn::First)}});
           });
    addSizeRow(tr("d_model"), "dModel", tr("Width of each column's state (d_model); heads must divide it."),
               [&](Column& c) { return c.dModel = makeIntField(1, 4096, 1, p); });
    addSizeRow(tr("heads"), "heads", tr("Attention heads H; each head has d_model / H channels."),
               [&](Column& c) { return c.heads = makeIntField(1, 64, 1, p); });
    addSizeRow(tr("d_ff"), "dFF", tr("Hidden width of the feed-forward block (d_ff)."),
               [&](Column& c) { return c.dFF = makeIntField(1, 16384, 1, p); });
    addSizeRow(tr("steps"), "steps",
               tr("Layer applications (unrolled steps) in training. An example of depth d needs about d + 1 "
                  "steps to route its answer to the column it is read from."),
               [&](Column& c) { return c.steps = makeIntField(1, 64, 1, p); });
    addSizeRow(tr("eval steps"), "evalSteps",
               tr("Steps at evaluation; 'same' uses the training steps. With shared weights a model can run "
                  "more steps on the longer test inputs."),
               [&](Column& c) {
                   c.evalSteps = makeIntField(0, 128, 1, p);
                   c.evalSteps->setSpecialValueText(tr("same"));
                   return c.evalSteps;
               });
    addKindRow(ndr::ModelKind::ThoughtNet, tr("operators"), "operators",
               tr("Learned operators K beside the zero operator; the selector mixes the K + 1 per token "
                  "and step."),
               [&](Column& c) { return c.operators = makeIntField(1, 16, 1, p); });
    addKindRow(ndr::ModelKind::ThoughtNet, tr("positions"), "positionDims",
               tr("Width of the sinusoidal positions concatenated to the state (even)."),
               [&](Column& c) { return c.positionDims = makeIntField(0, 256, 2, p); });
    addKindRow(ndr::ModelKind::Lstm, tr("hidden"), "lstmHidden",
               tr("Width of the LSTM's state and cell (H)."),
               [&](Column& c) { return c.lstmHidden = makeIntField(1, 4096, 1, p); });
    addKindRow(ndr::ModelKind::Lstm, tr("embedding"), "lstmEmbedding",
               tr("Width of the LSTM's token embeddings."),
               [&](Column& c) { return c.lstmEmbedding = makeIntField(1, 4096, 1, p); });
    addSharedRow(
        tr("dropout"), "dropout",
        tr("Encoder: dropout on the attention output, the feed-forward hidden layer, the gate's hidden "
           "layer and the positional encoding. LSTM: dropout on the token embeddings."),
        [&](Column& c) { return c.dropout = makeRealField(0, 1, 0.05, false, p); });
    addRow(tr("att. dropout"), "attentionDropout",
           tr("Attention dropout: on the keys for geometric attention, on the keys and position vectors "
              "for relative attention, on the attention weights for softmax."),
           [&](Column& c) { return c.attentionDropout = makeRealField(0, 1, 0.05, false, p); });
    addRow(tr("gate dropout"), "gateDropout",
           tr("Gate dropout: probability of forcing a column's gate to copy (g = 0) during training. "
              "Copy-gate updates only."),
           [&](Column& c) { return c.gateDropout = makeRealField(0, 1, 0.05, false, p); });
    addRow(tr("gate bias"), "gateBiasInit",
           tr("Initial bias of the gate's output layer (b_g2). -3 starts the gates almost closed, so "
              "layers begin as copies. Copy-gate updates only."),
           [&](Column& c) { return c.gateBias = makeRealField(-20, 20, 0.5, false, p); });
    addRow(tr("head routing"), "headRouting",
           tr("A gate network (Linear d -> d/2, GELU, Linear d/2 -> H) gives each token at each step a "
              "weight per attention head; each head's output is scaled by its weight before the output "
              "projection. Active in training and evaluation."),
           [&](Column& c) { return c.routing = new QCheckBox(tr("route heads"), p); });
    addRow(tr("top-k heads"), "routeTopK",
           tr("How many heads each token keeps (the largest gate logits); the softmax runs over those. "
              "'all' keeps every head."),
           [&](Column& c) {
               c.routeTopK = makeIntField(0, 64, 1, p);
               c.routeTopK->setSpecialValueText(tr("all"));
               return c.routeTopK;
           });
    addRow(tr("dropped heads"), "routeDropped",
           tr("masked: heads outside the top k get weight exactly 0.\n"
              "seed-exact: as the head-routing write-up's code, which multiplies their logits by 0, so "
              "each keeps weight e^0 / Z."),
           [&](Column& c) {
               return c.routeDropped = makeComboField({{"masked", int(ndr::DroppedHeads::Masked)},
                                                       {"seed-exact", int(ndr::DroppedHeads::SeedExact)}});
           });
    addRow(tr("routing entropy"), "routeEntropy",
           tr("Coefficient of the mean routing entropy added to the loss; positive rewards peaky, "
              "specialised routing (the write-up uses 0.01)."),
           [&](Column& c) { return c.routeEntropy = makeRealField(-10, 10, 0.005, false, p); });
    addSizeRow(
        tr("thought cost"), "thoughtCost",
        tr("Urgency u: the loss adds u * sum over steps t of t * the mean gate openness at step t, so "
           "later steps cost more and the model learns to finish early. Copy-gate updates, and ThoughtNet, "
           "where the learned operators' selection weights take the gates' place."),
        [&](Column& c) { return c.thoughtCost = makeRealField(0, 10, 0.005, false, p); });
    addSizeRow(tr("halt below"), "haltThreshold",
               tr("At evaluation an example stops after the first step at which every position's signal "
                  "(see halt on) is below this, and its answer is read there. 'off' runs every step."),
               [&](Column& c) {
                   c.haltThreshold = makeRealField(0, 0.99, 0.01, false, p);
                   c.haltThreshold->setSpecialValueText(tr("off"));
                   return c.haltThreshold;
               });
    addSizeRow(tr("halt on"), "haltOn",
               tr("What halting reads. gates: each position's mean copy gate (ThoughtNet: its learned "
                  "operators' weight); copy-gate updates and ThoughtNet. change: how far the step moved "
                  "each position's state, |Δh| / |h|; every encoder and ThoughtNet."),
               [&](Column& c) {
                   return c.haltOn = makeComboField({{"gates", int(ndr::HaltSignal::Gates)},
                                                     {"change", int(ndr::HaltSignal::Change)}});
               });
    addSharedRow(tr("learn. rate"), "learningRate",
                 tr("This model's AdamW learning rate; 'run's' uses the training group's rate."),
                 [&](Column& c) {
                     c.learningRate = makeRealField(0, 1, 1e-4, false, p);
                     c.learningRate->setStepType(QAbstractSpinBox::AdaptiveDecimalStepType);
                     c.learningRate->setSpecialValueText(tr("run's"));
                     return c.learningRate;
                 });
    // "run's" sits one step below 0, so one step up from it is no weight decay.
    addSharedRow(tr("weight decay"), "weightDecay",
                 tr("This model's AdamW weight decay; 'run's' uses the training group's."), [&](Column& c) {
                     c.weightDecay = makeRealField(-1e-3, 1, 1e-3, false, p);
                     c.weightDecay->setSpecialValueText(tr("run's"));
                     return c.weightDecay;
                 });

    for (int i = 0; i < count; ++i) {
        const Column& c = columns_[size_t(i)];
        auto changed = [this, i] {
            updateColumn(i);
            emit edited();
        };
        connect(c.row, &QComboBox::activated, this, [this, i](int index) {
            const std::string row = columns_[size_t(i)].row->itemData(index).toString().toStdString();
            if (!row.empty())
                applyRow(i, row);
        });
        connect(c.name, &QLineEdit::textChanged, this, changed);
        for (QComboBox* combo :
             {c.kind, c.attention, c.geomNorm, c.update, c.positional, c.readout, c.routeDropped, c.haltOn})
            connect(combo, &QComboBox::currentIndexChanged, this, changed);
        connect(c.shared, &QCheckBox::toggled, this, changed);
        // Ticking routing on a model without an entropy coefficient starts from the write-up's 0.01.
        connect(c.routing, &QCheckBox::clicked, this, [this, i](bool on) {
            RealSpinBox* entropy = columns_[size_t(i)].routeEntropy;
            if (on && entropy->value() == 0)
                entropy->setValue(0.01);
        });
        connect(c.routing, &QCheckBox::toggled, this, changed);
        for (QSpinBox* s : {c.dModel, c.heads, c.dFF, c.steps, c.evalSteps, c.routeTopK, c.lstmHidden,
                            c.lstmEmbedding, c.operators, c.positionDims})
            connect(s, &QSpinBox::valueChanged, this, changed);
        for (RealSpinBox* s : {c.dropout, c.attentionDropout, c.gateDropout, c.gateBias, c.routeEntropy,
                               c.thoughtCost, c.haltThreshold, c.learningRate, c.weightDecay})
            connect(s, &QDoubleSpinBox::valueChanged, this, changed);
    }
}

void ModelsGroup::setModels(const std::vector<ndr::ModelConfig>& models) {
    if (int(models.size()) != count())
        buildColumns(int(models.size()));
    for (size_t i = 0; i < models.size(); ++i) {
        fillColumn(columns_[i], models[i]);
        updateColumn(int(i)); // also when no field changed value
    }
}

std::vector<ndr::ModelConfig> ModelsGroup::models() const {
    std::vector<ndr::ModelConfig> out;
    for (const Column& c : columns_)
        out.push_back(readColumn(c));
    return out;
}

void ModelsGroup::updateColumn(int index) {
    const Column& c = columns_[size_t(index)];
    const ndr::ModelConfig m = readColumn(c);
    c.header->setText(m.name.empty() ? tr("model %1").arg(index + 1) : QString::fromStdString(m.name));
    // Fields that do not apply are disabled, not hidden, so the columns stay aligned. geom. norm stays
    // editable while it holds L1 under softmax: validation flags that, and the user must be able to fix it.
    c.geomNorm->setEnabled(m.attention == ndr::AttentionKind::Geometric || m.geomNorm == ndr::GeomNorm::L1);
    const bool gated = ndr::copyGated(m.update);
    c.gateDropout->setEnabled(gated);
    c.gateBias->setEnabled(gated);
    // As geom. norm: a value the switches make invalid stays editable, so the user can fix what
    // validation flags.
    c.routeTopK->setEnabled(m.headRouting || m.routeTopK != 0);
    c.routeDropped->setEnabled((m.headRouting && m.routeTopK > 0) ||
                               m.routeDropped != ndr::DroppedHeads::Masked);
    c.routeEntropy->setEnabled(m.headRouting || m.routeEntropy != 0);
    const bool selects = m.kind == ndr::ModelKind::ThoughtNet;
    c.thoughtCost->setEnabled(gated || selects || m.thoughtCost != 0);
    // Halting by the change needs no gates; by the gates, a copy-gated update or ThoughtNet.
    c.haltThreshold->setEnabled(ndr::hasHaltSignal(m, m.haltOn) || m.haltThreshold != 0);
    // Only user choices (activated) apply a row, so showing the matching one here changes nothing.
    c.row->setCurrentIndex(std::max(0, c.row->findData(QString::fromStdString(ndr::tableOneRowOf(m)))));
    for (const KindRow& r : kindRows_) {
        r.editors[size_t(index)]->setVisible(r.has(m.kind));
        const bool used = std::any_of(columns_.begin(), columns_.end(), [&](const Column& other) {
            return r.has(comboValue<ndr::ModelKind>(other.kind));
        });
        r.label->setVisible(used);
    }
}

void ModelsGroup::applyRow(int index, const std::string& row) {
    Column& c = columns_[size_t(index)];
    ndr::ModelConfig m = readColumn(c);
    const ndr::ModelConfig r = ndr::tableOneModel(row, m.dModel, m.heads, m.dFF, m.steps);
    m.kind = r.kind;
    m.name = r.name;
    m.attention = r.attention;
    m.update = r.update;
    m.positional = r.positional;
    m.geomNorm = r.geomNorm;
    m.gateDropout = r.gateDropout;
    fillColumn(c, m); // each changed field emits edited()
    updateColumn(index);
}

} // namespace ndrui
