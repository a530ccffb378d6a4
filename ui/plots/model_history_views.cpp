// Head usage, steps used and accuracy per operation over training (see model_history_views.h).
#include "ui/plots/model_history_views.h"

#include "core/config/model_kind.h"

#include "ui/common/palette.h"
#include "ui/common/split_name.h"
#include "ui/plots/kept_history.h"
#include "ui/plots/plot_style.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace ndrui {

namespace {

// Heads, depths and operations alike in the colours of a sequence (palette.h).
QColor seriesColor(int index, int count, const QPalette& palette) {
    return sequenceColor(index, count, palette);
}

QCPTextElement* titleOf(QCustomPlot* p) {
    return p->plotLayout()->elementCount() > 0 ? qobject_cast<QCPTextElement*>(p->plotLayout()->element(0, 0))
                                               : nullptr;
}

} // namespace

ModelHistoryView::ModelHistoryView(const QString& title, const QString& yLabel, QWidget* parent)
    : PlotView(parent) {
    QCustomPlot* p = plot();
    p->xAxis->setLabel(tr("training step"));
    p->yAxis->setLabel(yLabel);
    p->axisRect()->setRangeZoom(Qt::Horizontal | Qt::Vertical);
    legendRowOnTop(p, 5);
    addTitleRow(p, title);
    setLeastRectHeight(kLeastRectHeight);
    model_ = new QComboBox(this);
    controls()->addWidget(new QLabel(tr("Model:"), this));
    controls()->addWidget(model_);
    controls()->addStretch(1);
    connect(model_, &QComboBox::currentIndexChanged, this, [this] { rebuild(); });
}

void ModelHistoryView::setModel(int model, const ndr::ModelConfig& config,
                                std::span<const ndr::EvalRecord> history) {
    if (model < 0)
        return;
    if (int(models_.size()) <= model)
        models_.resize(size_t(model) + 1);
    Entry& e = models_[size_t(model)];
    if (!(e.config == config))
        e = {config, {}};
    keepHistory(e.history, history);
    refreshChoices();
    if (currentModel() == model)
        rebuild();
}

void ModelHistoryView::refreshChoices() {
    // Keep the combo in step without re-selecting: a live update must not jump the user's choice.
    const QSignalBlocker block(model_);
    const int shown = currentModel();
    model_->clear();
    for (size_t m = 0; m < models_.size(); ++m) {
        const auto& h = models_[m].history;
        if (std::any_of(h.begin(), h.end(), [this](const ndr::EvalRecord& e) { return hasFigures(e); }))
            model_->addItem(QString::fromStdString(models_[m].config.name), int(m));
    }
    const int again = model_->findData(shown);
    model_->setCurrentIndex(again >= 0 ? again : model_->count() > 0 ? 0 : -1);
    if (currentModel() != shown)
        rebuild();
}

void ModelHistoryView::clear() {
    models_.clear();
    const QSignalBlocker block(model_);
    model_->clear();
    rebuild();
}

bool ModelHistoryView::hasData() const {
    return model_->count() > 0;
}

int ModelHistoryView::currentModel() const {
    return model_->currentIndex() < 0 ? -1 : model_->currentData().toInt();
}

void ModelHistoryView::setCurrentModel(int model) {
    const int index = model_->findData(model);
    if (index >= 0)
        model_->setCurrentIndex(index);
}

const std::vector<ndr::EvalRecord>& ModelHistoryView::shownHistory() const {
    static const std::vector<ndr::EvalRecord> none;
    const int m = currentModel();
    return m < 0 ? none : models_[size_t(m)].history;
}

void ModelHistoryView::rebuild() {
    plot()->clearPlottables();
    plot()->clearItems();
    const int m = currentModel();
    if (m >= 0)
        draw(models_[size_t(m)].config, models_[size_t(m)].history);
    requestReplot();
}

QString ModelHistoryView::toolTipAt(const QPoint& pos) const {
    int index = -1;
    const QCPAbstractPlottable* g = nearestPoint(plot(), pos, &index);
    for (int i = 0; g && i < plot()->graphCount(); ++i)
        if (plot()->graph(i) == g)
            return model_->currentText() + ", " + pointText(i, index);
    return {};
}

void ModelHistoryView::fitRanges() {
    double maxStep = 1;
    for (int i = 0; i < plot()->graphCount(); ++i)
        if (!plot()->graph(i)->data()->isEmpty())
            maxStep = std::max(maxStep, (plot()->graph(i)->data()->constEnd() - 1)->key);
    plot()->xAxis->setRange(0, maxStep * 1.02);
    plot()->yAxis->setRange(0, yMax_);
}

void ModelHistoryView::applyPalette() {
    PlotView::applyPalette();
    rebuild(); // series colours depend on the background
}

// --- Head usage ---

HeadUsageView::HeadUsageView(QWidget* parent)
    : ModelHistoryView(tr("Head usage over training"), tr("routing share"), parent) {
    applyPalette();
}

void HeadUsageView::draw(const ndr::ModelConfig& config, const std::vector<ndr::EvalRecord>& history) {
    const int H = ndr::factsOf(config).heads;
    const double maxEntropy = std::log(double(std::max(2, H)));
    for (int h = 0; h < H; ++h) {
        QVector<double> steps, share;
        for (const ndr::EvalRecord& e : history)
            if (int(e.headShare.size()) == H) {
                steps.push_back(e.step);
                share.push_back(e.headShare[size_t(h)]);
            }
        QCPGraph* g = plot()->addGraph();
        g->setData(steps, share, true);
        g->setPen(QPen(seriesColor(h, H, palette()), 2));
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 4));
        g->setName(tr("head %1").arg(h + 1));
    }
    // The entropy as a fraction of its maximum log H: 1 is uniform routing, 0 one head per token.
    QVector<double> steps, entropy;
    for (const ndr::EvalRecord& e : history)
        if (!e.headShare.empty()) {
            steps.push_back(e.step);
            entropy.push_back(e.routeEntropy / maxEntropy);
        }
    QCPGraph* g = plot()->addGraph();
    g->setData(steps, entropy, true);
    g->setPen(QPen(palette().color(QPalette::WindowText), 2, Qt::DashLine));
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, 4));
    g->setName(tr("entropy / log %1").arg(H));
}

QString HeadUsageView::pointText(int graph, int index) const {
    const QCPGraphData& d = *plot()->graph(graph)->data()->at(index);
    if (graph == plot()->graphCount() - 1)
        return tr("step %1: routing entropy %2 of its maximum").arg(d.key).arg(formatValue(d.value));
    return tr("step %1: head %2 gets %3 of the routing weight")
        .arg(d.key)
        .arg(graph + 1)
        .arg(formatValue(d.value));
}

// --- Steps used ---

StepsUsedView::StepsUsedView(QWidget* parent)
    : ModelHistoryView(tr("Steps used (halting at evaluation)"), tr("mean steps run"), parent) {
    applyPalette();
}

double StepsUsedView::computeSaved() const {
    return steps_ > 0 ? saved_ : std::nan("");
}

void StepsUsedView::draw(const ndr::ModelConfig& config, const std::vector<ndr::EvalRecord>& history) {
    const ndr::ModelFacts facts = ndr::factsOf(config);
    steps_ = facts.evalSteps;
    yMax_ = steps_ * 1.08 + 0.5;
    const ndr::EvalRecord* latest = nullptr;
    for (const ndr::EvalRecord& e : history)
        if (!e.haltCounts.empty())
            latest = &e;
    if (!latest) {
        steps_ = 0;
        if (QCPTextElement* title = titleOf(plot()))
            title->setText(tr("Steps used (halting at evaluation)"));
        return;
    }
    const auto& depths = latest->depths;
    const int n = int(std::min(depths.size(), latest->haltCounts.size()));
    for (int d = 0; d < n; ++d) {
        QVector<double> steps, mean;
        for (const ndr::EvalRecord& e : history)
            if (size_t(d) < e.haltCounts.size() && size_t(d) < e.depths.size() &&
                e.depths[size_t(d)] == depths[size_t(d)]) {
                steps.push_back(e.step);
                mean.push_back(e.meanHaltStep(size_t(d)));
            }
        QCPGraph* g = plot()->addGraph();
        g->setData(steps, mean, true);
        g->setPen(QPen(seriesColor(d, n, palette()), 2));
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 4));
        g->setName(depthName(task_, depths[size_t(d)]));
    }
    auto* fixed = new QCPItemStraightLine(plot());
    fixed->point1->setCoords(0, steps_);
    fixed->point2->setCoords(1, steps_);
    fixed->setPen(QPen(palette().color(QPalette::WindowText), 1, Qt::DashLine));
    saved_ = 1.0 - ndr::meanStepsRun(*latest) / steps_;
    // What halting costs: the largest drop from running every step to halting, over the depths.
    cost_ = std::nan("");
    QString costText;
    if (latest->everyStepAccuracy.size() == depths.size() && latest->accuracy.size() == depths.size()) {
        size_t worst = 0;
        for (size_t d = 0; d < depths.size(); ++d)
            if (latest->everyStepAccuracy[d] - latest->accuracy[d] >
                latest->everyStepAccuracy[worst] - latest->accuracy[worst])
                worst = d;
        cost_ = latest->everyStepAccuracy[worst] - latest->accuracy[worst];
        costText = cost_ > 0 ? tr("; halting costs at most %1 accuracy (%2)")
                                   .arg(cost_, 0, 'f', 3)
                                   .arg(depthName(task_, depths[worst]))
                             : tr("; halting costs no accuracy");
    }
    if (QCPTextElement* title = titleOf(plot()))
        title->setText(
            tr("Steps used (%1): compute saved %2% of %3 steps (step %4)%5")
                .arg(!facts.learnedHalting.empty()
                         ? QString::fromStdString(facts.learnedHalting)
                         : QStringLiteral("%1 < %2")
                               .arg(facts.haltOn == ndr::HaltSignal::Change ? tr("change") : tr("gates"))
                               .arg(facts.haltThreshold, 0, 'f', 2))
                .arg(std::lround(100 * saved_))
                .arg(steps_)
                .arg(latest->step)
                .arg(costText));
}

double StepsUsedView::haltingCost() const {
    return steps_ > 0 ? cost_ : std::nan("");
}

QString StepsUsedView::pointText(int graph, int index) const {
    const QCPGraphData& d = *plot()->graph(graph)->data()->at(index);
    // The distribution behind the mean: how many examples ran each number of steps.
    QString counts, accuracy;
    const size_t g = size_t(graph);
    for (const ndr::EvalRecord& e : shownHistory()) {
        if (e.step != int(d.key) || g >= e.haltCounts.size())
            continue;
        for (size_t s = 1; s < e.haltCounts[g].size(); ++s)
            if (e.haltCounts[g][s] > 0)
                counts += tr("\n  %1 steps: %2 examples").arg(s).arg(e.haltCounts[g][s]);
        if (g < e.everyStepAccuracy.size() && g < e.accuracy.size())
            accuracy = tr("\naccuracy %1 halting, %2 running every step")
                           .arg(e.accuracy[g], 0, 'f', 3)
                           .arg(e.everyStepAccuracy[g], 0, 'f', 3);
    }
    return tr("%1, step %2: %3 steps on average (of %4)%5%6")
        .arg(plot()->graph(graph)->name())
        .arg(d.key)
        .arg(d.value, 0, 'f', 2)
        .arg(steps_)
        .arg(accuracy)
        .arg(counts);
}

// --- Accuracy per operation ---

OperationAccuracyView::OperationAccuracyView(QWidget* parent)
    : ModelHistoryView(tr("Accuracy per operation at the root: test depths (solid), training (dashed)"),
                       tr("accuracy"), parent) {
    applyPalette();
}

void OperationAccuracyView::draw(const ndr::ModelConfig&, const std::vector<ndr::EvalRecord>& history) {
    lines_.clear();
    const ndr::EvalRecord* latest = nullptr;
    for (const ndr::EvalRecord& e : history)
        if (!e.operations.empty())
            latest = &e;
    if (!latest)
        return;
    const std::vector<std::string>& operations = latest->operations;
    const int n = int(operations.size());
    for (int o = 0; o < n; ++o)
        for (ndr::Split split : {ndr::Split::Test, ndr::Split::Train}) {
            QVector<double> steps, accuracy;
            for (const ndr::EvalRecord& e : history) {
                const auto at = std::find(e.operations.begin(), e.operations.end(), operations[size_t(o)]);
                if (at == e.operations.end())
                    continue;
                const double mean =
                    ndr::operationSplitMean(e, size_t(at - e.operations.begin()), task_, split);
                if (!std::isnan(mean)) {
                    steps.push_back(e.step);
                    accuracy.push_back(mean);
                }
            }
            if (steps.isEmpty())
                continue;
            QCPGraph* g = plot()->addGraph();
            g->setData(steps, accuracy, true);
            const bool test = split == ndr::Split::Test;
            g->setPen(QPen(seriesColor(o, n, palette()), 2, test ? Qt::SolidLine : Qt::DashLine));
            g->setScatterStyle(
                QCPScatterStyle(test ? QCPScatterStyle::ssDisc : QCPScatterStyle::ssCircle, 4));
            g->setName(QString::fromStdString(operations[size_t(o)]));
            // One legend entry per operation: its test line, or its training line where it has none.
            if (!test && !lines_.empty() && lines_.back().operation == operations[size_t(o)])
                g->removeFromLegend();
            lines_.push_back({operations[size_t(o)], split});
        }
    const ChanceMark chance = addChanceMark(plot(), plot()->axisRect());
    ndrui::setChance(chance, chance_);
    styleChanceMark(chance, palette());
}

QString OperationAccuracyView::pointText(int graph, int index) const {
    const QCPGraphData& d = *plot()->graph(graph)->data()->at(index);
    const Line& line = lines_[size_t(graph)];
    // How many examples the operation roots on the split's depths at that evaluation.
    int examples = 0;
    for (const ndr::EvalRecord& e : shownHistory()) {
        const auto at = std::find(e.operations.begin(), e.operations.end(), line.operation);
        if (e.step != int(d.key) || at == e.operations.end())
            continue;
        for (size_t k = 0; k < e.depths.size(); ++k)
            if (ndr::Task::splitOf(task_, e.depths[k]) == line.split)
                examples += e.operationExamples[k][size_t(at - e.operations.begin())];
    }
    return tr("step %1: %2 at the root, %3 depths: accuracy %4 (mean over the depths; %5 examples)")
        .arg(d.key)
        .arg(QString::fromStdString(line.operation))
        .arg(line.split == ndr::Split::Test ? tr("test") : tr("training"))
        .arg(d.value, 0, 'f', 3)
        .arg(examples);
}

} // namespace ndrui
