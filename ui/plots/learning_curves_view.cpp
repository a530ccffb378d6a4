// Learning curves (see learningcurvesview.h).
#include "ui/plots/learning_curves_view.h"

#include "ui/common/palette.h"
#include "ui/plots/plot_style.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QLabel>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace ndrui {

LearningCurvesView::LearningCurvesView(QWidget* parent) : PlotView(parent) {
    QCustomPlot* p = plot();
    lossRect_ = p->axisRect();
    accuracyRect_ = new QCPAxisRect(p);
    p->plotLayout()->addElement(1, 0, accuracyRect_);
    auto* margins = new QCPMarginGroup(p);
    lossRect_->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
    accuracyRect_->setMarginGroup(QCP::msLeft | QCP::msRight, margins);

    QCPAxis* lossY = lossRect_->axis(QCPAxis::atLeft);
    lossY->setScaleType(QCPAxis::stLogarithmic);
    // QCustomPlot's log ticker labels a range within one decade with odd fractional powers; round
    // 1-2-5 values read better, thinned as the range spans more decades or the plot gets shorter.
    connect(lossY, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this] { updateLossTicks(); });
    connect(p, &QCustomPlot::beforeReplot, this, [this] { updateLossTicks(); });
    lossY->setLabel("training loss");
    lossRect_->axis(QCPAxis::atBottom)->setTickLabels(false);
    accuracyRect_->axis(QCPAxis::atBottom)->setLabel("training step");
    accuracyRect_->axis(QCPAxis::atLeft)->setLabel("accuracy");
    accuracyRect_->axis(QCPAxis::atLeft)->setRange(0, 1.04);
    for (QCPAxisRect* r : {lossRect_, accuracyRect_}) {
        // QCustomPlot keeps 15 pixels around every rect; above a rect, half a tick label is enough,
        // and below the loss rect (no tick labels) its ticks are.
        r->setMinimumMargins(QMargins(15, 8, 15, r == lossRect_ ? 6 : 15));
        r->setRangeDrag(Qt::Horizontal | Qt::Vertical);
        r->setRangeZoom(Qt::Horizontal | Qt::Vertical);
    }
    // One step axis for both rects: zooming or panning either moves the other.
    QCPAxis* lossX = lossRect_->axis(QCPAxis::atBottom);
    QCPAxis* accX = accuracyRect_->axis(QCPAxis::atBottom);
    connect(lossX, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), accX,
            qOverload<const QCPRange&>(&QCPAxis::setRange));
    connect(accX, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), lossX,
            qOverload<const QCPRange&>(&QCPAxis::setRange));

    chance_ = addChanceMark(p, accuracyRect_);
    auto marker = [p](QCPAxisRect* r) {
        auto* line = new QCPItemStraightLine(p);
        line->setClipAxisRect(r);
        for (QCPItemPosition* end : {line->point1, line->point2})
            end->setAxes(r->axis(QCPAxis::atBottom), r->axis(QCPAxis::atLeft));
        line->setVisible(false);
        line->setSelectable(false);
        return line;
    };
    lossMarker_ = marker(lossRect_);
    accuracyMarker_ = marker(accuracyRect_);

    // One entry per model (its colour) and one per split (its line style), rather than one per
    // curve: four short entries fit on one or two lines where six long ones took up to six.
    trainKey_ = new QCPCurve(accuracyRect_->axis(QCPAxis::atBottom), accuracyRect_->axis(QCPAxis::atLeft));
    testKey_ = new QCPCurve(accuracyRect_->axis(QCPAxis::atBottom), accuracyRect_->axis(QCPAxis::atLeft));
    // The paper's names (Table 1): IID is the held-out examples of the training depths, Longer the
    // test depths. Short, so the five entries fit two columns at a laptop's width; the tooltips of the
    // curves spell the depths out.
    trainKey_->setName(tr("IID (train)"));
    testKey_->setName(tr("Longer (test)"));
    legendRowOnTop(p, 4);
    addTitleRow(p, tr("Training loss and accuracy"));
    setLeastRectHeight(kLeastRectHeight);

    smooth_ = new QCheckBox(tr("Smooth loss"), this);
    smooth_->setToolTip(tr("Exponential moving average of the training loss"));
    factor_ = new QDoubleSpinBox(this);
    factor_->setRange(0.5, 0.999);
    factor_->setDecimals(3);
    factor_->setSingleStep(0.01);
    factor_->setValue(0.9);
    factor_->setToolTip(tr("Weight of the past in the moving average"));
    controls()->addWidget(smooth_);
    controls()->addWidget(factor_);
    controls()->addStretch(1);
    auto restyle = [this] {
        factor_->setEnabled(smooth_->isChecked());
        for (int m = 0; m < int(series_.size()); ++m) {
            resmooth(m);
            styleSeries(m);
        }
        requestReplot();
    };
    connect(smooth_, &QCheckBox::toggled, this, restyle);
    connect(factor_, &QDoubleSpinBox::valueChanged, this, restyle);
    smooth_->setChecked(true);
    applyPalette();
}

void LearningCurvesView::updateLossTicks() {
    QCPAxis* lossY = lossRect_->axis(QCPAxis::atLeft);
    const QCPRange r = lossY->range();
    const double decades = r.lower > 0 && r.upper > r.lower ? std::log10(r.upper / r.lower) : 10;
    const double pixelsPerDecade = std::max(1, lossRect_->height()) / std::max(decades, 1e-3);
    const double line = QFontMetrics(lossY->tickLabelFont()).height();
    // The labels of 1, 1.5, 2, 3, 5, 7 in every decade are at least 0.125 decades apart, of 1 and 3
    // about half a decade, of the powers of ten one decade (or k: every k-th power).
    const std::vector<std::vector<double>> sets = {{1, 1.5, 2, 3, 5, 7}, {1, 3}, {1}};
    const double gaps[] = {0.125, 0.477, 1.0};
    auto labelsInRange = [&r](const std::vector<double>& mantissas) {
        int n = 0;
        for (int e = -8; e <= 4; ++e)
            for (double m : mantissas)
                n += r.contains(m * std::pow(10.0, e)) ? 1 : 0;
        return n;
    };
    // The finest set whose labels stay a line and a half apart; where that shows fewer than two
    // labels, the finest that keeps them a line apart, so that the axis still has a scale.
    size_t chosen = sets.size() - 1;
    for (double room : {1.5 * line, 1.0 * line}) {
        size_t k = 0;
        while (k + 1 < sets.size() && pixelsPerDecade * gaps[k] < room)
            ++k;
        chosen = k;
        if (labelsInRange(sets[k]) >= 2)
            break;
    }
    const int everyDecades =
        chosen + 1 < sets.size() ? 1 : std::max(1, int(std::ceil(1.5 * line / pixelsPerDecade)));
    const int key = int(chosen) * 100 + everyDecades;
    if (key == lossTicks_)
        return;
    lossTicks_ = key;
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (int e = -8; e <= 4; ++e)
        if ((e + 8) % everyDecades == 0)
            for (double m : sets[chosen])
                ticker->addTick(m * std::pow(10.0, e), QString::number(m * std::pow(10.0, e), 'g', 3));
    lossY->setTicker(ticker);
}

void LearningCurvesView::setModelNames(const QStringList& names) {
    names_ = names;
    for (int m = 0; m < int(series_.size()); ++m)
        styleSeries(m);
    requestReplot();
}

QString LearningCurvesView::modelName(int model) const {
    return model < names_.size() ? names_[model] : tr("model %1").arg(model + 1);
}

LearningCurvesView::Series& LearningCurvesView::series(int model) {
    while (int(series_.size()) <= model) {
        Series s;
        QCPAxis* lx = lossRect_->axis(QCPAxis::atBottom);
        QCPAxis* ly = lossRect_->axis(QCPAxis::atLeft);
        QCPAxis* ax = accuracyRect_->axis(QCPAxis::atBottom);
        QCPAxis* ay = accuracyRect_->axis(QCPAxis::atLeft);
        s.rawLoss = plot()->addGraph(lx, ly);
        s.smoothLoss = plot()->addGraph(lx, ly);
        s.train = plot()->addGraph(ax, ay);
        s.test = plot()->addGraph(ax, ay);
        series_.push_back(std::move(s));
        styleSeries(int(series_.size()) - 1);
    }
    return series_[model];
}

void LearningCurvesView::styleSeries(int model) {
    Series& s = series_[model];
    const QColor color = modelColor(model);
    const QString name = modelName(model);
    const bool smooth = smooth_->isChecked();
    QColor faint = color;
    faint.setAlpha(smooth ? 70 : 255);
    s.rawLoss->setPen(QPen(faint, 1));
    s.rawLoss->setName(name);
    s.smoothLoss->setPen(QPen(color, 2));
    s.smoothLoss->setName(name);
    s.smoothLoss->setVisible(smooth);
    s.train->setPen(QPen(color, 2));
    s.train->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
    s.train->setName(tr("%1 IID").arg(name));
    s.test->setPen(QPen(color, 2, Qt::DashLine));
    s.test->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 6));
    s.test->setName(tr("%1 Longer").arg(name));

    // Rebuilt whole: the models in order, then the two split keys.
    plot()->legend->clearItems();
    for (const Series& t : series_)
        (smooth ? t.smoothLoss : t.rawLoss)->addToLegend();
    trainKey_->addToLegend();
    testKey_->addToLegend();
    styleKeys();
}

void LearningCurvesView::styleKeys() {
    const QColor text = palette().color(QPalette::WindowText);
    trainKey_->setPen(QPen(text, 2));
    trainKey_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
    testKey_->setPen(QPen(text, 2, Qt::DashLine));
    testKey_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 6));
    plot()->legend->setTextColor(text);
    for (int i = 0; i < plot()->legend->itemCount(); ++i)
        if (QCPAbstractLegendItem* item = plot()->legend->item(i))
            item->setTextColor(text);
}

void LearningCurvesView::resmooth(int model) {
    Series& s = series_[model];
    const double f = factor_->value();
    s.smoothed.resize(s.loss.size());
    for (size_t i = 0; i < s.loss.size(); ++i)
        s.smoothed[i] = i == 0 ? s.loss[0] : f * s.smoothed[i - 1] + (1 - f) * s.loss[i];
    s.smoothLoss->setData(QVector<double>(s.steps.begin(), s.steps.end()),
                          QVector<double>(s.smoothed.begin(), s.smoothed.end()), true);
}

void LearningCurvesView::appendLoss(int model, int step, double loss) {
    Series& s = series(model);
    const double f = factor_->value();
    const double smoothed = s.loss.empty() ? loss : f * s.smoothed.back() + (1 - f) * loss;
    s.steps.push_back(step);
    s.loss.push_back(loss);
    s.smoothed.push_back(smoothed);
    s.rawLoss->addData(step, loss);
    s.smoothLoss->addData(step, smoothed);
    requestReplot();
}

void LearningCurvesView::setLoss(int model, std::span<const int> steps, std::span<const double> loss) {
    Series& s = series(model);
    // The log shown so far still heads the one given (a live redraw): only the new points are added.
    const size_t shown = s.steps.size();
    if (shown > 0 && shown <= steps.size() && shown <= loss.size() && s.steps.back() == steps[shown - 1] &&
        s.loss.back() == loss[shown - 1] && s.steps.front() == steps.front()) {
        for (size_t i = shown; i < steps.size() && i < loss.size(); ++i)
            appendLoss(model, steps[i], loss[i]);
        requestReplot();
        return;
    }
    s.steps.assign(steps.begin(), steps.end());
    s.loss.assign(loss.begin(), loss.end());
    s.rawLoss->setData(QVector<double>(s.steps.begin(), s.steps.end()),
                       QVector<double>(loss.begin(), loss.end()), true);
    resmooth(model);
    requestReplot();
}

void LearningCurvesView::setAccuracy(int model, const std::vector<int>& steps,
                                     const std::vector<double>& train, const std::vector<double>& test) {
    Series& s = series(model);
    const QVector<double> keys(steps.begin(), steps.end());
    s.train->setData(keys, QVector<double>(train.begin(), train.end()), true);
    s.test->setData(keys, QVector<double>(test.begin(), test.end()), true);
    requestReplot();
}

void LearningCurvesView::setHistory(int model, std::span<const ndr::EvalRecord> history) {
    std::vector<int> steps;
    std::vector<double> train, test;
    for (const ndr::EvalRecord& r : history) {
        steps.push_back(r.step);
        train.push_back(r.trainAccuracy);
        test.push_back(r.testAccuracy);
    }
    setAccuracy(model, steps, train, test);
}

void LearningCurvesView::setReference(double chance, double longerBaseline) {
    ndrui::setReference(chance_, chance, longerBaseline);
    requestReplot();
}

void LearningCurvesView::setMarker(int step) {
    marker_ = step;
    for (QCPItemStraightLine* line : {lossMarker_, accuracyMarker_}) {
        line->setVisible(step >= 0);
        // Vertical: two points at the same step (y in each rect's own units; only the direction counts).
        line->point1->setCoords(step, 0.001);
        line->point2->setCoords(step, 1);
        line->setPen(QPen(palette().color(QPalette::WindowText), 1, Qt::DashLine));
    }
    requestReplot();
}

void LearningCurvesView::clear() {
    for (Series& s : series_)
        for (QCPGraph* g : {s.rawLoss, s.smoothLoss, s.train, s.test})
            plot()->removeGraph(g);
    series_.clear();
    plot()->legend->clearItems();
    setMarker(-1);
    fitToData();
}

void LearningCurvesView::setSmoothing(bool on, double factor) {
    factor_->setValue(factor);
    smooth_->setChecked(on);
}

bool LearningCurvesView::smoothing() const {
    return smooth_->isChecked();
}

QString LearningCurvesView::toolTipAt(const QPoint& pos) const {
    int index = -1;
    QCPAbstractPlottable* hit = nearestPoint(plot(), pos, &index);
    for (int m = 0; hit && m < int(series_.size()); ++m) {
        const Series& s = series_[m];
        auto* g = static_cast<QCPGraph*>(hit);
        if (g != s.rawLoss && g != s.smoothLoss && g != s.train && g != s.test)
            continue;
        const QCPGraphData& d = *g->data()->at(index);
        if (g == s.train || g == s.test)
            return tr("%1, step %2: %3 accuracy %4")
                .arg(modelName(m))
                .arg(d.key)
                .arg(g == s.train ? tr("IID (train depths)") : tr("Longer (test depths)"))
                .arg(formatValue(d.value));
        if (g == s.smoothLoss)
            return tr("%1, step %2: loss %3 (smoothed %4)")
                .arg(modelName(m))
                .arg(d.key)
                .arg(s.loss[index], 0, 'g', 4)
                .arg(d.value, 0, 'g', 4);
        return tr("%1, step %2: loss %3").arg(modelName(m)).arg(d.key).arg(d.value, 0, 'g', 4);
    }
    return {};
}

void LearningCurvesView::applyPalette() {
    PlotView::applyPalette();
    for (size_t m = 0; m < series_.size(); ++m)
        styleSeries(int(m)); // the models' colours, in the colour scheme shown
    styleKeys();
    styleChanceMark(chance_, palette());
}

void LearningCurvesView::fixRanges(double maxStep, double lossLo, double lossHi) {
    fixedStep_ = maxStep;
    fixedLossLo_ = lossLo;
    fixedLossHi_ = lossHi;
    fitToData();
}

void LearningCurvesView::fitRanges() {
    double maxStep = 1, lo = INFINITY, hi = 0;
    if (fixedStep_ > 0) {
        lossRect_->axis(QCPAxis::atBottom)->setRange(0, fixedStep_ * 1.02);
        if (fixedLossHi_ > 0)
            lossRect_->axis(QCPAxis::atLeft)->setRange(fixedLossLo_ / 1.5, fixedLossHi_ * 1.5);
        accuracyRect_->axis(QCPAxis::atLeft)->setRange(0, 1.04);
        return;
    }
    for (const Series& s : series_) {
        if (!s.steps.empty())
            maxStep = std::max(maxStep, s.steps.back());
        for (QCPGraph* g : {s.train, s.test})
            if (!g->data()->isEmpty())
                maxStep = std::max(maxStep, (g->data()->constEnd() - 1)->key);
        for (double v : s.loss)
            if (v > 0 && std::isfinite(v))
                lo = std::min(lo, v), hi = std::max(hi, v);
    }
    lossRect_->axis(QCPAxis::atBottom)->setRange(0, maxStep * 1.02);
    if (hi > 0)
        lossRect_->axis(QCPAxis::atLeft)->setRange(lo / 1.5, hi * 1.5);
    else
        lossRect_->axis(QCPAxis::atLeft)->setRange(0.01, 10);
    accuracyRect_->axis(QCPAxis::atLeft)->setRange(0, 1.04);
}

} // namespace ndrui
