// The experiment panel (see experimentpanel.h). The core's validate() decides what is valid; the spin
// box ranges only keep typing sane, so every problem the core can report stays reachable and visible.
#include "ui/panel/experiment_panel.h"

#include "core/config/task_kinds.h"
#include "core/io/serialize.h"
#include "core/task/multidigit_task.h"
#include "ui/panel/depth_spin_box.h"
#include "ui/panel/form_fields.h"
#include "ui/panel/models_group.h"
#include "ui/panel/real_spin_box.h"
#include "ui/panel/run_controls.h"

#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpressionValidator>
#include <QScrollArea>
#include <QScrollBar>
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

const char* const kSettingsKey = "experiment/config";
// The widest the fields make the panel (pixels): two model columns fit; more scroll sideways.
constexpr int kWidestPanel = 420;

const char* const kSettingsOrganisation = "NDR Studio";
const char* const kSettingsApplication = "ndr-studio";

// True when `c` is preset `name` trained from other seeds, as `ndr train --preset NAME --seed N` makes it:
// the seeds are not part of a preset.
bool isPresetWithAnySeeds(const ndr::RunConfig& c, const std::string& name) {
    ndr::RunConfig p = ndr::presetConfig(name);
    p.task.seed = c.task.seed;
    p.train.seed = c.train.seed;
    return c == p;
}

bool parseSeed(const QLineEdit* e, uint64_t* seed) {
    bool ok = false;
    *seed = e->text().toULongLong(&ok);
    return ok;
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
    // As wide as the fields want up to two model columns' worth, so a squeezed column never cuts names
    // and values off; with three or four models the fields scroll sideways instead of widening the
    // window past a laptop's screen. Refitted when the fields change (a model column added or removed).
    fitScroll_ = [scroll, this] {
        const int wanted = fields_->layout()->sizeHint().width();
        fields_->setMinimumWidth(wanted); // scrolled, not squeezed
        scroll->setMinimumWidth(std::min(wanted, kWidestPanel) +
                                scroll->verticalScrollBar()->sizeHint().width());
    };
    fields_->installEventFilter(this);
    fitScroll_();
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

bool ExperimentPanel::eventFilter(QObject* watched, QEvent* event) {
    if (watched == fields_ && event->type() == QEvent::LayoutRequest)
        fitScroll_();
    return QWidget::eventFilter(watched, event);
}

ExperimentPanel::~ExperimentPanel() {
    writeSettings();
}

ndr::RunConfig ExperimentPanel::config() const {
    ndr::RunConfig c;
    c.preset = preset_->currentText().toStdString();
    ndr::TaskConfig& t = c.task;
    t.kind = ndr::TaskKind(taskKind_->currentData().toInt());
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
    if (ndr::factsOf(t.kind).operations) {
        t.operations.clear();
        for (const QString& op : operations_->text().split(' ', Qt::SkipEmptyParts))
            t.operations.push_back(op.toUpper().toStdString());
    }

    c.models = models_->models();

    ndr::TrainConfig& r = c.train;
    r = filledTrain_;
    r.batchSize = batch_->value();
    r.learningRate = learningRate_->value();
    r.weightDecay = weightDecay_->value();
    r.gradClip = gradClip_->value();
    r.lrDecaySteps = lrDecaySteps_->value();
    r.lrDecayFactor = lrDecayFactor_->value();
    r.warmupSteps = warmupSteps_->value();
    r.cosineDecay = cosineDecay_->isChecked();
    r.steps = steps_->value();
    r.evalInterval = evalInterval_->value();
    parseSeed(trainSeed_, &r.seed);
    r.threads = threads_->value();
    return c;
}

void ExperimentPanel::setConfig(const ndr::RunConfig& config) {
    const bool wasFilling = std::exchange(filling_, true);
    QString preset = kCustomPreset;
    for (const std::string& name : ndr::presetNames())
        if (isPresetWithAnySeeds(config, name))
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
    selectData(taskKind_, int(t.kind));
    onTaskKindChanged();
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
    QStringList operations;
    for (const std::string& op : t.operations)
        operations << QString::fromStdString(op);
    operations_->setText(operations.join(' '));

    models_->setModels(c.models);

    const ndr::TrainConfig& r = c.train;
    filledTrain_ = r;
    batch_->setValue(r.batchSize);
    learningRate_->setValue(r.learningRate);
    weightDecay_->setValue(r.weightDecay);
    gradClip_->setValue(r.gradClip);
    lrDecaySteps_->setValue(r.lrDecaySteps);
    lrDecayFactor_->setValue(r.lrDecayFactor);
    warmupSteps_->setValue(r.warmupSteps);
    cosineDecay_->setChecked(r.cosineDecay);
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
    if (name != kCustomPreset) {
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
    // An edit that leaves every field but the seeds as the preset has it keeps the preset.
    if (preset_->currentText() != kCustomPreset &&
        !isPresetWithAnySeeds(config(), preset_->currentText().toStdString())) {
        const QSignalBlocker block(preset_);
        preset_->setCurrentText(kCustomPreset);
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

void ExperimentPanel::onTaskKindChanged() {
    const auto kind = ndr::TaskKind(taskKind_->currentData().toInt());
    const ndr::TaskKindFacts& facts = ndr::factsOf(kind);
    // A field another task has no use for is disabled (it does not count) and its row hidden. An
    // editor's parent is its row's field: the editor with its note.
    auto applies = [this](QWidget* editor, bool on) {
        editor->setEnabled(on);
        taskForm_->setRowVisible(editor->parentWidget(), on);
    };
    for (QWidget* w : std::initializer_list<QWidget*>{symbols_, functions_, order_})
        applies(w, facts.tables);
    applies(operations_, facts.operations);
    // Depths that are problem sizes are shown by name in the fields.
    ndr::TaskConfig ofKind;
    ofKind.kind = kind;
    const bool sizes = ndr::depthsAreSizes(ofKind);
    QStringList names;
    if (sizes)
        for (int d = 1; d <= ndr::MultiDigitTask::kindCount(); ++d)
            names << QString::fromStdString(ndr::depthLabel(ofKind, d));
    for (DepthSpinBox* field : {trainMin_, trainMax_, validMin_, validMax_, testMin_, testMax_})
        field->setNames(names);
    trainLabel_->setText(sizes ? tr("train sizes") : tr("train depths"));
    validEnabled_->setText(sizes ? tr("valid sizes") : tr("valid depths"));
    testLabel_->setText(sizes ? tr("test sizes") : tr("test depths"));
    onFieldEdited();
}

void ExperimentPanel::revalidate() {
    const ndr::RunConfig c = config();
    std::vector<ndr::Problem> list = ndr::validate(c);
    // What the fields cannot express in a RunConfig, so the core never sees it.
    uint64_t seed = 0;
    const std::string seedRange = tr("must be a whole number from 0 to %1").arg(UINT64_MAX).toStdString();
    if (!parseSeed(taskSeed_, &seed))
        list.push_back({"task.seed", seedRange});
    if (!parseSeed(trainSeed_, &seed))
        list.push_back({"train.seed", seedRange});
    if (validEnabled_->isChecked() && validMin_->value() > validMax_->value())
        list.push_back(
            {"task.validMaxDepth", tr("must be at least task.validMinDepth (%1), got %2; untick '%3' "
                                      "for no validation split")
                                       .arg(validMin_->text(), validMax_->text(), validEnabled_->text())
                                       .toStdString()});
    problems_.clear();
    notes_.clear();
    models_->clearProblems();
    QStringList unplaced;
    for (const ndr::Problem& p : list) {
        const QString field = QString::fromStdString(p.field), what = QString::fromStdString(p.message);
        problems_ << QString::fromStdString(p.text());
        if (!(notes_.show(field, what) || models_->showProblem(field, what)))
            unplaced << problems_.back();
    }

    if (problems_.isEmpty()) {
        const QString steps = c.train.steps == 1 ? tr("1 step") : tr("%1 steps").arg(c.train.steps);
        controls_->setSummary(c.models.size() == 1
                                  ? tr("Ready: 1 model, %1.").arg(steps)
                                  : tr("Ready: %1 models, %2 each.").arg(c.models.size()).arg(steps),
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

QList<QAction*> ExperimentPanel::runActions() const {
    return controls_->runActions();
}

void ExperimentPanel::updateButtons() {
    controls_->setButtons(state_ != RunState::Idle, state_ == RunState::Paused, problems_.isEmpty());
}

void ExperimentPanel::onStart() {
    if (state_ != RunState::Idle || !problems_.isEmpty())
        return;
    const ndr::RunConfig c = config();
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
                                       double etaSeconds, const ndr::ModelStatus& status, double evaluating) {
    controls_->setModelProgress(model, step, totalSteps, stepsPerSecond, etaSeconds, status, evaluating);
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
