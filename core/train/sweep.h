// Sweeps: making a plan (one run per seed), telling from a sweep folder how far each run got, and
// summarising the finished runs (mean ± std over seeds per model and depth). Executing an entry is the
// runner's business (`ndr sweep run-one`); this knows no processes or schedulers.
#pragma once

#include "core/config/config.h"
#include "core/io/files.h"
#include "core/io/sweep_plan.h"
#include "core/records/records.h"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ndr {

// Seeds as a command line gives them: a bare number N means 1..N; otherwise a comma-separated list of
// seeds and ranges ("11-15", "1,4,9-10", "7-7" for seed 7 alone), in the order given. Throws
// std::invalid_argument naming the part that is not a seed or a range, or a seed given twice.
std::vector<uint64_t> parseSeeds(const std::string& text);
// "1-3", "11-15", "1-3,7": the seeds as parseSeeds reads them back, ranges joined.
std::string seedsText(const std::vector<uint64_t>& seeds);

// One run per seed in folders "seed-<s>"; task and training seeds are both s.
SweepPlan seedPlan(const RunConfig& base, const std::vector<uint64_t>& seeds);

// What a runner writes beside a run (`status.json` in its folder) while and after executing it.
struct RunnerStatus {
    static constexpr const char* kFileName = "status.json";
    enum class State { Running, Stopped, Done, Failed }; // Stopped: interrupted, resumable
    State state = State::Running;
    std::string host;    // where it runs
    long long pid = 0;   // its process there
    std::string job;     // the scheduler's id of the task ("123_4" for a Slurm array task), or ""
    std::string message; // a failed run's error
};
void saveRunnerStatus(const std::filesystem::path& runDir, const RunnerStatus& status);
// Nullopt when the folder has no status file; FileError when it is damaged.
std::optional<RunnerStatus> loadRunnerStatus(const std::filesystem::path& runDir);

enum class RunState {
    NotStarted,  // nothing in its folder
    Running,     // a runner says it is running and is alive (or cannot be checked from here)
    Interrupted, // a partial run whose runner is gone: running it again resumes it
    Failed,      // the runner reported an error
    Done,        // every model finished
};
const char* runStateName(RunState s);

struct RunProgress {
    RunState state = RunState::NotStarted;
    int stepsDone = 0, totalSteps = 0; // summed over the run's models, from its latest save
    std::string detail;                // a failure's message, or where it runs
};
// How a runner's liveness is judged: true/false when the caller knows (e.g. from the scheduler's
// queue), nullopt to let the default rule decide (a process on this host must exist; on another host
// it is taken as running).
using AliveFn = std::function<std::optional<bool>(const RunnerStatus&)>;
RunProgress runProgress(const std::filesystem::path& sweepDir, const SweepEntry& entry,
                        const AliveFn& alive = {});

// The accuracy at which a run counts as having solved a split, in the seed counts of the summaries.
constexpr double kSolvedAccuracy = 0.99;
// What the summaries print of one figure over seeds: mean, sample standard deviation (n - 1; 0 for
// one value) and how many values reach `target`. NaN mean and std when there are no values.
struct Spread {
    double mean = 0, std = 0;
    int n = 0, reached = 0;
};
Spread spreadOf(const std::vector<double>& values, double target = kSolvedAccuracy);

// Accuracy statistics over the finished runs of one group.
struct ModelSummary {
    std::string name;
    std::vector<int> depths;                   // every depth of the task, ascending
    std::vector<std::vector<double>> perDepth; // (depths, runs) at each run's best evaluation
    std::vector<double> iid, test;             // (runs) training-depth and test-depth means there
    std::vector<uint64_t> seeds;               // (runs) the training seed of each of those runs
    // Tasks with operations (EvalRecord::operations): the operations at the root, and per operation the
    // training-depth and test-depth means of its accuracy at each run's best evaluation.
    std::vector<std::string> operations;
    std::vector<std::vector<double>> operationIid, operationTest; // (operations, runs)
    // Models that halt at evaluation (EvalRecord::haltCounts): per depth the mean number of steps run
    // before halting and the accuracy when running every step, at each run's best evaluation; empty
    // for the others.
    std::vector<std::vector<double>> haltSteps, everyStep; // (depths, runs)
};
struct GroupSummary {
    std::string group;
    RunConfig config;            // of the group's first run
    std::vector<uint64_t> seeds; // of the finished runs, in plan order
    std::vector<ModelSummary> models;
    // The majority baseline of each run's evaluation sets (always the depth's most common answer), as
    // a model's figures would be; no values for runs whose file has none.
    ModelSummary baseline;
    int planned = 0; // runs of the group in the plan
};
// Summarises runs already loaded (e.g. run files opened one by one) as one group.
GroupSummary summariseRuns(const std::string& group, const std::vector<RunRecord>& runs);
// Reads the run records of the finished runs (RunState::Done) and summarises each group.
std::vector<GroupSummary> summariseSweep(const std::filesystem::path& sweepDir, const SweepPlan& plan);

} // namespace ndr
