// Running the command-line tool from a test: its exit code and output; a crash or a hang counts as a
// failure with exit code -1.
#pragma once

#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

#include "testutil.h"

namespace ndrtest {

struct Result {
    int exitCode = -1;
    QString out, err;
};

inline Result runNdr(const QStringList& args, int timeoutMs = 20000,
                     const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
    QProcess p;
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(NDR_BINARY_DIR "/app/ndr"), args);
    Result r;
    if (!p.waitForStarted()) {
        r.err = "did not start: " + p.errorString();
        return r;
    }
    const int waited = waitMs(timeoutMs); // scaled in sanitizer builds
    if (!p.waitForFinished(waited)) {
        // After kill() the error string says "crashed", so what happened is read first.
        const QString what = p.error() == QProcess::Timedout
                                 ? QString("did not finish within %1 s; killed").arg(waited / 1000.0)
                                 : "failed: " + p.errorString();
        p.kill();
        p.waitForFinished();
        r.err = what;
        return r;
    }
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    return r;
}

inline QByteArray describe(const Result& r) {
    return ("exit " + QString::number(r.exitCode) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err).toUtf8();
}

} // namespace ndrtest
