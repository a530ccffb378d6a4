// Dashboard layout and the mapping from a run record to each view (see dashboard.h).
#include "ui/dashboard/dashboard.h"

#include "core/task/task.h"
#include "ui/plots/attention_grid_view.h"
#include "ui/plots/depth_bars_view.h"
#include "ui/plots/figure.h"
#include "ui/plots/gate_map_view.h"
#include "ui/plots/learning_curves_view.h"
#include "ui/plots/length_generalisation_view.h"
#include "ui/plots/model_history_views.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSlider>
#include <QSplitter>
#include <QStackedWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <span>

namespace ndrui {

namespace {

// Depths of every split in ascending order, with each depth's split (from the task configuration,
// without building the task's evaluation sets).
void depthsOf(const ndr::TaskConfig& t, std::vector<int>& depths, std::vector<ndr::Split>& splits) {
    depths.clear();
    splits.clear();
    const int hi = std::max({t.trainMaxDepth, t.validMaxDepth, t.testMaxDepth});
    for (int d = 1; d <= hi; ++d) {
        ndr::Split s = ndr::Split::None;
        if (d >= t.trainMinDepth && d <= t.trainMaxDepth)
            s = ndr::Split::Train;
        else if (d >= t.validMinDepth && d <= t.validMaxDepth)
            s = ndr::Split::Valid;
        else if (d >= t.testMinDepth && d <= t.testMaxDepth)
            s = ndr::Split::Test;
        if (s == ndr::Split::None)
            continue;
        depths.push_back(d);
        splits.push_back(s);
    }
}

// A fingerprint of what the views are set up for: the task's depths and the models' names.
quint64 shapeOf(const ndr::RunRecord& r) {
    quint64 h = 1469598103934665603ull;
    auto mix = [&h](quint64 v) { h = (h ^ v) * 1099511628211ull; };
    mix(quint64(r.config.task.trainMinDepth));
    mix(quint64(r.config.task.trainMaxDepth));
    mix(quint64(r.config.task.validMinDepth));
    mix(quint64(r.config.task.validMaxDepth));
    mix(quint64(r.config.task.testMinDepth));
    mix(quint64(r.config.task.testMaxDepth));
    mix(quint64(r.config.task.symbols));
    mix(quint64(r.config.task.kind));
    for (const auto& m : r.models)
        for (char c : m.config.name)
            mix(quint64(uchar(c)));
    return h;
}

} // namespace

Dashboard::Dashboard(QWidget* parent) : QWidget(parent) {
    setObjectName("dashboard");
    curves_ = new LearningCurvesView(this);
    bars_ = new DepthBarsView(this);
    length_ = new LengthGeneralisationView(this);
    attention_ = new AttentionGridView(this);
    gates_ = new GateMapView(this);
    curves_->setObjectName("learningCurves");
    bars_->setObjectName("depthBars");
    length_->setObjectName("lengthGeneralisation");
    attention_->setObjectName("attentionMaps");
    gates_->setObjectName("gateMap");
    headUsage_ = new HeadUsageView(this);
    stepsUsed_ = new StepsUsedView(this);
    operations_ = new OperationAccuracyView(this);
    headUsage_->setObjectName("headUsage");
    stepsUsed_->setObjectName("stepsUsed");
    operations_->setObjectName("operationAccuracy");

    auto* top = top_ = new QSplitter(Qt::Horizontal, this);
    top->addWidget(curves_);
    top->addWidget(bars_);
    top->addWidget(length_);
    for (int i = 0; i < 3; ++i)
        top->setStretchFactor(i, 1);
    auto* bottom = bottom_ = new QSplitter(Qt::Horizontal, this);
    bottom->addWidget(attention_);
    bottom->addWidget(gates_);
    bottom->setStretchFactor(0, 3);
    bottom->setStretchFactor(1, 2);
    routing_ = new QSplitter(Qt::Horizontal, this);
    routing_->addWidget(headUsage_);
    routing_->addWidget(stepsUsed_);
    routing_->addWidget(operations_);
    routing_->setVisible(false);
    rows_ = new QSplitter(Qt::Vertical, this);
    rows_->addWidget(top);
    rows_->addWidget(bottom);
    rows_->addWidget(routing_);
    for (int i = 0; i < 3; ++i)
        rows_->setStretchFactor(i, 1);
    for (auto* s : {top, bottom, routing_, rows_})
        s->setChildrenCollapsible(false);

    // The history slider: which evaluation the depth bars, attention maps and gate map show.
    history_ = new QSlider(Qt::Horizontal, this);
    history_->setObjectName("historySlider");
    history_->setRange(0, 0);
    history_->setPageStep(1);
    history_->setEnabled(false);
    history_->setToolTip(tr("Scrub through the run's evaluations: the depth bars, attention maps and gate "
                            "map show the chosen one, the learning curves mark its step"));
    live_ = new QPushButton(tr("Live"), this);
    live_->setObjectName("historyLive");
    live_->setCheckable(true);
    live_->setChecked(true);
    live_->setToolTip(tr("Follow the latest evaluation while training"));
    historyCaption_ = new QLabel(this);
    historyCaption_->setObjectName("historyCaption");
    historyCaption_->setMinimumWidth(fontMetrics().horizontalAdvance("Evaluation 99 of 99, step 9999999"));
    connect(history_, &QSlider::valueChanged, this, [this](int v) {
        // The last position is live only through the Live button: a dragged slider stays put.
        selectEvaluation(v);
    });
    connect(live_, &QPushButton::toggled, this,
            [this](bool on) { selectEvaluation(on ? -1 : history_->value()); });
    auto* bar = new QHBoxLayout;
    bar->setContentsMargins(6, 2, 6, 2);
    bar->addWidget(new QLabel(tr("History"), this));
    bar->addWidget(history_, 1);
    bar->addWidget(historyCaption_);
    bar->addWidget(live_);

    // Before any run: what to do, instead of empty axes.
    auto* hint = new QLabel(tr("<p style='font-size:large'>No run yet.</p>"
                               "<p>Pick a preset (or set the fields) in the Experiment panel and press "
                               "<b>Start</b>,<br>or open a saved run with File &gt; Open (Ctrl+O) or by "
                               "dropping its run.json here.</p>"),
                            this);
    hint->setObjectName("emptyHint");
    hint->setAlignment(Qt::AlignCenter);
    hint->setWordWrap(true);
    pages_ = new QStackedWidget(this);
    pages_->addWidget(hint);
    pages_->addWidget(rows_);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(pages_, 1);
    layout->addLayout(bar);
}

void Dashboard::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (sized_)
        return;
    // Views ask for different widths (legends); start them on equal terms, the user drags from there.
    sized_ = true;
    const int w = std::max(300, width());
    top_->setSizes({w / 3, w / 3, w - 2 * (w / 3)});
    bottom_->setSizes({w * 3 / 5, w - w * 3 / 5});
    rows_->setSizes({height() / 2, height() - height() / 2});
}

int Dashboard::evaluationCount(const ndr::RunRecord& record) {
    size_t n = 0;
    for (const auto& m : record.models)
        n = std::max(n, m.history.size());
    return int(n);
}

void Dashboard::clear() {
    clearViews();
    pages_->setCurrentIndex(0);
    record_ = nullptr;
    selected_ = -1;
    updateSlider(0);
    historyCaption_->clear();
}

void Dashboard::clearViews() {
    curves_->clear();
    bars_->clear();
    length_->clear();
    attention_->clear();
    gates_->clear();
    headUsage_->clear();
    stepsUsed_->clear();
    operations_->clear();
    routing_->setVisible(false);
    shownShape_ = 0;
    caption_.clear();
    emit captionChanged(caption_);
}

void Dashboard::selectEvaluation(int index) {
    selected_ = index < 0 ? -1 : index;
    {
        const QSignalBlocker a(live_), b(history_);
        live_->setChecked(selected_ < 0);
        history_->setValue(selected_ < 0 ? history_->maximum() : selected_);
    }
    if (record_ && !record_->models.empty())
        draw(*record_, -1, selected_);
}

void Dashboard::updateSlider(int evaluations) {
    const QSignalBlocker block(history_);
    history_->setRange(0, std::max(0, evaluations - 1));
    history_->setEnabled(evaluations > 1);
    if (selected_ >= evaluations)
        selected_ = -1;
    history_->setValue(selected_ < 0 ? history_->maximum() : selected_);
    live_->setChecked(selected_ < 0);
}

void Dashboard::showRecord(const ndr::RunRecord& record, int uptoEval) {
    if (uptoEval < 0) {
        record_ = &record;
        updateSlider(evaluationCount(record));
    }
    draw(record, uptoEval, uptoEval < 0 ? selected_ : uptoEval);
}

void Dashboard::draw(const ndr::RunRecord& record, int uptoEval, int selected) {
    pages_->setCurrentIndex(1);
    const auto& task = record.config.task;
    const double chance = ndr::chanceAccuracyOf(task);
    const quint64 shape = shapeOf(record);
    if (shape != shownShape_) {
        clearViews();
        std::vector<int> depths;
        std::vector<ndr::Split> splits;
        depthsOf(task, depths, splits);
        QStringList labels;
        for (int d : depths)
            labels << QString::fromStdString(ndr::depthLabel(task, d));
        const bool sizes = ndr::depthsAreSizes(task);
        bars_->setDepthMeaning(QString::fromStdString(ndr::depthMeaning(task)), labels, sizes);
        bars_->setDepths(depths, splits);
        length_->setDepths(depths, splits, labels, sizes);
        stepsUsed_->setTask(task);
        operations_->setTask(task);
        operations_->setChance(chance);
        QStringList names;
        for (const auto& m : record.models)
            names << QString::fromStdString(m.config.name);
        curves_->setModelNames(names);
        bars_->setChance(chance);
        shownShape_ = shape;
    }

    // Frames of the history keep the axes of the whole run, so that an animation does not rescale.
    const bool fixed = uptoEval >= 0;
    if (fixed || framesFixed_) {
        double lastStep = 0, lo = INFINITY, hi = 0;
        if (fixed)
            for (const auto& m : record.models) {
                if (!m.history.empty())
                    lastStep = std::max(lastStep, double(m.history.back().step));
                for (double v : m.lossLog.loss)
                    if (v > 0 && std::isfinite(v))
                        lo = std::min(lo, v), hi = std::max(hi, v);
            }
        curves_->fixRanges(lastStep, hi > 0 ? lo : 0, hi);
        length_->fixStepRange(lastStep);
        framesFixed_ = fixed;
    }
    // The step of the chosen evaluation (of the longest history); each model shows its latest
    // evaluation at or before it, and the caption says when the models' steps differ.
    int chosenStep = INT_MAX;
    if (selected >= 0)
        for (const auto& m : record.models)
            if (size_t(selected) < m.history.size())
                chosenStep = std::min(chosenStep, m.history[size_t(selected)].step);
    QStringList names, steps;
    std::vector<ndr::Trace> traces;
    int shownStep = -1;
    bool sameStep = true;
    for (size_t i = 0; i < record.models.size(); ++i) {
        const auto& m = record.models[i];
        const QString name = QString::fromStdString(m.config.name);
        names << name;
        const size_t n = uptoEval < 0 ? m.history.size() : std::min(m.history.size(), size_t(uptoEval) + 1);
        const std::span<const ndr::EvalRecord> history(m.history.data(), n);
        // The loss up to the last evaluation shown (all of it when showing everything).
        const int lastStep = uptoEval < 0 || history.empty() ? INT_MAX : history.back().step;
        const size_t k = size_t(std::upper_bound(m.lossLog.steps.begin(), m.lossLog.steps.end(), lastStep) -
                                m.lossLog.steps.begin());
        curves_->setLoss(int(i), std::span<const int>(m.lossLog.steps.data(), k),
                         std::span<const double>(m.lossLog.loss.data(), std::min(k, m.lossLog.loss.size())));
        curves_->setHistory(int(i), history);
        length_->setHistory(int(i), name, history);
        headUsage_->setModel(int(i), m.config, history);
        stepsUsed_->setModel(int(i), m.config, history);
        operations_->setModel(int(i), m.config, history);
        const auto shown =
            std::find_if(history.rbegin(), history.rend(),
                         [chosenStep](const ndr::EvalRecord& e) { return e.step <= chosenStep; });
        if (shown == history.rend()) {
            bars_->setAccuracy(int(i), name, {});
            traces.emplace_back();
        } else {
            bars_->setEvaluation(int(i), name, *shown);
            traces.push_back(shown->probe);
            if (shownStep >= 0 && shown->step != shownStep)
                sameStep = false;
            shownStep = std::max(shownStep, shown->step);
            steps << tr("%1 at step %2").arg(name).arg(shown->step);
        }
    }
    // The majority baseline is the same in every evaluation of a run: the latest that has one.
    double longerBaseline = NAN;
    for (const auto& m : record.models)
        if (!m.history.empty() && !m.history.back().baseline.empty()) {
            const ndr::EvalRecord& e = m.history.back();
            longerBaseline = ndr::splitMean(task, e.depths, e.baseline, ndr::Split::Test);
            break;
        }
    curves_->setReference(chance, longerBaseline);
    length_->setReference(chance, longerBaseline);
    attention_->setTraces(traces, names);
    gates_->setTraces(traces, names);
    headUsage_->setVisible(headUsage_->hasData());
    stepsUsed_->setVisible(stepsUsed_->hasData());
    operations_->setVisible(operations_->hasData());
    const bool routingRow = headUsage_->hasData() || stepsUsed_->hasData() || operations_->hasData();
    if (routingRow != routing_->isVisible()) {
        routing_->setVisible(routingRow);
        // The third row takes a quarter of the height when it appears, the top row (the one with the
        // most legend entries) the most.
        const int h = std::max(300, rows_->height());
        rows_->setSizes(routingRow ? QList<int>{h * 9 / 20, h * 3 / 10, h - h * 9 / 20 - h * 3 / 10}
                                   : QList<int>{h / 2, h - h / 2, 0});
    }
    curves_->setMarker(uptoEval < 0 && selected >= 0 ? shownStep : -1);
    const QString caption = shownStep < 0 ? QString()
                            : sameStep    ? tr("Evaluation at step %1").arg(shownStep)
                                          : tr("Evaluations: %1").arg(steps.join(", "));
    const int count = evaluationCount(record);
    historyCaption_->setText(
        shownStep < 0  ? tr("no evaluation yet")
        : selected < 0 ? tr("live, step %1").arg(shownStep)
                       : tr("evaluation %1 of %2, step %3").arg(selected + 1).arg(count).arg(shownStep));
    if (caption != caption_) {
        caption_ = caption;
        emit captionChanged(caption_);
    }
}

void Dashboard::showChangeMap(bool change) {
    gates_->setQuantity(change ? GateMapView::Quantity::Change : GateMapView::Quantity::Gates);
}

std::vector<std::pair<QString, PlotView*>> Dashboard::views() const {
    std::vector<std::pair<QString, PlotView*>> views = {{"learning-curves", curves_},
                                                        {"depth-accuracy", bars_},
                                                        {"length-generalisation", length_},
                                                        {"attention-maps", attention_},
                                                        {"gate-map", gates_}};
    if (headUsage_->hasData())
        views.emplace_back("head-usage", headUsage_);
    if (stepsUsed_->hasData())
        views.emplace_back("steps-used", stepsUsed_);
    if (operations_->hasData())
        views.emplace_back("operation-accuracy", operations_);
    return views;
}

void Dashboard::paintAll(QPainter& painter, QSize size) {
    // Each view is drawn at its on-screen share of `size`, so text keeps its size.
    const QSize now = this->size().isEmpty() ? QSize(1200, 800) : this->size();
    painter.fillRect(QRect(QPoint(0, 0), size), palette().color(QPalette::Window));
    const double sx = double(size.width()) / now.width(), sy = double(size.height()) / now.height();
    for (const auto& [name, view] : views()) {
        const QRect r(view->mapTo(this, QPoint(0, 0)), view->size());
        const QRect target(int(r.x() * sx), int(r.y() * sy), int(r.width() * sx), int(r.height() * sy));
        if (target.isEmpty())
            continue;
        painter.save();
        painter.translate(target.topLeft());
        // The attention grid with readable maps: when they cannot all be, the first rows of the grid.
        if (view == attention_)
            attention_->paintReadable(painter, target.size());
        else
            view->paint(painter, target.size());
        painter.restore();
    }
}

QImage Dashboard::renderAll(QSize size) {
    return paintImage({size}, [this](QPainter& p, QSize s) { paintAll(p, s); });
}

} // namespace ndrui
