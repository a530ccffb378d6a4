// The window's run: workers on threads, the progress they report, tracing through them (saving is in
// training_session_save.cpp, recovery copies in training_session_recovery.cpp).
#include "ui/training/training_session.h"

#include "ui/common/tsan_handover.h"
#include "ui/training/pending_save.h"
#include "ui/training/run_follower.h"
#include "ui/training/training_worker.h"

#include <QMetaObject>

namespace ndrui {

TrainingSession::TrainingSession(QObject* parent) : QObject(parent) {
    qRegisterMetaType<SnapshotPtr>();
    qRegisterMetaType<ModelCapturePtr>();
    qRegisterMetaType<TraceResultPtr>();
}

TrainingSession::~TrainingSession() {
    tearDownWorkers();
    follower_.reset();
    dropRecoveryFolder();
}

bool TrainingSession::start(const ndr::RunConfig& config, QString* error) {
    if (state_ == State::Training || state_ == State::Paused) {
        *error = tr("Stop the current training before starting another.");
        return false;
    }
    if (const auto problems = ndr::validate(config); !problems.empty()) {
        QStringList lines;
        for (const auto& p : problems)
            lines << QString::fromStdString(p.text());
        *error = tr("The configuration is not valid:\n%1").arg(lines.join('\n'));
        return false;
    }
    std::unique_ptr<ndr::Run> run;
    try {
        run = std::make_unique<ndr::Run>(config);
    } catch (const std::exception& e) {
        *error = QString::fromUtf8(e.what());
        return false;
    }
    tearDownWorkers();
    stopFollowing();
    dropRecoveryFolder();
    run_ = std::move(run);
    missingWeights_.clear();
    record_ = {};
    record_.config = config;
    record_.tables = run_->task().savedTables();
    record_.probe = run_->probe();
    runFile_.clear();
    savedSteps_.clear();
    ++runId_;
    progress_.clear();
    for (const auto& m : config.models) {
        ndr::ModelRecord r;
        r.config = m;
        record_.models.push_back(std::move(r));
        ModelProgress p;
        p.totalSteps = config.train.steps;
        progress_.push_back(p);
    }
    setUpWorkers();
    emit runChanged();
    paused_ = false;
    for (size_t i = 0; i < workers_.size(); ++i) {
        progress_[i].active = true;
        record_.models[i].status = {ndr::ModelState::Training, {}};
        workers_[i]->clearFlags();
        const auto held = handOver(workers_[i]);
        QMetaObject::invokeMethod(workers_[i], &TrainingWorker::start, Qt::QueuedConnection);
    }
    updateState();
    return true;
}

bool TrainingSession::hasSameSettings(const ndr::RunConfig& config) const {
    // A followed run is another process's to train.
    if (!run_ || state_ != State::Ready || follower_)
        return false;
    ndr::RunConfig asked = config, current = record_.config;
    asked.train.steps = current.train.steps = 0;
    asked.preset = current.preset = "";
    return asked == current;
}

bool TrainingSession::canContinue(const ndr::RunConfig& config) const {
    return missingWeights_.isEmpty() && config.train.steps > stepsDone() && hasSameSettings(config);
}

bool TrainingSession::startOrContinue(const ndr::RunConfig& config, QString* error) {
    if (canContinue(config)) {
        continueTraining(config.train.steps);
        return true;
    }
    return start(config, error);
}

void TrainingSession::clear() {
    tearDownWorkers();
    stopFollowing();
    dropRecoveryFolder();
    run_.reset();
    missingWeights_.clear();
    record_ = {};
    progress_.clear();
    runFile_.clear();
    savedSteps_.clear();
    paused_ = false;
    ++runId_;
    emit runChanged();
    updateState();
}

bool TrainingSession::isModified() const {
    if (!run_)
        return false;
    for (size_t i = 0; i < record_.models.size(); ++i) {
        const int saved = i < savedSteps_.size() ? savedSteps_[i] : 0;
        if (record_.models[i].stepsDone != saved)
            return true;
    }
    return false;
}

bool TrainingSession::open(const QString& runFile, QString* error) {
    if (state_ == State::Training || state_ == State::Paused) {
        *error = tr("Stop the current training before opening a run.");
        return false;
    }
    // A run another process trains is read as that process saves it, never written.
    const ndr::RunFileHolder holder = ndr::runFileHolder(runFile.toStdString());
    if (holder.held) {
        const FollowedRead read = RunFollower::read(runFile);
        if (!read.run) {
            *error = read.error;
            return false;
        }
        adopt(read.run, read.missingWeights, runFile, false);
        follower_ = std::make_unique<RunFollower>(runFile, read.holder, read.saved);
        follower_->setPollInterval(followPollMs_);
        connect(follower_.get(), &RunFollower::saved, this, &TrainingSession::onFollowedSaved);
        connect(follower_.get(), &RunFollower::released, this, &TrainingSession::onFollowedReleased);
        emit followChanged();
        return true;
    }
    std::unique_ptr<ndr::Run> run;
    QStringList missing;
    try {
        run = ndr::Run::open(runFile.toStdString());
    } catch (const std::exception& e) {
        // A run whose checkpoints are gone still holds its whole history: open that much. A damaged
        // checkpoint or record is refused as it is.
        try {
            for (const std::string& f : ndr::Run::missingCheckpoints(runFile.toStdString()))
                missing << QString::fromStdString(f);
            if (!missing.isEmpty())
                run = ndr::Run::openHistory(runFile.toStdString());
        } catch (const std::exception&) {
            missing.clear();
        }
        if (!run) {
            *error = QString::fromUtf8(e.what());
            return false;
        }
    }
    adopt(std::move(run), missing, runFile, false);
    return true;
}

void TrainingSession::adopt(std::shared_ptr<ndr::Run> run, const QStringList& missing, const QString& runFile,
                            bool same) {
    tearDownWorkers();
    if (!same) {
        stopFollowing();
        dropRecoveryFolder();
    }
    missingWeights_ = missing;
    run_ = std::move(run);
    runFile_ = runFile;
    if (!same)
        ++runId_;
    std::vector<size_t> evaluations;
    for (const auto& m : record_.models)
        evaluations.push_back(m.history.size());
    record_ = run_->record();
    record_.tables = run_->task().savedTables();
    savedSteps_.clear();
    progress_.clear();
    for (auto& m : record_.models) {
        savedSteps_.push_back(m.stepsDone);
        m.checkpointFile.clear(); // the saver names the weights it writes
        ModelProgress p;
        p.totalSteps = record_.config.train.steps;
        if (!m.history.empty())
            p.stepsPerSecond = m.history.back().stepsPerSecond;
        progress_.push_back(p);
    }
    setUpWorkers();
    paused_ = false;
    if (!same)
        emit runChanged();
    updateState();
    if (!same)
        return;
    // The followed process's save as progress of the same run: the views draw it as they draw
    // training here, and the inspector traces its expression again with the new weights.
    for (size_t i = 0; i < record_.models.size(); ++i) {
        const ndr::ModelRecord& m = record_.models[i];
        auto s = std::make_shared<Snapshot>();
        s->runId = runId_;
        s->model = int(i);
        s->step = m.stepsDone;
        s->totalSteps = progress_[i].totalSteps;
        s->stepsPerSecond = progress_[i].stepsPerSecond;
        s->bestEval = m.bestEval;
        s->status = m.status;
        if (!m.history.empty() && (i >= evaluations.size() || m.history.size() != evaluations[i]))
            s->eval = m.history.back();
        emit progressed(s);
    }
}

void TrainingSession::continueTraining(int totalSteps) {
    if (!run_ || state_ == State::Training || state_ == State::Paused || follower_)
        return;
    totalSteps = std::max(totalSteps, stepsDone());
    run_->setTotalSteps(totalSteps); // the workers are idle: nothing else touches the run now
    record_.config.train.steps = totalSteps;
    paused_ = false;
    for (size_t i = 0; i < workers_.size(); ++i) {
        auto& m = record_.models[i];
        progress_[i].totalSteps = totalSteps;
        // A diverged model's weights are not finite: training it further would only diverge again.
        if (m.stepsDone >= totalSteps || m.status.state == ndr::ModelState::Diverged ||
            m.status.state == ndr::ModelState::Failed)
            continue;
        progress_[i].active = true;
        m.status = {ndr::ModelState::Training, {}};
        workers_[i]->clearFlags();
        const auto held = handOver(workers_[i]);
        QMetaObject::invokeMethod(workers_[i], &TrainingWorker::start, Qt::QueuedConnection);
    }
    updateState();
}

void TrainingSession::pause() {
    if (state_ != State::Training)
        return;
    paused_ = true;
    for (auto* w : workers_)
        w->requestPause();
    updateState();
}

void TrainingSession::resume() {
    if (state_ != State::Paused)
        return;
    paused_ = false;
    for (auto* w : workers_) {
        w->clearPause();
        const auto held = handOver(w);
        QMetaObject::invokeMethod(w, &TrainingWorker::resume, Qt::QueuedConnection);
    }
    updateState();
}

void TrainingSession::stop() {
    if (state_ != State::Training && state_ != State::Paused)
        return;
    for (auto* w : workers_) {
        w->requestCancel();
        const auto held = handOver(w);
        QMetaObject::invokeMethod(w, &TrainingWorker::finishIfIdle, Qt::QueuedConnection);
    }
}

quint64 TrainingSession::requestTrace(const ndr::Example& example, int steps) {
    if (!hasWeights())
        return 0; // fresh weights would answer, not the run's
    const quint64 id = ++traceId_;
    for (auto* w : workers_) {
        const auto held = handOver(w);
        w->requestTrace(id, example, steps);
    }
    return id;
}

void TrainingSession::onSnapshot(const SnapshotPtr& s) {
    takeOver(sender()); // the worker, before `s` is read
    if (s->runId != runId_ || s->model < 0 || s->model >= int(record_.models.size()))
        return;
    auto& m = record_.models[size_t(s->model)];
    auto& p = progress_[size_t(s->model)];
    m.stepsDone = s->step;
    p.totalSteps = s->totalSteps;
    p.stepsPerSecond = s->stepsPerSecond;
    p.etaSeconds = s->etaSeconds;
    p.evaluating = s->evaluating;
    m.status = s->status;
    m.bestEval = s->bestEval;
    for (const auto& l : s->losses) {
        m.lossLog.steps.push_back(l.step);
        m.lossLog.loss.push_back(l.loss);
    }
    if (s->eval)
        m.history.push_back(*s->eval);
    if (s->done)
        p.active = false;
    emit progressed(s);
    updateState();
    // At an evaluation recoveryIntervalMs_ after the last copy (the first at once), and when training
    // stops.
    const bool due = s->eval && (!sinceSave_.isValid() || sinceSave_.elapsed() >= recoveryIntervalMs_);
    if (due || state_ == State::Ready)
        saveForRecovery();
}

void TrainingSession::setUpWorkers() {
    for (int i = 0; i < run_->modelCount(); ++i) {
        auto* thread = new QThread(this);
        thread->setObjectName(QStringLiteral("train-%1").arg(modelName(record_.models[size_t(i)])));
        auto* worker = new TrainingWorker(runId_, i, run_->trainer(i));
        worker->moveToThread(thread);
        connect(worker, &TrainingWorker::snapshot, this, &TrainingSession::onSnapshot);
        connect(worker, &TrainingWorker::stateCaptured, this, &TrainingSession::onStateCaptured);
        connect(worker, &TrainingWorker::traced, this, [this, worker](const TraceResultPtr& r) {
            takeOver(worker);
            emit traced(r);
        });
        // Runs on the worker's thread as it ends; tearDownWorkers takes over after wait().
        connect(
            thread, &QThread::finished, thread, [worker] { handOver(worker); }, Qt::DirectConnection);
        thread->start();
        threads_.push_back(thread);
        workers_.push_back(worker);
    }
}

void TrainingSession::tearDownWorkers() {
    for (auto* w : workers_)
        w->requestCancel();
    for (auto* t : threads_)
        t->quit();
    for (auto* t : threads_)
        t->wait();
    for (auto* w : workers_)
        takeOver(w);
    for (auto* w : workers_)
        delete w; // their threads have finished: nothing runs on them any more
    for (auto* t : threads_)
        delete t;
    workers_.clear();
    threads_.clear();
    saving_.reset();
    queuedSave_.clear();
}

int TrainingSession::stepsDone() const {
    int done = 0;
    for (const auto& m : record_.models)
        done = std::max(done, m.stepsDone);
    return done;
}

void TrainingSession::updateState() {
    State s = State::Empty;
    if (run_) {
        const bool active =
            std::any_of(progress_.begin(), progress_.end(), [](const auto& m) { return m.active; });
        s = active ? (paused_ ? State::Paused : State::Training) : State::Ready;
        if (!active)
            paused_ = false;
    }
    if (s != state_) {
        state_ = s;
        emit stateChanged(s);
    }
}

} // namespace ndrui
