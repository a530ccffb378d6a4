// Dashboard layout and the mapping from a run record to each view (see dashboard.h).
#include "ui/dashboard/dashboard.h"

#include "ui/plots/attention_grid_view.h"
#include "ui/plots/depth_bars_view.h"
#include "ui/plots/gate_map_view.h"
#include "ui/plots/learning_curves_view.h"
#include "ui/plots/length_generalisation_view.h"

#include <QLabel>
#include <QPainter>
#include <QSplitter>
#include <QVBoxLayout>
#include <algorithm>

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
    rows_ = new QSplitter(Qt::Vertical, this);
    rows_->addWidget(top);
    rows_->addWidget(bottom);
    rows_->setStretchFactor(0, 1);
    rows_->setStretchFactor(1, 1);
    for (auto* s : {top, bottom, rows_})
        s->setChildrenCollapsible(false);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(rows_);
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
    curves_->clear();
    bars_->clear();
    length_->clear();
    attention_->clear();
    gates_->clear();
    shownShape_ = 0;
    caption_.clear();
    emit captionChanged(caption_);
}

void Dashboard::showRecord(const ndr::RunRecord& record, int uptoEval) {
    const auto& task = record.config.task;
    const double chance = 1.0 / std::max(1, task.symbols);
    const quint64 shape = shapeOf(record);
    if (shape != shownShape_) {
        clear();
        std::vector<int> depths;
        std::vector<ndr::Split> splits;
        depthsOf(task, depths, splits);
        bars_->setDepths(depths, splits);
        length_->setDepths(depths, splits);
        QStringList names;
        for (const auto& m : record.models)
            names << QString::fromStdString(m.config.name);
        curves_->setModelNames(names);
        curves_->setChance(chance);
        bars_->setChance(chance);
        length_->setChance(chance);
        shownShape_ = shape;
    }

    QStringList names;
    std::vector<ndr::Trace> traces;
    int shownStep = -1;
    for (size_t i = 0; i < record.models.size(); ++i) {
        const auto& m = record.models[i];
        const QString name = QString::fromStdString(m.config.name);
        names << name;
        const size_t n = uptoEval < 0 ? m.history.size() : std::min(m.history.size(), size_t(uptoEval) + 1);
        const std::vector<ndr::EvalRecord> history(m.history.begin(), m.history.begin() + long(n));
        // The loss up to the last evaluation shown (all of it when showing everything).
        const int lastStep = uptoEval < 0 || history.empty() ? INT_MAX : history.back().step;
        const size_t k = size_t(std::upper_bound(m.lossLog.steps.begin(), m.lossLog.steps.end(), lastStep) -
                                m.lossLog.steps.begin());
        curves_->setLoss(int(i), std::vector<int>(m.lossLog.steps.begin(), m.lossLog.steps.begin() + long(k)),
                         std::vector<double>(m.lossLog.loss.begin(), m.lossLog.loss.begin() + long(k)));
        curves_->setHistory(int(i), history);
        length_->setHistory(int(i), name, history);
        if (history.empty()) {
            bars_->setAccuracy(int(i), name, {});
            traces.emplace_back();
        } else {
            bars_->setEvaluation(int(i), name, history.back());
            traces.push_back(history.back().probe);
            shownStep = std::max(shownStep, history.back().step);
        }
    }
    attention_->setTraces(traces, names);
    gates_->setTraces(traces, names);
    const QString caption = shownStep < 0 ? QString() : tr("Evaluation at step %1").arg(shownStep);
    if (caption != caption_) {
        caption_ = caption;
        emit captionChanged(caption_);
    }
}

std::vector<std::pair<QString, PlotView*>> Dashboard::views() const {
    return {{"learning-curves", curves_},
            {"depth-accuracy", bars_},
            {"length-generalisation", length_},
            {"attention-maps", attention_},
            {"gate-map", gates_}};
}

QImage Dashboard::renderAll(QSize size) {
    // Each view is drawn at its on-screen share of `size`, so text keeps its size.
    const QSize now = this->size().isEmpty() ? QSize(1200, 800) : this->size();
    QImage image(size, QImage::Format_ARGB32_Premultiplied);
    image.fill(palette().color(QPalette::Window));
    QPainter painter(&image);
    const double sx = double(size.width()) / now.width(), sy = double(size.height()) / now.height();
    for (const auto& [name, view] : views()) {
        const QRect r(view->mapTo(this, QPoint(0, 0)), view->size());
        const QRect target(int(r.x() * sx), int(r.y() * sy), int(r.width() * sx), int(r.height() * sy));
        if (target.isEmpty())
            continue;
        painter.drawImage(target.topLeft(), view->render(target.size()));
    }
    return image;
}

} // namespace ndrui
