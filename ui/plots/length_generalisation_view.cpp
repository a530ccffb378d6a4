// Accuracy of every depth over training (see lengthgeneralisationview.h).
#include "ui/plots/length_generalisation_view.h"

#include "ui/common/palette.h"
#include "ui/plots/kept_history.h"
#include "ui/plots/plot_style.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <qcustomplot.h>

#include <cmath>

namespace ndrui {

LengthGeneralisationView::LengthGeneralisationView(QWidget* parent) : PlotView(parent) {
    QCustomPlot* p = plot();
    p->xAxis->setLabel(tr("training step"));
    p->yAxis->setLabel(tr("accuracy"));
    p->axisRect()->setRangeZoom(Qt::Horizontal | Qt::Vertical);
    chance_ = addChanceMark(p, p->axisRect());
    legendRowOnTop(p, 4);
    addTitleRow(p, tr("Accuracy per depth over training"));
    setLeastRectHeight(2 * kLeastRectHeight);

    model_ = new QComboBox(this);
    controls()->addWidget(new QLabel(tr("Model:"), this));
    controls()->addWidget(model_);
    controls()->addStretch(1);
    connect(model_, &QComboBox::currentIndexChanged, this, [this] { rebuild(); });
    setReference(0);
    applyPalette();
}

void LengthGeneralisationView::setDepths(const std::vector<int>& depths,
                                         const std::vector<ndr::Split>& splits, const QStringList& labels,
                                         bool sizes) {
    depths_ = depths;
    labels_ = labels;
    setTitle(plot(), sizes ? tr("Accuracy per size over training") : tr("Accuracy per depth over training"));
    splits_ = splits;
    splits_.resize(depths_.size(), ndr::Split::None);
    rebuild();
}

void LengthGeneralisationView::setHistory(int model, const QString& name,
                                          std::span<const ndr::EvalRecord> history) {
    if (model < 0)
        return;
    if (int(histories_.size()) <= model)
        histories_.resize(model + 1);
    while (names_.size() <= model)
        names_.push_back(tr("model %1").arg(names_.size() + 1));
    keepHistory(histories_[model], history);
    names_[model] = name;
    // Keep the combo in step without re-selecting: a live update must not jump the user's choice.
    const QSignalBlocker block(model_);
    while (model_->count() < names_.size())
        model_->addItem(names_[model_->count()]);
    model_->setItemText(model, name);
    if (model_->currentIndex() < 0)
        model_->setCurrentIndex(0);
    if (model == model_->currentIndex())
        rebuild();
}

void LengthGeneralisationView::setReference(double chance, double longerBaseline) {
    ndrui::setReference(chance_, chance, longerBaseline);
    requestReplot();
}

void LengthGeneralisationView::clear() {
    histories_.clear();
    names_.clear();
    const QSignalBlocker block(model_);
    model_->clear();
    rebuild();
}

void LengthGeneralisationView::setCurrentModel(int model) {
    model_->setCurrentIndex(model);
}

int LengthGeneralisationView::currentModel() const {
    return model_->currentIndex();
}

QColor LengthGeneralisationView::depthColor(int index) const {
    // Shallow depths cool and deep ones warm (or dark to light), lighter on a dark background.
    return sequenceColor(index, int(depths_.size()), palette());
}

void LengthGeneralisationView::rebuild() {
    QCustomPlot* p = plot();
    p->clearGraphs();
    const int model = model_->currentIndex();
    if (model < 0 || model >= int(histories_.size())) {
        requestReplot();
        return;
    }
    const std::vector<ndr::EvalRecord>& history = histories_[model];
    for (size_t i = 0; i < depths_.size(); ++i) {
        QVector<double> steps, acc;
        for (const ndr::EvalRecord& r : history)
            for (size_t k = 0; k < r.depths.size() && k < r.accuracy.size(); ++k)
                if (r.depths[k] == depths_[i]) {
                    steps.push_back(r.step);
                    acc.push_back(r.accuracy[k]);
                }
        QCPGraph* g = p->addGraph();
        g->setData(steps, acc, true);
        const Qt::PenStyle style = splits_[i] == ndr::Split::Test    ? Qt::DashLine
                                   : splits_[i] == ndr::Split::Valid ? Qt::DotLine
                                                                     : Qt::SolidLine;
        g->setPen(QPen(depthColor(int(i)), 2, style));
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 4));
        const QString split = splits_[i] == ndr::Split::Test    ? tr("test")
                              : splits_[i] == ndr::Split::Valid ? tr("valid")
                              : splits_[i] == ndr::Split::Train ? tr("train")
                                                                : QString();
        const QString depth = i < size_t(labels_.size()) ? labels_[int(i)] : tr("depth %1").arg(depths_[i]);
        g->setName(split.isEmpty() ? depth : tr("%1 (%2)").arg(depth, split));
    }
    requestReplot();
}

QString LengthGeneralisationView::toolTipAt(const QPoint& pos) const {
    int index = -1;
    auto* g = static_cast<QCPGraph*>(nearestPoint(plot(), pos, &index));
    const int model = model_->currentIndex();
    for (int i = 0; g && i < plot()->graphCount() && i < int(depths_.size()); ++i)
        if (plot()->graph(i) == g) {
            const QCPGraphData& d = *g->data()->at(index);
            return tr("%1, depth %2, step %3: %4")
                .arg(names_.value(model))
                .arg(depths_[i])
                .arg(d.key)
                .arg(formatValue(d.value));
        }
    return {};
}

void LengthGeneralisationView::applyPalette() {
    PlotView::applyPalette();
    styleChanceMark(chance_, palette());
    rebuild(); // depth colours depend on the background
}

void LengthGeneralisationView::fixStepRange(double maxStep) {
    fixedStep_ = maxStep;
    fitToData();
}

void LengthGeneralisationView::fitRanges() {
    double maxStep = std::max(1.0, fixedStep_);
    for (int i = 0; i < plot()->graphCount(); ++i)
        if (!plot()->graph(i)->data()->isEmpty())
            maxStep = std::max(maxStep, (plot()->graph(i)->data()->constEnd() - 1)->key);
    plot()->xAxis->setRange(0, maxStep * 1.02);
    plot()->yAxis->setRange(0, 1.04);
}

} // namespace ndrui
