// The training session's recovery copies (see TrainingSession::setRecoveryFolder): where they go, the
// lock that marks a live session's folder, and the folders that dead sessions left.
#include "ui/training/training_session.h"

#include "ui/training/run_follower.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QLockFile>

#include <memory>

namespace ndrui {

namespace {

const char* const kRecoveryLock = "session.lock";
const char* const kRecoveryRun = "run.json";

// The lock of a recovery folder, taken if no live session holds it (isLocked() says which): stale
// only when its process is gone.
std::unique_ptr<QLockFile> tryLockRecoveryFolder(const QString& dir) {
    auto lock = std::make_unique<QLockFile>(QDir(dir).filePath(kRecoveryLock));
    lock->setStaleLockTime(0);
    lock->tryLock(0);
    return lock;
}

} // namespace

bool TrainingSession::recoveryCopyIsBehind() const {
    for (size_t i = 0; i < record_.models.size(); ++i)
        if (i >= recoverySteps_.size() || record_.models[i].stepsDone != recoverySteps_[i])
            return true;
    return false;
}

void TrainingSession::saveForRecovery() {
    // A followed run is another process's, saved by it: never copied (isModified is false for it too).
    if (recoveryBase_.isEmpty() || !run_ || saving_ || follower_ || !isModified() ||
        !missingWeights_.isEmpty() || (!recoveryDir_.isEmpty() && !recoveryCopyIsBehind()))
        return;
    if (recoveryDir_.isEmpty()) {
        const QString name = QStringLiteral("run-%1-%2-%3")
                                 .arg(QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss"))
                                 .arg(QCoreApplication::applicationPid())
                                 .arg(runId_);
        QString error;
        if (!QDir().mkpath(QDir(recoveryBase_).filePath(name)) ||
            !takeRecoveryFolder(QDir(recoveryBase_).filePath(name), &error))
            return; // no recovery copy; the run itself is untouched
    }
    startSave(QDir(recoveryDir_).filePath(kRecoveryRun), true);
}

void TrainingSession::setRecoveryFolder(const QString& folder, int intervalMs) {
    recoveryBase_ = folder;
    recoveryIntervalMs_ = intervalMs;
}

QString TrainingSession::recoveryRunFile() const {
    return recoveryDir_.isEmpty() ? QString() : QDir(recoveryDir_).filePath(kRecoveryRun);
}

bool TrainingSession::takeRecoveryFolder(const QString& dir, QString* error) {
    auto lock = tryLockRecoveryFolder(dir);
    if (!lock->isLocked()) {
        *error = lock->error() == QLockFile::LockFailedError
                     ? tr("another NDR Studio window holds this run")
                     : tr("cannot write in %1").arg(QDir::toNativeSeparators(dir));
        return false;
    }
    recoveryLock_ = std::move(lock);
    recoveryDir_ = dir;
    return true;
}

QStringList TrainingSession::recoverableRuns(const QString& folder) {
    QStringList runs;
    const QDir base(folder);
    for (const QFileInfo& d : base.entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
        const QString run = QDir(d.filePath()).filePath(kRecoveryRun);
        if (!QFileInfo::exists(run))
            continue;
        if (tryLockRecoveryFolder(d.filePath())->isLocked())
            runs << run; // no live session holds it (the lock is released here)
    }
    return runs;
}

bool TrainingSession::discardRecovered(const QString& runFile) {
    const QString dir = QFileInfo(runFile).absolutePath();
    if (!tryLockRecoveryFolder(dir)->isLocked())
        return false; // released again before the folder goes
    return QDir(dir).removeRecursively();
}

bool TrainingSession::openRecovered(const QString& runFile, QString* error) {
    const QString dir = QFileInfo(runFile).absolutePath();
    auto lock = tryLockRecoveryFolder(dir);
    if (!lock->isLocked()) {
        *error = tr("Another NDR Studio window holds this run.");
        return false;
    }
    if (!open(runFile, error))
        return false;
    recoveryLock_ = std::move(lock);
    recoveryDir_ = dir;
    for (const auto& m : record_.models)
        recoverySteps_.push_back(m.stepsDone);
    // Never saved where the user chose: Save asks where, and closing asks first.
    runFile_.clear();
    savedSteps_.clear();
    emit runChanged();
    return true;
}

} // namespace ndrui
