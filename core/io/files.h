// Reading and writing runs: the JSON run record, the binary checkpoint of a model, and atomic saves.
// Every loader refuses a bad file with FileError naming the file, what is wrong and what to do.
#pragma once

#include "core/records/records.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ndr {

class FileError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Writes `bytes` to `path` atomically: a temporary file beside it, flushed and fsync'ed, then renamed
// over the target. On failure the target is untouched and FileError is thrown.
void writeFileAtomic(const std::filesystem::path& path, const std::string& bytes);
// Reads a whole file, refusing files larger than maxBytes (FileError).
std::string readFileBounded(const std::filesystem::path& path, uint64_t maxBytes);

// "NDR (copy gate)" -> "ndr-copy-gate": a name safe for a file name ("model" when nothing is left).
std::string fileStem(const std::string& name);
// File-name stems of a run's models' checkpoints, made unique when two names collide ("ndr", "ndr-2").
std::vector<std::string> checkpointStems(const std::vector<ModelConfig>& models);
// The stems of the checkpoints saved beside `runFile`: as above for "run.json", else prefixed with the
// run file's stem ("a.json": "a.ndr"), so runs saved in one folder never share a checkpoint name.
std::vector<std::string> checkpointStems(const std::vector<ModelConfig>& models,
                                         const std::filesystem::path& runFile);

// The text saveRunRecord writes.
std::string runRecordToText(const RunRecord& run);
void saveRunRecord(const std::filesystem::path& path, const RunRecord& run);
// What of a run file to read: all of it, or all but each evaluation's probe trace (the bulk of a long
// run's file: the attention of every step), which readers of its figures alone (summaries, Compare,
// a sweep's progress) skip. Such a record's evaluations hold empty traces; it is not for saving.
enum class RunFileParts { All, WithoutTraces };
RunRecord loadRunRecord(const std::filesystem::path& path, RunFileParts parts = RunFileParts::All);
// The run record held in `text` (a run file's contents), checked as loadRunRecord checks a file.
// FileError says what is wrong without naming a file; for tests, fuzzing and callers that already
// hold the bytes.
RunRecord runRecordFromText(std::string_view text, RunFileParts parts = RunFileParts::All);

// What training needs, beside the weights and the moments, to go on exactly where it stopped.
struct TrainingState {
    std::string batchRng;   // the batch generator's state, as it streams itself
    std::string dropoutRng; // the dropout generator's state, as it streams itself
    int64_t adamStep = 0;   // Adam's updates done (its bias correction)
    double seconds = 0;     // training time so far
    bool operator==(const TrainingState&) const = default;
};

struct CheckpointData {
    static constexpr const char* kFormat = "ndr-studio-checkpoint";
    static constexpr int kVersion = 2;
    ModelConfig model;
    int vocabSize = 0, symbols = 0;
    int64_t step = 0;
    std::vector<TensorInfo> layout;        // tensors in the order they sit in each buffer below
    std::vector<float> params;             // current weights
    std::vector<float> bestParams;         // weights at the best validation (may be empty)
    std::vector<float> adamM, adamV;       // optimiser moments (may be empty)
    std::optional<TrainingState> training; // none: weights alone (an imported model)
};

// The bytes saveCheckpoint writes; FileError (without a file name) when the buffers do not fit the layout.
std::string checkpointToBytes(const CheckpointData& data);
void saveCheckpoint(const std::filesystem::path& path, const CheckpointData& data);
// Loads and checks integrity (magic, version, sizes bounded before allocation, checksum).
CheckpointData loadCheckpoint(const std::filesystem::path& path);
// The checkpoint held in `bytes` (a checkpoint file's contents), checked as loadCheckpoint checks a
// file; FileError without a file name.
CheckpointData checkpointFromBytes(std::string_view bytes);
// Throws FileError, saying each difference but not the file, unless `data` fits a model with this
// configuration and tensor layout.
void checkCheckpointMatches(const CheckpointData& data, const ModelConfig& model,
                            const std::vector<TensorInfo>& layout);

// This machine's host name ("localhost" when it cannot be read).
std::string hostName();

// Held by the process that trains a run file and saves into it: an flock on ".<name>.lock" beside the
// run file, so it ends with the process however it ends. A second process that would train or save
// the same run file is refused with what holds it, instead of both writing one run folder.
class RunFileLock {
public:
    // Throws FileError("<file> is being trained by another process (pid 1234 on host, since …)")
    // when another process holds it, or FileError when the lock file cannot be made. On a file system
    // without locks it holds nothing. A lock held for a moment only (a reader's runFileHolder) is
    // waited for, up to a quarter of a second.
    explicit RunFileLock(const std::filesystem::path& runFile);
    ~RunFileLock();
    RunFileLock(const RunFileLock&) = delete;
    RunFileLock& operator=(const RunFileLock&) = delete;

private:
    int fd_ = -1;
};

// Who holds the lock of `runFile`, found without taking it (nothing is created or written): a reader
// that shows a run another process trains asks this at each of its saves.
struct RunFileHolder {
    bool held = false;
    std::string line; // what the holder wrote: "pid 1234 on host, since 2025-01-31 10:00:00"
    long pid = 0;     // from the line; 0 when it names none
    std::string host; // from the line
};
RunFileHolder runFileHolder(const std::filesystem::path& runFile);
// The holder of a run file lock in `folder` (any ".<name>.lock" there that a process holds), or one
// that is not held when none is.
RunFileHolder folderHolder(const std::filesystem::path& folder);
// The lock file of `runFile`: ".<name>.lock" beside it.
std::filesystem::path lockFileOf(const std::filesystem::path& runFile);

} // namespace ndr
