// Comparison of several models or sweep groups: per category, an IID bar (held-out examples of the
// training depths) and a Longer bar (the test depths) with ±std whiskers, and the paper's figures as
// hollow markers where there are any.
#pragma once

#include "ui/plots/plot_style.h"
#include "ui/plots/plot_view.h"

#include <QString>
#include <cstdint>
#include <vector>

class QCPBars;
class QCPBarsGroup;
class QCPErrorBars;
class QCPGraph;

namespace ndrui {

class CompareBarsView : public PlotView {
    Q_OBJECT

public:
    struct Category {
        QString label;
        double iid = 0, iidStd = 0, longer = 0, longerStd = 0; // NaN mean: no finished run
        double paperIid = 0, paperLonger = 0;                  // NaN: the paper has no figure
        int runs = 0;
        std::vector<double> iidValues, longerValues; // (runs) each run's figure, a dot over its bar
        std::vector<uint64_t> seeds;                 // (runs) their seeds, where known
    };

    explicit CompareBarsView(QWidget* parent = nullptr);

    void setCategories(const std::vector<Category>& categories);
    // The reference line: the Longer depths' majority baseline when positive, else chance.
    void setReference(double chance, double longerBaseline = 0);
    const std::vector<Category>& categories() const { return categories_; }

    QString toolTipAt(const QPoint& pos) const override;

protected:
    void applyPalette() override;
    void fitRanges() override;
    void layoutFor(QSize size) override;

private:
    // For the plot laid out at `size`: the labels slant at 25 degrees, or 45 or 90 where the bars
    // stand too close for that; they run left from their bars, and QCustomPlot leaves out a label
    // that would cross the plot's left edge, so the axis rect's left margin grows (up to two fifths of
    // the plot's width) to hold each label.
    void fitLabels(QSize size);

    std::vector<Category> categories_;
    QCPBarsGroup* group_;
    QCPBars* iid_;
    QCPBars* longer_;
    QCPErrorBars* iidErrors_;
    QCPErrorBars* longerErrors_;
    QCPGraph* paperIid_;
    QCPGraph* paperLonger_;
    QCPGraph* runsIid_; // each run's figure as a dot over its bar
    QCPGraph* runsLonger_;
    // Per dot of runsIid_ and runsLonger_ (their data are in key order, as added): category and run.
    std::vector<std::pair<size_t, size_t>> runsIidAt_, runsLongerAt_;
    ChanceMark chance_;    // the chance line, or the Longer depths' majority baseline
    QMargins baseMargins_; // the axis rect's own minimum margins
};

} // namespace ndrui
