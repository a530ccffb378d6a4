// Follows a run file that another process trains (it holds the run's lock, core/io RunFileLock): each
// of that process's saves is noticed by a QFileSystemWatcher on the file and its folder, or by a poll
// every two seconds where the file system sends no events (network file systems), and read on a
// thread of its own; the window's thread gets the run as the files hold it, and learns when the
// process has let go of the lock. It only reads: it creates, locks and writes nothing.
#pragma once

#include "core/io/files.h"
#include "core/train/run.h"

#include <QDateTime>
#include <QFileSystemWatcher>
#include <QObject>
#include <QStringList>
#include <QTimer>
#include <memory>
#include <thread>

namespace ndrui {

// A run as read from its files at one save.
struct FollowedRead {
    std::shared_ptr<ndr::Run> run; // null when it could not be read (error says why)
    QStringList missingWeights;    // checkpoints the record names that are not there (history only)
    ndr::RunFileHolder holder;     // who held the lock when it was read
    QDateTime saved;               // the run file's time
    QString error;
};

class RunFollower : public QObject {
    Q_OBJECT

public:
    static constexpr int kPollMs = 2000;

    // Starts following `runFile`, held as `holder` (the process that trains it).
    RunFollower(const QString& runFile, const ndr::RunFileHolder& holder, const QDateTime& saved,
                QObject* parent = nullptr);
    ~RunFollower() override; // waits for a read under way

    const QString& runFile() const { return file_; }
    const ndr::RunFileHolder& holder() const { return holder_; }
    QDateTime lastSave() const { return saved_; }
    void setPollInterval(int ms) { poll_.setInterval(ms); }
    // Looks at the file and the lock now (the watcher and the poll call it).
    void check();

    // Reads `runFile` (record and checkpoints) as it is now: a record that names checkpoints a save
    // under way has already replaced is read again, a few times, before it counts as missing.
    static FollowedRead read(const QString& runFile);

signals:
    // The process saved again: the run as it is in the files now.
    void saved(const ndrui::FollowedRead& read);
    // The process let go of the lock (it ended): the run as it left it.
    void released(const ndrui::FollowedRead& read);

private:
    void startRead();
    void onRead(const std::shared_ptr<FollowedRead>& read);

    QString file_;
    ndr::RunFileHolder holder_;
    QDateTime saved_;
    QFileSystemWatcher watcher_;
    QTimer poll_;
    QTimer settle_; // a save changes several files: read once they have settled
    std::thread reader_;
    bool reading_ = false, again_ = false, done_ = false;
};

} // namespace ndrui
