#include "ui/common/platform_notices.h"

#include <QString>
#include <QtGlobal>

namespace ndrui {

namespace {

QtMessageHandler previousHandler = nullptr;

void dropPlatformNotices(QtMsgType type, const QMessageLogContext& context, const QString& message) {
    if (message.contains("does not support propagateSizeHints") ||
        message.contains("XDG_RUNTIME_DIR not set"))
        return;
    if (previousHandler)
        previousHandler(type, context, message);
}

} // namespace

void hidePlatformNotices() {
    const QtMessageHandler previous = qInstallMessageHandler(dropPlatformNotices);
    if (previous != dropPlatformNotices)
        previousHandler = previous;
}

} // namespace ndrui
