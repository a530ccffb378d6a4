// The run the window is showing: a new or opened ndr::Run, one TrainingWorker per model on its own
// thread, and everything the workers have reported so far. The window talks to this object only; it
// never touches a model. Saving while training asks each worker for its state between two chunks.
#pragma once

#include "core/train/run.h"
#include "ui/training/snapshot.h"

#include <QObject>
#include <QString>
#include <QStringList>
#include <QThread>
#include <memory>
#include <vector>

namespace ndrui {

class TrainingWorker;

// What the window knows of one model: its name and everything reported so far.
struct ModelProgress {
    QString name;
    ndr::ModelConfig config;
    std::vector<ndr::EvalRecord> history;
    ndr::LossLog lossLog;
    int bestEval = -1;
    int step = 0, totalSteps = 0;
    double stepsPerSecond = 0, etaSeconds = 0;
    ndr::ModelStatus status;
    bool active = false; // training or paused: started and not yet reported done
};

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
    // Opens a saved run (history and weights); Ready to inspect or to train further.
    bool open(const QString& runFile, QString* error);
    // Trains an opened or stopped run further, up to `totalSteps` in all (at least the steps done).
    void continueTraining(int totalSteps);
    void pause();
    void resume();
    void stop();
    // Saves the run and its checkpoints atomically; while training, the models keep training. Ends
    // with saved() or saveFailed().
    void save(const QString& runFile);
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
    const ndr::RunConfig& config() const { return config_; }
    const ndr::Task* task() const { return run_ ? &run_->task() : nullptr; }
    const ndr::Example& probe() const { return probe_; }
    const std::vector<ModelProgress>& models() const { return models_; }
    const QString& runFile() const { return runFile_; } // where it was last saved or opened from
    bool isSaving() const { return saving_ != nullptr; }
    // The run has trained steps that no file holds: trained and never saved, or trained since it was
    // last saved or opened.
    bool isModified() const;
    int stepsDone() const; // the most steps any model has trained
    // The record as the window knows it (configuration, tables, histories), for exports.
    ndr::RunRecord record() const;

signals:
    void runChanged();                            // a new or opened run: views reset
    void progressed(ndrui::SnapshotPtr snapshot); // after models() took the snapshot in
    void stateChanged(ndrui::TrainingSession::State state);
    void saved(const QString& runFile);
    void saveFailed(const QString& message);
    void traced(ndrui::TraceResultPtr result);

private:
    void onSnapshot(const SnapshotPtr& s);
    void onStateCaptured(const ModelCapturePtr& s);
    void setUpWorkers();
    void tearDownWorkers();
    void updateState();
    void finishSave();

    struct PendingSave;
    std::unique_ptr<ndr::Run> run_;
    ndr::RunConfig config_;
    ndr::Example probe_;
    QStringList missingWeights_;
    quint64 runId_ = 0;
    State state_ = State::Empty;
    std::vector<ModelProgress> models_;
    std::vector<QThread*> threads_;
    std::vector<TrainingWorker*> workers_;
    std::unique_ptr<PendingSave> saving_;
    QString runFile_;
    std::vector<int> savedSteps_; // per model, at the last save or open; empty: never saved
    bool paused_ = false;
    quint64 traceId_ = 0;
};

} // namespace ndrui
