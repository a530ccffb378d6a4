// Following a run another process trains (see run_follower.h).
#include "ui/training/run_follower.h"

#include "ui/common/tsan_handover.h"

#include <QFileInfo>
#include <chrono>

namespace ndrui {

namespace {
constexpr int kSettleMs = 150; // after the last change a save makes, before it is read
constexpr int kReadTries = 4;  // a record whose checkpoints a newer save removed, read again
} // namespace

RunFollower::RunFollower(const QString& runFile, const ndr::RunFileHolder& holder, const QDateTime& saved,
                         QObject* parent)
    : QObject(parent), file_(runFile), holder_(holder), saved_(saved) {
    // The folder too: a save replaces the file by a rename, after which a watch on the file alone
    // has nothing left to watch.
    watcher_.addPath(QFileInfo(file_).absolutePath());
    watcher_.addPath(file_);
    settle_.setSingleShot(true);
    settle_.setInterval(kSettleMs);
    connect(&settle_, &QTimer::timeout, this, &RunFollower::check);
    const auto changed = [this] {
        if (!watcher_.files().contains(file_) && QFileInfo::exists(file_))
            watcher_.addPath(file_);
        settle_.start();
    };
    connect(&watcher_, &QFileSystemWatcher::fileChanged, this, changed);
    connect(&watcher_, &QFileSystemWatcher::directoryChanged, this, changed);
    poll_.setInterval(kPollMs);
    connect(&poll_, &QTimer::timeout, this, &RunFollower::check);
    poll_.start();
}

RunFollower::~RunFollower() {
    if (reader_.joinable())
        reader_.join();
}

FollowedRead RunFollower::read(const QString& runFile) {
    FollowedRead r;
    const std::string file = runFile.toStdString();
    for (int attempt = 0; attempt < kReadTries; ++attempt) {
        r.holder = ndr::runFileHolder(file);
        r.saved = QFileInfo(runFile).lastModified();
        r.error.clear();
        r.missingWeights.clear();
        try {
            r.run = ndr::Run::open(file);
            return r;
        } catch (const std::exception& e) {
            r.error = QString::fromUtf8(e.what());
            try {
                for (const std::string& f : ndr::Run::missingCheckpoints(file))
                    r.missingWeights << QString::fromStdString(f);
            } catch (const std::exception&) {
                r.missingWeights.clear();
            }
        }
        // A newer save may have replaced the checkpoints between reading the record and them.
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!r.missingWeights.isEmpty()) {
        try {
            r.run = ndr::Run::openHistory(file);
            r.error.clear();
        } catch (const std::exception& e) {
            r.error = QString::fromUtf8(e.what());
        }
    }
    return r;
}

void RunFollower::check() {
    if (done_)
        return;
    if (reading_) {
        again_ = true;
        return;
    }
    const ndr::RunFileHolder holder = ndr::runFileHolder(file_.toStdString());
    const QDateTime saved = QFileInfo(file_).lastModified();
    if (saved == saved_ && holder.held == holder_.held)
        return; // nothing new
    startRead();
}

void RunFollower::startRead() {
    reading_ = true;
    again_ = false;
    const QString file = file_;
    reader_ = std::thread([this, file] {
        auto r = std::make_shared<FollowedRead>(read(file));
        queueFromThread(this, [this, r] { onRead(r); });
    });
}

void RunFollower::onRead(const std::shared_ptr<FollowedRead>& r) {
    reader_.join();
    reading_ = false;
    if (!r->run) {
        // Tried again at the next change or poll: the times stay those of the last good read.
        if (again_)
            check();
        return;
    }
    saved_ = r->saved;
    holder_ = r->holder;
    if (!holder_.held) {
        done_ = true;
        poll_.stop();
        settle_.stop();
        watcher_.removePaths(watcher_.files() + watcher_.directories());
        emit released(*r);
        return;
    }
    emit saved(*r);
    if (again_)
        check();
}

} // namespace ndrui
