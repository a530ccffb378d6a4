// Accuracy per depth: the models' bars side by side at each depth, the train, valid and test depth
// ranges shaded and labelled behind them, and a mark per depth at the majority baseline (what always
// giving the depth's most common answer scores), or the chance line where the evaluations have none.
#pragma once

#include "core/records/records.h"
#include "ui/plots/plot_style.h"
#include "ui/plots/plot_view.h"

#include <QStringList>
#include <vector>

class QCPBars;
class QCPBarsGroup;
class QCPGraph;
class QCPItemText;
class QCPItemRect;

namespace ndrui {

class DepthBarsView : public PlotView {
    Q_OBJECT

public:
    explicit DepthBarsView(QWidget* parent = nullptr);

    // The depths along x and the split of each (same length).
    void setDepths(const std::vector<int>& depths, const std::vector<ndr::Split>& splits);
    // What a depth counts, under the x axis ("number of functions" until set), and the tick label of
    // each depth of the next setDepths() (its number when empty). With `sizes` the depths are problem
    // sizes (multi-digit arithmetic): the title, the axis and the bands say sizes.
    void setDepthMeaning(const QString& meaning, const QStringList& labels = {}, bool sizes = false);
    // Accuracy of `model` at each depth of setDepths() (NaN: not evaluated).
    void setAccuracy(int model, const QString& name, const std::vector<double>& accuracyPerDepth);
    // The accuracy per depth of an evaluation, matched to setDepths() by depth; its majority baseline
    // (the same for every model) replaces the baseline marks.
    void setEvaluation(int model, const QString& name, const ndr::EvalRecord& record);
    // The majority baseline at each depth of setDepths() (NaN: none), drawn as a mark across the
    // depth's bars; while any is drawn the chance line, which lies at or below them, is not.
    void setBaseline(const std::vector<double>& baselinePerDepth);
    void setChance(double chance);
    void clear();

    QString toolTipAt(const QPoint& pos) const override;

protected:
    void applyPalette() override;
    void fitRanges() override;
    void layoutFor(QSize size) override;

private:
    struct Shade {
        ndr::Split split;
        QCPItemRect* rect;
        QCPItemText* label;
        double from, to; // the band along x
    };
    // "train depths", or "train sizes" where the depths are problem sizes.
    QString bandName(ndr::Split split) const;
    // Labels each band by its bandName(), or "train" where that does not fit, or not at all, for the
    // plot laid out at `size`; and, unless the user zoomed, keeps a label's line free above 1.
    void fitShadeLabels(QSize size);

    std::vector<int> depths_;
    QStringList labels_; // tick label per depth index (empty: the numbers)
    bool sizes_ = false; // the depths are problem sizes
    std::vector<ndr::Split> splits_;
    std::vector<QCPBars*> bars_;
    std::vector<QString> names_;
    std::vector<Shade> shades_;
    QCPBarsGroup* group_;
    ChanceMark chance_;
    double chanceValue_ = 0;
    QCPGraph* baseline_;
    double top_ = 1.12; // the accuracy axis's upper end while it follows the data
};

} // namespace ndrui
