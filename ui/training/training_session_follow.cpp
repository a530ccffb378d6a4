// Following a run another process trains (see TrainingSession::open): its saves read as they come,
// and the hand-over to an ordinary run when that process ends.
#include "ui/training/training_session.h"

#include "ui/training/run_follower.h"

namespace ndrui {

ndr::RunFileHolder TrainingSession::followedHolder() const {
    return follower_ ? follower_->holder() : ndr::RunFileHolder{};
}

QDateTime TrainingSession::followedSave() const {
    return follower_ ? follower_->lastSave() : QDateTime();
}

void TrainingSession::setFollowPollInterval(int ms) {
    followPollMs_ = ms;
    if (follower_)
        follower_->setPollInterval(ms);
}

void TrainingSession::stopFollowing() {
    if (!follower_)
        return;
    follower_.reset();
    emit followChanged();
}

void TrainingSession::onFollowedSaved(const FollowedRead& read) {
    // Still the run shown (open, start and clear end the following first).
    if (!follower_ || state_ == State::Training || state_ == State::Paused)
        return;
    adopt(read.run, read.missingWeights, runFile_, true);
    emit followChanged();
}

void TrainingSession::onFollowedReleased(const FollowedRead& read) {
    if (!follower_)
        return;
    // The files as the process left them; from now on an ordinary opened run, saved as it is.
    adopt(read.run, read.missingWeights, runFile_, true);
    // Deleted later: this runs inside the follower's own signal.
    follower_.release()->deleteLater();
    emit followChanged();
}

} // namespace ndrui
