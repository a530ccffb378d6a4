// The window's run: workers on threads, the progress they report, saving and tracing through them.
#include "ui/training/training_session.h"

#include "core/task/ctl_task.h"
#include "ui/training/training_worker.h"
#include "ui/training/tsan_handover.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QLockFile>
#include <QMetaObject>
#include <filesystem>
#include <optional>
#include <thread>

namespace ndrui {

namespace {

const char* const kRecoveryLock = "session.lock";
const char* const kRecoveryRun = "run.json";

} // namespace

// What a save writes, made on the window's thread and written on a thread of its own.
struct SaveJob {
    std::string file;
    ndr::RunRecord record;
    std::vector<ndr::CheckpointData> checkpoints;
    std::string error; // empty: written
};

struct TrainingSession::PendingSave {
    QString file;
    bool recovery = false;
    quint64 runId = 0;
    std::vector<ModelCapturePtr> states; // (models) filled as the workers answer
    int answered = 0;
    quint64 id = 0;
    std::shared_ptr<SaveJob> job;
    std::thread writer; // writes `job`; joined before anything reads it again
    ~PendingSave() {
        if (writer.joinable())
            writer.join();
    }
};

TrainingSession::TrainingSession(QObject* parent) : QObject(parent) {
    qRegisterMetaType<SnapshotPtr>();
    qRegisterMetaType<ModelCapturePtr>();
    qRegisterMetaType<TraceResultPtr>();
}

TrainingSession::~TrainingSession() {
    tearDownWorkers();
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
            lines << QString::fromStdString(p);
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
    dropRecoveryFolder();
    run_ = std::move(run);
    missingWeights_.clear();
    config_ = config;
    probe_ = run_->probe();
    runFile_.clear();
    savedSteps_.clear();
    ++runId_;
    models_.clear();
    for (const auto& m : config.models) {
        ModelProgress p;
        p.name = QString::fromStdString(m.name);
        p.config = m;
        p.totalSteps = config.train.steps;
        models_.push_back(std::move(p));
    }
    setUpWorkers();
    emit runChanged();
    paused_ = false;
    for (size_t i = 0; i < workers_.size(); ++i) {
        models_[i].active = true;
        models_[i].status = {ndr::ModelState::Training, {}};
        workers_[i]->clearFlags();
        const auto held = handOver(workers_[i]);
        QMetaObject::invokeMethod(workers_[i], &TrainingWorker::start, Qt::QueuedConnection);
    }
    updateState();
    return true;
}

bool TrainingSession::hasSameSettings(const ndr::RunConfig& config) const {
    if (!run_ || state_ != State::Ready)
        return false;
    ndr::RunConfig asked = config, current = config_;
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
    dropRecoveryFolder();
    run_.reset();
    missingWeights_.clear();
    config_ = {};
    probe_ = {};
    models_.clear();
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
    for (size_t i = 0; i < models_.size(); ++i) {
        const int saved = i < savedSteps_.size() ? savedSteps_[i] : 0;
        if (models_[i].step != saved)
            return true;
    }
    return false;
}

bool TrainingSession::open(const QString& runFile, QString* error) {
    if (state_ == State::Training || state_ == State::Paused) {
        *error = tr("Stop the current training before opening a run.");
        return false;
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
    tearDownWorkers();
    dropRecoveryFolder();
    missingWeights_ = missing;
    run_ = std::move(run);
    config_ = run_->config();
    probe_ = run_->probe();
    runFile_ = runFile;
    ++runId_;
    models_.clear();
    const ndr::RunRecord rec = run_->record();
    savedSteps_.clear();
    for (const auto& m : rec.models)
        savedSteps_.push_back(m.stepsDone);
    for (const auto& m : rec.models) {
        ModelProgress p;
        p.name = QString::fromStdString(m.config.name);
        p.config = m.config;
        p.history = m.history;
        p.lossLog = m.lossLog;
        p.bestEval = m.bestEval;
        p.step = m.stepsDone;
        p.totalSteps = config_.train.steps;
        p.status = m.status;
        if (!m.history.empty())
            p.stepsPerSecond = m.history.back().stepsPerSecond;
        models_.push_back(std::move(p));
    }
    setUpWorkers();
    paused_ = false;
    emit runChanged();
    updateState();
    return true;
}

void TrainingSession::continueTraining(int totalSteps) {
    if (!run_ || state_ == State::Training || state_ == State::Paused)
        return;
    totalSteps = std::max(totalSteps, stepsDone());
    run_->setTotalSteps(totalSteps); // the workers are idle: nothing else touches the run now
    config_.train.steps = totalSteps;
    paused_ = false;
    for (size_t i = 0; i < workers_.size(); ++i) {
        auto& m = models_[i];
        m.totalSteps = totalSteps;
        // A diverged model's weights are not finite: training it further would only diverge again.
        if (m.step >= totalSteps || m.status.state == ndr::ModelState::Diverged ||
            m.status.state == ndr::ModelState::Failed)
            continue;
        m.active = true;
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
    startSave(runFile, false);
}

bool TrainingSession::isSaving() const {
    return (saving_ && !saving_->recovery) || !queuedSave_.isEmpty();
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

ndr::RunRecord TrainingSession::record() const {
    ndr::RunRecord r;
    r.config = config_;
    if (run_)
        r.tables = ndr::tablesOf(run_->task());
    r.probe = probe_;
    for (const auto& m : models_) {
        ndr::ModelRecord mr;
        mr.config = m.config;
        mr.history = m.history;
        mr.lossLog = m.lossLog;
        mr.bestEval = m.bestEval;
        mr.stepsDone = m.step;
        mr.status = m.status;
        r.models.push_back(std::move(mr));
    }
    return r;
}

void TrainingSession::onSnapshot(const SnapshotPtr& s) {
    takeOver(sender()); // the worker, before `s` is read
    if (s->runId != runId_ || s->model < 0 || s->model >= int(models_.size()))
        return;
    auto& m = models_[size_t(s->model)];
    m.step = s->step;
    m.totalSteps = s->totalSteps;
    m.stepsPerSecond = s->stepsPerSecond;
    m.etaSeconds = s->etaSeconds;
    m.status = s->status;
    m.bestEval = s->bestEval;
    for (const auto& p : s->losses) {
        m.lossLog.steps.push_back(p.step);
        m.lossLog.loss.push_back(p.loss);
    }
    if (s->eval)
        m.history.push_back(*s->eval);
    if (s->done)
        m.active = false;
    emit progressed(s);
    updateState();
    // At an evaluation a minute after the last save (the first at once), and when training stops.
    const bool due = s->eval && (!sinceSave_.isValid() || sinceSave_.elapsed() >= recoveryIntervalMs_);
    if (due || state_ == State::Ready)
        saveForRecovery();
}

bool TrainingSession::recoveryCopyIsBehind() const {
    for (size_t i = 0; i < models_.size(); ++i)
        if (i >= recoverySteps_.size() || models_[i].step != recoverySteps_[i])
            return true;
    return false;
}

void TrainingSession::saveForRecovery() {
    if (recoveryBase_.isEmpty() || !run_ || saving_ || !isModified() || !missingWeights_.isEmpty() ||
        (!recoveryDir_.isEmpty() && !recoveryCopyIsBehind()))
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
    auto lock = std::make_unique<QLockFile>(QDir(dir).filePath(kRecoveryLock));
    lock->setStaleLockTime(0); // stale only when its process is gone
    if (!lock->tryLock(0)) {
        *error = lock->error() == QLockFile::LockFailedError
                     ? tr("another NDR Studio window holds this run")
                     : tr("cannot write in %1").arg(QDir::toNativeSeparators(dir));
        return false;
    }
    recoveryLock_ = std::move(lock);
    recoveryDir_ = dir;
    return true;
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

QStringList TrainingSession::recoverableRuns(const QString& folder) {
    QStringList runs;
    const QDir base(folder);
    for (const QFileInfo& d : base.entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
        const QString run = QDir(d.filePath()).filePath(kRecoveryRun);
        if (!QFileInfo::exists(run))
            continue;
        QLockFile lock(QDir(d.filePath()).filePath(kRecoveryLock));
        lock.setStaleLockTime(0);
        if (lock.tryLock(0))
            runs << run; // no live session holds it (the lock is released here)
    }
    return runs;
}

bool TrainingSession::discardRecovered(const QString& runFile) {
    const QString dir = QFileInfo(runFile).absolutePath();
    QLockFile lock(QDir(dir).filePath(kRecoveryLock));
    lock.setStaleLockTime(0);
    if (!lock.tryLock(0))
        return false;
    lock.unlock();
    return QDir(dir).removeRecursively();
}

bool TrainingSession::openRecovered(const QString& runFile, QString* error) {
    const QString dir = QFileInfo(runFile).absolutePath();
    auto lock = std::make_unique<QLockFile>(QDir(dir).filePath(kRecoveryLock));
    lock->setStaleLockTime(0);
    if (!lock->tryLock(0)) {
        *error = tr("Another NDR Studio window holds this run.");
        return false;
    }
    if (!open(runFile, error))
        return false;
    recoveryLock_ = std::move(lock);
    recoveryDir_ = dir;
    for (const auto& m : models_)
        recoverySteps_.push_back(m.step);
    // Never saved where the user chose: Save asks where, and closing asks first.
    runFile_.clear();
    savedSteps_.clear();
    emit runChanged();
    return true;
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
    rec.config = config_;
    rec.tables = ndr::tablesOf(run_->task());
    rec.probe = probe_;
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
                // A missing folder is made (saveRunFiles would), so that the lock has its place.
                std::error_code made;
                std::filesystem::create_directories(std::filesystem::path(job->file).parent_path(), made);
                lock.emplace(job->file);
            }
            ndr::saveRunFiles(job->file, job->record, job->checkpoints);
        } catch (const std::exception& e) {
            job->error = e.what()[0] ? e.what() : "the files could not be written";
        }
        QMetaObject::invokeMethod(
            this, [this, id] { onSaveWritten(id); }, Qt::QueuedConnection);
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

void TrainingSession::setUpWorkers() {
    for (int i = 0; i < run_->modelCount(); ++i) {
        auto* thread = new QThread(this);
        thread->setObjectName(QStringLiteral("train-%1").arg(models_[size_t(i)].name));
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
    for (const auto& m : models_)
        done = std::max(done, m.step);
    return done;
}

void TrainingSession::updateState() {
    State s = State::Empty;
    if (run_) {
        const bool active =
            std::any_of(models_.begin(), models_.end(), [](const auto& m) { return m.active; });
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
