// Copy-gate map (see gatemapview.h).
#include "ui/plots/gate_map_view.h"

#include "ui/common/gate_words.h"
#include "ui/plots/color_maps.h"
#include "ui/plots/plot_style.h"

#include <QComboBox>
#include <QLabel>
#include <QMouseEvent>
#include <qcustomplot.h>

#include <array>
#include <cmath>
#include <utility>

namespace ndrui {

namespace {

bool hasGates(const ndr::Trace& t) {
    return t.steps > 0 && t.positions > 0 && t.gates.size() >= size_t(t.steps) * t.positions;
}

bool hasChange(const ndr::Trace& t) {
    return t.steps > 0 && t.positions > 0 && t.change.size() >= size_t(t.steps) * t.positions;
}

// Step `step` (1-based), `position` of a (steps, positions) record of `t` that is complete; NaN
// outside it.
double cell(const ndr::Trace& t, const std::vector<float>& values, int step, int position) {
    if (step < 1 || step > t.steps || position < 0 || position >= t.positions)
        return NAN;
    return values[size_t(step - 1) * t.positions + position];
}

QString tokenName(const ndr::Trace& t, int i) {
    return i < int(t.tokenNames.size()) ? QString::fromStdString(t.tokenNames[i]) : QString::number(i);
}

} // namespace

GateMapView::GateMapView(QWidget* parent) : PlotView(parent) {
    shown_ = new QComboBox(this);
    shown_->setObjectName("gateMap.quantity");
    shown_->addItem(tr("Copy gates"), int(Quantity::Gates));
    shown_->addItem(tr("Change per step"), int(Quantity::Change));
    shown_->setToolTip(tr("Copy gates: how open each position's gate is at each step. Change per step: how "
                          "far each step moved each position's state, |after - before| / |before|, for "
                          "every model with columns (with copy gates or residual)."));
    controls()->addWidget(new QLabel(tr("Map:"), this));
    controls()->addWidget(shown_);
    controls()->addStretch(1);
    connect(shown_, &QComboBox::currentIndexChanged, this,
            [this] { setQuantity(Quantity(shown_->currentData().toInt())); });
    margins_ = new QCPMarginGroup(plot());
    connect(plot(), &QCustomPlot::mousePress, this, [this](QMouseEvent* e) { pressPos_ = e->pos(); });
    connect(plot(), &QCustomPlot::mouseRelease, this, [this](QMouseEvent* e) {
        const Map* map = nullptr;
        int step = 0, position = 0;
        if ((e->pos() - pressPos_).manhattanLength() <= 3 && e->button() == Qt::LeftButton &&
            hitAt(e->pos(), &map, &step, &position))
            emit cellClicked(map->model, step, position, shownValue(map->model, step, position));
    });
    // QCustomPlot places the ticks before it lays the plot out; after the layout, the labels are
    // thinned to each map's width and height and the ticks placed again, within the same replot.
    connect(plot(), &QCustomPlot::afterLayout, this, [this] {
        for (const Map& m : maps_) {
            const bool across = thinCellLabels(m.map->keyAxis(), m.tokens);
            const bool down = thinCellLabels(m.map->valueAxis(), m.steps);
            if (across || down)
                m.map->keyAxis()->axisRect()->update(QCPLayoutElement::upPreparation);
        }
    });
    rebuild();
}

void GateMapView::setTraces(const std::vector<ndr::Trace>& traces, const QStringList& modelNames) {
    traces_ = traces;
    names_ = modelNames;
    rebuild();
}

void GateMapView::clear() {
    setTraces({}, {});
}

void GateMapView::setQuantity(Quantity q) {
    shown_->setCurrentIndex(shown_->findData(int(q)));
    if (q == quantity_)
        return;
    quantity_ = q;
    rebuild();
}

bool GateMapView::shows(const ndr::Trace& t) const {
    return quantity_ == Quantity::Gates ? hasGates(t) : hasChange(t);
}

double GateMapView::change(int model, int step, int position) const {
    if (model < 0 || model >= int(traces_.size()) || !hasChange(traces_[model]))
        return NAN;
    return cell(traces_[model], traces_[model].change, step, position);
}

double GateMapView::shownValue(int model, int step, int position) const {
    return quantity_ == Quantity::Gates ? gate(model, step, position) : change(model, step, position);
}

double GateMapView::gate(int model, int step, int position) const {
    if (model < 0 || model >= int(traces_.size()) || !hasGates(traces_[model]))
        return NAN;
    return cell(traces_[model], traces_[model].gates, step, position);
}

void GateMapView::rebuild() {
    QCustomPlot* p = plot();
    p->clearPlottables();
    p->plotLayout()->clear();
    maps_.clear();

    // Maps and scale in a row of their own: the note below is as wide as the plot, and a long note
    // must not widen the maps' column and squeeze the colour scale.
    auto* row = new QCPLayoutGrid;
    p->plotLayout()->addElement(0, 0, row);
    margins_->clear();
    // Models without a map, by reason: one note per reason names them all (their names on a line of
    // their own, which a narrow plot has room for), so that a four-model run spends three lines of a
    // short plot on it rather than four.
    enum Missing { Residual, RecurrentGates, OldFile, RecurrentChange, kinds };
    std::array<QStringList, kinds> missing;
    int column = 0;
    const bool gates = quantity_ == Quantity::Gates;
    for (int m = 0; m < int(traces_.size()); ++m) {
        const ndr::Trace& t = traces_[m];
        if (!shows(t)) {
            // A trace without attention heads is a recurrent model's (docs/design.md §5); a trace of
            // an encoder without the change was saved before traces recorded it.
            if (t.steps > 0)
                missing[gates ? (t.heads > 0 ? Residual : RecurrentGates)
                              : (t.heads > 0 ? OldFile : RecurrentChange)]
                    << names_.value(m);
            continue;
        }
        auto* rect = new QCPAxisRect(p);
        row->addElement(0, column++, rect);
        rect->setMarginGroup(QCP::msTop | QCP::msBottom, margins_);
        QCPAxis* top = rect->axis(QCPAxis::atTop);
        top->setVisible(true);
        top->setTicks(false);
        top->setTickLabels(false);
        top->setBasePen(Qt::NoPen);
        top->setLabel(names_.value(m));
        rect->axis(QCPAxis::atLeft)->setLabel(tr("step"));
        rect->axis(QCPAxis::atBottom)->setLabel(tr("token"));
        QStringList tokens, steps;
        for (int i = 0; i < t.positions; ++i)
            tokens << tokenName(t, i);
        for (int s = 1; s <= t.steps; ++s)
            steps << QString::number(s);
        QCPColorMap* map = addHeatmap(rect, tokens, steps, nullptr);
        map->setName((gates ? gateWords(t.gateMeaning).map : tr("%1 change per step")).arg(names_.value(m)));
        setHeatmapValues(map, t.steps, t.positions,
                         [&](int s, int pos) { return gates ? t.gate(s, pos) : t.changeAt(s, pos); });
        maps_.push_back({m, map, tokens, steps});
    }
    // Each reason's note for one model and for several.
    const std::array<std::pair<QString, QString>, kinds> says{{
        {tr("%1 has no copy gates\n(residual connections)."),
         tr("%1\nhave no copy gates (residual connections).")},
        {tr("%1 has no copy gates\n(a recurrent model)."), tr("%1\nhave no copy gates (recurrent models).")},
        {tr("%1: no change recorded\n(a run file of an older version)."),
         tr("%1: no change recorded\n(a run file of an older version).")},
        {tr("%1 reads a token per step\n(a recurrent model)."),
         tr("%1\nread a token per step (recurrent models).")},
    }};
    QStringList notes;
    for (size_t k = 0; k < says.size(); ++k) {
        const QStringList& names = missing[k];
        if (names.isEmpty())
            continue;
        const bool one = names.size() == 1;
        const QString who =
            one ? names.first()
                : tr("%1 and %2").arg(names.mid(0, names.size() - 1).join(", "), names.last());
        notes << (one ? says[k].first : says[k].second).arg(who);
    }
    if (!maps_.empty()) {
        // The kinds of gates the maps hold, in the order of GateMeaning. Short: the scale is as tall as
        // a map, which is small on a laptop screen.
        std::array<bool, 3> shown{};
        for (const Map& m : maps_)
            shown[size_t(traces_[m.model].gateMeaning)] = true;
        QStringList kinds;
        for (size_t k = 0; k < shown.size(); ++k)
            if (shown[k])
                kinds << gateWords(ndr::GateMeaning(k)).scale;
        const bool copyGatesOnly = kinds.size() == 1 && shown[size_t(ndr::GateMeaning::CopyGate)];
        const QString label = !gates          ? tr("change |Δh| / |h|")
                              : copyGatesOnly ? tr("gate openness")
                                              : tr("%1 weight").arg(kinds.join(" / "));
        auto* scale = unitColorScale(new QCPColorScale(p), label);
        row->addElement(0, column, scale);
        row->setColumnStretchFactor(column, 0.01);
        scale->setMarginGroup(QCP::msTop | QCP::msBottom, margins_);
        for (const Map& m : maps_)
            m.map->setColorScale(scale);
    } else if (notes.isEmpty()) {
        notes << (gates ? tr("No copy gates to show yet.") : tr("No change to show yet."));
    }
    if (!notes.isEmpty()) {
        auto* note = new QCPTextElement(p, notes.join('\n'), font());
        p->plotLayout()->addElement(1, 0, note);
        p->plotLayout()->setRowStretchFactor(1, maps_.empty() ? 1 : 0.001);
    }
    stylePlot(p, palette());
    fitToData();
}

void GateMapView::fitRanges() {
    for (const Map& m : maps_)
        fitHeatmap(m.map);
}

bool GateMapView::hitAt(const QPoint& pos, const Map** map, int* step, int* position) const {
    for (const Map& m : maps_) {
        int row = 0, col = 0;
        if (heatmapCellAt(m.map, pos, &row, &col)) {
            *map = &m;
            *step = row + 1;
            *position = col;
            return true;
        }
    }
    return false;
}

QString GateMapView::toolTipAt(const QPoint& pos) const {
    const Map* map = nullptr;
    int step = 0, position = 0;
    if (!hitAt(pos, &map, &step, &position))
        return {};
    const QString text = quantity_ == Quantity::Change
                             ? tr("%1, step %2, token %3 (position %4): change %5 of the state's size")
                             : gateWords(traces_[map->model].gateMeaning).cellTip;
    return text.arg(names_.value(map->model))
        .arg(step)
        .arg(tokenName(traces_[map->model], position))
        .arg(position)
        .arg(formatValue(shownValue(map->model, step, position)));
}

} // namespace ndrui
