// `ndr eval`: reloads a saved run's weights and measures accuracy on every depth's evaluation set.
#include "commands.h"
#include "common.h"
#include "routing_report.h"
#include "table.h"
#include "training.h"

#include <cmath>
#include <iostream>
#include <memory>
#include <thread>

namespace ndrcli {

namespace {

struct EvalOptions {
    std::string runFile;
    int steps = 0;
    std::string weights = "final";
    double haltThreshold = -1; // below 0: each model's own
};

struct ModelResult {
    ndr::EvalRecord eval; // accuracy per depth, routing and halting figures
    std::string error;
};

int runEval(const EvalOptions& o) {
    LoadedRun run = loadRun(o.runFile, o.weights);
    const ndr::Task& task = *run.task;
    const auto depths = task.allDepths();
    const size_t n = run.trainers.size();
    if (o.haltThreshold >= 0)
        for (size_t m = 0; m < n; ++m) {
            run.trainers[m]->model().setHaltThreshold(o.haltThreshold);
            run.record.models[m].config.haltThreshold = o.haltThreshold;
        }

    // Models are independent, so they are evaluated on their own threads as in training.
    std::vector<ModelResult> results(n);
    std::vector<std::thread> threads;
    for (size_t m = 0; m < n; ++m) {
        threads.emplace_back([&, m] {
            try {
                results[m].eval = run.trainers[m]->measure(o.steps);
            } catch (const std::exception& e) {
                results[m].error = e.what();
            }
        });
    }
    for (auto& t : threads)
        t.join();
    for (size_t m = 0; m < n; ++m)
        if (!results[m].error.empty())
            throw CliError("evaluating " + run.record.models[m].config.name + ": " + results[m].error);

    std::vector<std::string> header = {"model", "weights", "steps"};
    for (int d : depths)
        header.push_back(ndr::depthColumnName(task.config(), d));
    // IID: the held-out examples of the training depths; Longer: the test depths (the paper's Table 1).
    header.insert(header.end(), {"IID", "valid", "Longer"});
    Table table(header, "ll");
    for (size_t m = 0; m < n; ++m) {
        const auto& cfg = run.record.models[m].config;
        const int steps = o.steps > 0 ? o.steps : cfg.effectiveEvalSteps();
        // An LSTM reads token by token: it has no steps ("-").
        std::vector<std::string> row = {cfg.name, run.weightsUsed[m],
                                        cfg.kind == ndr::ModelKind::Lstm ? "-" : std::to_string(steps)};
        for (double a : results[m].eval.accuracy)
            row.push_back(fixed(a, 3));
        for (auto split : {ndr::Split::Train, ndr::Split::Valid, ndr::Split::Test})
            row.push_back(fixed(ndr::splitMean(task.config(), depths, results[m].eval.accuracy, split), 3));
        table.addRow(row);
    }
    // What always giving each depth's most common answer scores on the same sets.
    if (n > 0 && !results[0].eval.baseline.empty()) {
        table.addRule();
        std::vector<std::string> row = {"most common answer", "", ""};
        for (double a : results[0].eval.baseline)
            row.push_back(fixed(a, 3));
        for (auto split : {ndr::Split::Train, ndr::Split::Valid, ndr::Split::Test})
            row.push_back(fixed(ndr::splitMean(task.config(), depths, results[0].eval.baseline, split), 3));
        table.addRow(row);
    }
    std::cout << "Accuracy per depth of " << o.runFile << " (" << splitSummary(task.config()) << "; chance "
              << chanceText(task.config()) << ")\n";
    table.print(std::cout);
    for (size_t m = 0; m < n; ++m) {
        const auto& cfg = run.record.models[m].config;
        for (const std::string& line : routingReport(
                 cfg, results[m].eval, o.steps > 0 ? o.steps : cfg.effectiveEvalSteps(), task.config()))
            std::cout << line << "\n";
    }
    for (size_t m = 0; m < n; ++m)
        if (run.weightsUsed[m] != o.weights)
            std::cout << "Note: " << run.record.models[m].config.name
                      << " has no best-validation weights; its final weights were used\n";
    return 0;
}

} // namespace

Command addEvalCommand(CLI::App& root) {
    auto opts = std::make_shared<EvalOptions>();
    auto* cmd = root.add_subcommand("eval", "Evaluate a saved run's models on every depth");
    cmd->add_option("run", opts->runFile, "Run file (run.json) written by `ndr train`")->required();
    cmd->add_option("--steps", opts->steps, "Steps to run each model (default: the model's evaluation steps)")
        ->check(CLI::Range(1, 1024)); // traces grow with steps; beyond this is a typo
    cmd->add_option("--weights", opts->weights, "Weights to load: final, or best (at the best validation)")
        ->check(CLI::IsMember({"final", "best"}));
    cmd->add_option(
           "--halt-threshold", opts->haltThreshold,
           "Halting threshold of every copy-gated model (0: run every step; default: each model's own)")
        ->check(CLI::Range(0.0, 1.0));
    return {cmd, [opts] { return runEval(*opts); }};
}

} // namespace ndrcli
