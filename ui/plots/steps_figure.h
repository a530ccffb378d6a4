// One model's routing of one expression over all its steps as a single figure, as the paper's Figure 2
// and Figures 7-8 draw it: its copy gates (steps down, tokens across) above its attention maps, one
// panel per step ("step 1", ...), at the width it is given and as tall as its panels need.
#pragma once

#include "core/records/records.h"

#include <QString>
#include <QWidget>

class QPainter;

namespace ndrui {

class AttentionGridView;
class GateMapView;

class StepsFigure : public QWidget {
    Q_OBJECT

public:
    explicit StepsFigure(QWidget* parent = nullptr);

    // The trace of one expression and the model that made it. A trace without attention draws a note.
    void setTrace(const ndr::Trace& trace, const QString& modelName);
    // Whether the trace has attention maps to draw (an LSTM's has none).
    static bool drawable(const ndr::Trace& trace);

    // The height the figure takes at `width`: the gate map and rows of at most kColumns panels.
    int heightFor(int width) const;
    static constexpr int kColumns = 7;
    // Draws the figure at `size` with `painter` (any device; see figure.h).
    void paint(QPainter& painter, QSize size);

private:
    int gateHeight(int width) const;

    ndr::Trace trace_;
    QString name_;
    GateMapView* gates_;
    AttentionGridView* attention_;
};

} // namespace ndrui
