// One model's column in the inspector: its attention heatmap (target rows x source columns) and a
// strip over positions at the chosen step (its gates, and how far the step moved each position's
// state), with the dashboard's heatmap look, or its routing lines; with head routing, the weight each
// token gave each head at that step; for ThoughtNet, the weight each token gave each operator (the zero
// operator first) and the learned operators' total as its gate row; for a recurrent model, which has
// none of these, a note on what its steps are.
#pragma once

#include "core/records/records.h"

#include <QImage>
#include <QWidget>
#include <vector>

class QLabel;
class QPainter;

namespace ndrui {

class HeatmapPlot;
class RoutingView;

// How the inspector pictures a step's attention: a heatmap, routing lines of the step, or routing lines
// of every step stacked (see routing_view.h).
enum class StepPicture { Heatmap, Lines, AllSteps };

// Attention of `step` (1..steps) as a (T, T) row-major matrix, [target][source]: one head, or the mean
// over heads when head < 0. Zeros for step 0 (the embeddings: no layer has attended yet).
std::vector<float> attentionAt(const ndr::Trace& trace, int step, int head);
// Mean gates of `step` (1..steps) over positions (T); zeros for step 0 or a trace without gates.
std::vector<float> gatesAt(const ndr::Trace& trace, int step);
// How far `step` (1..steps) moved each position's state (Trace::change), over positions (T); zeros for
// step 0 or a trace without the record.
std::vector<float> changeAt(const ndr::Trace& trace, int step);
// Head routing weights of `step` (1..steps) as a (H, T) row-major matrix, [head][position]; zeros for
// step 0 or a trace without head routing.
std::vector<float> routingAt(const ndr::Trace& trace, int step);
// ThoughtNet's operator selection at `step` (1..steps) as a (K + 1, T) row-major matrix,
// [operator][position], the zero operator first; zeros for step 0 or a trace without a selector.
std::vector<float> selectionAt(const ndr::Trace& trace, int step);

class ModelStepView : public QWidget {
    Q_OBJECT

public:
    ModelStepView(int model, const QString& name, QWidget* parent = nullptr);

    int model() const { return model_; }
    // The trace to show, or none with `note` saying why. The view shares it, so a picture already shown
    // stays drawable while the inspector waits for the next trace.
    void setTrace(std::shared_ptr<const ndr::Trace> trace, const QString& note = {});
    // The training step of the weights that made the trace, named in the title (-1: not named).
    void setWeightsStep(int step);
    const ndr::Trace* trace() const { return trace_.get(); }
    // The step shown, 0..steps; beyond this model's steps its last step is shown.
    void setStep(int step);
    // One head, or the mean over heads when head < 0.
    void setHead(int head);
    void setPicture(StepPicture picture);
    StepPicture picture() const { return picture_; }
    // The step of the trace actually shown for a requested step.
    int shownStep() const;

    HeatmapPlot* attentionPlot() const { return attention_; }
    // The strip over positions at the step: the gates (row 0, gated models) and the state's change
    // (the next row, every model whose trace records it); hidden for a recurrent model and with lines.
    HeatmapPlot* gatePlot() const { return gates_; }
    int changeRow() const; // the strip's row of the change, -1 when it has none
    HeatmapPlot* routingMap() const { return routeMap_; }   // heads x tokens; hidden without head routing
    HeatmapPlot* operatorMap() const { return operators_; } // operators x tokens; ThoughtNet only
    RoutingView* routingView() const { return routing_; }

    // The column at `size` (title, heatmap or routing lines, gate strip) drawn with `p` on any device,
    // for the inspector's frames; render() into an image.
    void paint(QPainter& p, QSize size);
    QImage render(QSize size);

signals:
    void attentionClicked(int model, int step, int target, int source, double weight);
    void gateClicked(int model, int step, int position, double gate);
    void changeClicked(int model, int step, int position, double change);

protected:
    void resizeEvent(QResizeEvent* event) override;
    // The title is in the model's colour: drawn again in another colour scheme.
    void changeEvent(QEvent* event) override;

private:
    void refresh();
    // What a recurrent model's step is, in place of its (absent) attention and gates.
    QString recurrentNote(int step) const;

    int model_;
    QString name_;
    std::shared_ptr<const ndr::Trace> trace_;
    int step_ = 0, head_ = -1, weightsStep_ = -1;
    StepPicture picture_ = StepPicture::Heatmap;
    QLabel* title_;
    QLabel* note_;
    HeatmapPlot* attention_;
    HeatmapPlot* gates_;
    HeatmapPlot* routeMap_;
    HeatmapPlot* operators_;
    RoutingView* routing_;
    QLabel* gateNote_;
};

} // namespace ndrui
