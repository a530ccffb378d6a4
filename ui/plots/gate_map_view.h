// Copy-gate map of one probe example: steps down, token positions across, gate openness 0..1, for
// each model with gates; residual and recurrent models have no gates and get a short note instead.
#pragma once

#include "core/records/records.h"
#include "ui/plots/plot_view.h"

#include <QStringList>
#include <vector>

class QCPColorMap;
class QCPMarginGroup;

namespace ndrui {

class GateMapView : public PlotView {
    Q_OBJECT

public:
    explicit GateMapView(QWidget* parent = nullptr);

    // One trace per model (index = model).
    void setTraces(const std::vector<ndr::Trace>& traces, const QStringList& modelNames);
    void clear();

    // The mean gate of `model` at `step` (1-based) and `position`; NaN where there is none.
    double gate(int model, int step, int position) const;

    QString toolTipAt(const QPoint& pos) const override;

signals:
    void cellClicked(int model, int step, int position, double gate);

protected:
    void fitRanges() override;

private:
    struct Map {
        int model;
        QCPColorMap* map;
        QStringList tokens; // the x axis's labels, thinned to the map's width after each layout
    };
    bool hitAt(const QPoint& pos, const Map** map, int* step, int* position) const;
    void rebuild();

    std::vector<ndr::Trace> traces_;
    QStringList names_;
    std::vector<Map> maps_;
    QCPMarginGroup* margins_;
    QPoint pressPos_;
};

} // namespace ndrui
