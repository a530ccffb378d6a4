// Runs in memory and run folders on disk (see run.h).
#include "core/train/run.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <map>
#include <stdexcept>

namespace ndr {

namespace {

// "<stem>@<digits>.ckpt": a checkpoint written by saveRunFiles for this stem.
bool isSavedCheckpointOf(const std::string& file, const std::string& stem) {
    const std::string suffix = ".ckpt";
    if (file.size() <= stem.size() + 1 + suffix.size() || file.compare(0, stem.size(), stem) != 0 ||
        file[stem.size()] != '@' || file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0)
        return false;
    const std::string digits = file.substr(stem.size() + 1, file.size() - stem.size() - 1 - suffix.size());
    return std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); });
}

} // namespace

void saveRunFiles(const std::filesystem::path& runFile, RunRecord& record,
                  const std::vector<CheckpointData>& checkpoints) {
    if (checkpoints.size() != record.models.size())
        throw FileError("cannot save " + runFile.string() + ": " + std::to_string(checkpoints.size()) +
                        " checkpoints for " + std::to_string(record.models.size()) + " models");
    const auto stems = checkpointStems(record.config.models, runFile);
    const auto dir = runFile.parent_path();
    if (!dir.empty()) {
        // A run is a folder: one that does not exist yet is made (a file in the way is reported).
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        if (ec)
            throw FileError("cannot create the folder " + dir.string() + ": " + ec.message());
    }
    std::vector<std::string> written;
    for (size_t i = 0; i < checkpoints.size(); ++i) {
        const std::string name = stems[i] + "@" + std::to_string(checkpoints[i].step) + ".ckpt";
        saveCheckpoint(dir / name, checkpoints[i]);
        record.models[i].checkpointFile = name;
        written.push_back(name);
    }
    saveRunRecord(runFile, record);
    // Earlier saves' checkpoints are no longer named by the record. Removing them is tidying only:
    // a failure leaves a stray file, not a broken run.
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir.empty() ? "." : dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (std::find(written.begin(), written.end(), name) != written.end())
            continue;
        for (const auto& stem : stems)
            if (isSavedCheckpointOf(name, stem)) {
                std::error_code removeError;
                std::filesystem::remove(entry.path(), removeError);
            }
    }
}

Run::Run(const RunConfig& config) {
    if (const auto problems = validate(config); !problems.empty()) {
        std::string all;
        for (const auto& p : problems)
            all += (all.empty() ? "" : "; ") + p.text();
        throw std::invalid_argument("invalid configuration: " + all);
    }
    record_.config = config;
    task_ = makeTask(config.task);
    record_.tables = task_->savedTables();
    record_.probe = defaultProbe(*task_);
    for (int i = 0; i < int(config.models.size()); ++i) {
        trainers_.push_back(std::make_unique<Trainer>(config, i, *task_, record_.probe));
        record_.models.push_back(trainers_.back()->record());
        restored_.push_back(true);
    }
}

std::unique_ptr<Run> Run::open(const std::filesystem::path& runFile, const std::vector<int>& only) {
    const size_t n = loadRunRecord(runFile, RunFileParts::WithoutTraces).models.size();
    std::vector<bool> wanted(n, only.empty());
    for (int i : only)
        if (i >= 0 && size_t(i) < n)
            wanted[size_t(i)] = true;
    return load(runFile, wanted);
}

std::unique_ptr<Run> Run::openHistory(const std::filesystem::path& runFile) {
    return load(runFile, {});
}

std::vector<std::string> Run::missingCheckpoints(const std::filesystem::path& runFile) {
    std::vector<std::string> missing;
    for (const auto& m : loadRunRecord(runFile, RunFileParts::WithoutTraces).models)
        if (!m.checkpointFile.empty() && !std::filesystem::exists(runFile.parent_path() / m.checkpointFile))
            missing.push_back(m.checkpointFile);
    return missing;
}

std::unique_ptr<Run> Run::load(const std::filesystem::path& runFile, const std::vector<bool>& wanted) {
    std::unique_ptr<Run> run(new Run);
    run->record_ = loadRunRecord(runFile);
    const auto& rec = run->record_;
    if (rec.models.size() != rec.config.models.size())
        throw FileError(runFile.string() + ": the run lists " + std::to_string(rec.models.size()) +
                        " model records for " + std::to_string(rec.config.models.size()) +
                        " configured models; the file is damaged");
    try {
        run->task_ = makeTask(rec.config.task);
        run->task_->restoreTables(rec.tables);
        run->task_->answer(rec.probe); // throws when the probe is no expression of the task
    } catch (const std::exception& e) {
        throw FileError(runFile.string() + ": " + e.what());
    }
    for (size_t i = 0; i < rec.models.size(); ++i) {
        run->trainers_.push_back(std::make_unique<Trainer>(rec.config, int(i), *run->task_, rec.probe));
        const bool restore = i < wanted.size() && wanted[i];
        run->restored_.push_back(restore);
        if (!restore)
            continue;
        const auto& model = rec.models[i];
        if (model.checkpointFile.empty())
            throw FileError(runFile.string() + ": model " + model.config.name +
                            " has no checkpoint file; train the run again to get its weights");
        const auto ckptPath = runFile.parent_path() / model.checkpointFile;
        const CheckpointData data = loadCheckpoint(ckptPath);
        try {
            // A run counts its steps in an int; a larger step can only come from a damaged file.
            if (data.step > INT_MAX)
                throw FileError("checkpoint step " + std::to_string(data.step) + " is beyond the " +
                                std::to_string(INT_MAX) + " steps a run can record");
            run->trainers_[i]->restore(data, model);
        } catch (const std::exception& e) {
            throw FileError("cannot use checkpoint '" + ckptPath.string() + "': " + e.what());
        }
    }
    return run;
}

void Run::setTotalSteps(int steps) {
    record_.config.train.steps = steps;
    for (auto& t : trainers_)
        t->setTotalSteps(steps);
}

RunRecord Run::record() const {
    RunRecord r = record_;
    for (size_t i = 0; i < trainers_.size(); ++i)
        if (restored_[i]) {
            const std::string file = r.models[i].checkpointFile;
            r.models[i] = trainers_[i]->record();
            if (r.models[i].checkpointFile.empty())
                r.models[i].checkpointFile = file;
        }
    return r;
}

void Run::save(const std::filesystem::path& runFile) const {
    if (std::find(restored_.begin(), restored_.end(), true) == restored_.end() && !restored_.empty())
        throw FileError("cannot save " + runFile.string() +
                        ": the run was opened without its weights (its checkpoints are missing)");
    if (std::find(restored_.begin(), restored_.end(), false) != restored_.end())
        throw FileError("cannot save " + runFile.string() +
                        ": the run was opened with only some of its models");
    RunRecord r = record();
    std::vector<CheckpointData> checkpoints;
    for (const auto& t : trainers_)
        checkpoints.push_back(t->checkpoint());
    saveRunFiles(runFile, r, checkpoints);
}

} // namespace ndr
