// The attention grid (see attentiongridview.h). The grid's column count is chosen from the space
// available so cells stay as large as possible; below a readable size the grid scrolls instead.
#include "attentiongridview.h"

#include "colormaps.h"
#include "plotstyle.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QScrollArea>
#include <QScrollBar>
#include <QVBoxLayout>
#include <qcustomplot.h>

#include <cmath>
#include <tuple>

namespace ndrui {

namespace {

// The smallest map side worth showing before the grid scrolls.
constexpr int kMinSide = 90;

QStringList tokenLabels(const ndr::Trace& trace) {
    QStringList labels;
    for (int i = 0; i < trace.positions; ++i)
        labels << (i < int(trace.tokenNames.size()) ? QString::fromStdString(trace.tokenNames[i])
                                                    : QString::number(i));
    return labels;
}

bool hasAttention(const ndr::Trace& t) {
    return t.steps > 0 && t.heads > 0 && t.positions > 0 &&
           t.attention.size() >= size_t(t.steps) * t.heads * t.positions * t.positions;
}

} // namespace

AttentionGridView::AttentionGridView(QWidget* parent) : PlotView(parent) {
    margins_ = new QCPMarginGroup(plot());
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
    scroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
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

int AttentionGridView::columnsFor(QSize size, double* mapSide) const {
    int most = 1;
    for (const ndr::Trace& t : traces_)
        if (hasAttention(t))
            most = std::max(most, t.steps);
    int bestColumns = 1;
    double best = -1;
    for (int c = 1; c <= most; ++c) {
        const double side = std::min(double(size.width() - extra_.scaleWidth) / c - extra_.mapX,
                                     double(size.height() - gridHeight(c, 0)) / mapRows(c) - extra_.mapY);
        if (side > best + 0.5)
            best = side, bestColumns = c;
    }
    *mapSide = best;
    return bestColumns;
}

int AttentionGridView::mapRows(int columns) const {
    int rows = 0;
    for (const ndr::Trace& t : traces_)
        if (hasAttention(t))
            rows += (t.steps + columns - 1) / columns;
    return std::max(rows, 1);
}

int AttentionGridView::gridHeight(int columns, double side) const {
    int blocks = 0;
    for (const ndr::Trace& t : traces_)
        blocks += hasAttention(t);
    return int(std::ceil(mapRows(columns) * (side + extra_.mapY) + blocks * extra_.title));
}

void AttentionGridView::layoutFor(QSize size) {
    const bool screen = !size.isValid();
    if (screen) {
        size = scroll_->viewport()->size();
        if (QScrollBar* bar = scroll_->verticalScrollBar(); bar->isVisible())
            size.rwidth() += bar->width(); // decide as if there were no scroll bar, so it cannot oscillate
    }
    // Twice: the first pass measures the real space taken by labels and titles, the second uses it.
    for (int pass = 0; pass < 2; ++pass) {
        double side = 0;
        int columns = columnsFor(size, &side);
        int minimumHeight = 0;
        if (side < kMinSide) {
            if (screen) {
                columns =
                    std::max(1, int((size.width() - extra_.scaleWidth - 20) / (kMinSide + extra_.mapX)));
                side = kMinSide;
                minimumHeight = gridHeight(columns, side);
            } else {
                side = std::max(side, 16.0);
            }
        }
        if (screen)
            plot()->setMinimumHeight(minimumHeight);
        if (columns != columns_)
            rebuild(columns);
        // The maps are held at exactly side x side pixels; the grid leaves what is over blank (right
        // and below) rather than stretching cells out of square.
        const int px = int(side);
        for (const Map& m : maps_)
            m.map->keyAxis()->axisRect()->setMaximumSize(px, px);
        for (const auto& [model, title] : titles_)
            title->setMaximumSize(columns_ * int(px + extra_.mapX), QWIDGETSIZE_MAX);
        if (maps_.empty())
            return;
        QCPLayout* layout = plot()->plotLayout();
        layout->setOuterRect(QRect(QPoint(0, 0), size));
        layout->update(QCPLayoutElement::upPreparation);
        layout->update(QCPLayoutElement::upMargins);
        layout->update(QCPLayoutElement::upLayout);
        const QCPAxisRect* rect = maps_[0].map->keyAxis()->axisRect();
        const Extra measured{double(rect->outerRect().width() - rect->width()),
                             double(rect->outerRect().height() - rect->height()),
                             double(titles_[0].second->outerRect().height() + 5),
                             double(scale_->outerRect().width() + 10)};
        if (std::abs(measured.mapX - extra_.mapX) + std::abs(measured.mapY - extra_.mapY) < 2)
            break;
        extra_ = measured;
    }
    requestReplot();
}

bool AttentionGridView::eventFilter(QObject* watched, QEvent* event) {
    // The viewport, not the view: its size is what the grid has, after the controls and scroll bar.
    if (watched == scroll_->viewport() && event->type() == QEvent::Resize)
        layoutFor(QSize());
    return PlotView::eventFilter(watched, event);
}

void AttentionGridView::rebuild(int columns) {
    columns_ = columns;
    QCustomPlot* p = plot();
    p->clearPlottables();
    p->plotLayout()->clear();
    margins_->clear();
    maps_.clear();
    titles_.clear();

    auto* content = new QCPLayoutGrid;
    p->plotLayout()->addElement(0, 0, content);
    // The scale beside the first model's maps and as tall as they are: beside the whole grid it would
    // stretch over the full (maybe scrolled) height.
    scale_ = unitColorScale(new QCPColorScale(p), tr("attention weight"));
    scale_->setMarginGroup(QCP::msTop | QCP::msBottom, margins_);

    QFont small = font();
    small.setPointSizeF(font().pointSizeF() * 0.8);
    QFont bold = font();
    bold.setBold(true);
    int row = 0;
    for (int m = 0; m < int(traces_.size()); ++m) {
        const ndr::Trace& trace = traces_[m];
        if (!hasAttention(trace))
            continue;
        auto* title = new QCPTextElement(p, names_.value(m), bold);
        title->setTextFlags(Qt::AlignLeft | Qt::AlignVCenter);
        title->setMargins(QMargins(8, 6, 0, 0));
        content->addElement(row, 0, title);
        content->setRowStretchFactor(row++, 0.001);
        titles_.push_back({m, title});
        auto* block = new QCPLayoutGrid;
        const int rows = (trace.steps + columns - 1) / columns;
        content->addElement(row, 0, block);
        if (titles_.size() == 1)
            content->addElement(row, 1, scale_);
        content->setRowStretchFactor(row++, rows);
        block->setColumnSpacing(0);
        block->setRowSpacing(0);
        const QStringList labels = tokenLabels(trace);
        for (int t = 0; t < trace.steps; ++t) {
            auto* rect = new QCPAxisRect(p);
            block->addElement(t / columns, t % columns, rect);
            rect->setMarginGroup(QCP::msAll, margins_);
            QCPAxis* top = rect->axis(QCPAxis::atTop);
            top->setVisible(true);
            top->setTicks(false);
            top->setTickLabels(false);
            top->setBasePen(Qt::NoPen);
            top->setLabel(tr("step %1").arg(t + 1));
            top->setLabelPadding(2);
            top->setLabelFont(small);
            for (QCPAxis* axis : {rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft)}) {
                axis->setTickLabelFont(small);
                axis->setTickLabelPadding(2);
            }
            QCPColorMap* map = addHeatmap(rect, labels, labels, scale_);
            map->setName(tr("%1 step %2").arg(names_.value(m)).arg(t + 1));
            maps_.push_back({m, t + 1, map});
        }
        block->expandTo(rows, columns);
    }
    if (maps_.empty()) {
        delete scale_;
        scale_ = nullptr;
        auto* note = new QCPTextElement(p, tr("No attention to show yet"), font());
        content->addElement(0, 0, note);
    }
    stylePlot(p, palette());
    fill();
    fitToData();
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
