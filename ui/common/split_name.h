// The word for a split of the task's depths, as the window shows it.
#pragma once

#include "core/task/task.h"

#include <QObject>
#include <QString>

namespace ndrui {

// `none` is the word for a depth in no split.
inline QString splitName(ndr::Split split, const QString& none = {}) {
    switch (split) {
    case ndr::Split::Train:
        return QObject::tr("train");
    case ndr::Split::Valid:
        return QObject::tr("valid");
    case ndr::Split::Test:
        return QObject::tr("test");
    case ndr::Split::None:
        break;
    }
    return none;
}

} // namespace ndrui
