// Catching what escapes event handlers (see guarded_application.h).
#include "ui/common/guarded_application.h"

#include <QMetaObject>
#include <QThread>
#include <cstdio>
#include <exception>
#include <new>

namespace ndrui {

GuardedApplication::GuardedApplication(int& argc, char** argv) : QApplication(argc, argv) {}

bool GuardedApplication::notify(QObject* receiver, QEvent* event) {
    try {
        return QApplication::notify(receiver, event);
    } catch (const std::bad_alloc&) {
        report(QStringLiteral("out of memory (std::bad_alloc)"));
    } catch (const std::exception& e) {
        report(QString::fromUtf8(e.what()));
    } catch (...) {
        report(QStringLiteral("an unknown exception"));
    }
    return false;
}

void GuardedApplication::report(const QString& what) {
    ++caught_;
    std::fprintf(stderr, "ndr-studio: an event handler failed: %s\n", qPrintable(what));
    if (!handler_)
        return;
    // The handler shows a message and saves: never inside the paint or the worker thread that failed.
    QMetaObject::invokeMethod(
        this, [this, what] { handler_(what); }, Qt::QueuedConnection);
}

} // namespace ndrui
