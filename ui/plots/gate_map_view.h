// Copy-gate map of one probe example: steps down, token positions across, gate openness 0..1, for
// each model with gates; residual and recurrent models have no gates and get a short note instead.
// Switched to "change", the same map shows how far each step moved each position's state
// (Trace::change) for every model that records it, gated or not.
#pragma once

#include "core/records/records.h"
#include "ui/plots/plot_view.h"

#include <QStringList>
#include <vector>

class QCPColorMap;
class QCPMarginGroup;
class QComboBox;

namespace ndrui {

class GateMapView : public PlotView {
    Q_OBJECT

public:
    // What the maps show: the copy gates, or the change of each position's state.
    enum class Quantity { Gates, Change };

    explicit GateMapView(QWidget* parent = nullptr);

    // One trace per model (index = model).
    void setTraces(const std::vector<ndr::Trace>& traces, const QStringList& modelNames);
    void clear();

    void setQuantity(Quantity q);
    Quantity quantity() const { return quantity_; }

    // The mean gate of `model` at `step` (1-based) and `position`; NaN where there is none.
    double gate(int model, int step, int position) const;
    // How far `step` (1-based) moved the state at `position`; NaN where there is no record.
    double change(int model, int step, int position) const;
    // Of the quantity shown.
    double shownValue(int model, int step, int position) const;

    QString toolTipAt(const QPoint& pos) const override;

signals:
    void cellClicked(int model, int step, int position, double value); // of the quantity shown

protected:
    void fitRanges() override;

private:
    struct Map {
        int model;
        QCPColorMap* map;
        QStringList tokens; // the x axis's labels, thinned to the map's width after each layout
        QStringList steps;  // the y axis's labels, thinned to its height
    };
    bool hitAt(const QPoint& pos, const Map** map, int* step, int* position) const;
    bool shows(const ndr::Trace& t) const; // the trace has the quantity shown
    void rebuild();

    Quantity quantity_ = Quantity::Gates;
    QComboBox* shown_;
    std::vector<ndr::Trace> traces_;
    QStringList names_;
    std::vector<Map> maps_;
    QCPMarginGroup* margins_;
    QPoint pressPos_;
};

} // namespace ndrui
