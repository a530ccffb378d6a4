// Training one model in chunks of ~50 ms, so queued commands (save, resume, traces) get their turn
// between chunks and snapshots go out at most every ~100 ms plus one at each evaluation. An
// evaluation is cut into chunks the same way: it goes on where it stopped.
#include "ui/training/training_worker.h"

#include "ui/common/tsan_handover.h"

#include <QMetaObject>

namespace ndrui {

namespace {
constexpr int kChunkMs = 50;     // longest stretch without returning to the event loop (plus a pass)
constexpr int kSnapshotMs = 100; // live progress rate; the window redraws slower still
} // namespace

TrainingWorker::TrainingWorker(quint64 runId, int model, ndr::Trainer& trainer)
    : runId_(runId), model_(model), trainer_(trainer), lossLogSent_(trainer.record().lossLog.steps.size()) {}

void TrainingWorker::requestPause() {
    pause_ = true;
    interrupt_ = true;
}

void TrainingWorker::requestCancel() {
    cancel_ = true;
    interrupt_ = true;
}

void TrainingWorker::start() {
    takeOver(this); // what the window set up before queuing this call
    done_ = false;
    training_ = true;
    snapshotClock_.start();
    trainChunk();
}

void TrainingWorker::resume() {
    takeOver(this);
    if (training_ || done_)
        return;
    start();
}

void TrainingWorker::finishIfIdle() {
    takeOver(this);
    if (!training_ && !done_)
        emitSnapshot(ndr::ModelState::Stopped, true);
}

void TrainingWorker::trainChunk() {
    interrupt_ = false;
    // Flags set before the reset above are seen here; flags set after it also set interrupt_.
    using ndr::ModelState;
    if (cancel_ || pause_) {
        training_ = false;
        emitSnapshot(cancel_ ? ModelState::Stopped : ModelState::Paused, cancel_);
        return;
    }
    chunkClock_.start();
    ndr::ModelStatus status;
    try {
        status = trainer_.run([this](const ndr::TrainProgress& p) { onProgress(p); }, &interrupt_);
    } catch (const std::exception& e) {
        status = {ModelState::Failed, e.what()};
    }
    if (status.state == ModelState::Stopped && !cancel_ && !pause_) {
        // The chunk's time is up: let queued calls run, then go on.
        QMetaObject::invokeMethod(this, &TrainingWorker::trainChunk, Qt::QueuedConnection);
        return;
    }
    training_ = false;
    if (status.state == ModelState::Stopped)
        emitSnapshot(cancel_ ? ModelState::Stopped : ModelState::Paused, cancel_);
    else
        emitSnapshot(status.state, true, status.message);
}

void TrainingWorker::onProgress(const ndr::TrainProgress& p) {
    stepsPerSecond_ = p.stepsPerSecond;
    eta_ = p.etaSeconds;
    evaluating_ = p.evaluating;
    if (p.eval)
        pendingEval_ = *p.eval;
    if (p.eval || snapshotClock_.elapsed() >= kSnapshotMs)
        emitSnapshot(ndr::ModelState::Training, false);
    if (chunkClock_.elapsed() >= kChunkMs)
        interrupt_ = true;
}

void TrainingWorker::emitSnapshot(ndr::ModelState state, bool done, const std::string& message) {
    auto s = std::make_shared<Snapshot>();
    s->runId = runId_;
    s->model = model_;
    s->step = trainer_.step();
    s->totalSteps = trainer_.totalSteps();
    s->stepsPerSecond = stepsPerSecond_;
    s->etaSeconds = eta_;
    s->evaluating = state == ndr::ModelState::Training ? evaluating_ : -1;
    s->bestEval = trainer_.record().bestEval;
    const auto& log = trainer_.record().lossLog;
    for (; lossLogSent_ < log.steps.size(); ++lossLogSent_)
        s->losses.push_back({log.steps[lossLogSent_], log.loss[lossLogSent_]});
    s->eval = std::move(pendingEval_);
    pendingEval_.reset();
    s->status = {state, message};
    s->done = done;
    done_ = done;
    snapshotClock_.start();
    const auto held = handOver(this);
    emit snapshot(std::move(s));
}

void TrainingWorker::captureState() {
    takeOver(this);
    auto s = std::make_shared<ModelCapture>();
    s->runId = runId_;
    s->model = model_;
    s->record = trainer_.record();
    s->checkpoint = trainer_.checkpoint();
    const auto held = handOver(this);
    emit stateCaptured(std::move(s));
}

void TrainingWorker::requestTrace(quint64 requestId, const ndr::Example& example, int steps) {
    {
        const std::lock_guard<std::mutex> lock(requestsMutex_);
        requests_.push_back({requestId, example, steps});
    }
    QMetaObject::invokeMethod(this, &TrainingWorker::answerTraceRequest, Qt::QueuedConnection);
    requestTurn();
}

void TrainingWorker::answerTraceRequest() {
    std::optional<TraceRequest> r;
    {
        const std::lock_guard<std::mutex> lock(requestsMutex_);
        if (requests_.empty())
            return;
        r = std::move(requests_.front());
        requests_.pop_front();
    }
    trace(r->id, r->example, r->steps);
}

void TrainingWorker::trace(quint64 requestId, const ndr::Example& example, int steps) {
    takeOver(this);
    auto r = std::make_shared<TraceResult>();
    r->id = requestId;
    r->model = model_;
    try {
        r->trace = trainer_.traceOf(example, steps);
        r->weightsStep = trainer_.step();
    } catch (const std::exception& e) {
        r->error = QString::fromUtf8(e.what());
    }
    const auto held = handOver(this);
    emit traced(std::move(r));
}

} // namespace ndrui
