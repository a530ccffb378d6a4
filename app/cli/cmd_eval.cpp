// `ndr eval`: reloads a saved run's weights and measures accuracy on every depth's evaluation set, on
// the problems of a fixed training set, or on a test set sampled independently of training.
#include "commands.h"
#include "common.h"
#include "routing_report.h"
#include "table.h"
#include "training.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <thread>
#include <unordered_set>

namespace ndrcli {

namespace {

// What `--on` measures on: the evaluation sets, each problem of a fixed training set once, or examples
// drawn as the task draws them.
enum class MeasureOn { HeldOut, Training, Independent };

struct EvalOptions {
    std::string runFile;
    int steps = 0;
    WeightsChoice weights = WeightsChoice::Final;
    double haltThreshold = -1;             // below 0: each model's own
    std::optional<ndr::HaltSignal> haltOn; // none: each model's own
    MeasureOn on = MeasureOn::HeldOut;
    int examples = 0;    // --on independent: per depth; 0: the task's evaluation set size
    int sampleSeed = -1; // --on independent: the sample's seed; below 0: 1
    bool byOperation = false;
};

int sampleSeedOf(const EvalOptions& o) {
    return o.sampleSeed < 0 ? 1 : o.sampleSeed;
}

// What each model is measured on: the evaluation sets (nullopt), or the sets `--on` names.
std::optional<ndr::Trainer::DepthSets> setsToMeasure(const EvalOptions& o, const ndr::Task& task) {
    if (o.on == MeasureOn::HeldOut)
        return std::nullopt;
    ndr::Trainer::DepthSets sets;
    if (o.on == MeasureOn::Training) {
        for (int d : task.depths(ndr::Split::Train)) {
            std::optional<std::vector<ndr::Example>> examples = task.fixedTrainingExamples(d);
            if (!examples)
                throw CliError(
                    "--on training: " + ndr::taskName(task.config()) +
                        " draws fresh training examples at every step and has no fixed training "
                        "set; `--on independent` measures on examples drawn as training draws them",
                    kExitUsage);
            sets.emplace_back(d, std::move(*examples));
        }
        return sets;
    }
    const int count = o.examples > 0 ? o.examples : task.config().evalExamplesPerDepth;
    for (int d : task.allDepths())
        sets.emplace_back(d, task.independentSample(d, count, uint64_t(sampleSeedOf(o))));
    return sets;
}

// For each set, the share of its examples that are problems of the task's fixed training set (none
// without one).
std::vector<double> shareInTraining(const ndr::Trainer::DepthSets& sets, const ndr::Task& task) {
    std::unordered_set<std::string> training;
    for (int d : task.depths(ndr::Split::Train)) {
        const auto examples = task.fixedTrainingExamples(d);
        if (!examples)
            return {};
        for (const ndr::Example& e : *examples)
            training.insert(task.format(e));
    }
    std::vector<double> shares;
    for (const auto& [depth, examples] : sets) {
        size_t in = 0;
        for (const ndr::Example& e : examples)
            in += training.count(task.format(e));
        shares.push_back(examples.empty() ? 0.0 : double(in) / double(examples.size()));
    }
    return shares;
}

struct ModelResult {
    ndr::EvalRecord eval; // accuracy per depth, routing and halting figures
    std::string error;
};

// Runs measure(m) for every model on its own thread, as training does; the first error names its model.
template <typename Measure> std::vector<ModelResult> measureEachModel(const LoadedRun& run, Measure measure) {
    const size_t n = run.trainers.size();
    std::vector<ModelResult> results(n);
    std::vector<std::thread> threads;
    for (size_t m = 0; m < n; ++m) {
        threads.emplace_back([&, m] {
            try {
                results[m].eval = measure(m);
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
    return results;
}

// The accuracy of every model on each root operation's share of the measured sets (the evaluation's
// per-operation counts): which operation a model has not learnt (ListOps' SM, arithmetic's + ...). A
// depth without an example of the operation reads "-".
void printByOperation(const LoadedRun& run, const std::vector<ModelResult>& results,
                      const std::vector<int>& depths) {
    const ndr::Task& task = *run.task;
    std::vector<std::string> header = {"model", "operation"};
    for (int d : depths)
        header.push_back(ndr::depthColumnName(task.config(), d));
    header.insert(header.end(), {"IID", "valid", "Longer"});
    Table table(header, "ll");
    for (size_t m = 0; m < results.size(); ++m) {
        const ndr::EvalRecord& e = results[m].eval;
        for (size_t op = 0; op < e.operations.size(); ++op) {
            std::vector<std::string> row = {run.record.models[m].config.name, e.operations[op]};
            for (size_t d = 0; d < e.depths.size(); ++d)
                row.push_back(fixed(e.operationAccuracy(d, op), 3));
            for (auto split : {ndr::Split::Train, ndr::Split::Valid, ndr::Split::Test})
                row.push_back(fixed(ndr::operationSplitMean(e, op, task.config(), split), 3));
            table.addRow(row);
        }
    }
    table.addRule();
    // The sets are the same for every model: the first model's counts.
    const ndr::EvalRecord& first = results.front().eval;
    for (size_t op = 0; op < first.operations.size(); ++op) {
        std::vector<std::string> row = {"examples", first.operations[op]};
        for (size_t d = 0; d < first.depths.size(); ++d) {
            const int n = first.operationExamples[d][op];
            row.push_back(n > 0 ? std::to_string(n) : "-");
        }
        row.insert(row.end(), {"", "", ""});
        table.addRow(row);
    }
    std::cout << "Accuracy per operation at the root of the expression, on the same examples\n";
    table.print(std::cout);
}

int runEval(const EvalOptions& o) {
    if (o.on != MeasureOn::Independent && (o.examples > 0 || o.sampleSeed >= 0))
        throw CliError("--examples and --sample-seed go with --on independent", kExitUsage);
    LoadedRun run = loadRun(o.runFile, o.weights);
    const ndr::Task& task = *run.task;
    const std::optional<ndr::Trainer::DepthSets> sets = setsToMeasure(o, task);
    std::vector<int> depths;
    if (sets)
        for (const auto& [d, examples] : *sets)
            depths.push_back(d);
    else
        depths = task.allDepths();
    const size_t n = run.trainers.size();
    // A model without the signal to halt on (hasHaltSignal) runs every step.
    for (size_t m = 0; m < n && (o.haltThreshold >= 0 || o.haltOn); ++m) {
        ndr::ModelConfig& config = run.record.models[m].config;
        const ndr::ModelFacts facts = ndr::factsOf(config);
        const double threshold = o.haltThreshold >= 0 ? o.haltThreshold : facts.haltThreshold;
        const ndr::HaltSignal on = o.haltOn.value_or(facts.haltOn);
        ndr::kindOf(config).setHalting(config, threshold, on);
        run.trainers[m]->model().setHalting(threshold, on);
    }

    if (o.haltOn && o.haltThreshold < 0 &&
        std::none_of(run.record.models.begin(), run.record.models.end(),
                     [](const ndr::ModelRecord& m) { return ndr::factsOf(m.config).haltThreshold > 0; }))
        std::cerr
            << "ndr eval: no model of this run halts (haltThreshold 0): --halt-on needs --halt-threshold "
               "to halt them\n";

    if (o.byOperation && std::none_of(depths.begin(), depths.end(), [&](int d) {
            return !task.rootOperation(task.firstEvalExample(d)).empty();
        }))
        throw CliError("--by-operation: " + ndr::taskName(task.config()) +
                           " has no operations to group by (the arithmetic and ListOps tasks have)",
                       kExitUsage);

    // Models are independent, so they are evaluated on their own threads as in training.
    const std::vector<ModelResult> results = measureEachModel(run, [&](size_t m) {
        return sets ? run.trainers[m]->measureOn(*sets, o.steps) : run.trainers[m]->measure(o.steps);
    });

    std::vector<std::string> header = {"model", "weights", "steps"};
    for (int d : depths)
        header.push_back(ndr::depthColumnName(task.config(), d));
    // IID: the held-out examples of the training depths; Longer: the test depths (the paper's Table 1).
    header.insert(header.end(), {"IID", "valid", "Longer"});
    Table table(header, "ll");
    for (size_t m = 0; m < n; ++m) {
        const auto& cfg = run.record.models[m].config;
        const ndr::ModelFacts facts = ndr::factsOf(cfg);
        const int steps = o.steps > 0 ? o.steps : facts.evalSteps;
        // A model that reads token by token (the LSTM) has no steps ("-").
        std::vector<std::string> row = {cfg.name, weightsName(run.weightsUsed[m]),
                                        facts.stepped ? std::to_string(steps) : "-"};
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
    if (sets) {
        // How many examples each depth's accuracy counts, and, beside a fixed training set, how many of
        // them are training problems.
        std::vector<std::string> row = {"examples", "", ""};
        for (const auto& [d, examples] : *sets)
            row.push_back(std::to_string(examples.size()));
        table.addRow(row);
        const std::vector<double> shares =
            o.on == MeasureOn::Independent ? shareInTraining(*sets, task) : std::vector<double>{};
        if (!shares.empty()) {
            row = {"share in training", "", ""};
            for (double share : shares)
                row.push_back(fixed(share, 3));
            table.addRow(row);
        }
    }
    const std::string what = o.on == MeasureOn::Training ? "the problems of the fixed training set, each once"
                             : o.on == MeasureOn::Independent
                                 ? std::to_string((*sets).front().second.size()) +
                                       " examples per depth sampled independently of training, sample seed " +
                                       std::to_string(sampleSeedOf(o))
                                 : "the evaluation sets";
    std::cout << "Accuracy per depth of " << o.runFile << " on " << what << " ("
              << splitSummary(task.config()) << "; chance " << chanceText(task.config()) << ")\n";
    table.print(std::cout);
    for (size_t m = 0; m < n; ++m) {
        const auto& cfg = run.record.models[m].config;
        for (const std::string& line : routingReport(
                 cfg, results[m].eval, o.steps > 0 ? o.steps : ndr::factsOf(cfg).evalSteps, task.config()))
            std::cout << line << "\n";
    }
    if (o.byOperation && n > 0)
        printByOperation(run, results, depths);
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
    addWeightsOption(cmd, opts->weights, "Weights to load: final, or best (at the best validation)");
    cmd->add_option(
           "--halt-threshold", opts->haltThreshold,
           "Halting threshold of every model that has the --halt-on signal (0: run every step; default: "
           "each model's own)")
        ->check(CLI::Range(0.0, 1.0));
    cmd->add_option_function<std::string>(
           "--halt-on",
           [opts](const std::string& on) {
               opts->haltOn = on == "change" ? ndr::HaltSignal::Change : ndr::HaltSignal::Gates;
           },
           "What halting reads: gates (copy gates, ThoughtNet's operators' weight) or change (how far "
           "a step moved each position's state; every model but the LSTM). Default: each model's own")
        ->check(CLI::IsMember({"gates", "change"}));
    cmd->add_option_function<std::string>(
           "--on",
           [opts](const std::string& on) {
               opts->on = on == "training"      ? MeasureOn::Training
                          : on == "independent" ? MeasureOn::Independent
                                                : MeasureOn::HeldOut;
           },
           "What to measure on: held-out (the evaluation sets), training (each problem of a fixed "
           "training set once: multi-digit arithmetic), or independent (examples drawn as the task "
           "draws them, training problems included)")
        ->check(CLI::IsMember({"held-out", "training", "independent"}));
    cmd->add_option("--examples", opts->examples,
                    "With --on independent: examples per depth (default: the task's evaluation set size)")
        ->check(CLI::Range(1, 1000000));
    cmd->add_option("--sample-seed", opts->sampleSeed, "With --on independent: the sample's seed (default 1)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_flag("--by-operation", opts->byOperation,
                  "Also the accuracy per operation at the root of each expression (arithmetic's + and *, "
                  "ListOps' MIN, MAX, MED and SM), on the same examples");
    return {cmd, [opts] { return runEval(*opts); }};
}

} // namespace ndrcli
