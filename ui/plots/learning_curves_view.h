// Learning curves: training loss on a log axis (streamed live, optionally smoothed) above the IID
// (held-out examples of the training depths) and Longer (test depths) accuracy per evaluation, one
// colour per model, with a reference line (the Longer depths' majority baseline, or chance).
#pragma once

#include "core/records/records.h"
#include "ui/plots/plot_style.h"
#include "ui/plots/plot_view.h"

#include <QStringList>
#include <span>
#include <vector>

class QCheckBox;
class QCPAxisRect;
class QCPCurve;
class QCPGraph;
class QCPItemStraightLine;
class QDoubleSpinBox;

namespace ndrui {

class LearningCurvesView : public PlotView {
    Q_OBJECT

public:
    explicit LearningCurvesView(QWidget* parent = nullptr);

    void setModelNames(const QStringList& names);
    // One training step's loss of `model`; cheap to call every step (drawing is coalesced).
    void appendLoss(int model, int step, double loss);
    // Sets the loss series of `model`: adds the new points when the series shown heads `steps` (a live
    // redraw), otherwise replaces it (a run opened, a frame of the past).
    void setLoss(int model, std::span<const int> steps, std::span<const double> loss);
    // IID (train depths) and Longer (test depths) accuracy at each evaluation of `model`.
    void setAccuracy(int model, const std::vector<int>& steps, const std::vector<double>& train,
                     const std::vector<double>& test);
    void setHistory(int model, std::span<const ndr::EvalRecord> history);
    // The reference line: the Longer depths' majority baseline when positive, else chance (1/S per
    // readout); see ndrui::setReference.
    void setReference(double chance, double longerBaseline = 0);
    // A vertical line through both plots at `step` (the evaluation the other views show); < 0 hides it.
    void setMarker(int step);
    int marker() const { return marker_; }
    // Axes that stay put while the data grows (frames of an animation): steps up to `maxStep`, loss
    // between `lossLo` and `lossHi`. maxStep <= 0 follows the data again.
    void fixRanges(double maxStep, double lossLo, double lossHi);
    void clear();

    // Exponential moving average of the loss, weight `factor` on the past (0.9 = about ten steps).
    void setSmoothing(bool on, double factor = 0.9);
    bool smoothing() const;

    QString toolTipAt(const QPoint& pos) const override;

protected:
    void applyPalette() override;
    void fitRanges() override;

private:
    struct Series {
        std::vector<double> steps, loss, smoothed;
        QCPGraph *rawLoss = nullptr, *smoothLoss = nullptr, *train = nullptr, *test = nullptr;
    };
    Series& series(int model);
    void styleSeries(int model);
    void styleKeys();
    void resmooth(int model);
    // Labels the loss axis with round 1-2-5 values, as many per decade as its height has room for.
    void updateLossTicks();
    QString modelName(int model) const;

    QStringList names_;
    std::vector<Series> series_;
    ChanceMark chance_; // the chance line, or the Longer depths' majority baseline
    QCPAxisRect *lossRect_, *accuracyRect_;
    int lossTicks_ = -1; // the labels the loss axis has now (see updateLossTicks)
    // Legend keys without data: colour names the model, line style the split (train, test).
    QCPCurve *trainKey_, *testKey_;
    QCPItemStraightLine *lossMarker_, *accuracyMarker_;
    int marker_ = -1;
    double fixedStep_ = 0, fixedLossLo_ = 0, fixedLossHi_ = 0;
    QCheckBox* smooth_;
    QDoubleSpinBox* factor_;
};

} // namespace ndrui
