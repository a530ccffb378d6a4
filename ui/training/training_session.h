// The run the window is showing: a new or opened ndr::Run, one TrainingWorker per model on its own
// thread, and everything the workers have reported so far. The window talks to this object only; it
// never touches a model. Saving while training asks each worker for its state between two chunks.
#pragma once

#include "core/train/run.h"
#include "ui/training/snapshot.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QLockFile>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QThread>
#include <memory>
#include <vector>

namespace ndrui {

class TrainingWorker;
class RunFollower;
struct FollowedRead;

// What training reports of one model beyond its record (TrainingSession::record()): shown while it
// trains, never saved.
struct ModelProgress {
    int totalSteps = 0;
    double stepsPerSecond = 0, etaSeconds = 0;
    double evaluating = -1; // the part of an evaluation under way done, or -1
    bool active = false;    // training or paused: started and not yet reported done
};

inline QString modelName(const ndr::ModelRecord& m) {
    return QString::fromStdString(m.config.name);
}

class TrainingSession : public QObject {
    Q_OBJECT

public:
    enum class State { Empty, Ready, Training, Paused };

    explicit TrainingSession(QObject* parent = nullptr);
    ~TrainingSession() override; // stops the workers and joins their threads

    // A new run from `config`, training at once. False with a message when it cannot start.
    bool start(const ndr::RunConfig& config, QString* error);
    // What Start does: on an opened, stopped or finished run whose settings `config` repeats (its
    // length and preset name aside) and asks for more steps than were done, trains that run further up
    // to config.train.steps; otherwise starts a new run from `config`.
    bool startOrContinue(const ndr::RunConfig& config, QString* error);
    // Whether `config` repeats the settings of the run shown, which is not training (its length and
    // preset name aside): Start may then train this run further instead of starting a new one.
    bool hasSameSettings(const ndr::RunConfig& config) const;
    // Whether startOrContinue(config) would train the current run further rather than start anew.
    bool canContinue(const ndr::RunConfig& config) const;
    // Forgets the run (File > New run): its workers stop and go, the session is Empty.
    void clear();
    // Opens a saved run (history and weights); Ready to inspect or to train further. A run that
    // another process trains (its lock is held) opens read-only and is followed: each of that
    // process's saves is read again (runSaved), and when the process ends it becomes an ordinary run.
    bool open(const QString& runFile, QString* error);
    // The run shown is one another process trains: nothing saves, continues or copies it for
    // recovery into its folder until that process lets go of it.
    bool isFollowing() const { return follower_ != nullptr; }
    // Who trains the followed run ("pid 1234 on host, since …": pid and host) and the time of its
    // last save read; empty while not following.
    ndr::RunFileHolder followedHolder() const;
    QDateTime followedSave() const;
    // How often the followed run's files are looked at besides the file system's events (2 s).
    void setFollowPollInterval(int ms);
    // Trains an opened or stopped run further, up to `totalSteps` in all (at least the steps done).
    void continueTraining(int totalSteps);
    void pause();
    void resume();
    void stop();
    // Saves the run and its checkpoints atomically; while training, the models keep training. Ends
    // with saved() or saveFailed().
    void save(const QString& runFile);

    // Recovery: while a run with unsaved training trains, it is saved into a folder of its own inside
    // `folder` (empty: never) at its first evaluation, then at each evaluation `intervalMs` or more
    // after the last copy (0: at every evaluation), and when its training stops, so a crash or a kill
    // loses at most that much. The folder goes when the run is saved (and not trained since),
    // discarded or closed; one whose process died is left for recoverableRuns(). A lock file marks
    // the folder of a live session.
    void setRecoveryFolder(const QString& folder, int intervalMs = 0);
    // The run files of recovery folders in `folder` that no live session holds, oldest first.
    static QStringList recoverableRuns(const QString& folder);
    // Opens a run left in a recovery folder as a run that was never saved (Save asks where); its
    // recovery folder is this session's from now on. False with a message when it cannot be opened
    // (the folder is left as it is) or another session holds it.
    bool openRecovered(const QString& runFile, QString* error);
    // Removes a recovery folder no session holds (what recoverableRuns listed).
    static bool discardRecovered(const QString& runFile);
    // The run file of this session's recovery folder, empty when it has none.
    QString recoveryRunFile() const;
    // Asks every model for the trace of `example` (answers come as traced()); returns the request id,
    // 0 (nothing asked) for a run without its weights.
    quint64 requestTrace(const ndr::Example& example, int steps = 0);

    State state() const { return state_; }
    quint64 runId() const { return runId_; }
    bool hasRun() const { return run_ != nullptr; }
    // The checkpoint files of an opened run that were not found: its history is shown, but it has no
    // weights to trace or to train further. Empty when the run has its weights.
    const QStringList& missingWeights() const { return missingWeights_; }
    bool hasWeights() const { return run_ != nullptr && missingWeights_.isEmpty(); }
    const ndr::RunConfig& config() const { return record_.config; }
    const ndr::Task* task() const { return run_ ? &run_->task() : nullptr; }
    const ndr::Example& probe() const { return record_.probe; }
    // Each model's record as reported so far (the record's models) and its progress beside it.
    const std::vector<ndr::ModelRecord>& models() const { return record_.models; }
    const ModelProgress& progress(size_t model) const { return progress_[model]; }
    const QString& runFile() const { return runFile_; } // where it was last saved or opened from
    // A save asked for by save() is under way (a recovery save is not).
    bool isSaving() const;
    // A copy into the recovery folder is under way: its files are being written or replaced.
    bool isSavingRecoveryCopy() const;
    // The run has trained steps that no file holds: trained and never saved, or trained since it was
    // last saved or opened.
    bool isModified() const;
    int stepsDone() const; // the most steps any model has trained
    // The record as the window knows it (configuration, tables, probe, each model's history): the one
    // copy the views draw from, updated in place as the models report.
    const ndr::RunRecord& record() const { return record_; }
    // Writes the recovery copy now if the run has training no file or copy holds (when a recovery
    // folder is set); the copy's run file is recoveryRunFile() once it is written.
    void saveRecoveryCopyNow() { saveForRecovery(); }

signals:
    void runChanged();                            // a new or opened run: views reset
    void progressed(ndrui::SnapshotPtr snapshot); // after models() took the snapshot in
    void stateChanged(ndrui::TrainingSession::State state);
    void saved(const QString& runFile);
    void recoverySaved(const QString& runFile); // into the recovery folder
    void saveFailed(const QString& message);
    void traced(ndrui::TraceResultPtr result);
    // Following began, a save of the followed run was read (its models also report `progressed`),
    // or the process that trained it let go (isFollowing() is false then).
    void followChanged();

private:
    void onSnapshot(const SnapshotPtr& s);
    void onStateCaptured(const ModelCapturePtr& s);
    void setUpWorkers();
    void tearDownWorkers();
    void updateState();
    void finishSave();
    void onSaveWritten(quint64 id);
    void startSave(const QString& runFile, bool recovery);
    void saveForRecovery();
    bool takeRecoveryFolder(const QString& dir, QString* error);
    void dropRecoveryFolder();
    bool recoveryCopyIsBehind() const; // the models have trained past the last recovery copy
    // Takes an opened run in (open and a followed run's saves); `same` keeps the run's id and
    // reports the models' new figures as progress instead of a new run.
    void adopt(std::shared_ptr<ndr::Run> run, const QStringList& missing, const QString& runFile, bool same);
    void onFollowedSaved(const FollowedRead& read);
    void onFollowedReleased(const FollowedRead& read);
    void stopFollowing();

    struct PendingSave;
    std::shared_ptr<ndr::Run> run_;
    std::unique_ptr<RunFollower> follower_; // while the run shown is another process's
    int followPollMs_ = 2000;
    ndr::RunRecord record_;
    QStringList missingWeights_;
    quint64 runId_ = 0;
    State state_ = State::Empty;
    std::vector<ModelProgress> progress_; // per model of record_
    std::vector<QThread*> threads_;
    std::vector<TrainingWorker*> workers_;
    std::unique_ptr<PendingSave> saving_;
    QString runFile_;
    std::vector<int> savedSteps_; // per model, at the last save or open; empty: never saved
    bool paused_ = false;
    quint64 traceId_ = 0;

    QString recoveryBase_; // where recovery folders go; empty: no recovery
    int recoveryIntervalMs_ = 0;
    QString recoveryDir_;                     // this run's, once it has one
    std::unique_ptr<QLockFile> recoveryLock_; // held while recoveryDir_ is this session's
    std::vector<int> recoverySteps_;          // per model, in the last recovery copy
    QElapsedTimer sinceSave_;                 // since the last save of either kind (invalid: none yet)
    QString queuedSave_;                      // a save() asked for during a recovery save
    quint64 saveId_ = 0;                      // the last save started
};

} // namespace ndrui
