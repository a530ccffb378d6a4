// The words for a split of the task's depths and for one depth, as the window shows them.
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

// "depth 3", or the problem size ("2+2") of multi-digit arithmetic, whose depths are sizes.
inline QString depthName(const ndr::TaskConfig& task, int depth) {
    return ndr::depthsAreSizes(task) ? QString::fromStdString(ndr::depthLabel(task, depth))
                                     : QObject::tr("depth %1").arg(depth);
}

} // namespace ndrui
