// The live dashboard: the five views of a run (learning curves, per-depth bars, length
// generalisation, attention maps, copy-gate map) laid out together, with head usage and steps used
// below them for a run whose models route heads or halt, and a history slider over the
// run's evaluations. It draws whatever run record it is given, so the window (live), opened runs and
// the headless export all draw the same way.
#pragma once

#include "core/records/records.h"

#include <QImage>
#include <QWidget>
#include <utility>
#include <vector>

class QLabel;
class QPainter;
class QPushButton;
class QSlider;
class QSplitter;
class QStackedWidget;

namespace ndrui {

class PlotView;
class LearningCurvesView;
class DepthBarsView;
class LengthGeneralisationView;
class AttentionGridView;
class GateMapView;
class HeadUsageView;
class StepsUsedView;
class OperationAccuracyView;

class Dashboard : public QWidget {
    Q_OBJECT

public:
    explicit Dashboard(QWidget* parent = nullptr);

    // Draws `record`. With uptoEval >= 0 only evaluations 0..uptoEval of each model count (and the
    // loss up to that step): one frame of the training's history. Without, the curves show all of it
    // and the per-evaluation views (depth bars, attention maps, gate map) the evaluation the history
    // slider is on: the latest while it is live. A live call keeps `record` (not a copy) for the slider
    // to redraw from: it must stay alive until the next live call or clear().
    void showRecord(const ndr::RunRecord& record, int uptoEval = -1);
    // The history slider: the evaluation shown (an index into the longest history), or -1 for live
    // (the latest, following training).
    void selectEvaluation(int index);
    int selectedEvaluation() const { return selected_; }
    void clear();
    // The number of frames showRecord can draw: the longest history of any model.
    static int evaluationCount(const ndr::RunRecord& record);

    // Each view with a name fit for a file ("learning-curves"), in display order.
    std::vector<std::pair<QString, PlotView*>> views() const;
    // The whole dashboard drawn at `size` with `painter` (each view laid out as on screen, scaled to
    // fit), on any device; renderAll into an image.
    void paintAll(QPainter& painter, QSize size);
    QImage renderAll(QSize size);

    LearningCurvesView& learningCurves() { return *curves_; }
    DepthBarsView& depthBars() { return *bars_; }
    LengthGeneralisationView& lengthGeneralisation() { return *length_; }
    AttentionGridView& attention() { return *attention_; }
    GateMapView& gates() { return *gates_; }
    // The gate map shows the change per step (true) or the copy gates (false, the default).
    void showChangeMap(bool change);
    // Shown (in a third row) only for runs with head routing, gate halting, or a task with operations.
    HeadUsageView& headUsage() { return *headUsage_; }
    StepsUsedView& stepsUsed() { return *stepsUsed_; }
    OperationAccuracyView& operationAccuracy() { return *operations_; }
    // The step the shown probe traces and per-depth bars come from ("" when nothing is shown).
    QString caption() const { return caption_; }

signals:
    void captionChanged(const QString& caption);

protected:
    void showEvent(QShowEvent* event) override;

private:
    void draw(const ndr::RunRecord& record, int uptoEval, int selected);
    void clearViews(); // the views only, not the history slider
    void updateSlider(int evaluations);

    LearningCurvesView* curves_;
    DepthBarsView* bars_;
    LengthGeneralisationView* length_;
    AttentionGridView* attention_;
    GateMapView* gates_;
    HeadUsageView* headUsage_;
    StepsUsedView* stepsUsed_;
    OperationAccuracyView* operations_;
    QSplitter* rows_;
    QStackedWidget* pages_; // the hint before any run, the views after
    QSplitter* top_;
    QSplitter* bottom_;
    QSplitter* routing_; // head usage, steps used and accuracy per operation
    QSlider* history_;
    QPushButton* live_;
    QLabel* historyCaption_;
    const ndr::RunRecord* record_ = nullptr; // what the last live call showed, for the slider to redraw
    int selected_ = -1;
    bool framesFixed_ = false; // the curves' axes are fixed to the whole run (drawing frames)
    bool sized_ = false;
    QString caption_;
    quint64 shownShape_ = 0; // which run's depths and model names the views are set up for
};

} // namespace ndrui
