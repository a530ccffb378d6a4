// What the desktop app says when it dies of a fatal signal (a crash, an abort): where the recovery
// copies of unsaved runs are, which the next start offers.
#pragma once

#include <QString>

// Installs handlers of SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT that write one line naming
// `recoveryFolder` (none when empty) to stderr, then let the signal end the process as before.
void installCrashReport(const QString& recoveryFolder);
