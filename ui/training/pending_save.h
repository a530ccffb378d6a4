// What a save of the training session carries between the workers' answers, the thread that writes
// the files and the window's thread (training_session_save.cpp).
#pragma once

#include "ui/training/training_session.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace ndrui {

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

} // namespace ndrui
