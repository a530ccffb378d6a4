// Overlaid learning curves with a clickable legend (see overlay_curves_view.h).
#include "ui/plots/overlay_curves_view.h"

#include "ui/common/palette.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace ndrui {

OverlayCurvesView::OverlayCurvesView(QWidget* parent) : PlotView(parent) {
    QCustomPlot* p = plot();
    p->xAxis->setLabel(tr("training step"));
    p->yAxis->setLabel(tr("test accuracy"));
    // The x range ends at the last step, often a tick: room on the right for half its label, which
    // QCustomPlot leaves out rather than draw it cut at the border.
    p->axisRect()->setMinimumMargins(QMargins(0, 0, 24, 0));
    chance_ = addChanceMark(p, p->axisRect());
    QCPLegend* legend = legendRowOnTop(p, 4);
    legend->setSelectableParts(QCPLegend::spItems);
    connect(p, &QCustomPlot::legendClick, this,
            [this](QCPLegend*, QCPAbstractLegendItem* item, QMouseEvent*) {
                auto* entry = qobject_cast<QCPPlottableLegendItem*>(item);
                if (!entry)
                    return;
                const auto it = std::find(graphs_.begin(), graphs_.end(), entry->plottable());
                if (it != graphs_.end())
                    setCurveVisible(int(it - graphs_.begin()), !(*it)->visible());
            });
    applyPalette();
}

void OverlayCurvesView::setSeriesChoice(const QString& label, const QStringList& names) {
    if (!series_) {
        series_ = new QComboBox(this);
        series_->setObjectName("curveSeries");
        controls()->addWidget(new QLabel(label, this));
        controls()->addWidget(series_);
        controls()->addStretch(1);
        connect(series_, &QComboBox::currentIndexChanged, this, &OverlayCurvesView::seriesChanged);
    }
    const QSignalBlocker block(series_);
    series_->clear();
    series_->addItems(names);
}

int OverlayCurvesView::series() const {
    return series_ ? series_->currentIndex() : 0;
}

void OverlayCurvesView::setCurves(const std::vector<Curve>& curves, const QString& valueLabel) {
    for (QCPGraph* g : graphs_)
        plot()->removePlottable(g);
    graphs_.clear();
    curves_ = curves;
    plot()->yAxis->setLabel(valueLabel);
    for (size_t i = 0; i < curves_.size(); ++i) {
        auto* g = new QCPGraph(plot()->xAxis, plot()->yAxis);
        g->setName(curves_[i].label);
        QVector<double> keys, values;
        for (size_t k = 0; k < curves_[i].steps.size() && k < curves_[i].values.size(); ++k) {
            keys << curves_[i].steps[k];
            values << curves_[i].values[k];
        }
        g->setData(keys, values, true);
        graphs_.push_back(g);
        styleGraph(int(i));
    }
    requestReplot();
}

void OverlayCurvesView::setReference(double chance, double longerBaseline) {
    ndrui::setReference(chance_, chance, longerBaseline);
    requestReplot();
}

void OverlayCurvesView::setCurveVisible(int index, bool visible) {
    if (index < 0 || index >= int(graphs_.size()))
        return;
    graphs_[size_t(index)]->setVisible(visible);
    styleGraph(index);
    requestReplot();
}

bool OverlayCurvesView::curveVisible(int index) const {
    return index >= 0 && index < int(graphs_.size()) && graphs_[size_t(index)]->visible();
}

void OverlayCurvesView::styleGraph(int index) {
    QCPGraph* g = graphs_[size_t(index)];
    QColor c = modelColor(curves_[size_t(index)].colorIndex);
    g->setPen(QPen(c, 1.6));
    // A hidden run keeps its legend entry, greyed, so it can be clicked back.
    if (QCPPlottableLegendItem* item = plot()->legend->itemWithPlottable(g)) {
        QColor text = palette().color(QPalette::WindowText);
        if (!g->visible())
            text = palette().color(QPalette::Disabled, QPalette::WindowText);
        item->setTextColor(text);
    }
}

QString OverlayCurvesView::toolTipAt(const QPoint& pos) const {
    int index = -1;
    QCPAbstractPlottable* hit = nearestPoint(plot(), pos, &index);
    const auto it = std::find(graphs_.begin(), graphs_.end(), hit);
    if (it == graphs_.end() || index < 0)
        return {};
    const auto& d = *(*it)->data()->at(index);
    return tr("%1, step %2: %3").arg((*it)->name()).arg(int(d.key)).arg(formatValue(d.value));
}

void OverlayCurvesView::applyPalette() {
    PlotView::applyPalette();
    styleChanceMark(chance_, palette());
    for (size_t i = 0; i < graphs_.size(); ++i)
        styleGraph(int(i));
}

void OverlayCurvesView::fitRanges() {
    double maxStep = 1;
    for (const auto& c : curves_)
        if (!c.steps.empty())
            maxStep = std::max(maxStep, double(c.steps.back()));
    plot()->xAxis->setRange(0, maxStep);
    plot()->yAxis->setRange(0, 1.05);
}

} // namespace ndrui
