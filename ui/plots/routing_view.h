// A BertViz-style picture of one model's routing: the tokens of the step before (sources) and of the
// step (targets), and a line from each source to each target whose opacity is the attention weight.
// Every head has its colour, or one head is drawn alone. One step shows two columns of tokens, sources
// left; "every step" stacks one row of tokens per step from the top (step 0, the embeddings, first), so
// a value can be followed from its token to the readout, with the steps after the current one faded. A gated
// model's token boxes are filled by how open the copy gate is at that step (white: copied, full colour:
// rewritten). Hovering a token isolates the lines into and out of it.
#pragma once

#include "core/records/records.h"

#include <QImage>
#include <QWidget>
#include <memory>
#include <vector>

namespace ndrui {

// The colour of attention head `head` in routing pictures (distinct from the model colours' order).
QColor headColor(int head);

class RoutingView : public QWidget {
    Q_OBJECT

public:
    explicit RoutingView(QWidget* parent = nullptr);

    // The trace to draw, or none. The view shares it: the trace stays alive for as long as the view
    // may paint it, whoever replaces theirs meanwhile.
    void setTrace(std::shared_ptr<const ndr::Trace> trace);
    // The step shown, 0..steps: its two columns, or with every step stacked the last column not faded.
    void setStep(int step);
    // One head, or every head in its colour when head < 0.
    void setHead(int head);
    void setStacked(bool stacked);
    // Isolates the lines into and out of token `position` of column `column` (0: the embeddings, s: after
    // step s); column < 0 shows every line.
    void setHover(int column, int position);

    // A line as drawn: attention of `head` at `step` (1-based) from `source` to `target`, with its weight.
    struct Line {
        int step, head, source, target;
        float weight;
    };
    // The lines drawn with the current trace, step, head, stacking and hover: every weight of at least
    // kMinWeight, from the columns shown.
    std::vector<Line> lines() const;
    static constexpr float kMinWeight = 0.02f;
    // The columns shown, as step numbers (left to right).
    std::vector<int> columns() const;
    // The centre of a token's box in widget coordinates as last laid out; (-1, -1) if not shown.
    QPoint tokenCenter(int column, int position) const;
    // The column (step) and position under `pos`, as {column, position}; {-1, -1} over no token.
    std::pair<int, int> tokenAt(const QPoint& pos) const;

    // The picture at `size`, as painted on screen, with `p` on any device (an image, a PDF, an SVG).
    void paint(QPainter& p, QSize size) const;
    QImage render(QSize size) const;

    QSize minimumSizeHint() const override;
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;

private:
    // Where the boxes go. One step: two columns side by side (tokens down); every step: one row per step
    // (tokens across, steps down), which suits the inspector's tall columns.
    struct Geometry {
        bool across = false; // rows of tokens, one per step
        int legendH = 0, boxW = 0, boxH = 0;
        std::vector<int> slot; // per shown step: x of its column, or y of its row when across
        std::vector<int> lane; // per position: y of its box, or x when across
        QRect box(size_t k, int position) const;
        QPointF from(size_t k, int position) const; // where a line leaves a source box
        QPointF to(size_t k, int position) const;   // where a line enters a target box
    };
    // The legend entries (colour, text) in the order drawn, and the lines they wrap onto at `width`.
    std::vector<std::pair<QColor, QString>> legend() const;
    int legendLines(int width) const;
    Geometry geometryFor(QSize size) const;
    int lastStep() const; // the last column drawn in full colour

    std::shared_ptr<const ndr::Trace> trace_;
    int step_ = 0, head_ = -1;
    bool stacked_ = false;
    int hoverColumn_ = -1, hoverPosition_ = -1;
};

} // namespace ndrui
