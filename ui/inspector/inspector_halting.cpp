// The inspector's halting controls (see inspector.h): what halting reads (the gates or the change per
// step), the threshold of each (the gates' taken from the run), and each model's halting step.
#include "core/config/model_kind.h"
#include "core/train/halting.h"
#include "ui/inspector/inspector.h"
#include "ui/inspector/steps_needed.h"
#include "ui/training/training_session.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>

namespace ndrui {

QHBoxLayout* Inspector::makeHaltingRow(QWidget* content) {
    halt_ = new QCheckBox(tr("Halt when"), content);
    halt_->setObjectName("inspector.halt");
    halt_->setToolTip(tr("An example halts at the first step after which every position's gate (or change) "
                         "stays below the threshold for all remaining steps"));
    haltSignal_ = new QComboBox(content);
    haltSignal_->setObjectName("inspector.haltSignal");
    haltSignal_->addItem(tr("gates"), int(ndr::HaltSignal::Gates));
    haltSignal_->addItem(tr("changes"), int(ndr::HaltSignal::Change));
    haltSignal_->setToolTip(
        tr("gates: each position's mean copy gate (ThoughtNet: its operators' weight); changes: how far "
           "each step moved each position's state, |Δh| / |h|, for every model that records it. A "
           "trained NDR's gates stay partly open once its column is computed, while the column stands "
           "still"));
    threshold_ = new QDoubleSpinBox(content);
    threshold_->setObjectName("inspector.threshold");
    threshold_->setRange(0.001, 0.999);
    threshold_->setDecimals(3);
    threshold_->setSingleStep(0.05);
    threshold_->setValue(0.1);
    connect(halt_, &QCheckBox::toggled, this, [this] {
        fillAnswers();
        fillReadout();
    });
    connect(threshold_, &QDoubleSpinBox::editingFinished, this, [this] {
        if (haltingRule().signal == ndr::HaltSignal::Gates)
            thresholdChosen_ = true;
    });
    connect(threshold_, &QDoubleSpinBox::valueChanged, this, [this] {
        (haltingRule().signal == ndr::HaltSignal::Gates ? gateThreshold_ : changeThreshold_) =
            threshold_->value();
        haltingChanged();
    });
    // Each signal keeps its own threshold: switching shows the other's.
    connect(haltSignal_, &QComboBox::currentIndexChanged, this, [this] {
        const bool gates = haltingRule().signal == ndr::HaltSignal::Gates;
        threshold_->setToolTip(gates ? gateThresholdTip_ : changeThresholdTip());
        {
            const QSignalBlocker block(threshold_);
            threshold_->setValue(gates ? gateThreshold_ : changeThreshold_);
        }
        haltingChanged();
    });
    auto* haltRow = new QHBoxLayout;
    haltRow->addWidget(halt_);
    haltRow->addWidget(haltSignal_);
    haltRow->addWidget(new QLabel(tr("stay below"), content));
    haltRow->addWidget(threshold_);
    haltRow->addStretch(1);
    return haltRow;
}

void Inspector::haltingChanged() {
    stepsNeeded_->setRule(haltingRule());
    fillAnswers();
    fillReadout();
}

QString Inspector::changeThresholdTip() const {
    return tr("A step moves a position when it changes its state by at least this fraction of its length "
              "(|Δh| / |h|); halting is after the last step that moves one");
}

ndr::HaltingRule Inspector::haltingRule() const {
    return {ndr::HaltSignal(haltSignal_->currentData().toInt()), float(threshold_->value())};
}

bool Inspector::halting() const {
    return halt_->isChecked();
}

ndr::HaltingRule Inspector::haltingRuleOf(int model) const {
    const auto& models = session_.models();
    return model >= 0 && model < int(models.size())
               ? ndr::haltingRuleOf(models[size_t(model)].config, haltingRule())
               : haltingRule();
}

int Inspector::haltingStepOf(int model) const {
    const ndr::Trace* t = trace(model);
    return t ? ndr::haltingStep(*t, haltingRuleOf(model)) : -1;
}

void Inspector::setGateThreshold(double value, const QString& tip) {
    gateThreshold_ = value;
    gateThresholdTip_ = tip;
    if (haltingRule().signal != ndr::HaltSignal::Gates)
        return;
    threshold_->setToolTip(tip);
    threshold_->setValue(value);
}

void Inspector::adoptRunHalting() {
    for (const auto& m : session_.models()) {
        const ndr::ModelFacts facts = ndr::factsOf(m.config);
        if (facts.haltThreshold <= 0)
            continue;
        if (facts.haltOn == ndr::HaltSignal::Change)
            changeThreshold_ = facts.haltThreshold;
        const int index = haltSignal_->findData(int(facts.haltOn));
        if (index == haltSignal_->currentIndex() && facts.haltOn == ndr::HaltSignal::Change)
            threshold_->setValue(changeThreshold_); // already showing the change: show its new threshold
        haltSignal_->setCurrentIndex(index);
        return;
    }
}

void Inspector::suggestThreshold() {
    if (thresholdChosen_)
        return;
    // A model that halts at evaluation on its gates brings its own threshold: the inspector halts where
    // it does.
    for (const auto& m : session_.models()) {
        const ndr::ModelFacts facts = ndr::factsOf(m.config);
        if (facts.haltThreshold <= 0 || facts.haltOn != ndr::HaltSignal::Gates)
            continue;
        setGateThreshold(facts.haltThreshold,
                         tr("A gate counts as open above this. %1 halts at evaluation once every "
                            "gate is below %2; type another value to keep it.")
                             .arg(modelName(m))
                             .arg(facts.haltThreshold, 0, 'f', 2));
        return;
    }
    for (const auto& m : session_.models()) {
        if (m.history.empty() || m.history.back().probe.gates.empty())
            continue;
        const ndr::Trace& probe = m.history.back().probe;
        const float t = ndr::suggestedHaltingThreshold(probe);
        const ndr::GateLevels levels = ndr::gateLevels(probe);
        setGateThreshold(
            double(t), tr("A gate counts as open above this. Suggested for this run: halfway from the level "
                          "%1's gates rest at (%2, the median gate of its probe example at step %4) to its "
                          "most open gate there (%3); type another value to keep it.")
                           .arg(modelName(m))
                           .arg(double(levels.rest), 0, 'f', 2)
                           .arg(double(levels.open), 0, 'f', 2)
                           .arg(m.history.back().step));
        return;
    }
}

} // namespace ndrui
