// The experiment panel (see experimentpanel.h). The core's validate() decides what is valid; the spin
// box ranges only keep typing sane, so every problem the core can report stays reachable and visible.
#include "ui/panel/experiment_panel.h"

#include "core/io/serialize.h"
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
#include <QScrollArea>
#include <QSettings>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

namespace ndrui {

namespace {

const char* const kCustom = "custom";
const char* const kSettingsKey = "experiment/config";

const char* const kSettingsOrganisation = "NDR Studio";
const char* const kSettingsApplication = "ndr-studio";

// Seeds are 64-bit: more than a spin box holds.
QLineEdit* makeSeed() {
    auto* e = new QLineEdit;
    e->setValidator(new QRegularExpressionValidator(QRegularExpression("[0-9]{0,20}"), e));
    return narrow(e);
}

bool parseSeed(const QLineEdit* e, uint64_t* seed) {
    bool ok = false;
    *seed = e->text().toULongLong(&ok);
    return ok;
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

ExperimentPanel::ExperimentPanel(QWidget* parent, bool rememberSettings)
    : QWidget(parent), remember_(rememberSettings) {
    saveTimer_ = new QTimer(this);
    saveTimer_->setSingleShot(true);
    saveTimer_->setInterval(500);
    connect(saveTimer_, &QTimer::timeout, this, &ExperimentPanel::writeSettings);

    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(4, 4, 4, 4);
    outer->setSpacing(6);

    fields_ = new QWidget;
    auto* v = new QVBoxLayout(fields_);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(6);
    v->addWidget(buildPresetRow());
    v->addWidget(buildTaskGroup());
    models_ = new ModelsGroup;
    connect(models_, &ModelsGroup::edited, this, &ExperimentPanel::onFieldEdited);
    v->addWidget(models_);
    v->addWidget(buildTrainGroup());
    v->addStretch(1);

    // The fields scroll when the window is short; the summary, buttons and progress stay in view.
    auto* scroll = new QScrollArea;
    scroll->setObjectName("fieldsScroll");
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(fields_);
    outer->addWidget(scroll, 1);
    controls_ = new RunControls;
    connect(controls_, &RunControls::startClicked, this, &ExperimentPanel::onStart);
    connect(controls_, &RunControls::pauseResumeClicked, this, &ExperimentPanel::onPauseResume);
    connect(controls_, &RunControls::stopClicked, this, [this] {
        if (state_ != RunState::Idle)
            emit stopRequested();
    });
    outer->addWidget(controls_);

    if (!(remember_ && restore()))
        setConfig(ndr::presetConfig("stub"));
}

ExperimentPanel::~ExperimentPanel() {
    writeSettings();
}

QWidget* ExperimentPanel::buildPresetRow() {
    auto* w = new QWidget;
    auto* form = makeForm(w);
    form->setContentsMargins(6, 0, 6, 0);
    preset_ = narrow(new QComboBox);
    for (const std::string& name : ndr::presetNames())
        preset_->addItem(QString::fromStdString(name));
    preset_->addItem(kCustom);
    QLabel* note = notes_.add("preset", preset_,
                              tr("A built-in configuration (stub: the seed's small task; paper-forward / "
                                 "-backward: the paper's CTL task sized for a laptop). Choosing one fills "
                                 "every field; editing any field switches to custom."),
                              w);
    form->addRow(tr("Preset"), withNote(preset_, note));
    connect(preset_, &QComboBox::currentIndexChanged, this, &ExperimentPanel::onPresetChosen);
    return w;
}

QWidget* ExperimentPanel::buildTaskGroup() {
    auto* box = new QGroupBox(tr("Task"));
    auto* form = makeForm(box);
    auto add = [&](const QString& label, const QString& path, QWidget* editor, const QString& tip) {
        form->addRow(label, withNote(editor, notes_.add(path, editor, tip, box)));
    };
    symbols_ = makeIntField(1, 64);
    add(tr("symbols"), "task.symbols", symbols_,
        tr("S, the number of symbols (paper: 8, written as 3-bit strings). Chance accuracy is 1/S."));
    functions_ = makeIntField(1, 26);
    add(tr("functions"), "task.functions", functions_,
        tr("F, the number of functions, each a random bijection of the symbols (paper: 9, letters a-i)."));

    // A depth range: "min to max" on one line, a note for each end below it.
    auto depthRow = [&](QWidget* label, const QString& split, QSpinBox*& lo, QSpinBox*& hi,
                        const QString& tip) {
        lo = makeIntField(0, 40);
        hi = makeIntField(0, 40);
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
    depthRow(new QLabel(tr("train depths")), "train", trainMin_, trainMax_,
             tr("Depths (functions applied) of the training examples; batches are drawn fresh, balanced "
                "over these depths (paper: 1-5)."));
    validEnabled_ = new QCheckBox(tr("valid depths"));
    validEnabled_->setObjectName("task.validEnabled");
    depthRow(validEnabled_, "valid", validMin_, validMax_,
             tr("Held-out depths for model selection: the reported test accuracy is the one at the "
                "evaluation with the best validation accuracy (paper: 6-8). Untick for no validation "
                "split."));
    connect(validEnabled_, &QCheckBox::toggled, this, &ExperimentPanel::onValidToggled);
    depthRow(new QLabel(tr("test depths")), "test", testMin_, testMax_,
             tr("Held-out longer depths that measure length generalisation (paper: 9-10)."));

    order_ = makeComboField(
        {{tr("forward"), int(ndr::Order::Forward)}, {tr("backward"), int(ndr::Order::Backward)}});
    add(tr("order"), "task.order", order_,
        tr("forward: x f1 f2 ... fd, e.g. 101 b d h means h(d(b(101))).\n"
           "backward: fd ... f2 f1 x, e.g. h d b 101."));
    taskSeed_ = makeSeed();
    add(tr("seed"), "task.seed", taskSeed_,
        tr("Seed of the function tables and the held-out evaluation sets."));
    evalExamples_ = makeIntField(1, 100000, 100);
    add(tr("eval examples"), "task.evalExamplesPerDepth", evalExamples_,
        tr("Held-out examples per depth (all distinct cases when a depth has fewer)."));

    for (QSpinBox* s : {symbols_, functions_, trainMin_, trainMax_, validMin_, validMax_, testMin_, testMax_,
                        evalExamples_})
        connect(s, &QSpinBox::valueChanged, this, &ExperimentPanel::onFieldEdited);
    connect(order_, &QComboBox::currentIndexChanged, this, &ExperimentPanel::onFieldEdited);
    connect(taskSeed_, &QLineEdit::textChanged, this, &ExperimentPanel::onFieldEdited);
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
        tr("AdamW learning rate, constant; used by every model without its own rate (paper: 1.5e-4)."));
    weightDecay_ = makeRealField(0, 1, 1e-3, true);
    add(tr("weight decay"), "train.weightDecay", weightDecay_,
        tr("AdamW's decoupled weight decay on all parameters (paper: 0.01)."));
    gradClip_ = makeRealField(0, 1000, 0.5, false);
    gradClip_->setSpecialValueText(tr("off"));
    add(tr("grad clip"), "train.gradClip", gradClip_,
        tr("Global gradient-norm clipping threshold (CTL: 5); off disables clipping."));
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
        tr("CPU threads used by each model; the models train at the same time."));

    for (QSpinBox* s : {batch_, steps_, evalInterval_, threads_})
        connect(s, &QSpinBox::valueChanged, this, &ExperimentPanel::onFieldEdited);
    for (RealSpinBox* s : {learningRate_, weightDecay_, gradClip_})
        connect(s, &QDoubleSpinBox::valueChanged, this, &ExperimentPanel::onFieldEdited);
    connect(trainSeed_, &QLineEdit::textChanged, this, &ExperimentPanel::onFieldEdited);
    return box;
}

ndr::RunConfig ExperimentPanel::config() const {
    ndr::RunConfig c;
    c.preset = preset_->currentText().toStdString();
    ndr::TaskConfig& t = c.task;
    t.symbols = symbols_->value();
    t.functions = functions_->value();
    t.trainMinDepth = trainMin_->value();
    t.trainMaxDepth = trainMax_->value();
    t.validMinDepth = validMin_->value();
    t.validMaxDepth = validMax_->value();
    // An empty range (min > max) is how the config says "no validation split".
    if (!validEnabled_->isChecked() && t.validMinDepth <= t.validMaxDepth)
        t.validMaxDepth = t.validMinDepth - 1;
    t.testMinDepth = testMin_->value();
    t.testMaxDepth = testMax_->value();
    t.order = ndr::Order(order_->currentData().toInt());
    parseSeed(taskSeed_, &t.seed);
    t.evalExamplesPerDepth = evalExamples_->value();

    c.models = models_->models();

    ndr::TrainConfig& r = c.train;
    r.batchSize = batch_->value();
    r.learningRate = learningRate_->value();
    r.weightDecay = weightDecay_->value();
    r.gradClip = gradClip_->value();
    r.steps = steps_->value();
    r.evalInterval = evalInterval_->value();
    parseSeed(trainSeed_, &r.seed);
    r.threads = threads_->value();
    return c;
}

void ExperimentPanel::setConfig(const ndr::RunConfig& config) {
    const bool wasFilling = std::exchange(filling_, true);
    QString preset = kCustom;
    for (const std::string& name : ndr::presetNames())
        if (config.preset == name && config == ndr::presetConfig(name))
            preset = QString::fromStdString(name);
    preset_->setCurrentText(preset);
    fillFields(config);
    filling_ = wasFilling;
    revalidate();
    save();
    emit configChanged();
}

void ExperimentPanel::fillFields(const ndr::RunConfig& c) {
    const bool wasFilling = std::exchange(filling_, true);
    const ndr::TaskConfig& t = c.task;
    symbols_->setValue(t.symbols);
    functions_->setValue(t.functions);
    trainMin_->setValue(t.trainMinDepth);
    trainMax_->setValue(t.trainMaxDepth);
    validMin_->setValue(t.validMinDepth);
    validMax_->setValue(t.validMaxDepth);
    validEnabled_->setChecked(t.validMinDepth <= t.validMaxDepth);
    onValidToggled(validEnabled_->isChecked());
    testMin_->setValue(t.testMinDepth);
    testMax_->setValue(t.testMaxDepth);
    selectData(order_, int(t.order));
    taskSeed_->setText(QString::number(t.seed));
    evalExamples_->setValue(t.evalExamplesPerDepth);

    models_->setModels(c.models);

    const ndr::TrainConfig& r = c.train;
    batch_->setValue(r.batchSize);
    learningRate_->setValue(r.learningRate);
    weightDecay_->setValue(r.weightDecay);
    gradClip_->setValue(r.gradClip);
    steps_->setValue(r.steps);
    evalInterval_->setValue(r.evalInterval);
    trainSeed_->setText(QString::number(r.seed));
    threads_->setValue(r.threads);
    filling_ = wasFilling;
}

void ExperimentPanel::onPresetChosen(int index) {
    if (filling_)
        return;
    const QString name = preset_->itemText(index);
    if (name != kCustom) {
        const bool wasFilling = std::exchange(filling_, true);
        fillFields(ndr::presetConfig(name.toStdString()));
        filling_ = wasFilling;
    }
    revalidate();
    save();
    emit configChanged();
}

void ExperimentPanel::onFieldEdited() {
    if (filling_)
        return;
    if (preset_->currentText() != kCustom) {
        const QSignalBlocker block(preset_);
        preset_->setCurrentText(kCustom);
    }
    revalidate();
    save();
    emit configChanged();
}

void ExperimentPanel::onValidToggled(bool on) {
    validMin_->setEnabled(on);
    validMax_->setEnabled(on);
    if (filling_)
        return;
    // Ticking the box over an empty range: start from one depth rather than an error.
    if (on && validMin_->value() > validMax_->value()) {
        const bool wasFilling = std::exchange(filling_, true);
        validMax_->setValue(validMin_->value());
        filling_ = wasFilling;
    }
    onFieldEdited();
}

void ExperimentPanel::revalidate() {
    const ndr::RunConfig c = config();
    QStringList list;
    for (const std::string& m : ndr::validate(c))
        list << QString::fromStdString(m);
    // What the fields cannot express in a RunConfig, so the core never sees it.
    uint64_t seed = 0;
    const QString seedRange = tr("must be a whole number from 0 to %1").arg(UINT64_MAX);
    if (!parseSeed(taskSeed_, &seed))
        list << "task.seed: " + seedRange;
    if (!parseSeed(trainSeed_, &seed))
        list << "train.seed: " + seedRange;
    if (validEnabled_->isChecked() && validMin_->value() > validMax_->value())
        list << tr("task.validMaxDepth: must be at least task.validMinDepth (%1), got %2; untick 'valid "
                   "depths' for no validation split")
                    .arg(validMin_->value())
                    .arg(validMax_->value());
    problems_ = list;

    notes_.clear();
    models_->clearProblems();
    QStringList unplaced;
    for (const QString& message : std::as_const(problems_)) {
        QString field, what;
        splitProblem(message, &field, &what);
        if (field.isEmpty() || !(notes_.show(field, what) || models_->showProblem(field, what)))
            unplaced << message;
    }

    if (problems_.isEmpty()) {
        controls_->setSummary(
            c.models.size() == 1
                ? tr("Ready: 1 model, %1 steps.").arg(c.train.steps)
                : tr("Ready: %1 models, %2 steps each.").arg(c.models.size()).arg(c.train.steps),
            false);
    } else {
        QString text =
            problems_.size() == 1
                ? tr("1 problem, marked in red under its field; Start is disabled until it is fixed.")
                : tr("%1 problems, marked in red under the fields; Start is disabled until they "
                     "are fixed.")
                      .arg(problems_.size());
        for (const QString& m : std::as_const(unplaced))
            text += "\n" + m;
        controls_->setSummary(text, true);
    }
    updateButtons();
    QStringList names;
    for (const ndr::ModelConfig& m : c.models)
        names << QString::fromStdString(m.name);
    controls_->setModels(names, c.train.steps);
}

void ExperimentPanel::setState(RunState state) {
    const bool wasIdle = state_ == RunState::Idle;
    state_ = state;
    fields_->setEnabled(state == RunState::Idle);
    updateButtons();
    if (state == RunState::Training)
        controls_->setSummary(tr("Training: the fields are locked until it stops."), false);
    else if (state == RunState::Paused)
        controls_->setSummary(tr("Paused: Resume goes on, Stop ends the training."), false);
    else if (!wasIdle) {
        revalidate(); // the Ready line (or the problems) again
        // Locking the fields took the focus from Start or Stop; give it back to Start rather than to
        // whichever field Qt picks first.
        controls_->focusStart();
    }
}

void ExperimentPanel::updateButtons() {
    controls_->setButtons(state_ != RunState::Idle, state_ == RunState::Paused, problems_.isEmpty());
}

void ExperimentPanel::onStart() {
    if (state_ != RunState::Idle || !problems_.isEmpty())
        return;
    const ndr::RunConfig c = config();
    controls_->resetProgress();
    save();
    writeSettings(); // a run was started with these: remember them now
    emit startRequested(c);
}

void ExperimentPanel::onPauseResume() {
    if (state_ == RunState::Training)
        emit pauseRequested();
    else if (state_ == RunState::Paused)
        emit resumeRequested();
}

void ExperimentPanel::setModelProgress(int model, int step, int totalSteps, double stepsPerSecond,
                                       double etaSeconds, const ndr::ModelStatus& status) {
    controls_->setModelProgress(model, step, totalSteps, stepsPerSecond, etaSeconds, status);
}

void ExperimentPanel::save() {
    if (!remember_ || !problems_.isEmpty())
        return;
    pendingSave_ = QString::fromStdString(nlohmann::json(config()).dump());
    saveTimer_->start();
}

void ExperimentPanel::writeSettings() {
    if (pendingSave_.isEmpty())
        return;
    QSettings(kSettingsOrganisation, kSettingsApplication).setValue(kSettingsKey, pendingSave_);
    pendingSave_.clear();
}

bool ExperimentPanel::restore() {
    const QString text =
        QSettings(kSettingsOrganisation, kSettingsApplication).value(kSettingsKey).toString();
    if (text.isEmpty())
        return false;
    try {
        const ndr::RunConfig c = nlohmann::json::parse(text.toStdString()).get<ndr::RunConfig>();
        if (!ndr::validate(c).empty())
            return false;
        setConfig(c);
        return problems_.isEmpty();
    } catch (const std::exception&) {
        return false; // an old or damaged entry: start from the default instead
    }
}

} // namespace ndrui
