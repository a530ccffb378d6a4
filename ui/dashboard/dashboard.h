// The live dashboard: the five views of a run (learning curves, per-depth bars, length
// generalisation, attention maps, copy-gate map) laid out together. It draws whatever run record it
// is given, so the window (live), opened runs and the headless export all draw the same way.
#pragma once

#include "core/records/records.h"

#include <QImage>
#include <QWidget>
#include <utility>
#include <vector>

class QSplitter;

namespace ndrui {

class PlotView;
class LearningCurvesView;
class DepthBarsView;
class LengthGeneralisationView;
class AttentionGridView;
class GateMapView;

class Dashboard : public QWidget {
    Q_OBJECT

public:
    explicit Dashboard(QWidget* parent = nullptr);

    // Draws `record`. With uptoEval >= 0 only evaluations 0..uptoEval of each model count (and the
    // loss up to that step): one frame of the training's history.
    void showRecord(const ndr::RunRecord& record, int uptoEval = -1);
    void clear();
    // The number of frames showRecord can draw: the longest history of any model.
    static int evaluationCount(const ndr::RunRecord& record);

    // Each view with a name fit for a file ("learning-curves"), in display order.
    std::vector<std::pair<QString, PlotView*>> views() const;
    // The whole dashboard drawn at `size` (each view laid out as on screen, scaled to fit).
    QImage renderAll(QSize size);

    LearningCurvesView& learningCurves() { return *curves_; }
    DepthBarsView& depthBars() { return *bars_; }
    LengthGeneralisationView& lengthGeneralisation() { return *length_; }
    AttentionGridView& attention() { return *attention_; }
    GateMapView& gates() { return *gates_; }
    // The step the shown probe traces and per-depth bars come from ("" when nothing is shown).
    QString caption() const { return caption_; }

signals:
    void captionChanged(const QString& caption);

protected:
    void showEvent(QShowEvent* event) override;

private:
    LearningCurvesView* curves_;
    DepthBarsView* bars_;
    LengthGeneralisationView* length_;
    AttentionGridView* attention_;
    GateMapView* gates_;
    QSplitter* rows_;
    QSplitter* top_;
    QSplitter* bottom_;
    bool sized_ = false;
    QString caption_;
    quint64 shownShape_ = 0; // which run's depths and model names the views are set up for
};

} // namespace ndrui
