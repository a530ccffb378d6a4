// IID and Longer bars per category with the paper's markers (see compare_bars_view.h).
#include "ui/plots/compare_bars_view.h"

#include "ui/common/palette.h"

#include <qcustomplot.h>

#include <cmath>

namespace ndrui {

namespace {
constexpr double kBarWidth = 0.36;
// The labels' slant, the least that keeps consecutive labels apart.
constexpr double kLabelDegrees[] = {25, 45, 90};
} // namespace

CompareBarsView::CompareBarsView(QWidget* parent) : PlotView(parent) {
    QCustomPlot* p = plot();
    group_ = new QCPBarsGroup(p);
    group_->setSpacingType(QCPBarsGroup::stAbsolute);
    group_->setSpacing(2);
    iid_ = new QCPBars(p->xAxis, p->yAxis);
    longer_ = new QCPBars(p->xAxis, p->yAxis);
    for (QCPBars* b : {iid_, longer_}) {
        b->setBarsGroup(group_);
        b->setWidth(kBarWidth);
        b->setPen(Qt::NoPen);
    }
    iid_->setName(tr("IID (training depths)"));
    longer_->setName(tr("Longer (test depths)"));
    iidErrors_ = new QCPErrorBars(p->xAxis, p->yAxis);
    longerErrors_ = new QCPErrorBars(p->xAxis, p->yAxis);
    iidErrors_->setDataPlottable(iid_);
    longerErrors_->setDataPlottable(longer_);
    for (QCPErrorBars* e : {iidErrors_, longerErrors_})
        e->removeFromLegend();
    paperIid_ = new QCPGraph(p->xAxis, p->yAxis);
    paperLonger_ = new QCPGraph(p->xAxis, p->yAxis);
    paperIid_->setName(tr("paper, IID"));
    paperLonger_->setName(tr("paper, Longer"));
    runsIid_ = new QCPGraph(p->xAxis, p->yAxis);
    runsLonger_ = new QCPGraph(p->xAxis, p->yAxis);
    runsIid_->setName(tr("each run"));
    runsLonger_->removeFromLegend();
    for (QCPGraph* g : {paperIid_, paperLonger_, runsIid_, runsLonger_})
        g->setLineStyle(QCPGraph::lsNone);
    p->yAxis->setLabel(tr("accuracy"));
    p->xAxis->setSubTicks(false);
    p->xAxis->grid()->setVisible(false);
    p->xAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create()); // no labels until there are runs
    auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
    ticker->setTickStep(0.2);
    p->yAxis->setTicker(ticker);
    chance_ = addChanceMark(p, p->axisRect());
    legendRowOnTop(p, 5);
    baseMargins_ = p->axisRect()->minimumMargins();
    // After PlotView's own handler has fitted the ranges.
    connect(p, &QCustomPlot::beforeReplot, this, [this] { fitLabels(QSize()); });
    applyPalette();
}

void CompareBarsView::layoutFor(QSize size) {
    fitLabels(size);
}

void CompareBarsView::fitLabels(QSize size) {
    if (!size.isValid())
        size = plot()->size();
    QCPAxisRect* rect = plot()->axisRect();
    rect->setMinimumMargins(baseMargins_);
    QCPLayout* layout = plot()->plotLayout();
    QCPAxis* x = plot()->xAxis;
    x->setTickLabelRotation(-kLabelDegrees[0]);
    const QFontMetrics fm(x->tickLabelFont());
    const int most = size.width() * 2 / 5;
    // Each pass lays the plot out, turns the labels as steeply as the bars' spacing asks, measures how
    // far they reach past the left edge and widens the margin by that; a wider margin moves the bars,
    // hence a few passes.
    for (int pass = 0; pass < 5 && !categories_.empty(); ++pass) {
        layout->setOuterRect(QRect(QPoint(0, 0), size));
        for (auto phase :
             {QCPLayoutElement::upPreparation, QCPLayoutElement::upMargins, QCPLayoutElement::upLayout})
            layout->update(phase);
        const double spacing =
            categories_.size() > 1 ? x->coordToPixel(1) - x->coordToPixel(0) : double(size.width());
        double degrees = 0;
        for (double d : kLabelDegrees) {
            degrees = d;
            if (spacing * std::sin(d * M_PI / 180) >= 1.8 * fm.height())
                break;
        }
        if (degrees != -x->tickLabelRotation()) {
            x->setTickLabelRotation(-degrees);
            continue;
        }
        const double angle = degrees * M_PI / 180;
        double past = 0; // pixels the farthest label reaches left of the plot's edge
        for (size_t i = 0; i < categories_.size(); ++i) {
            const double reach =
                fm.horizontalAdvance(categories_[i].label) * std::cos(angle) + fm.height() * std::sin(angle);
            past = std::max(past, reach + 2 - x->coordToPixel(double(i)));
        }
        const int left = std::min(most, rect->margins().left() + int(std::ceil(past)));
        if (past <= 0 || left <= rect->minimumMargins().left())
            break;
        rect->setMinimumMargins(
            QMargins(left, baseMargins_.top(), baseMargins_.right(), baseMargins_.bottom()));
    }
}

void CompareBarsView::setCategories(const std::vector<Category>& categories) {
    categories_ = categories;
    runsIidAt_.clear();
    runsLongerAt_.clear();
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    QVector<double> keys, iid, longer, iidErr, longerErr, paperIidKeys, paperIid, paperLongerKeys,
        paperLonger, runIidKeys, runIid, runLongerKeys, runLonger;
    // The bars group places the two bars of a category at key -/+ half a bar; the markers follow them.
    const double offset = (kBarWidth + 2.0 / std::max(1, plot()->axisRect()->width())) / 2;
    for (size_t i = 0; i < categories_.size(); ++i) {
        const Category& c = categories_[i];
        const double key = double(i);
        ticker->addTick(key, c.label);
        keys << key;
        iid << c.iid;
        longer << c.longer;
        iidErr << (std::isnan(c.iidStd) ? 0 : c.iidStd);
        longerErr << (std::isnan(c.longerStd) ? 0 : c.longerStd);
        // Each run's dot over its bar, spread across the middle of the bar so equal figures stay apart.
        auto addRuns = [&](const std::vector<double>& values, double at, QVector<double>& ks,
                           QVector<double>& vs, std::vector<std::pair<size_t, size_t>>& where) {
            for (size_t r = 0; r < values.size(); ++r) {
                const double spread = double(r) / double(values.size() - 1) - 0.5;
                ks << at + spread * kBarWidth * 0.5;
                vs << values[r];
                where.emplace_back(i, r);
            }
        };
        if (c.iidValues.size() > 1)
            addRuns(c.iidValues, key - offset, runIidKeys, runIid, runsIidAt_);
        if (c.longerValues.size() > 1)
            addRuns(c.longerValues, key + offset, runLongerKeys, runLonger, runsLongerAt_);
        if (!std::isnan(c.paperIid)) {
            paperIidKeys << key - offset;
            paperIid << c.paperIid;
        }
        if (!std::isnan(c.paperLonger)) {
            paperLongerKeys << key + offset;
            paperLonger << c.paperLonger;
        }
    }
    plot()->xAxis->setTicker(ticker);
    iid_->setData(keys, iid, true);
    longer_->setData(keys, longer, true);
    iidErrors_->setData(iidErr);
    longerErrors_->setData(longerErr);
    paperIid_->setData(paperIidKeys, paperIid, true);
    paperLonger_->setData(paperLongerKeys, paperLonger, true);
    runsIid_->setData(runIidKeys, runIid, true); // added in key order: category, then run
    runsLonger_->setData(runLongerKeys, runLonger, true);
    const bool anyRuns = !runIid.isEmpty() || !runLonger.isEmpty();
    runsIid_->setVisible(anyRuns);
    runsLonger_->setVisible(anyRuns);
    if (anyRuns)
        runsIid_->addToLegend();
    else
        runsIid_->removeFromLegend();
    paperIid_->setVisible(!paperIid.isEmpty());
    paperLonger_->setVisible(!paperLonger.isEmpty());
    if (paperIid.isEmpty())
        paperIid_->removeFromLegend();
    else
        paperIid_->addToLegend();
    if (paperLonger.isEmpty())
        paperLonger_->removeFromLegend();
    else
        paperLonger_->addToLegend();
    requestReplot();
}

void CompareBarsView::setReference(double chance, double longerBaseline) {
    ndrui::setReference(chance_, chance, longerBaseline);
    requestReplot();
}

QString CompareBarsView::toolTipAt(const QPoint& pos) const {
    int index = -1;
    QCPAbstractPlottable* hit = nearestPoint(plot(), pos, &index);
    if (!hit || index < 0)
        return {};
    auto describe = [&](int i, bool longer) -> QString {
        if (i < 0 || i >= int(categories_.size()))
            return {};
        const Category& c = categories_[size_t(i)];
        const double mean = longer ? c.longer : c.iid, sd = longer ? c.longerStd : c.iidStd;
        const double paper = longer ? c.paperLonger : c.paperIid;
        QString text =
            tr("%1, %2: %3 ± %4 over %5 runs")
                .arg(c.label, longer ? tr("Longer") : tr("IID"), formatValue(mean), formatValue(sd))
                .arg(c.runs);
        if (!std::isnan(paper))
            text += tr(" (paper %1)").arg(formatValue(paper));
        return text;
    };
    if (hit == iid_ || hit == longer_)
        return describe(int(std::lround(static_cast<QCPBars*>(hit)->data()->at(index)->key)), hit == longer_);
    if (hit == runsIid_ || hit == runsLonger_) {
        const auto& at = hit == runsLonger_ ? runsLongerAt_ : runsIidAt_;
        if (size_t(index) >= at.size())
            return {};
        const auto [i, run] = at[size_t(index)];
        const Category& c = categories_[i];
        const double value = (hit == runsLonger_ ? c.longerValues : c.iidValues)[run];
        const QString seed =
            run < c.seeds.size() ? tr("seed %1").arg(c.seeds[run]) : tr("run %1").arg(run + 1);
        return tr("%1, %2, %3: %4")
            .arg(c.label, hit == runsLonger_ ? tr("Longer") : tr("IID"), seed, formatValue(value));
    }
    if (hit == paperIid_ || hit == paperLonger_) {
        const double key = static_cast<QCPGraph*>(hit)->data()->at(index)->key;
        return describe(int(std::lround(key)), hit == paperLonger_);
    }
    return {};
}

void CompareBarsView::applyPalette() {
    PlotView::applyPalette();
    styleChanceMark(chance_, palette());
    // IID and Longer in their splits' colours, as the depth bars shade them: the categories are models.
    iid_->setBrush(splitColor(ndr::Split::Train));
    longer_->setBrush(splitColor(ndr::Split::Test));
    const QColor text = palette().color(QPalette::WindowText);
    for (QCPErrorBars* e : {iidErrors_, longerErrors_})
        e->setPen(QPen(text, 1));
    for (QCPGraph* g : {runsIid_, runsLonger_}) {
        g->setPen(QPen(text, 1));
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, text, text, 4));
    }
    for (QCPGraph* g : {paperIid_, paperLonger_}) {
        g->setPen(QPen(text, 1.5));
        g->setScatterStyle(
            QCPScatterStyle(g == paperIid_ ? QCPScatterStyle::ssDiamond : QCPScatterStyle::ssCircle,
                            QPen(text, 1.5), Qt::NoBrush, 9));
    }
}

void CompareBarsView::fitRanges() {
    plot()->xAxis->setRange(-0.6, std::max<double>(double(categories_.size()), 1) - 0.4);
    plot()->yAxis->setRange(0, 1.08);
}

} // namespace ndrui
