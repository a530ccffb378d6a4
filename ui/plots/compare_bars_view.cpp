// IID and Longer bars per category with the paper's markers (see compare_bars_view.h).
#include "ui/plots/compare_bars_view.h"

#include "ui/common/palette.h"

#include <qcustomplot.h>

#include <cmath>

namespace ndrui {

namespace {
constexpr double kBarWidth = 0.36;
}

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
    for (QCPGraph* g : {paperIid_, paperLonger_})
        g->setLineStyle(QCPGraph::lsNone);
    p->yAxis->setLabel(tr("accuracy"));
    p->xAxis->setSubTicks(false);
    p->xAxis->grid()->setVisible(false);
    p->xAxis->setTickLabelRotation(-25);
    p->xAxis->setTicker(QSharedPointer<QCPAxisTickerText>::create()); // no labels until there are runs
    auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
    ticker->setTickStep(0.2);
    p->yAxis->setTicker(ticker);
    chance_ = addChanceMark(p, p->axisRect());
    legendRowOnTop(p, 5);
    applyPalette();
}

void CompareBarsView::setCategories(const std::vector<Category>& categories) {
    categories_ = categories;
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    QVector<double> keys, iid, longer, iidErr, longerErr, paperIidKeys, paperIid, paperLongerKeys,
        paperLonger;
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
