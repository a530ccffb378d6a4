// The inspector tab: type an expression (or draw a random one), see the true answer and intermediates,
// each model's answer and distribution, and step through attention and gates of every model side by
// side; run NDR for more steps than trained, see when its gates close, export the steps as frames.
#pragma once

#include "core/task/task.h"
#include "core/train/halting.h"
#include "ui/export/exporter.h"
#include "ui/inspector/model_step_view.h"
#include "ui/training/snapshot.h"

#include <QImage>
#include <QStringList>
#include <QWidget>
#include <optional>
#include <vector>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QHBoxLayout;
class QLabel;
class QPainter;
class QPushButton;
class QSlider;
class QSpinBox;
class QStackedWidget;
class QTableWidget;
class QTimer;

namespace ndrui {

class ExpressionInput;
class ModelStepView;
class StepCountBox;
class StepsNeededPanel;
class TrainingSession;

class Inspector : public QWidget {
    Q_OBJECT

public:
    explicit Inspector(TrainingSession& session, QWidget* parent = nullptr);
    ~Inspector() override;

    // Every step 0..n of the current traces (both models' heatmaps and gate strips at step t under a
    // caption), each `size` pixels; empty when nothing is traced.
    std::vector<QImage> stepFrames(QSize size);
    // Step `step` of the current traces drawn at `size` with `p`, on any device (see figure.h).
    void paintStep(QPainter& p, QSize size, int step);
    // Whether there is a traced expression to draw.
    bool hasFrames() const;
    // Writes step-00, step-01, ... in each of the options' formats and style, and inspector.gif, into
    // `folder` (created if missing). Refuses, writing nothing, when one of them exists and overwriting
    // is off, or the folder is a run's that another process trains; `error` then says why.
    bool exportFrames(const QString& folder, const ExportOptions& options, QString* error);
    // PNG frames and the GIF, in the app's colours.
    bool exportFrames(const QString& folder, QString* error, bool overwrite = false);
    static constexpr QSize kFrameSize{1200, 720};

    // State, for the window and tests.
    quint64 pendingRequest() const { return requestId_; } // latest trace request, 0 if none
    bool tracesComplete() const;                          // every model answered the latest request
    const ndr::Trace* trace(int model) const;             // null while missing or failed
    // The same trace, shared with its result: views keep it alive past a new request.
    std::shared_ptr<const ndr::Trace> sharedTrace(int model) const;
    int modelCount() const { return int(views_.size()); }
    ModelStepView* modelView(int model) const;
    int step() const;
    int maxStep() const;
    void setStep(int step);
    // Traces the shown expression again with the models' latest weights, as each evaluation of a
    // training run does; the picture shown stays until the answers arrive.
    void retrace();
    // Heatmaps, routing lines of the step, or routing lines of every step (the "Show" box).
    void setPicture(StepPicture picture);
    StepPicture picture() const;
    QString cellInfo() const;
    // The halting step of a model's current trace (see halting.h) by the rule it halts by: the chosen
    // one, or its own for a model with learned halting (UT + ACT); -1 without the signal or trace.
    int haltingStepOf(int model) const;
    ndr::HaltingRule haltingRuleOf(int model) const;
    // One line per model whose trace runs fewer steps than the expression needs to be routed one
    // function per step (ndr::stepsBelowDepth); shown beside the answers.
    QStringList routingNotes() const;
    // The notes of routingNotes() as the one sentence shown under the true answer (empty without notes).
    QString shortRoutingNote() const;
    ExpressionInput* input() const { return input_; }
    StepsNeededPanel* stepsNeeded() const { return stepsNeeded_; }

signals:
    void tracesReady(); // every model answered the latest request

protected:
    // Refits the tables: filled while the tab was in the back, they were measured without their width.
    void showEvent(QShowEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;
    // The tables name the models in their colours: drawn again in another colour scheme.
    void changeEvent(QEvent* event) override;

private:
    void keepFitted(QTableWidget* table);
    void resetRun();
    void onExampleChanged();
    void onTraced(const TraceResultPtr& r);
    void showTraces();
    void showStep();
    // What a clicked cell of a model's view is: an attention weight, a gate or a position's change.
    enum class CellKind { Attention, Gate, Change };
    void showCell(int model, int step, int target, int source, double value, CellKind kind);
    void clearCell();
    void togglePlay();
    void tick();
    // Tables (inspectortables.cpp).
    void fillTokens();
    void highlightTokens(int target, int source);
    void fillAnswers();
    void fillReadout();
    void markReadoutStep();
    // The row above the answers: halt or not, on what (gates or change), below what; wired to the
    // tables and steps needed (inspector_halting.cpp).
    QHBoxLayout* makeHaltingRow(QWidget* content);
    // What halting reads and below what (the controls above the answers).
    ndr::HaltingRule haltingRule() const;
    void haltingChanged(); // the rule or the threshold changed: the tables and steps needed follow
    QString changeThresholdTip() const;
    bool halting() const;
    // Sets the threshold from the run unless the user has set one for this run: the haltThreshold of the
    // first model that halts at evaluation, else ndr::suggestedHaltingThreshold of the latest probe
    // trace of the first gated model.
    void suggestThreshold();
    // On opening a run: the signal (and, for the change, the threshold) of the first model that halts
    // at evaluation, so the inspector halts as it does; the signal stays as it was when none halts.
    void adoptRunHalting();
    void setGateThreshold(double value, const QString& tip); // shown at once while the gates are chosen

    TrainingSession& session_;
    std::optional<ndr::Example> example_;
    quint64 requestId_ = 0;
    std::vector<TraceResultPtr> results_; // (models) answers to requestId_
    std::vector<ModelStepView*> views_;

    QStackedWidget* pages_;
    QLabel* hint_;
    ExpressionInput* input_;
    QLabel* truth_;
    QLabel* status_;
    QTableWidget* tokens_;
    QTableWidget* answers_;
    QTableWidget* distribution_ = nullptr;
    QTableWidget* readout_;
    QSlider* slider_;
    QLabel* stepLabel_;
    QPushButton* play_;
    QComboBox* speed_;
    QComboBox* head_;
    QComboBox* picture_;
    StepCountBox* steps_;
    QCheckBox* halt_;
    QComboBox* haltSignal_; // what halting reads: the gates or the change per step
    QDoubleSpinBox* threshold_;
    bool thresholdChosen_ = false; // the user set the gates' threshold for this run
    // Each signal's threshold while the other is shown: the gates' (suggested from the run) and the
    // change's (a fifth of a column's length by default).
    double gateThreshold_ = 0.1, changeThreshold_ = 0.2;
    QString gateThresholdTip_; // the gates' threshold's tooltip (how it was suggested)
    QLabel* cell_;
    QHBoxLayout* viewsRow_;
    QTimer* requestTimer_;
    QTimer* playTimer_;
    StepsNeededPanel* stepsNeeded_;
};

} // namespace ndrui
