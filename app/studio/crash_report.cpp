// Fatal-signal handlers of the desktop app (see crash_report.h). A handler may only do what is
// async-signal-safe: the message is made once, beforehand, and written with write(2).
#include "crash_report.h"

#include <algorithm>
#include <csignal>
#include <cstring>
#include <unistd.h>

namespace {

char message[2048];
size_t messageLength = 0;
// Room to run the handler when the crash is a stack overflow.
alignas(16) char alternateStack[64 * 1024];

void onFatalSignal(int signal) {
    const char* name = signal == SIGSEGV  ? "SIGSEGV"
                       : signal == SIGBUS ? "SIGBUS"
                       : signal == SIGFPE ? "SIGFPE"
                       : signal == SIGILL ? "SIGILL"
                                          : "SIGABRT";
    const char head[] = "ndr-studio: crashed (";
    ssize_t ignored = write(STDERR_FILENO, head, sizeof head - 1);
    ignored = write(STDERR_FILENO, name, std::strlen(name));
    ignored = write(STDERR_FILENO, message, messageLength);
    (void)ignored;
    // SA_RESETHAND has put the default action back: raising again ends the process as the signal would.
    raise(signal);
}

} // namespace

void installCrashReport(const QString& recoveryFolder) {
    const QByteArray text =
        recoveryFolder.isEmpty()
            ? QByteArray("). Runs with unsaved training had no recovery copy (--no-settings).\n")
            : ("). A run with unsaved training is kept as of its last evaluation in " +
               recoveryFolder.toUtf8() + "; the next start of NDR Studio offers it.\n");
    messageLength = std::min(sizeof message, size_t(text.size()));
    std::memcpy(message, text.constData(), messageLength);

    stack_t stack{};
    stack.ss_sp = alternateStack;
    stack.ss_size = sizeof alternateStack;
    sigaltstack(&stack, nullptr);
    struct sigaction action {};
    action.sa_handler = onFatalSignal;
    action.sa_flags = SA_RESETHAND | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
        sigaction(s, &action, nullptr);
}
