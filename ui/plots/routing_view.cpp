// The routing picture (see routing_view.h), painted with QPainter: the same code draws the screen and
// the exported images.
#include "ui/plots/routing_view.h"

#include "ui/common/palette.h"
#include "ui/plots/figure.h"

#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <algorithm>

namespace ndrui {

QColor headColor(int head) {
    // ColorBrewer Set1: eight hues that stay apart when drawn as thin translucent lines; in the
    // colour-blind-safe scheme the eight of Okabe-Ito (a mid grey for its black).
    static const QColor standard[] = {QColor(228, 26, 28),   QColor(55, 126, 184), QColor(77, 175, 74),
                                      QColor(152, 78, 163),  QColor(255, 127, 0),  QColor(166, 86, 40),
                                      QColor(247, 129, 191), QColor(153, 153, 153)};
    static const QColor safe[] = {QColor(213, 94, 0),    QColor(0, 114, 178),  QColor(0, 158, 115),
                                  QColor(204, 121, 167), QColor(230, 159, 0),  QColor(86, 180, 233),
                                  QColor(240, 228, 66),  QColor(128, 128, 128)};
    const QColor* colors = colourScheme() == ColourScheme::ColourBlindSafe ? safe : standard;
    return colors[((head % 8) + 8) % 8];
}

namespace {

constexpr int kPad = 8;     // around the picture
constexpr int kMinGap = 12; // between two columns of boxes
const QColor kGateColor(0, 150, 136);

QColor blend(const QColor& a, const QColor& b, double t) {
    t = std::clamp(t, 0.0, 1.0);
    return QColor::fromRgbF(float(a.redF() + (b.redF() - a.redF()) * t),
                            float(a.greenF() + (b.greenF() - a.greenF()) * t),
                            float(a.blueF() + (b.blueF() - a.blueF()) * t));
}

} // namespace

RoutingView::RoutingView(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    setToolTip(tr("Each line carries attention from a source token (left) to a target token (right); its "
                  "opacity is the weight. Hover a token to see only its lines."));
}

void RoutingView::setTrace(std::shared_ptr<const ndr::Trace> trace) {
    if (trace != trace_)
        hoverColumn_ = hoverPosition_ = -1;
    trace_ = std::move(trace);
    update();
}

void RoutingView::setStep(int step) {
    step_ = std::max(0, step);
    update();
}

void RoutingView::setHead(int head) {
    head_ = head;
    update();
}

void RoutingView::setStacked(bool stacked) {
    if (stacked != stacked_)
        hoverColumn_ = hoverPosition_ = -1;
    stacked_ = stacked;
    update();
}

void RoutingView::setHover(int column, int position) {
    if (column == hoverColumn_ && position == hoverPosition_)
        return;
    hoverColumn_ = column < 0 ? -1 : column;
    hoverPosition_ = column < 0 ? -1 : position;
    update();
}

int RoutingView::lastStep() const {
    return trace_ ? std::min(step_, trace_->steps) : 0;
}

std::vector<int> RoutingView::columns() const {
    std::vector<int> c;
    if (!trace_ || trace_->positions <= 0)
        return c;
    const int s = lastStep();
    if (stacked_)
        for (int k = 0; k <= trace_->steps; ++k)
            c.push_back(k);
    else if (s == 0)
        c.push_back(0);
    else
        c = {s - 1, s};
    return c;
}

std::vector<RoutingView::Line> RoutingView::lines() const {
    std::vector<Line> out;
    if (!trace_ || trace_->heads <= 0 ||
        trace_->attention.size() <
            size_t(trace_->steps) * trace_->heads * trace_->positions * trace_->positions)
        return out;
    const std::vector<int> cols = columns();
    const int T = trace_->positions;
    const int h0 = head_ < 0 ? 0 : std::min(head_, trace_->heads - 1);
    const int h1 = head_ < 0 ? trace_->heads : h0 + 1;
    for (size_t k = 1; k < cols.size(); ++k) {
        const int step = cols[k];
        if (step > lastStep())
            break; // stacked: the steps after the current one are not routed yet
        for (int h = h0; h < h1; ++h)
            for (int target = 0; target < T; ++target)
                for (int source = 0; source < T; ++source) {
                    const float w = trace_->att(step - 1, h, target, source);
                    if (w < kMinWeight)
                        continue;
                    const bool touches = (hoverColumn_ == step && hoverPosition_ == target) ||
                                         (hoverColumn_ == step - 1 && hoverPosition_ == source);
                    if (hoverColumn_ >= 0 && !touches)
                        continue;
                    out.push_back({step, h, source, target, w});
                }
    }
    return out;
}

QRect RoutingView::Geometry::box(size_t k, int position) const {
    return across ? QRect(lane[size_t(position)], slot[k], boxW, boxH)
                  : QRect(slot[k], lane[size_t(position)], boxW, boxH);
}

QPointF RoutingView::Geometry::from(size_t k, int position) const {
    const QRectF b = box(k, position);
    return across ? QPointF(b.center().x(), b.bottom()) : QPointF(b.right(), b.center().y());
}

QPointF RoutingView::Geometry::to(size_t k, int position) const {
    const QRectF b = box(k, position);
    return across ? QPointF(b.center().x(), b.top()) : QPointF(b.left(), b.center().y());
}

std::vector<std::pair<QColor, QString>> RoutingView::legend() const {
    std::vector<std::pair<QColor, QString>> items;
    if (!trace_ || trace_->heads <= 0)
        return items;
    const int h0 = head_ < 0 ? 0 : std::min(head_, trace_->heads - 1);
    const int h1 = head_ < 0 ? trace_->heads : h0 + 1;
    for (int h = h0; h < h1; ++h)
        items.emplace_back(headColor(h), tr("head %1").arg(h + 1));
    if (!trace_->gates.empty())
        items.emplace_back(kGateColor, tr("box fill: copy gate open"));
    return items;
}

int RoutingView::legendLines(int width) const {
    const QFontMetrics fm(font());
    int lines = 1, x = kPad;
    for (const auto& [color, text] : legend()) {
        const int w = fm.height() + fm.horizontalAdvance(text) + 8;
        if (x > kPad && x + w > width - kPad) {
            ++lines;
            x = kPad;
        }
        x += w;
    }
    return lines;
}

RoutingView::Geometry RoutingView::geometryFor(QSize size) const {
    Geometry g;
    const QFontMetrics fm(font());
    const int line = fm.height();
    g.legendH = legendLines(size.width()) * line + 6;
    const std::vector<int> cols = columns();
    if (cols.empty())
        return g;
    int text = fm.horizontalAdvance("00");
    for (const std::string& name : trace_->tokenNames)
        text = std::max(text, fm.horizontalAdvance(QString::fromStdString(name)));
    const int n = int(cols.size()), T = trace_->positions;
    g.across = stacked_;
    if (g.across) {
        // Steps down, tokens across; the captions "step s" take the left margin.
        const int caption = fm.horizontalAdvance(tr("step %1").arg(trace_->steps)) + 8;
        const int left = kPad + caption, width = size.width() - left - kPad;
        const int top = g.legendH + line / 2, height = size.height() - top - kPad;
        const double across = double(width) / T, down = double(height) / n;
        g.boxW = std::max(8, std::min(text + 8, int(across) - 2));
        g.boxH = std::clamp(int(down * 0.45), std::min(line, int(down) - 2), line + 6);
        for (int p = 0; p < T; ++p)
            g.lane.push_back(left + int(p * across + (across - g.boxW) / 2));
        for (int k = 0; k < n; ++k)
            g.slot.push_back(top + int(k * down + (down - g.boxH) / 2));
        return g;
    }
    // Two columns (or one at step 0): sources left, targets right, tokens down.
    const int captionH = line + 4, top = g.legendH + captionH;
    const int width = size.width() - 2 * kPad, available = size.height() - top - kPad;
    g.boxW = std::max(line, std::min(text + 12, (width - (n - 1) * kMinGap) / n));
    const int rowH = std::clamp(available / T, line + 2, 2 * line + 6);
    g.boxH = std::max(line, rowH - 4);
    const int first = top + std::max(0, (available - rowH * T) / 2);
    for (int p = 0; p < T; ++p)
        g.lane.push_back(first + p * rowH + (rowH - g.boxH) / 2);
    if (n == 1) {
        g.slot.push_back((size.width() - g.boxW) / 2);
        return g;
    }
    const double gap = double(width - n * g.boxW) / (n - 1);
    for (int k = 0; k < n; ++k)
        g.slot.push_back(kPad + int(k * (g.boxW + gap)));
    return g;
}

QPoint RoutingView::tokenCenter(int column, int position) const {
    const std::vector<int> cols = columns();
    const auto it = std::find(cols.begin(), cols.end(), column);
    if (it == cols.end() || position < 0 || position >= trace_->positions)
        return {-1, -1};
    return geometryFor(size()).box(size_t(it - cols.begin()), position).center();
}

std::pair<int, int> RoutingView::tokenAt(const QPoint& pos) const {
    const std::vector<int> cols = columns();
    const Geometry g = geometryFor(size());
    for (size_t k = 0; k < cols.size(); ++k)
        for (int p = 0; p < trace_->positions; ++p)
            if (g.box(k, p).contains(pos))
                return {cols[k], p};
    return {-1, -1};
}

void RoutingView::paint(QPainter& p, QSize size) const {
    const QPalette pal = palette();
    const QColor window = pal.color(QPalette::Window), text = pal.color(QPalette::WindowText);
    p.fillRect(QRect(QPoint(0, 0), size), window);
    if (!trace_)
        return;
    p.setRenderHint(QPainter::Antialiasing);
    p.setFont(font());
    const QFontMetrics fm(font());
    const int line = fm.height();
    if (trace_->heads <= 0) {
        p.setPen(text);
        p.drawText(QRect(QPoint(0, 0), size).adjusted(kPad, kPad, -kPad, -kPad),
                   Qt::AlignCenter | Qt::TextWordWrap, tr("No attention to draw: this model has no heads."));
        return;
    }
    const Geometry g = geometryFor(size);
    const std::vector<int> cols = columns();

    // Legend: the heads drawn, each in its colour, and the gate fill; wrapped to the width.
    int x = kPad, y = 3;
    for (const auto& [color, name] : legend()) {
        const int w = line + fm.horizontalAdvance(name) + 8;
        if (x > kPad && x + w > size.width() - kPad) {
            x = kPad;
            y += line;
        }
        p.fillRect(QRect(x, y + 3, line - 6, line - 6), color);
        p.setPen(text);
        p.drawText(QPoint(x + line - 2, y + fm.ascent()), name);
        x += w;
    }
    if (lastStep() == 0 && !stacked_) {
        p.setPen(text);
        p.drawText(QRect(0, g.legendH, size.width(), line * 2), Qt::AlignCenter,
                   tr("Step 0 is the embeddings: nothing is routed yet."));
    }

    // Captions: "step s" over each column, or left of each row; just the number when narrow.
    for (size_t k = 0; k < cols.size(); ++k) {
        const QString full = tr("step %1").arg(cols[k]);
        QColor c = text;
        if (cols[k] > lastStep())
            c.setAlphaF(0.35f);
        p.setPen(c);
        const QRect b = g.box(k, 0);
        if (g.across) {
            p.drawText(QRect(0, b.top(), b.left() - 4, b.height()), Qt::AlignRight | Qt::AlignVCenter, full);
        } else {
            const int pitch = cols.size() > 1 ? g.slot[1] - g.slot[0] : size.width();
            const QString caption = fm.horizontalAdvance(full) + 4 < pitch ? full : QString::number(cols[k]);
            p.drawText(QRect(b.center().x() - pitch / 2, g.legendH, pitch, line), Qt::AlignCenter, caption);
        }
    }

    // Lines under the boxes, from the source's box (step before) to the target's (the step).
    auto column = [&](int step) { return size_t(std::find(cols.begin(), cols.end(), step) - cols.begin()); };
    for (const Line& l : lines()) {
        const size_t b = column(l.step);
        const QPointF from = g.from(b - 1, l.source), to = g.to(b, l.target);
        QPainterPath path(from);
        if (g.across) {
            const double mid = (from.y() + to.y()) / 2;
            path.cubicTo(QPointF(from.x(), mid), QPointF(to.x(), mid), to);
        } else {
            const double mid = (from.x() + to.x()) / 2;
            path.cubicTo(QPointF(mid, from.y()), QPointF(mid, to.y()), to);
        }
        QColor c = headColor(l.head);
        c.setAlphaF(std::clamp(l.weight, 0.0f, 1.0f));
        p.setPen(QPen(c, 1.0 + 2.5 * l.weight));
        p.setBrush(Qt::NoBrush);
        p.drawPath(path);
    }

    // Token boxes; a gated model's are filled by the gate of that step.
    const bool gated = !trace_->gates.empty();
    for (size_t k = 0; k < cols.size(); ++k)
        for (int pos = 0; pos < trace_->positions; ++pos) {
            const QRect box = g.box(k, pos);
            const int step = cols[k];
            const double gate = gated && step >= 1 ? trace_->gate(step - 1, pos) : 0.0;
            QColor fill = blend(pal.color(QPalette::Base), kGateColor, gate);
            QColor ink = gate > 0.55 ? QColor(Qt::white) : text;
            QColor edge = text;
            if (step > lastStep()) {
                fill = blend(fill, window, 0.7);
                ink.setAlphaF(0.35f);
                edge.setAlphaF(0.25f);
            }
            const bool hovered = step == hoverColumn_ && pos == hoverPosition_;
            p.setBrush(fill);
            p.setPen(QPen(edge, hovered ? 2.5 : 0.8));
            p.drawRoundedRect(box, 3, 3);
            p.setPen(ink);
            const QString name = QString::fromStdString(trace_->tokenNames[size_t(pos)]);
            // A token that does not fit its box is drawn smaller rather than cut ("[B]" stays "[B]").
            QFont tokenFont = font();
            if (fm.horizontalAdvance(name) > box.width() - 2)
                tokenFont.setPointSizeF(tokenFont.pointSizeF() * (box.width() - 2) /
                                        fm.horizontalAdvance(name));
            p.setFont(tokenFont);
            p.drawText(box, Qt::AlignCenter, name);
            p.setFont(font());
        }
}

QImage RoutingView::render(QSize size) const {
    return paintImage({size}, [this](QPainter& p, QSize s) { paint(p, s); });
}

void RoutingView::paintEvent(QPaintEvent*) {
    QPainter p(this);
    paint(p, size());
}

void RoutingView::mouseMoveEvent(QMouseEvent* event) {
    const auto [column, position] = tokenAt(event->position().toPoint());
    setHover(column, position);
}

void RoutingView::leaveEvent(QEvent*) {
    setHover(-1, -1);
}

QSize RoutingView::minimumSizeHint() const {
    const int line = QFontMetrics(font()).height();
    return {200, 2 * line + 10 + 8 * (line + 2)};
}

QSize RoutingView::sizeHint() const {
    return {420, 420};
}

} // namespace ndrui
