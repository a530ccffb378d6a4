// A run in memory: its task, one trainer per model and the record that ties them together; and the run
// folder on disk (the JSON run record with one checkpoint per model beside it). Shared by the
// command-line tool and the desktop app.
#pragma once

#include "core/config/config.h"
#include "core/io/files.h"
#include "core/records/records.h"
#include "core/task/task.h"
#include "core/train/trainer.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace ndr {

// Saves a run folder: each model's checkpoint beside `runFile` as "<stem>@<step>.ckpt" (stored into
// record.models[i].checkpointFile; the stems of checkpointStems(models, runFile), so several run files
// can share a folder), then the record, then removes the checkpoints of this run file's earlier saves.
// Every file is written atomically and the record after its checkpoints, so whenever the process
// dies, the run file on disk names complete checkpoints of the very steps it records. A missing folder
// is created. Throws FileError.
void saveRunFiles(const std::filesystem::path& runFile, RunRecord& record,
                  const std::vector<CheckpointData>& checkpoints);

class Run {
public:
    // A new run: tables from config.task.seed, each model initialised from config.train.seed.
    // Throws std::invalid_argument when the configuration is not valid (every problem listed).
    explicit Run(const RunConfig& config);

    // Opens a saved run: the record, its task with the saved tables, and each model restored from its
    // checkpoint with optimiser state, so evaluation and further training continue where it stopped.
    // Only the models whose index is in `only` are restored when it is non-empty (the others keep
    // their saved record and fresh weights). Throws FileError naming the file and the problem.
    static std::unique_ptr<Run> open(const std::filesystem::path& runFile, const std::vector<int>& only = {});
    // Opens a saved run's record and task without any weights, for a run whose checkpoints are gone:
    // its history can be shown, but no model can be traced, trained further or saved.
    static std::unique_ptr<Run> openHistory(const std::filesystem::path& runFile);
    // The checkpoint files a saved run names that are not beside it (empty when all are there).
    // Throws FileError when the run file itself cannot be read.
    static std::vector<std::string> missingCheckpoints(const std::filesystem::path& runFile);
    // Whether model i has its trained weights (false after openHistory, or when left out by `only`).
    bool restored(int model) const { return restored_.at(size_t(model)); }

    const RunConfig& config() const { return record_.config; }
    const Task& task() const { return *task_; }
    const Example& probe() const { return record_.probe; }
    int modelCount() const { return int(trainers_.size()); }
    Trainer& trainer(int i) { return *trainers_.at(size_t(i)); }
    const Trainer& trainer(int i) const { return *trainers_.at(size_t(i)); }

    // Trains up to `steps` in all from now on (to continue a finished run); recorded in the config.
    void setTotalSteps(int steps);

    // The record as it stands: configuration, tables, probe, and each model's history and status.
    RunRecord record() const;
    // Saves the whole run (see saveRunFiles). Not while a trainer is running on another thread.
    void save(const std::filesystem::path& runFile) const;

private:
    Run() = default;
    static std::unique_ptr<Run> load(const std::filesystem::path& runFile, const std::vector<bool>& wanted);
    RunRecord record_;           // config, tables, probe; models[] as opened
    std::vector<bool> restored_; // (models) trainer state is live, not record_.models[i]
    std::unique_ptr<Task> task_;
    std::vector<std::unique_ptr<Trainer>> trainers_;
};

} // namespace ndr
