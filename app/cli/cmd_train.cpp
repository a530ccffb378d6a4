// `ndr train`: trains every model of a preset or config file at once and saves the run.
#include "commands.h"
#include "common.h"
#include "training.h"

#include <iostream>
#include <memory>

namespace ndrcli {

namespace {

int runTrain(const TrainOptions& o) {
    const ndr::RunConfig config = configFromOptions(o);
    const fs::path out = o.out.empty() ? fs::path("runs") / (ndr::fileStem(config.preset) + "-" + timestamp())
                                       : fs::path(o.out);
    checkOutputDir(out);
    if (!o.quiet)
        announce(config, out, "");
    InterruptGuard guard;
    const TrainedRun run = trainAndSave(config, out, o.quiet, o.autosaveEvery);
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

} // namespace

Command addTrainCommand(CLI::App& root) {
    auto opts = std::make_shared<TrainOptions>();
    auto* cmd = root.add_subcommand("train", "Train every model of a preset or config file at the same time");
    addTrainOptions(cmd, *opts);
    cmd->add_option_function<uint64_t>(
        "--seed", [o = opts.get()](uint64_t v) { o->overrides.seed = v; },
        "Seed of the task (tables, held-out sets) and of training");
    cmd->footer("Writes <out>/run.json and one <model>@<step>.ckpt per model, also while training "
                "(--autosave-every). Ctrl-C stops and saves what was trained (exit status 130).\n");
    return {cmd, [opts] { return runTrain(*opts); }};
}

} // namespace ndrcli
