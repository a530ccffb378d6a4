// Length generalisation: the accuracy of every depth over training for one model at a time (chosen in
// the view), solid for train depths, dotted for valid and dashed for test depths.
#pragma once

#include "core/records/records.h"
#include "ui/plots/plot_style.h"
#include "ui/plots/plot_view.h"

#include <QStringList>
#include <span>
#include <vector>

class QComboBox;

namespace ndrui {

class LengthGeneralisationView : public PlotView {
    Q_OBJECT

public:
    explicit LengthGeneralisationView(QWidget* parent = nullptr);

    // The depths (one curve each) and the split of each (same length).
    // `labels` name each depth in the legend ("depth N" when empty); with `sizes` the depths are
    // problem sizes (multi-digit arithmetic), and the title says so.
    void setDepths(const std::vector<int>& depths, const std::vector<ndr::Split>& splits,
                   const QStringList& labels = {}, bool sizes = false);
    // The evaluation history of `model`; shown when it is the selected model.
    void setHistory(int model, const QString& name, std::span<const ndr::EvalRecord> history);
    // The reference line: the Longer depths' majority baseline when there is one, else chance (as the
    // learning curves'; see ndrui::setReference).
    void setReference(double chance, double longerBaseline = 0);
    void clear();

    void setCurrentModel(int model);
    int currentModel() const;
    // Steps up to `maxStep` whatever the data (frames of an animation); <= 0 follows the data again.
    void fixStepRange(double maxStep);

    QString toolTipAt(const QPoint& pos) const override;

protected:
    void applyPalette() override;
    void fitRanges() override;

private:
    void rebuild();
    QColor depthColor(int index) const;

    std::vector<int> depths_;
    QStringList labels_;
    std::vector<ndr::Split> splits_;
    std::vector<std::vector<ndr::EvalRecord>> histories_;
    QStringList names_;
    QComboBox* model_;
    ChanceMark chance_;
    double fixedStep_ = 0;
};

} // namespace ndrui
