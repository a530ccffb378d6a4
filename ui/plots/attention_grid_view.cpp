// The attention grid (see attentiongridview.h): its data, clicks and tooltips; the layout of the maps
// is in attentiongridlayout.cpp.
#include "ui/plots/attention_grid_view.h"

#include "ui/plots/color_maps.h"
#include "ui/plots/plot_style.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QScrollArea>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <cmath>
#include <tuple>

namespace ndrui {

QStringList AttentionGridView::tokenLabels(const ndr::Trace& trace) {
    QStringList labels;
    for (int i = 0; i < trace.positions; ++i)
        labels << (i < int(trace.tokenNames.size()) ? QString::fromStdString(trace.tokenNames[i])
                                                    : QString::number(i));
    return labels;
}

bool AttentionGridView::hasAttention(const ndr::Trace& t) {
    return t.steps > 0 && t.heads > 0 && t.positions > 0 &&
           t.attention.size() >= size_t(t.steps) * t.heads * t.positions * t.positions;
}

AttentionGridView::AttentionGridView(QWidget* parent) : PlotView(parent) {
    head_ = new QComboBox(this);
    head_->addItem(tr("Mean of heads"));
    controls()->addWidget(new QLabel(tr("Head:"), this));
    controls()->addWidget(head_);
    controls()->addStretch(1);
    connect(head_, &QComboBox::currentIndexChanged, this, [this] { fill(); });

    // Many steps make many maps: past a readable size the plot grows and scrolls.
    scroll_ = new QScrollArea(this);
    scroll_->setFrameShape(QFrame::NoFrame);
    scroll_->setWidgetResizable(true);
    rootLayout()->removeWidget(plot());
    scroll_->setWidget(plot());
    rootLayout()->addWidget(scroll_, 1);
    scroll_->viewport()->installEventFilter(this);

    connect(plot(), &QCustomPlot::mousePress, this, [this](QMouseEvent* e) { pressPos_ = e->pos(); });
    connect(plot(), &QCustomPlot::mouseRelease, this, [this](QMouseEvent* e) {
        if ((e->pos() - pressPos_).manhattanLength() > 3 || e->button() != Qt::LeftButton)
            return;
        const Hit hit = hitAt(e->pos());
        if (!hit.map)
            return;
        const int model = hit.map->model, step = hit.map->step, head = shownHead(model);
        emit cellClicked(model, step, head, hit.target, hit.source,
                         weight(model, step, head, hit.target, hit.source));
    });
    rebuild(1);
}

void AttentionGridView::setTraces(const std::vector<ndr::Trace>& traces, const QStringList& modelNames) {
    // A new evaluation of the same probe has the same shape: refill the maps and keep the user's zoom.
    auto shape = [](const std::vector<ndr::Trace>& ts) {
        std::vector<std::tuple<int, int, std::vector<std::string>>> out;
        for (const ndr::Trace& t : ts)
            out.emplace_back(hasAttention(t) ? t.steps : 0, t.heads, t.tokenNames);
        return out;
    };
    const bool sameShape = modelNames == names_ && shape(traces) == shape(traces_) && !maps_.empty();
    traces_ = traces;
    names_ = modelNames;
    int heads = 0;
    for (const ndr::Trace& t : traces_)
        heads = std::max(heads, hasAttention(t) ? t.heads : 0);
    {
        const QSignalBlocker block(head_);
        while (head_->count() > heads + 1)
            head_->removeItem(head_->count() - 1);
        while (head_->count() < heads + 1)
            head_->addItem(tr("Head %1").arg(head_->count()));
    }
    if (sameShape) {
        fill();
        return;
    }
    columns_ = 0; // the maps may differ in number or size: lay out anew
    layoutFor(QSize());
}

void AttentionGridView::setHead(int head) {
    head_->setCurrentIndex(head < 0 ? 0 : head + 1);
}

int AttentionGridView::head() const {
    return head_->currentIndex() - 1;
}

void AttentionGridView::clear() {
    setTraces({}, {});
}

int AttentionGridView::shownHead(int model) const {
    const int h = head();
    return h >= 0 && h < traces_[model].heads ? h : -1;
}

double AttentionGridView::weight(int model, int step, int head, int target, int source) const {
    if (model < 0 || model >= int(traces_.size()) || !hasAttention(traces_[model]))
        return NAN;
    const ndr::Trace& t = traces_[model];
    if (step < 1 || step > t.steps || target < 0 || source < 0 || target >= t.positions ||
        source >= t.positions)
        return NAN;
    if (head >= 0 && head < t.heads)
        return t.att(step - 1, head, target, source);
    double sum = 0;
    for (int h = 0; h < t.heads; ++h)
        sum += t.att(step - 1, h, target, source);
    return sum / t.heads;
}

void AttentionGridView::fill() {
    for (const Map& m : maps_) {
        const ndr::Trace& t = traces_[m.model];
        const int head = shownHead(m.model);
        setHeatmapValues(m.map, t.positions, t.positions, [&](int target, int source) {
            return weight(m.model, m.step, head, target, source);
        });
    }
    for (const auto& [model, title] : titles_) {
        const int h = shownHead(model);
        title->setText(h < 0 ? tr("%1 · mean of heads").arg(names_.value(model))
                             : tr("%1 · head %2").arg(names_.value(model)).arg(h + 1));
    }
    requestReplot();
}

void AttentionGridView::fitRanges() {
    for (const Map& m : maps_)
        fitHeatmap(m.map);
}

AttentionGridView::Hit AttentionGridView::hitAt(const QPoint& pos) const {
    Hit hit;
    for (const Map& m : maps_)
        if (heatmapCellAt(m.map, pos, &hit.target, &hit.source)) {
            hit.map = &m;
            return hit;
        }
    return {};
}

QString AttentionGridView::toolTipAt(const QPoint& pos) const {
    const Hit hit = hitAt(pos);
    if (!hit.map)
        return {};
    const int model = hit.map->model, step = hit.map->step, head = shownHead(model);
    const ndr::Trace& t = traces_[model];
    auto token = [&](int i) {
        return i < int(t.tokenNames.size()) ? QString::fromStdString(t.tokenNames[i]) : QString::number(i);
    };
    return tr("%1, step %2, %3\ntarget %4 (position %5) ← source %6 (position %7): %8")
        .arg(names_.value(model))
        .arg(step)
        .arg(head < 0 ? tr("mean of heads") : tr("head %1").arg(head + 1))
        .arg(token(hit.target))
        .arg(hit.target)
        .arg(token(hit.source))
        .arg(hit.source)
        .arg(formatValue(weight(model, step, head, hit.target, hit.source)));
}

} // namespace ndrui
