// The attention grid's layout (see attentiongridview.h). Every map is held at exactly side x side
// pixels with margins computed from the fonts, so the grid's size is known before it is laid out: the
// column count is the one that makes the maps largest in the space there is, and below a readable
// size the grid scrolls instead (on screen) or thins its token labels (in an export).
#include "ui/plots/attention_grid_view.h"

#include "ui/plots/color_maps.h"
#include "ui/plots/figure.h"
#include "ui/plots/plot_style.h"

#include <QPainter>
#include <QScrollArea>
#include <QScrollBar>
#include <QStyle>
#include <qcustomplot.h>

#include <cmath>

namespace ndrui {

namespace {

constexpr int kGap = 8;          // between maps, and between the grid and the colour scale
constexpr int kMinSide = 96;     // no map is smaller on screen, however few its tokens
constexpr int kTickOut = 3;      // tick length outside the map (see addHeatmap)
constexpr int kLabelPadding = 2; // between ticks and token labels

} // namespace

QFont AttentionGridView::labelFont() const {
    QFont small = font();
    small.setPointSizeF(std::max(7.5, font().pointSizeF() * 0.85));
    return small;
}

AttentionGridView::Margins AttentionGridView::margins() const {
    const QFontMetrics fm(labelFont());
    QFont bold = font();
    bold.setBold(true);
    int token = 0, title = 0;
    for (int i = 0; i < int(traces_.size()); ++i)
        if (hasAttention(traces_[i])) {
            for (const QString& label : tokenLabels(traces_[i]))
                token = std::max(token, fm.horizontalAdvance(label));
            title = std::max(
                title, QFontMetrics(bold).horizontalAdvance(tr("%1 · mean of heads").arg(names_.value(i))));
        }
    Margins m;
    m.labelLeft = token + kLabelPadding + kTickOut + 4;
    m.plainLeft = kTickOut + kGap;
    m.right = 1;
    m.top = fm.height() + 3; // "step n"
    // Source tokens read upwards (rotated), so each takes one line height across however long it is.
    m.labelBottom = token + kLabelPadding + kTickOut + 4;
    m.plainBottom = kTickOut + kGap;
    m.title = QFontMetrics(bold).height() + 10;
    m.titleWidth = title + 8;
    return m;
}

int AttentionGridView::mapRows(int columns) const {
    int rows = 0;
    for (const ndr::Trace& t : traces_)
        if (hasAttention(t))
            rows += (t.steps + columns - 1) / columns;
    return rows;
}

QSize AttentionGridView::neededSize(int columns, int side) const {
    const Margins m = margins();
    int blocks = 0;
    for (const ndr::Trace& t : traces_)
        blocks += hasAttention(t);
    const int rows = mapRows(columns);
    const int maps = m.labelLeft + columns * (side + m.right) + (columns - 1) * m.plainLeft;
    const int width = std::max(maps, m.titleWidth) + kGap + scaleWidth_;
    const int height =
        blocks * (m.title + m.labelBottom - m.plainBottom) + rows * (m.top + side + m.plainBottom);
    return {width, height};
}

int AttentionGridView::sideFor(int columns, QSize size) const {
    const Margins m = margins();
    const QSize fixed = neededSize(columns, 0);
    const int across = size.width() - kGap - scaleWidth_ - m.labelLeft - (columns - 1) * m.plainLeft;
    const int rows = std::max(1, mapRows(columns));
    return std::min(across / columns - m.right, (size.height() - fixed.height()) / rows);
}

AttentionGridView::Geometry AttentionGridView::geometryFor(QSize size, bool screen) const {
    int most = 1, positions = 1;
    for (const ndr::Trace& t : traces_)
        if (hasAttention(t))
            most = std::max(most, t.steps), positions = std::max(positions, t.positions);
    Geometry g;
    g.side = -1;
    for (int c = 1; c <= most; ++c)
        if (const int side = sideFor(c, size); side > g.side)
            g.side = side, g.columns = c;
    // A cell as tall as a label keeps every token label readable.
    const int line = QFontMetrics(labelFont()).height();
    const int readable = std::max(kMinSide, positions * line);
    if (screen && g.side < readable) {
        // Too small to read: as many columns of readable maps as fit across, scrolled down.
        const int bar = style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, scroll_);
        const QSize across(size.width() - bar, 1 << 20);
        g.columns = 1;
        while (g.columns < most && sideFor(g.columns + 1, across) >= readable)
            ++g.columns;
        g.side = std::max(readable, sideFor(g.columns, across));
        g.scroll = true;
    }
    g.side = std::max(g.side, 8);
    g.every = std::max(1, int(std::ceil(double(line) * positions / g.side)));
    // An export has no scroll bar: every token keeps its label, in a smaller font where a label per
    // cell does not fit (down to 60% of the usual size; below that, every other label).
    if (!screen && g.every > 1) {
        const double scale = double(g.side) / (double(line) * positions);
        if (scale >= 0.6) {
            g.labelScale = scale;
            g.every = 1;
        }
    }
    g.needed = neededSize(g.columns, g.side);
    g.visibleHeight = size.height();
    return g;
}

void AttentionGridView::paintReadable(QPainter& painter, QSize size) {
    if (geometryFor(size, false).every == 1 || !geometryFor(size, true).scroll) {
        paint(painter, size);
        return;
    }
    // The grid as the screen lays it out, with the maps, titles and scale that fit in `size` from the
    // top: QCustomPlot sets each element's own clip, so what does not fit is hidden rather than cut.
    const Geometry g = arrange(size, true);
    QCustomPlot* p = plot();
    const QRect viewport = p->viewport();
    p->setViewport(QRect(QPoint(0, 0), g.needed));
    for (auto phase :
         {QCPLayoutElement::upPreparation, QCPLayoutElement::upMargins, QCPLayoutElement::upLayout})
        p->plotLayout()->update(phase);
    std::vector<QCPLayoutElement*> hidden;
    for (QCPLayoutElement* e : p->plotLayout()->elements(true)) {
        if (!e || !e->visible() || qobject_cast<QCPLayoutGrid*>(e))
            continue;
        // A scale's margins hold it to the first row of maps: its bar is what must fit.
        const QRect r = qobject_cast<QCPColorScale*>(e) ? e->rect() : e->outerRect();
        if (r.bottom() >= size.height()) {
            e->setVisible(false);
            hidden.push_back(e);
        }
    }
    p->setViewport(viewport);
    painter.save();
    painter.setClipRect(QRect(QPoint(0, 0), size), Qt::IntersectClip); // the background's fill
    painter.fillRect(QRect(QPoint(0, 0), size), palette().color(QPalette::Window));
    drawPlot(painter, g.needed);
    painter.restore();
    for (QCPLayoutElement* e : hidden)
        e->setVisible(true);
    layoutFor(QSize());
}

int AttentionGridView::heightFor(int width, int columns) const {
    int most = 0;
    for (const ndr::Trace& t : traces_)
        if (hasAttention(t))
            most = std::max(most, t.steps);
    if (most == 0)
        return 120; // a note
    const int rows = (most + std::max(1, columns) - 1) / std::max(1, columns);
    const int across = (most + rows - 1) / rows;
    return neededSize(across, std::max(8, sideFor(across, QSize(width, 1 << 20)))).height();
}

QImage AttentionGridView::renderReadable(QSize size) {
    return paintImage({size}, [this](QPainter& p, QSize s) { paintReadable(p, s); });
}

void AttentionGridView::layoutFor(QSize size) {
    const bool screen = !size.isValid();
    if (screen) {
        size = scroll_->viewport()->size();
        // Decide as if there were no scroll bars, so showing one cannot change the decision.
        if (QScrollBar* bar = scroll_->verticalScrollBar(); bar->isVisible())
            size.rwidth() += bar->width();
        if (QScrollBar* bar = scroll_->horizontalScrollBar(); bar->isVisible())
            size.rheight() += bar->height();
    }
    const Geometry g = arrange(size, screen);
    if (screen)
        plot()->setMinimumSize(g.scroll ? g.needed : kMinimumPlotSize);
}

AttentionGridView::Geometry AttentionGridView::arrange(QSize size, bool screen) {
    Geometry g = geometryFor(size, screen);
    if (g.columns != columns_ || maps_.empty()) {
        rebuild(g.columns);
        g = geometryFor(size, screen); // the colour scale is measured now
    }
    applyGeometry(g);
    return g;
}

bool AttentionGridView::eventFilter(QObject* watched, QEvent* event) {
    // The viewport, not the view: its size is what the grid has, after the controls and scroll bar.
    if (watched == scroll_->viewport() && event->type() == QEvent::Resize)
        layoutFor(QSize());
    return PlotView::eventFilter(watched, event);
}

void AttentionGridView::applyGeometry(const Geometry& g) {
    const Margins m = margins();
    const int side = g.side;
    for (size_t i = 0; i < maps_.size(); ++i) {
        const Map& map = maps_[i];
        const ndr::Trace& trace = traces_[map.model];
        const int t = map.step - 1, columns = columns_;
        const bool first = t % columns == 0, last = t / columns == (trace.steps - 1) / columns;
        QCPAxisRect* rect = map.map->keyAxis()->axisRect();
        rect->setAutoMargins(QCP::msNone);
        rect->setMargins(QMargins(first ? m.labelLeft : m.plainLeft, m.top, m.right,
                                  last ? m.labelBottom : m.plainBottom));
        rect->setMinimumSize(side, side);
        rect->setMaximumSize(side, side);
        const QStringList labels = tokenLabels(trace);
        QCPAxis* left = rect->axis(QCPAxis::atLeft);
        QCPAxis* bottom = rect->axis(QCPAxis::atBottom);
        left->setTickLabels(first);
        bottom->setTickLabels(last);
        left->setTicker(labelTicker(labels, g.every));
        bottom->setTicker(labelTicker(labels, g.every));
        QFont labelsFont = labelFont();
        labelsFont.setPointSizeF(labelsFont.pointSizeF() * g.labelScale);
        left->setTickLabelFont(labelsFont);
        bottom->setTickLabelFont(labelsFont);
    }
    const int blockWidth = g.needed.width() - kGap - scaleWidth_;
    for (const auto& [model, title] : titles_) {
        title->setMinimumSize(0, 0);
        title->setMaximumSize(blockWidth, QWIDGETSIZE_MAX);
    }
    if (scale_ && !maps_.empty()) {
        // Beside the first row of maps, from the top of the first map down, as long as one map but
        // long enough for its label: along the whole block it would scroll out of sight. Where the
        // grid scrolls, no longer than what shows of it under the first title, unless its label
        // needs more.
        const int rows = (traces_[maps_[0].model].steps + columns_ - 1) / columns_;
        const int block = rows * (m.top + side + m.plainBottom) - m.plainBottom + m.labelBottom;
        int bar = std::min(block - m.top - m.labelBottom, std::max(side, 160));
        if (g.scroll) {
            const QCPAxis* axis = scale_->axis();
            const int label = QFontMetrics(axis->labelFont()).horizontalAdvance(axis->label()) + 8;
            bar = std::min(bar, std::max(label, g.visibleHeight - m.title - m.top));
        }
        scale_->setAutoMargins(QCP::msNone);
        scale_->setMargins(QMargins(0, m.top, 0, block - m.top - bar));
    }
    requestReplot();
}

void AttentionGridView::rebuild(int columns) {
    columns_ = columns;
    QCustomPlot* p = plot();
    p->clearPlottables();
    QCPLayoutGrid* grid = p->plotLayout();
    grid->clear();
    grid->setRowSpacing(0);
    grid->setColumnSpacing(kGap);
    maps_.clear();
    titles_.clear();

    scale_ = unitColorScale(new QCPColorScale(p), tr("attention weight"));
    const QFont small = labelFont();
    QFont bold = font();
    bold.setBold(true);
    int row = 0;
    for (int m = 0; m < int(traces_.size()); ++m) {
        const ndr::Trace& trace = traces_[m];
        if (!hasAttention(trace))
            continue;
        auto* title = new QCPTextElement(p, names_.value(m), bold);
        title->setTextFlags(Qt::AlignLeft | Qt::AlignVCenter);
        title->setMargins(QMargins(4, 8, 0, 2));
        grid->addElement(row++, 0, title);
        titles_.push_back({m, title});
        auto* block = new QCPLayoutGrid;
        block->setColumnSpacing(0);
        block->setRowSpacing(0);
        grid->addElement(row, 0, block);
        if (titles_.size() == 1)
            grid->addElement(row, 1, scale_);
        ++row;
        const QStringList labels = tokenLabels(trace);
        for (int t = 0; t < trace.steps; ++t) {
            auto* rect = new QCPAxisRect(p);
            block->addElement(t / columns, t % columns, rect);
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
                axis->setTickLabelPadding(kLabelPadding);
            }
            QCPColorMap* map = addHeatmap(rect, labels, labels, scale_);
            rect->axis(QCPAxis::atBottom)->setTickLabelRotation(-90);
            map->setName(tr("%1 step %2").arg(names_.value(m)).arg(t + 1));
            maps_.push_back({m, t + 1, map});
        }
    }
    // Rows and columns take what their elements ask and no more: what is over stays blank, right
    // and below, rather than stretching cells out of square.
    for (int r = 0; r < grid->rowCount(); ++r)
        grid->setRowStretchFactor(r, 1);
    if (maps_.empty()) {
        delete scale_;
        scale_ = nullptr;
        // A trace with steps but no heads is a recurrent model's (docs/design.md §5).
        QStringList recurrent;
        for (int m = 0; m < int(traces_.size()); ++m)
            if (traces_[size_t(m)].steps > 0 && traces_[size_t(m)].heads <= 0)
                recurrent << tr("%1 has no attention (a recurrent model).").arg(names_.value(m));
        const QString note = recurrent.isEmpty() ? tr("No attention to show yet") : recurrent.join('\n');
        grid->addElement(0, 0, new QCPTextElement(p, note, font()));
    } else {
        for (auto phase : {QCPLayoutElement::upPreparation, QCPLayoutElement::upMargins})
            grid->update(phase);
        // The scale fixes its own width (bar, ticks and label) while it lays out its margins.
        scaleWidth_ = scale_->minimumSize().width() + scale_->margins().left() + scale_->margins().right();
    }
    stylePlot(p, palette());
    fill();
    fitToData();
}

} // namespace ndrui
