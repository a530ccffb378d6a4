// The words for what a trace's gates hold (ndr::GateMeaning): NDR's copy gates, ThoughtNet's learned
// operators' weight (in place of gates) and ACT's halting weight of each step (docs/design.md §5).
// Every view that names the gates takes its words from here.
#pragma once

#include "core/records/records.h"

#include <QObject>
#include <QString>

namespace ndrui {

struct GateWords {
    QString row;     // a strip's row and a cell's value: "gate", "weight", "halting"
    QString scale;   // a colour scale's word when several kinds share it: "gate", "operator", "halting"
    QString title;   // the inspector's strip alone: "copy gates (open = 1)"
    QString plural;  // beside the change: "copy gates"
    QString map;     // a map of model %1: "%1 gates"
    QString cellTip; // a map cell's tooltip, %1 model, %2 step, %3 token, %4 position, %5 value
};

inline GateWords gateWords(ndr::GateMeaning meaning) {
    switch (meaning) {
    case ndr::GateMeaning::OperatorWeight:
        return {QObject::tr("weight"),
                QObject::tr("operator"),
                QObject::tr("learned operators' weight"),
                QObject::tr("operators' weight"),
                QObject::tr("%1 learned operators' weight"),
                QObject::tr("%1, step %2, token %3 (position %4): learned operators %5")};
    case ndr::GateMeaning::HaltingWeight:
        return {QObject::tr("halting"),
                QObject::tr("halting"),
                QObject::tr("halting weight of this step (p, the remainder at the halt)"),
                QObject::tr("halting weight"),
                QObject::tr("%1 halting weight per step"),
                QObject::tr("%1, step %2, token %3 (position %4): halting weight %5")};
    case ndr::GateMeaning::CopyGate:
        break;
    }
    return {QObject::tr("gate"),
            QObject::tr("gate"),
            QObject::tr("copy gates (open = 1)"),
            QObject::tr("copy gates"),
            QObject::tr("%1 gates"),
            QObject::tr("%1, step %2, token %3 (position %4): gate %5")};
}

} // namespace ndrui
