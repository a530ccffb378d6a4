// Between a column of the models group and the ModelConfig it edits (see models_group.h).
#include "ui/panel/form_fields.h"
#include "ui/panel/models_group.h"
#include "ui/panel/real_spin_box.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QSpinBox>

namespace ndrui {

void ModelsGroup::fillColumn(Column& c, const ndr::ModelConfig& m) {
    c.name->setText(QString::fromStdString(m.name));
    selectData(c.kind, int(m.kind));
    selectData(c.attention, int(m.attention));
    selectData(c.geomNorm, int(m.geomNorm));
    selectData(c.update, int(m.update));
    selectData(c.positional, int(m.positional));
    c.shared->setChecked(m.sharedWeights);
    selectData(c.readout, int(m.readout));
    c.dModel->setValue(m.dModel);
    c.heads->setValue(m.heads);
    c.dFF->setValue(m.dFF);
    c.steps->setValue(m.steps);
    c.evalSteps->setValue(m.evalSteps);
    c.dropout->setFloat(m.dropout);
    c.attentionDropout->setFloat(m.attentionDropout);
    c.gateDropout->setFloat(m.gateDropout);
    c.gateBias->setFloat(m.gateBiasInit);
    c.routing->setChecked(m.headRouting);
    c.routeTopK->setValue(m.routeTopK);
    selectData(c.routeDropped, int(m.routeDropped));
    c.routeEntropy->setValue(m.routeEntropy);
    c.thoughtCost->setValue(m.thoughtCost);
    c.haltThreshold->setValue(m.haltThreshold);
    selectData(c.haltOn, int(m.haltOn));
    c.learningRate->setValue(m.learningRate);
    c.weightDecay->setValue(m.weightDecay < 0 ? c.weightDecay->minimum() : m.weightDecay);
    c.lstmHidden->setValue(m.lstmHidden);
    c.lstmEmbedding->setValue(m.lstmEmbedding);
    c.operators->setValue(m.operators);
    c.positionDims->setValue(m.positionDims);
}

ndr::ModelConfig ModelsGroup::readColumn(const Column& c) const {
    ndr::ModelConfig m;
    m.name = c.name->text().toStdString();
    m.kind = comboValue<ndr::ModelKind>(c.kind);
    m.attention = comboValue<ndr::AttentionKind>(c.attention);
    m.geomNorm = comboValue<ndr::GeomNorm>(c.geomNorm);
    m.update = comboValue<ndr::UpdateKind>(c.update);
    m.positional = comboValue<ndr::PositionalKind>(c.positional);
    m.sharedWeights = c.shared->isChecked();
    m.readout = comboValue<ndr::ReadoutColumn>(c.readout);
    m.dModel = c.dModel->value();
    m.heads = c.heads->value();
    m.dFF = c.dFF->value();
    m.steps = c.steps->value();
    m.evalSteps = c.evalSteps->value();
    m.dropout = float(c.dropout->value());
    m.attentionDropout = float(c.attentionDropout->value());
    m.gateDropout = float(c.gateDropout->value());
    m.gateBiasInit = float(c.gateBias->value());
    m.headRouting = c.routing->isChecked();
    m.routeTopK = c.routeTopK->value();
    m.routeDropped = comboValue<ndr::DroppedHeads>(c.routeDropped);
    m.routeEntropy = c.routeEntropy->value();
    m.thoughtCost = c.thoughtCost->value();
    m.haltThreshold = c.haltThreshold->value();
    m.haltOn = comboValue<ndr::HaltSignal>(c.haltOn);
    m.learningRate = c.learningRate->value();
    m.weightDecay = c.weightDecay->value() < 0 ? -1 : c.weightDecay->value();
    m.lstmHidden = c.lstmHidden->value();
    m.lstmEmbedding = c.lstmEmbedding->value();
    m.operators = c.operators->value();
    m.positionDims = c.positionDims->value();
    return m;
}

} // namespace ndrui
