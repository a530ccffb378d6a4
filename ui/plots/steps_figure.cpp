// The steps figure (see steps_figure.h): a gate map and an attention grid of one trace, drawn one above
// the other by the views that draw them on the dashboard.
#include "ui/plots/steps_figure.h"

#include "ui/plots/attention_grid_view.h"
#include "ui/plots/gate_map_view.h"

#include <QPainter>
#include <algorithm>

namespace ndrui {

namespace {
// Room the gate map takes beside its cells: the model's name above, the token labels and the axis
// label below (pixels).
constexpr int kGateFrame = 96;
} // namespace

StepsFigure::StepsFigure(QWidget* parent)
    : QWidget(parent), gates_(new GateMapView(this)), attention_(new AttentionGridView(this)) {
    gates_->hide();
    attention_->hide();
}

bool StepsFigure::drawable(const ndr::Trace& t) {
    return t.steps > 0 && t.heads > 0 && t.positions > 0 &&
           t.attention.size() >= size_t(t.steps) * t.heads * t.positions * t.positions;
}

void StepsFigure::setTrace(const ndr::Trace& trace, const QString& modelName) {
    trace_ = trace;
    name_ = modelName;
    gates_->setTraces({trace}, {modelName});
    attention_->setTraces({trace}, {modelName});
}

int StepsFigure::gateHeight(int width) const {
    if (trace_.gates.empty() || trace_.positions <= 0)
        return 0;
    // Cells half as tall as they are wide, so that the steps read as rows, and the map at most two
    // fifths of the figure's width tall.
    const double cell = std::max(4.0, (width - 110.0) / trace_.positions);
    const int cells = int(0.5 * cell * trace_.steps);
    return std::clamp(cells + kGateFrame, 150, std::max(150, width * 2 / 5));
}

int StepsFigure::heightFor(int width) const {
    return gateHeight(width) + attention_->heightFor(width, kColumns);
}

void StepsFigure::paint(QPainter& painter, QSize size) {
    painter.fillRect(QRect(QPoint(0, 0), size), palette().color(QPalette::Window));
    const int top = std::min(gateHeight(size.width()), size.height());
    if (top > 0)
        gates_->paint(painter, QSize(size.width(), top));
    painter.save();
    painter.translate(0, top);
    attention_->paint(painter, QSize(size.width(), size.height() - top));
    painter.restore();
}

} // namespace ndrui
