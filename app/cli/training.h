// Training a run from the command line: every model on its own thread, live progress, Ctrl-C to stop
// and keep what was trained, then the run record and one checkpoint per model in an output folder.
// Shared by `ndr train` and `ndr sweep`.
#pragma once

#include "common.h"

#include <CLI/CLI.hpp>
#include <atomic>
#include <ostream>

namespace ndrcli {

// While alive, the first Ctrl-C sets stopRequested() (training stops and saves); a second one quits
// at once without saving.
class InterruptGuard {
public:
    InterruptGuard();
    ~InterruptGuard();
    InterruptGuard(const InterruptGuard&) = delete;
    InterruptGuard& operator=(const InterruptGuard&) = delete;
};
bool stopRequested();

struct TrainedRun {
    ndr::RunRecord record;           // as saved, with checkpoint file names
    fs::path runFile;                // <out>/run.json
    std::vector<double> wallSeconds; // (models) wall time of each model's thread, evaluations included
    bool interrupted = false;
};

// Trains every model of `config` at the same time and saves the run into `outDir` (created if needed).
// With autosaveEvery > 0 the run folder is also saved, atomically, every that many evaluations of
// each model while training goes on, so a crash or kill loses at most that much.
// Throws CliError when the folder cannot be used or a file cannot be written, FileError when another
// process trains it (holds its ndr::RunFileLock).
TrainedRun trainAndSave(const ndr::RunConfig& config, const fs::path& outDir, bool quiet,
                        int autosaveEvery = 1);
// The same for a run already in memory (e.g. an opened, partly trained one, which goes on from where
// it stopped); `outDir` must exist, and the caller holds the ndr::RunFileLock of its run.json.
TrainedRun trainAndSave(ndr::Run& run, const fs::path& outDir, bool quiet, int autosaveEvery = 1);

// The summary of a run: per model, accuracy per depth at the final and at the best-validation
// evaluation with the IID (held-out examples of the training depths) and Longer (test depths) means,
// status and time, then both means at the best validation.
void printRunSummary(const TrainedRun& run, std::ostream& os);

// Options of `train` and `sweep`: where the configuration comes from, overrides, output.
struct TrainOptions {
    std::string preset, configFile, out;
    ConfigOverrides overrides;
    bool quiet = false;
    int autosaveEvery = 1;
};
void addTrainOptions(CLI::App* cmd, TrainOptions& o);
// The configuration the options name (CliError when neither --preset nor --config is given).
ndr::RunConfig configFromOptions(const TrainOptions& o);
// One line on stderr saying what is about to be trained and where it goes.
void announce(const ndr::RunConfig& c, const fs::path& out, const std::string& prefix);

// "train 1-4, valid 5-6, test 7-8", after "operations MAX MIN, " for ListOps on a subset of them.
std::string splitSummary(const ndr::TaskConfig& task);

} // namespace ndrcli
