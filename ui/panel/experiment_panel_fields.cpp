// The experiment panel's field groups (see experiment_panel.h): the preset row, the task and the
// training, each field with the note under it where the core's problems show.
#include "ui/panel/experiment_panel.h"

#include "core/config/task_kinds.h"
#include "ui/panel/depth_spin_box.h"
#include "ui/panel/form_fields.h"
#include "ui/panel/models_group.h"
#include "ui/panel/real_spin_box.h"
#include "ui/panel/run_controls.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpressionValidator>
#include <QSpinBox>
#include <QVBoxLayout>

namespace ndrui {

namespace {

// Seeds are 64-bit: more than a spin box holds.
QLineEdit* makeSeed() {
    auto* e = new QLineEdit;
    e->setValidator(new QRegularExpressionValidator(QRegularExpression("[0-9]{0,20}"), e));
    return narrow(e);
}

// An editor with its note(s) below it, as one form field.
QWidget* withNotes(QLayout* editorRow, std::initializer_list<QLabel*> notes) {
    auto* cell = new QWidget;
    auto* v = new QVBoxLayout(cell);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(1);
    v->addLayout(editorRow);
    for (QLabel* n : notes)
        v->addWidget(n);
    return cell;
}

QWidget* withNote(QWidget* editor, QLabel* note) {
    auto* row = new QHBoxLayout;
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(editor);
    return withNotes(row, {note});
}

QFormLayout* makeForm(QWidget* parent) {
    auto* f = new QFormLayout(parent);
    f->setContentsMargins(6, 6, 6, 6);
    f->setHorizontalSpacing(8);
    f->setVerticalSpacing(4);
    f->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    f->setLabelAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    return f;
}

} // namespace

QWidget* ExperimentPanel::buildPresetRow() {
    auto* w = new QWidget;
    auto* form = makeForm(w);
    form->setContentsMargins(6, 0, 6, 0);
    preset_ = narrow(new QComboBox);
    for (const std::string& name : ndr::presetNames())
        preset_->addItem(QString::fromStdString(name));
    preset_->addItem(kCustomPreset);
    QLabel* note = notes_.add("preset", preset_,
                              tr("A built-in configuration (stub: a small table lookup task that trains in "
                                 "seconds; stub-routing, stub-thought-cost: its models with and without head "
                                 "routing or thought cost; paper-forward / -backward: the paper's CTL task "
                                 "sized for a laptop; arith, listops: the paper's arithmetic and ListOps; "
                                 "thoughtnet: ThoughtNet and NDR on multi-digit addition and "
                                 "multiplication). Choosing one fills every field; editing any field but "
                                 "the seeds switches to custom."),
                              w);
    form->addRow(tr("Preset"), withNote(preset_, note));
    connect(preset_, &QComboBox::currentIndexChanged, this, &ExperimentPanel::onPresetChosen);
    return w;
}

QWidget* ExperimentPanel::buildTaskGroup() {
    auto* box = new QGroupBox(tr("Task"));
    auto* form = makeForm(box);
    taskForm_ = form;
    auto add = [&](const QString& label, const QString& path, QWidget* editor, const QString& tip) {
        form->addRow(label, withNote(editor, notes_.add(path, editor, tip, box)));
    };
    taskKind_ = makeComboField({});
    for (const ndr::TaskKindFacts& f : ndr::taskKinds())
        taskKind_->addItem(tr(f.title), int(f.kind));
    add(tr("task"), "task.kind", taskKind_,
        tr("table lookup: compositional table lookup (the paper's CTL).\n"
           "arithmetic: ((3*4)+7), digits with + and * mod 10 (paper §3.2).\n"
           "ListOps: [MAX 2 [MIN 4 7 ] 0 ], MIN, MAX, MED and SM over digits (paper §3.3).\n"
           "multi-digit arithmetic: 0023+0123 -> 000000146, one answer digit per position (ThoughtNet's "
           "task); its depths are problem sizes 1+1, 2+2, 3+3, 1×1, 1×2, 2×2, 4+4, 2×3 (1-8).\n"
           "Depths count nesting for arithmetic and the dependency depth for ListOps (2-10)."));
    symbols_ = makeIntField(1, 64);
    add(tr("symbols"), "task.symbols", symbols_,
        tr("S, the number of symbols (paper: 8, written as 3-bit strings). Chance accuracy is 1/S."));
    functions_ = makeIntField(1, 26);
    add(tr("functions"), "task.functions", functions_,
        tr("F, the number of functions, each a random bijection of the symbols (paper: 9, letters a-i)."));

    // A depth range: "min to max" on one line, a note for each end below it.
    auto depthRow = [&](QWidget* label, const QString& split, DepthSpinBox*& lo, DepthSpinBox*& hi,
                        const QString& tip) {
        for (DepthSpinBox** field : {&lo, &hi}) {
            *field = narrow(new DepthSpinBox);
            (*field)->setRange(0, 40);
        }
        QLabel* loNote = notes_.add("task." + split + "MinDepth", lo, tip, box);
        QLabel* hiNote = notes_.add("task." + split + "MaxDepth", hi, tip, box);
        auto* row = new QHBoxLayout;
        row->setContentsMargins(0, 0, 0, 0);
        row->addWidget(lo);
        row->addWidget(new QLabel(tr("to")));
        row->addWidget(hi);
        label->setToolTip(tip);
        form->addRow(label, withNotes(row, {loNote, hiNote}));
    };
    trainLabel_ = new QLabel(tr("train depths"));
    depthRow(trainLabel_, "train", trainMin_, trainMax_,
             tr("Depths (functions applied) of the training examples; batches are drawn fresh, balanced "
                "over these depths (paper: 1-5)."));
    validEnabled_ = new QCheckBox(tr("valid depths"));
    validEnabled_->setObjectName("task.validEnabled");
    depthRow(validEnabled_, "valid", validMin_, validMax_,
             tr("Held-out depths for model selection: the reported test accuracy is the one at the "
                "evaluation with the best validation accuracy (paper: 6-8). Untick for no validation "
                "split."));
    connect(validEnabled_, &QCheckBox::toggled, this, &ExperimentPanel::onValidToggled);
    testLabel_ = new QLabel(tr("test depths"));
    depthRow(testLabel_, "test", testMin_, testMax_,
             tr("Held-out longer depths that measure length generalisation (paper: 9-10)."));

    order_ = makeComboField(
        {{tr("forward"), int(ndr::Order::Forward)}, {tr("backward"), int(ndr::Order::Backward)}});
    add(tr("order"), "task.order", order_,
        tr("forward: x f1 f2 ... fd, e.g. 101 b d h means h(d(b(101))).\n"
           "backward: fd ... f2 f1 x, e.g. h d b 101."));
    operations_ = narrow(new QLineEdit);
    add(tr("operations"), "task.operations", operations_,
        tr("ListOps: the operations its questions are drawn from, separated by spaces (the paper: MIN MAX "
           "MED SM). Leaving one out leaves it out of training and of the held-out sets; typed questions "
           "may still use all four."));
    taskSeed_ = makeSeed();
    add(tr("seed"), "task.seed", taskSeed_,
        tr("Seed of the function tables and the held-out evaluation sets."));
    evalExamples_ = makeIntField(1, 100000, 100);
    add(tr("eval examples"), "task.evalExamplesPerDepth", evalExamples_,
        tr("Held-out examples per depth (all distinct cases when a depth has fewer)."));

    for (QSpinBox* s : std::initializer_list<QSpinBox*>{symbols_, functions_, trainMin_, trainMax_, validMin_,
                                                        validMax_, testMin_, testMax_, evalExamples_})
        connect(s, &QSpinBox::valueChanged, this, &ExperimentPanel::onFieldEdited);
    connect(order_, &QComboBox::currentIndexChanged, this, &ExperimentPanel::onFieldEdited);
    connect(taskKind_, &QComboBox::currentIndexChanged, this, &ExperimentPanel::onTaskKindChanged);
    connect(taskSeed_, &QLineEdit::textChanged, this, &ExperimentPanel::onFieldEdited);
    connect(operations_, &QLineEdit::textChanged, this, &ExperimentPanel::onFieldEdited);
    return box;
}

QWidget* ExperimentPanel::buildTrainGroup() {
    auto* box = new QGroupBox(tr("Training"));
    auto* form = makeForm(box);
    auto add = [&](const QString& label, const QString& path, QWidget* editor, const QString& tip) {
        form->addRow(label, withNote(editor, notes_.add(path, editor, tip, box)));
    };
    batch_ = makeIntField(1, 8192, 16);
    add(tr("batch"), "train.batchSize", batch_, tr("Examples per training step (paper: 512)."));
    learningRate_ = makeRealField(0, 1, 1e-4, true);
    add(tr("learn. rate"), "train.learningRate", learningRate_,
        tr("AdamW learning rate, used by every model without its own rate (paper: 1.5e-4, constant)."));
    weightDecay_ = makeRealField(0, 1, 1e-3, true);
    add(tr("weight decay"), "train.weightDecay", weightDecay_,
        tr("AdamW's decoupled weight decay on all parameters (paper: 0.01)."));
    gradClip_ = makeRealField(0, 1000, 0.5, false);
    gradClip_->setSpecialValueText(tr("off"));
    add(tr("grad clip"), "train.gradClip", gradClip_,
        tr("Global gradient-norm clipping threshold (CTL: 5); off disables clipping."));
    lrDecaySteps_ = makeIntField(0, 10000000, 500);
    lrDecaySteps_->setSpecialValueText(tr("off"));
    add(tr("lr decay every"), "train.lrDecaySteps", lrDecaySteps_,
        tr("Multiply every model's learning rate by the decay factor after each N steps; off keeps it "
           "constant (the paper's rate is constant)."));
    lrDecayFactor_ = makeRealField(0, 1, 0.05, false);
    add(tr("lr decay factor"), "train.lrDecayFactor", lrDecayFactor_,
        tr("What each decay multiplies the learning rate by (above 0, at most 1)."));
    warmupSteps_ = makeIntField(0, 10000000, 100);
    warmupSteps_->setSpecialValueText(tr("off"));
    add(tr("warm-up"), "train.warmupSteps", warmupSteps_,
        tr("Raise every model's learning rate linearly from almost 0 to its value over the first N steps; "
           "off starts at the full rate (the paper's)."));
    cosineDecay_ = new QCheckBox(tr("down to 0 at the last step"));
    add(tr("cosine decay"), "train.cosineDecay", cosineDecay_,
        tr("After the warm-up, lower every model's learning rate along half a cosine to 0 at the last "
           "step; not together with the stepwise decay."));
    steps_ = makeIntField(1, 10000000, 500);
    add(tr("steps"), "train.steps", steps_, tr("Training steps of each model."));
    evalInterval_ = makeIntField(1, 10000000, 100);
    add(tr("eval every"), "train.evalInterval", evalInterval_,
        tr("Evaluate on the held-out depths every N steps: accuracy per depth, loss, attention snapshots."));
    trainSeed_ = makeSeed();
    add(tr("seed"), "train.seed", trainSeed_,
        tr("Seed of initialisation, batches and dropout: the same seed and config give the same curves."));
    threads_ = makeIntField(1, 64);
    add(tr("threads"), "train.threads", threads_,
        tr("CPU threads of each model (a training step splits its batch over them); the models train at the "
           "same time."));

    connect(cosineDecay_, &QCheckBox::toggled, this, &ExperimentPanel::onFieldEdited);
    for (QSpinBox* s : {batch_, lrDecaySteps_, warmupSteps_, steps_, evalInterval_, threads_})
        connect(s, &QSpinBox::valueChanged, this, &ExperimentPanel::onFieldEdited);
    for (RealSpinBox* s : {learningRate_, weightDecay_, gradClip_, lrDecayFactor_})
        connect(s, &QDoubleSpinBox::valueChanged, this, &ExperimentPanel::onFieldEdited);
    connect(trainSeed_, &QLineEdit::textChanged, this, &ExperimentPanel::onFieldEdited);
    return box;
}

} // namespace ndrui
