// Per-depth accuracy bars (see depthbarsview.h).
#include "ui/plots/depth_bars_view.h"
#include "ui/common/split_name.h"

#include "ui/common/palette.h"
#include "ui/plots/plot_style.h"

#include <qcustomplot.h>

#include <cmath>

namespace ndrui {

DepthBarsView::DepthBarsView(QWidget* parent) : PlotView(parent) {
    QCustomPlot* p = plot();
    group_ = new QCPBarsGroup(p);
    group_->setSpacingType(QCPBarsGroup::stAbsolute);
    group_->setSpacing(2);
    QCPAxis* x = p->xAxis;
    x->setLabel(tr("depth (number of functions)"));
    x->setSubTicks(false);
    x->grid()->setVisible(false);
    p->yAxis->setLabel(tr("accuracy"));
    // Above 1 there is room for the split labels, so they never sit on a full bar.
    p->yAxis->setRange(0, top_);
    auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
    ticker->setTickStep(0.2);
    p->yAxis->setTicker(ticker);
    p->axisRect()->setRangeZoom(Qt::Horizontal | Qt::Vertical);

    chance_ = addChanceMark(p, p->axisRect());
    // Segments across each depth's bars, NaN between them; listed in the legend last, while drawn.
    baseline_ = new QCPGraph(p->xAxis, p->yAxis);
    baseline_->setName(tr("most common answer"));
    baseline_->setLayer("overlay");
    baseline_->setProperty("ndrChanceKey", true);
    baseline_->removeFromLegend();
    baseline_->setVisible(false);

    legendRowOnTop(p, 6);
    addTitleRow(p, tr("Accuracy per depth"));
    setLeastRectHeight(2 * kLeastRectHeight);
    // After PlotView's own handler has fitted the ranges.
    connect(p, &QCustomPlot::beforeReplot, this, [this] { fitShadeLabels(QSize()); });
    applyPalette();
}

void DepthBarsView::layoutFor(QSize size) {
    fitShadeLabels(size);
}

void DepthBarsView::fitShadeLabels(QSize size) {
    if (shades_.empty())
        return;
    if (!size.isValid())
        size = plot()->size();
    QCPLayout* layout = plot()->plotLayout();
    layout->setOuterRect(QRect(QPoint(0, 0), size));
    for (auto phase :
         {QCPLayoutElement::upPreparation, QCPLayoutElement::upMargins, QCPLayoutElement::upLayout})
        layout->update(phase);
    const QCPAxis* x = plot()->xAxis;
    for (const Shade& s : shades_) {
        const double band = std::abs(x->coordToPixel(s.to) - x->coordToPixel(s.from));
        const QFontMetrics fm(s.label->font());
        const QMargins pad = s.label->padding();
        QString text;
        for (const QString& candidate : {bandName(s.split), splitName(s.split)})
            if (fm.horizontalAdvance(candidate) + pad.left() + pad.right() + 4 <= band) {
                text = candidate;
                break;
            }
        s.label->setText(text);
        s.label->setVisible(!text.isEmpty());
    }
    // The labels hang from the top of the plot: the range above 1 is one label high (at least 0.12),
    // so on a short plot they still clear a full bar. A zoomed axis is left alone.
    QCPAxis* y = plot()->yAxis;
    const QCPItemText* label = shades_.front().label;
    const int line =
        QFontMetrics(label->font()).height() + label->padding().top() + label->padding().bottom() + 2;
    const int height = plot()->axisRect()->height();
    if (y->range().lower == 0 && y->range().upper == top_ && height > 2 * line) {
        top_ = std::max(1.12, double(height) / double(height - line));
        y->setRange(0, top_);
    }
}

void DepthBarsView::setDepthMeaning(const QString& meaning, const QStringList& labels, bool sizes) {
    plot()->xAxis->setLabel(sizes ? meaning : tr("depth (%1)").arg(meaning));
    setTitle(plot(), sizes ? tr("Accuracy per %1").arg(meaning) : tr("Accuracy per depth"));
    labels_ = labels;
    sizes_ = sizes;
}

QString DepthBarsView::bandName(ndr::Split split) const {
    return (sizes_ ? tr("%1 sizes") : tr("%1 depths")).arg(splitName(split));
}

void DepthBarsView::setDepths(const std::vector<int>& depths, const std::vector<ndr::Split>& splits) {
    depths_ = depths;
    splits_ = splits;
    splits_.resize(depths_.size(), ndr::Split::None);
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (size_t i = 0; i < depths_.size(); ++i)
        ticker->addTick(double(i),
                        qsizetype(i) < labels_.size() ? labels_[qsizetype(i)] : QString::number(depths_[i]));
    plot()->xAxis->setTicker(ticker);
    // Named depths (problem sizes) are wider than numbers: slanted, they do not run into each other.
    plot()->xAxis->setTickLabelRotation(labels_.isEmpty() ? 0 : -40);

    for (const Shade& s : shades_) {
        plot()->removeItem(s.rect);
        plot()->removeItem(s.label);
    }
    shades_.clear();
    // One shaded band per run of consecutive depths in the same split.
    for (size_t i = 0; i < depths_.size();) {
        size_t j = i;
        while (j + 1 < depths_.size() && splits_[j + 1] == splits_[i])
            ++j;
        if (splits_[i] != ndr::Split::None) {
            Shade s{splits_[i], new QCPItemRect(plot()), new QCPItemText(plot()), i - 0.5, j + 0.5};
            s.rect->setLayer("background");
            s.rect->topLeft->setTypeY(QCPItemPosition::ptAxisRectRatio);
            s.rect->bottomRight->setTypeY(QCPItemPosition::ptAxisRectRatio);
            s.rect->topLeft->setCoords(i - 0.5, 0);
            s.rect->bottomRight->setCoords(j + 0.5, 1);
            s.label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
            s.label->position->setCoords((i + j) / 2.0, 0.0);
            s.label->setPositionAlignment(Qt::AlignTop | Qt::AlignHCenter);
            s.label->setPadding(QMargins(2, 3, 2, 2));
            s.label->setText(bandName(splits_[i]));
            s.label->setClipToAxisRect(true);
            shades_.push_back(s);
        }
        i = j + 1;
    }
    for (size_t m = 0; m < bars_.size(); ++m)
        bars_[m]->setWidth(0.8 / double(bars_.size()));
    applyPalette();
}

void DepthBarsView::setAccuracy(int model, const QString& name, const std::vector<double>& accuracyPerDepth) {
    while (int(bars_.size()) <= model) {
        auto* bars = new QCPBars(plot()->xAxis, plot()->yAxis);
        bars->setBarsGroup(group_);
        bars->setPen(Qt::NoPen);
        bars->setBrush(modelColor(int(bars_.size())));
        bars_.push_back(bars);
        names_.push_back({});
    }
    for (QCPBars* b : bars_)
        b->setWidth(0.8 / double(bars_.size()));
    names_[model] = name;
    bars_[model]->setName(name);
    QVector<double> keys, values;
    for (size_t i = 0; i < accuracyPerDepth.size() && i < depths_.size(); ++i) {
        keys.push_back(double(i));
        values.push_back(accuracyPerDepth[i]);
    }
    bars_[model]->setData(keys, values, true);
    requestReplot();
}

void DepthBarsView::setEvaluation(int model, const QString& name, const ndr::EvalRecord& record) {
    // A record's values per depth, matched to depths_ by depth (NaN where it has none).
    auto perShownDepth = [&](const std::vector<double>& values) {
        std::vector<double> out(depths_.size(), NAN);
        for (size_t i = 0; i < depths_.size(); ++i)
            for (size_t k = 0; k < record.depths.size() && k < values.size(); ++k)
                if (record.depths[k] == depths_[i])
                    out[i] = values[k];
        return out;
    };
    // Models may be at different steps (one trains faster): the legend says which step each shows.
    setAccuracy(model, tr("%1 at step %2").arg(name).arg(record.step), perShownDepth(record.accuracy));
    setBaseline(perShownDepth(record.baseline));
}

void DepthBarsView::setBaseline(const std::vector<double>& baselinePerDepth) {
    QVector<double> keys, values;
    for (size_t i = 0; i < baselinePerDepth.size() && i < depths_.size(); ++i) {
        if (std::isnan(baselinePerDepth[i]))
            continue;
        keys << double(i) - 0.42 << double(i) + 0.42 << double(i) + 0.46;
        values << baselinePerDepth[i] << baselinePerDepth[i] << qQNaN();
    }
    baseline_->setData(keys, values, true);
    baseline_->setVisible(!keys.isEmpty());
    ndrui::setChance(chance_, keys.isEmpty() ? chanceValue_ : 0);
    requestReplot();
}

void DepthBarsView::setChance(double chance) {
    chanceValue_ = chance;
    ndrui::setChance(chance_, baseline_->visible() ? 0 : chance);
    requestReplot();
}

void DepthBarsView::clear() {
    for (QCPBars* b : bars_)
        plot()->removePlottable(b);
    bars_.clear();
    names_.clear();
    setBaseline({});
}

QString DepthBarsView::toolTipAt(const QPoint& pos) const {
    int index = -1;
    QCPAbstractPlottable* hit = nearestPoint(plot(), pos, &index);
    if (hit && hit == baseline_) {
        const QCPGraphData& d = *baseline_->data()->at(index);
        const int i = int(std::lround(d.key));
        if (i < 0 || i >= int(depths_.size()))
            return {};
        return tr("Most common answer, depth %1 (%2): %3, the accuracy of always giving it")
            .arg(depths_[i])
            .arg(splitName(splits_[i]))
            .arg(formatValue(d.value));
    }
    for (size_t m = 0; hit && m < bars_.size(); ++m) {
        if (hit != bars_[m])
            continue;
        const QCPBarsData& d = *bars_[m]->data()->at(index);
        const int i = int(std::lround(d.key));
        if (i < 0 || i >= int(depths_.size()))
            return {};
        return tr("%1, depth %2 (%3): %4")
            .arg(names_[m])
            .arg(depths_[i])
            .arg(splitName(splits_[i]))
            .arg(formatValue(d.value));
    }
    return {};
}

void DepthBarsView::applyPalette() {
    PlotView::applyPalette();
    for (size_t m = 0; m < bars_.size(); ++m)
        bars_[m]->setBrush(modelColor(int(m)));
    styleChanceMark(chance_, palette());
    baseline_->setPen(QPen(referenceColor(palette()), 2, Qt::DashLine));
    for (const Shade& s : shades_) {
        s.rect->setPen(Qt::NoPen);
        s.rect->setBrush(splitShade(s.split, palette()));
        s.label->setColor(palette().color(QPalette::WindowText));
    }
}

void DepthBarsView::fitRanges() {
    plot()->xAxis->setRange(-0.5, std::max<double>(depths_.size(), 1) - 0.5);
    plot()->yAxis->setRange(0, top_);
}

} // namespace ndrui
