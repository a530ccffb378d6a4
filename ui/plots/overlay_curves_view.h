// Learning curves of several runs overlaid (an accuracy over training steps, one colour per row or
// group); clicking a legend entry hides or shows that run.
#pragma once

#include "ui/plots/plot_style.h"
#include "ui/plots/plot_view.h"

#include <QColor>
#include <QString>
#include <vector>

class QCPGraph;
class QComboBox;

namespace ndrui {

class OverlayCurvesView : public PlotView {
    Q_OBJECT

public:
    struct Curve {
        QString label;
        int colorIndex = 0; // modelColor(colorIndex)
        std::vector<int> steps;
        std::vector<double> values;
    };

    explicit OverlayCurvesView(QWidget* parent = nullptr);

    void setCurves(const std::vector<Curve>& curves, const QString& valueLabel);
    // The reference line: the Longer depths' majority baseline when positive, else chance.
    void setReference(double chance, double longerBaseline = 0);
    // A choice of what the curves show (for example Longer or IID accuracy) in a combo above the plot,
    // `label` before it; seriesChanged() reports the pick, and the owner sets the curves to match.
    void setSeriesChoice(const QString& label, const QStringList& names);
    int series() const;
    // Hides or shows curve `index` (as a click on its legend entry does).
    void setCurveVisible(int index, bool visible);
    bool curveVisible(int index) const;
    int curveCount() const { return int(graphs_.size()); }

    QString toolTipAt(const QPoint& pos) const override;

signals:
    void seriesChanged(int index);

protected:
    void applyPalette() override;
    void fitRanges() override;

private:
    void styleGraph(int index);

    std::vector<Curve> curves_;
    std::vector<QCPGraph*> graphs_;
    QComboBox* series_ = nullptr;
    ChanceMark chance_; // the chance line, or the Longer depths' majority baseline
};

} // namespace ndrui
