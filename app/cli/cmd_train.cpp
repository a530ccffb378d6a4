// `ndr train`: trains every model of a preset or config file at once and saves the run; with --resume,
// goes on training a saved run in its own folder.
#include "commands.h"
#include "common.h"
#include "training.h"

#include <algorithm>
#include <iostream>
#include <memory>

namespace ndrcli {

namespace {

struct TrainCommandOptions {
    TrainOptions train;
    std::string resume; // a run folder to go on training
};

// Prints the summary and where the files are; the exit status of a finished, failed or stopped run.
int reportTrained(const TrainedRun& run, const fs::path& out) {
    printRunSummary(run, std::cout);
    std::cout << "Saved run.json";
    for (const auto& m : run.record.models)
        std::cout << ", " << m.checkpointFile;
    std::cout << " in " << out.string() << std::endl;
    for (const auto& m : run.record.models)
        if (m.status.state == ndr::ModelState::Failed)
            throw CliError(m.config.name + " " + ndr::statusText(m.status));
    if (run.interrupted) {
        std::cerr << "ndr train: interrupted; the run holds what was trained so far\n";
        return kExitInterrupted;
    }
    return 0;
}

int runTrain(const TrainOptions& o) {
    const ndr::RunConfig config = configFromOptions(o);
    const fs::path out = o.out.empty() ? fs::path("runs") / (ndr::fileStem(config.preset) + "-" + timestamp())
                                       : fs::path(o.out);
    checkOutputDir(out);
    if (!o.quiet)
        announce(config, out, "");
    InterruptGuard guard;
    return reportTrained(trainAndSave(config, out, o.quiet, o.autosaveEvery), out);
}

// Opens the run in `dir` with every model's weights and optimiser state and trains it on: to --steps in
// all when given, else to the steps its configuration names (what an interrupted run had left to do).
int runResume(const TrainOptions& o, const fs::path& dir) {
    std::error_code ec;
    if (!fs::exists(dir / "run.json", ec))
        throw CliError("--resume " + dir.string() + ": no run.json there; give the folder `ndr train` wrote",
                       kExitUsage);
    // One process trains a run folder at a time: this one, from its latest save on.
    const ndr::RunFileLock lock(dir / "run.json");
    std::unique_ptr<ndr::Run> run = ndr::Run::open(dir / "run.json");
    int least = run->trainer(0).step(), most = least; // steps trained by the least and most trained model
    for (int i = 1; i < run->modelCount(); ++i) {
        least = std::min(least, run->trainer(i).step());
        most = std::max(most, run->trainer(i).step());
    }
    const int total = o.overrides.steps.value_or(run->config().train.steps);
    if (total < most)
        throw CliError("--steps " + std::to_string(total) + " is fewer than the " + std::to_string(most) +
                           " steps the run has trained",
                       kExitUsage);
    if (total <= least)
        throw CliError("the run in " + dir.string() + " has trained all its " + std::to_string(total) +
                           " steps; give --steps with more to train it further",
                       kExitUsage);
    run->setTotalSteps(total);
    if (!o.quiet) {
        std::cerr << "Resuming at step " << least << " of " << total << std::endl;
        announce(run->config(), dir, "");
    }
    InterruptGuard guard;
    return reportTrained(trainAndSave(*run, dir, o.quiet, o.autosaveEvery), dir);
}

} // namespace

Command addTrainCommand(CLI::App& root) {
    auto opts = std::make_shared<TrainCommandOptions>();
    auto* cmd = root.add_subcommand("train", "Train every model of a preset or config file at the same time");
    addTrainOptions(cmd, opts->train);
    auto* seed = cmd->add_option_function<uint64_t>(
        "--seed", [o = opts.get()](uint64_t v) { o->train.overrides.seed = v; },
        "Seed of the task (tables, held-out sets) and of training");
    auto* resume = cmd->add_option("--resume", opts->resume,
                                   "Go on training the run saved in this folder, from its latest save, in "
                                   "the same folder: up to --steps in all, or to the steps it was given");
    for (const char* name : {"--preset", "--config", "--out", "--eval-interval", "--threads"})
        resume->excludes(cmd->get_option(name));
    resume->excludes(seed);
    cmd->footer("Writes <out>/run.json and one <model>@<step>.ckpt per model, also while training "
                "(--autosave-every). Ctrl-C stops and saves what was trained (exit status 130); "
                "--resume OUT goes on from there.\n");
    return {cmd, [opts] {
                return opts->resume.empty() ? runTrain(opts->train) : runResume(opts->train, opts->resume);
            }};
}

} // namespace ndrcli
