// Saving the training session's run: the workers' states captured between two chunks, the record
// built on the window's thread, the files written on a thread of their own; recovery copies go the
// same way into the session's recovery folder.
#include "ui/training/pending_save.h"

#include "ui/common/tsan_handover.h"
#include "ui/training/run_follower.h"
#include "ui/training/training_worker.h"

#include <QDir>
#include <QMetaObject>
#include <filesystem>
#include <optional>

namespace ndrui {

void TrainingSession::save(const QString& runFile) {
    if (!run_) {
        emit saveFailed(tr("There is no run to save."));
        return;
    }
    if (saving_ && saving_->recovery && queuedSave_.isEmpty()) {
        queuedSave_ = runFile; // right after the recovery save
        return;
    }
    if (saving_) {
        emit saveFailed(tr("A save is already in progress."));
        return;
    }
    if (follower_) {
        const ndr::RunFileHolder holder = follower_->holder();
        emit saveFailed(tr("This run is being trained by another process (%1), which saves it itself; it can "
                           "be saved here once that process has ended.")
                            .arg(QString::fromStdString(holder.line)));
        return;
    }
    startSave(runFile, false);
}

bool TrainingSession::isSaving() const {
    return (saving_ && !saving_->recovery) || !queuedSave_.isEmpty();
}

bool TrainingSession::isSavingRecoveryCopy() const {
    return saving_ && saving_->recovery;
}

void TrainingSession::startSave(const QString& runFile, bool recovery) {
    saving_ = std::make_unique<PendingSave>();
    saving_->file = runFile;
    saving_->recovery = recovery;
    saving_->runId = runId_;
    saving_->states.resize(workers_.size());
    for (auto* w : workers_) {
        const auto held = handOver(w);
        QMetaObject::invokeMethod(w, &TrainingWorker::captureState, Qt::QueuedConnection);
        w->requestTurn();
    }
}

void TrainingSession::dropRecoveryFolder() {
    if (recoveryDir_.isEmpty())
        return;
    if (saving_ && saving_->recovery)
        saving_.reset();   // its states arrive for nothing
    recoveryLock_.reset(); // unlocks and removes the lock file
    QDir(recoveryDir_).removeRecursively();
    recoveryDir_.clear();
    recoverySteps_.clear();
}

void TrainingSession::onStateCaptured(const ModelCapturePtr& s) {
    takeOver(sender());
    if (!saving_ || s->runId != saving_->runId || s->model < 0 || s->model >= int(saving_->states.size()))
        return;
    if (!saving_->states[size_t(s->model)])
        ++saving_->answered;
    saving_->states[size_t(s->model)] = s;
    if (saving_->answered == int(saving_->states.size()))
        finishSave();
}

void TrainingSession::finishSave() {
    // The record and checkpoints as the workers captured them; the files are written on a thread of
    // their own (a long run's record takes a good part of a second), and onSaveWritten goes on.
    auto job = std::make_shared<SaveJob>();
    job->file = saving_->file.toStdString();
    ndr::RunRecord& rec = job->record;
    rec.config = record_.config;
    rec.tables = record_.tables;
    rec.probe = record_.probe;
    for (const auto& st : saving_->states) {
        ndr::ModelRecord mr = st->record;
        // A run read back from the file is not training: it is stopped and can go on from there.
        if (mr.status.state == ndr::ModelState::Training)
            mr.status = {ndr::ModelState::Stopped, {}};
        rec.models.push_back(std::move(mr));
        job->checkpoints.push_back(st->checkpoint);
    }
    saving_->states.clear();
    saving_->job = job;
    const quint64 id = saving_->id = ++saveId_;
    const bool recovery = saving_->recovery;
    saving_->writer = std::thread([this, job, id, recovery] {
        try {
            // Not into a run that another process trains (a recovery folder is this session's alone).
            std::optional<ndr::RunFileLock> lock;
            if (!recovery) {
                // Nor beside it, under another name: the folder is that process's while it trains, and
                // asking (unlike the lock) creates nothing there.
                const std::filesystem::path folder = std::filesystem::path(job->file).parent_path();
                if (const ndr::RunFileHolder holder = ndr::folderHolder(folder); holder.held)
                    throw ndr::FileError(folder.string() + " holds a run that another process trains (" +
                                         holder.line + "); save into another folder");
                // A missing folder is made (saveRunFiles would), so that the lock has its place.
                std::error_code made;
                std::filesystem::create_directories(folder, made);
                lock.emplace(job->file);
            }
            ndr::saveRunFiles(job->file, job->record, job->checkpoints);
        } catch (const std::exception& e) {
            job->error = e.what()[0] ? e.what() : "the files could not be written";
        }
        queueFromThread(this, [this, id] { onSaveWritten(id); });
    });
}

void TrainingSession::onSaveWritten(quint64 id) {
    if (!saving_ || saving_->id != id)
        return; // dropped meanwhile (its thread was joined then)
    const auto pending = std::move(saving_);
    pending->writer.join();
    const ndr::RunRecord& rec = pending->job->record;
    // A save asked for while a recovery save was under way comes next.
    const auto next = [this] {
        if (const QString file = std::exchange(queuedSave_, QString()); !file.isEmpty())
            startSave(file, false);
    };
    if (pending->recovery) {
        // A failed recovery copy is a spare lost: the run itself is untouched, and the next one tries again.
        if (pending->job->error.empty()) {
            sinceSave_.start();
            recoverySteps_.clear();
            for (const auto& m : rec.models)
                recoverySteps_.push_back(m.stepsDone);
            emit recoverySaved(pending->file);
        }
        next();
        // Training stopped while this copy was taken: one more, of the run as it ended.
        if (state_ == State::Ready && queuedSave_.isEmpty() && !saving_)
            saveForRecovery();
        return;
    }
    if (!pending->job->error.empty()) {
        emit saveFailed(QString::fromStdString(pending->job->error));
        return;
    }
    runFile_ = pending->file;
    savedSteps_.clear();
    for (const auto& m : rec.models)
        savedSteps_.push_back(m.stepsDone);
    sinceSave_.start();
    // The file holds all of it: the recovery copy is no longer needed (a new one starts if it trains on).
    if (!isModified())
        dropRecoveryFolder();
    emit saved(pending->file);
}

} // namespace ndrui
