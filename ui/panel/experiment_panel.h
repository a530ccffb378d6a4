// The experiment panel (left dock): preset, task, models and training settings, validated by the core
// on every change, with Start / Pause-Resume / Stop and one progress bar per model.
#pragma once

#include "core/config/config.h"
#include "core/records/records.h"
#include "ui/panel/field_notes.h"

#include <QMetaType>
#include <QStringList>
#include <QWidget>
#include <functional>

class QAction;
class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QLineEdit;
class QSpinBox;
class QTimer;

namespace ndrui {

class DepthSpinBox;
class ModelsGroup;
class RealSpinBox;
class RunControls;

class ExperimentPanel : public QWidget {
    Q_OBJECT
public:
    // The preset picker's entry for a configuration that is no preset.
    static constexpr const char* kCustomPreset = "custom";

    enum class RunState { Idle, Training, Paused };

    // With rememberSettings the panel starts from the last-used configuration (QSettings "NDR Studio" /
    // "ndr-studio", key "experiment/config") when it is present and valid, and saves every valid change;
    // tests pass false. Without a remembered configuration it starts from the "stub" preset.
    explicit ExperimentPanel(QWidget* parent = nullptr, bool rememberSettings = true);
    ~ExperimentPanel() override; // writes a remembered configuration that is still pending

    // What the fields say. `preset` is the preset combo's text ("custom" once a field was edited).
    ndr::RunConfig config() const;
    // Fills every field (used when a run is opened). The preset combo shows the config's preset only when
    // the config is exactly that preset, else "custom".
    void setConfig(const ndr::RunConfig& config);
    // The current validation messages, each starting with the field it names; empty when valid.
    QStringList problems() const { return problems_; }

    // Idle: fields editable, Start enabled when valid. Training / Paused: fields locked, the toggling
    // button reads Pause / Resume, Stop enabled. The owner calls this; the buttons only send requests.
    void setState(RunState state);
    RunState state() const { return state_; }
    // Progress of model `model`: "NDR  1200/6000  105 steps/s  ETA 0:46" while it trains, otherwise the
    // status ("finished", "stopped", "diverged: ...") in place of speed and ETA; during an evaluation
    // "evaluating 40%" (`evaluating`: the part done, -1 when none is under way).
    void setModelProgress(int model, int step, int totalSteps, double stepsPerSecond, double etaSeconds,
                          const ndr::ModelStatus& status, double evaluating = -1);
    // Start, Pause/Resume and Stop with their keyboard shortcuts, for the window's menu: each does what
    // its button does, when its button could be clicked.
    QList<QAction*> runActions() const;

signals:
    void startRequested(const ndr::RunConfig& config);
    void pauseRequested();
    void resumeRequested();
    void stopRequested();
    // Any field changed (also when a preset or setConfig filled them).
    void configChanged();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    QWidget* buildPresetRow();
    QWidget* buildTaskGroup();
    QWidget* buildTrainGroup();

    void fillFields(const ndr::RunConfig& config);
    void onPresetChosen(int index);
    void onFieldEdited();
    void onValidToggled(bool on);
    // Symbols, functions and order belong to table lookup: disabled for the other tasks.
    void onTaskKindChanged();
    void onStart();
    void onPauseResume();
    // Runs ndr::validate, places each message under its field, updates the summary and Start.
    void revalidate();
    void updateButtons();
    // Remembers the configuration when it is valid; written shortly after, not on every keystroke.
    void save();
    void writeSettings();
    bool restore();

    bool remember_;
    bool filling_ = false; // fields are being filled from a config: not a user edit
    RunState state_ = RunState::Idle;
    QStringList problems_;
    FieldNotes notes_;
    QTimer* saveTimer_ = nullptr;
    QString pendingSave_; // JSON of the last valid configuration not yet written

    std::function<void()> fitScroll_; // the fields' scroll area as wide as the fields want
    QWidget* fields_ = nullptr;       // everything that locks while a run is going
    QComboBox* preset_ = nullptr;
    // Task
    QComboBox* taskKind_ = nullptr;
    QFormLayout* taskForm_ = nullptr; // the task's rows: those another task has no use for are hidden
    QSpinBox* symbols_ = nullptr;
    QSpinBox* functions_ = nullptr;
    // The depth fields name the multi-digit task's depths (its problem sizes), and their rows say sizes.
    QLabel* trainLabel_ = nullptr;
    DepthSpinBox* trainMin_ = nullptr;
    DepthSpinBox* trainMax_ = nullptr;
    QCheckBox* validEnabled_ = nullptr;
    DepthSpinBox* validMin_ = nullptr;
    DepthSpinBox* validMax_ = nullptr;
    QLabel* testLabel_ = nullptr;
    DepthSpinBox* testMin_ = nullptr;
    DepthSpinBox* testMax_ = nullptr;
    QComboBox* order_ = nullptr;
    QLineEdit* operations_ = nullptr; // ListOps only: its operations, separated by spaces
    QLineEdit* taskSeed_ = nullptr;
    QSpinBox* evalExamples_ = nullptr;
    // Models
    ModelsGroup* models_ = nullptr;
    // Training
    QSpinBox* batch_ = nullptr;
    RealSpinBox* learningRate_ = nullptr;
    RealSpinBox* weightDecay_ = nullptr;
    RealSpinBox* gradClip_ = nullptr;
    QSpinBox* lrDecaySteps_ = nullptr;
    RealSpinBox* lrDecayFactor_ = nullptr;
    QSpinBox* warmupSteps_ = nullptr;
    QCheckBox* cosineDecay_ = nullptr;
    QSpinBox* steps_ = nullptr;
    QSpinBox* evalInterval_ = nullptr;
    QLineEdit* trainSeed_ = nullptr;
    QSpinBox* threads_ = nullptr;
    // The training settings as the last preset or config filled them: config() keeps those without a
    // field (early stopping) instead of resetting them to their defaults.
    ndr::TrainConfig filledTrain_;
    RunControls* controls_ = nullptr;
};

} // namespace ndrui

Q_DECLARE_METATYPE(ndr::RunConfig)
