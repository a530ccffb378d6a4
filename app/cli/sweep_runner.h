// Executing sweep plans: one entry in this process (`run-one`), every entry here one after another or
// as N child processes, or as a Slurm job array written to <sweep>/slurm.sbatch and submitted with
// sbatch; reading back which entries are done, running, queued, failed or not started.
#pragma once

#include "common.h"
#include "core/io/sweep_plan.h"

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ndrcli {

enum class Engine { Local, Slurm };

struct EngineOptions {
    Engine engine = Engine::Local;
    bool engineGiven = false; // --engine was on the command line
    int jobs = 1;             // local: runs at once
    int maxParallel = 0;      // slurm: array tasks at once (0: no limit)
    int cpusPerTask = 1;      // slurm
    std::string time, mem, partition;
    std::vector<std::string> extra; // slurm: more #SBATCH lines
};

// Declares --engine, --jobs and the Slurm options on `cmd`; returns the --engine option.
CLI::Option* addEngineOptions(CLI::App* cmd, EngineOptions& e);
// Throws CliError when the engine cannot be used here (e.g. slurm without sbatch on PATH).
void checkEngine(const EngineOptions& engine);
// Creates `dir` and writes the plan into it. Refuses a folder that already holds a plan or a run.
void createPlanFolder(const fs::path& dir, const ndr::SweepPlan& plan);
// Runs (local) or submits (slurm) the entries `indices` of the plan (every entry when empty).
// Returns 0, or the exit status of the first failure.
int runPlan(const fs::path& dir, const ndr::SweepPlan& plan, const EngineOptions& engine, bool quiet,
            int autosaveEvery, const std::vector<int>& indices = {});

int runOneEntry(const std::string& dir, int index, bool quiet);
int printStatus(const std::string& dir);
int resubmitUnfinished(const std::string& dir, const EngineOptions& engine, bool quiet);

} // namespace ndrcli
