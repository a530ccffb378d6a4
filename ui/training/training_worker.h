// One worker per model: owns that model's training on its own thread. Commands come in as queued
// calls; progress goes out as immutable snapshots; pause and cancel are atomic flags, so they take
// effect between two training steps even while the worker is busy.
#pragma once

#include "core/train/trainer.h"
#include "ui/training/snapshot.h"

#include <QElapsedTimer>
#include <QObject>
#include <atomic>
#include <deque>
#include <mutex>

namespace ndrui {

class TrainingWorker : public QObject {
    Q_OBJECT

public:
    // `trainer` must outlive the worker; only the worker touches it while training.
    TrainingWorker(quint64 runId, int model, ndr::Trainer& trainer);

    // Thread-safe, called from the window's thread. Pause and cancel take effect at the next step
    // boundary. Flags are cleared here, before start() or resume() is queued, so a pause or cancel
    // asked for after that is never undone by the queued call.
    void requestPause();
    void requestCancel();
    void clearFlags() {
        pause_ = false;
        cancel_ = false;
    }
    void clearPause() { pause_ = false; }
    // Thread-safe: after queuing a call, ends the current chunk at the next step or pass boundary, or
    // the drawing of a held-out set at its next example, so that the call is answered soon.
    void requestTurn() { interrupt_ = true; }
    bool isTraining() const { return training_; }

public slots:
    void start();        // (re)starts training from the trainer's current step; after clearFlags()
    void resume();       // after a pause; after clearPause()
    void finishIfIdle(); // after requestCancel: a paused worker reports that it stopped
    void captureState(); // emits stateCaptured with the model's record and checkpoint
    void trace(quint64 requestId, const ndr::Example& example, int steps); // emits traced
    // From any thread: queues a trace request that the worker's thread answers with traced(). The
    // request crosses threads under a mutex rather than inside Qt's queued call.
    void requestTrace(quint64 requestId, const ndr::Example& example, int steps);

signals:
    void snapshot(ndrui::SnapshotPtr snapshot);
    void stateCaptured(ndrui::ModelCapturePtr state);
    void traced(ndrui::TraceResultPtr result);

private slots:
    void trainChunk();
    void answerTraceRequest();

private:
    void onProgress(const ndr::TrainProgress& p);
    void emitSnapshot(ndr::ModelState state, bool done, const std::string& message = {});

    quint64 runId_;
    int model_;
    ndr::Trainer& trainer_;
    std::atomic<bool> pause_{false}, cancel_{false}, interrupt_{false};
    std::atomic<bool> training_{false};
    QElapsedTimer chunkClock_, snapshotClock_;
    bool done_ = false;      // the last snapshot said so; start() clears it
    size_t lossLogSent_ = 0; // loss-log points already sent
    std::optional<ndr::EvalRecord> pendingEval_;
    double stepsPerSecond_ = 0, eta_ = 0;
    double evaluating_ = -1; // as TrainProgress::evaluating
    struct TraceRequest {
        quint64 id;
        ndr::Example example;
        int steps;
    };
    std::mutex requestsMutex_;
    std::deque<TraceRequest> requests_;
};

} // namespace ndrui
