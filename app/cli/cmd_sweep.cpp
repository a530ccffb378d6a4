// `ndr sweep`: a sweep is a folder with a plan (sweep.json, one entry per run). `ndr sweep --seeds N`
// makes the plan and runs it (here, one run after another or N processes at once, or as a Slurm job
// array); `run-one` executes one entry, `status`, `collect` and `resubmit` work on any sweep folder.
#include "commands.h"
#include "common.h"
#include "core/io/serialize.h"
#include "core/train/sweep.h"
#include "sweep_runner.h"
#include "table.h"
#include "training.h"

#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

namespace ndrcli {

namespace {

// Keys keep the order written here, so the file reads summary first and configuration last.
using json = nlohmann::ordered_json;

struct SweepOptions : TrainOptions {
    std::string seeds; // as ndr::parseSeeds reads it
    bool planOnly = false;
    EngineOptions engine;
};

json statsJson(const std::vector<double>& xs) {
    const auto [mean, sd] = meanStd(xs);
    return {{"mean", mean}, {"std", sd}, {"values", xs}};
}

// An accuracy over seeds with how many seeds solved it: the JSON adds "reached" (runs at >= the target).
json accuracyJson(const std::vector<double>& xs) {
    json j = statsJson(xs);
    j["reached"] = ndr::spreadOf(xs).reached;
    return j;
}

std::string plusMinus(const std::vector<double>& xs, int decimals = 3) {
    if (xs.empty())
        return "-";
    const auto [mean, sd] = meanStd(xs);
    return fixed(mean, decimals) + " ± " + fixed(sd, decimals);
}

// "0.999 ± 0.003 5/5": mean ± std and how many runs reach ndr::kSolvedAccuracy.
std::string plusMinusReached(const std::vector<double>& xs) {
    if (xs.empty())
        return "-";
    const ndr::Spread s = ndr::spreadOf(xs);
    return plusMinus(xs) + " " + std::to_string(s.reached) + "/" + std::to_string(s.n);
}

const char* splitName(ndr::Split s) {
    switch (s) {
    case ndr::Split::Train:
        return "train";
    case ndr::Split::Valid:
        return "valid";
    case ndr::Split::Test:
        return "test";
    case ndr::Split::None:
        break;
    }
    return "none";
}

// Prints the table of every group and writes summary.json; returns how many runs it covered.
int collect(const fs::path& dir, const ndr::SweepPlan& plan) {
    const auto groups = ndr::summariseSweep(dir, plan);
    json out = json::array();
    int covered = 0;
    for (const auto& g : groups) {
        covered += int(g.seeds.size());
        const bool hasValid = !ndr::depthsOf(g.config.task, ndr::Split::Valid).empty();
        const std::string at = hasValid ? "best-validation" : "latest";
        std::vector<std::string> header = {"model"};
        for (int d : ndr::allDepthsOf(g.config.task))
            header.push_back(ndr::depthColumnName(g.config.task, d));
        header.insert(header.end(), {"IID", "Longer"});
        Table table(header, "l");
        // A row and its JSON entry of one model's figures (or the majority baseline's).
        // Per depth of m: the depth, its split and the statistics of `values` (depths, runs).
        auto perDepthJson = [&](const ndr::ModelSummary& m, const std::vector<std::vector<double>>& values) {
            json perDepth = json::array();
            for (size_t d = 0; d < m.depths.size(); ++d) {
                json entry = {{"depth", m.depths[d]},
                              {"split", splitName(ndr::Task::splitOf(g.config.task, m.depths[d]))}};
                entry.update(statsJson(values[d]));
                perDepth.push_back(entry);
            }
            return perDepth;
        };
        auto summaryRow = [&](const ndr::ModelSummary& m) {
            std::vector<std::string> row = {m.name};
            for (size_t d = 0; d < m.depths.size(); ++d)
                row.push_back(plusMinus(m.perDepth[d]));
            const json perDepth = perDepthJson(m, m.perDepth);
            row.push_back(plusMinusReached(m.iid));
            row.push_back(plusMinusReached(m.test));
            table.addRow(row);
            json entry = {{"name", m.name},
                          {"perDepth", perDepth},
                          {"iid", accuracyJson(m.iid)},
                          {"test", accuracyJson(m.test)}};
            if (!m.operations.empty()) {
                json operations = json::array();
                for (size_t o = 0; o < m.operations.size(); ++o)
                    operations.push_back({{"operation", m.operations[o]},
                                          {"iid", statsJson(m.operationIid[o])},
                                          {"test", statsJson(m.operationTest[o])}});
                entry["operations"] = operations;
            }
            if (!m.haltSteps.empty())
                entry["halting"] = {{"stepsRun", perDepthJson(m, m.haltSteps)},
                                    {"everyStep", perDepthJson(m, m.everyStep)}};
            return entry;
        };
        json models = json::array();
        for (const auto& m : g.models)
            models.push_back(summaryRow(m));
        json baseline; // null for runs without it
        if (!g.baseline.iid.empty()) {
            table.addRule();
            baseline = summaryRow(g.baseline);
        }
        std::cout << (g.group.empty() ? "" : g.group + ": ") << "accuracy at the " << at << " evaluation"
                  << (hasValid ? "" : " (no validation split)") << ", mean ± std over " << g.seeds.size()
                  << " of " << g.planned << " runs (" << splitSummary(g.config.task) << "; chance "
                  << chanceText(g.config.task)
                  << "; IID: held-out examples of the training depths; k/n: runs at >= "
                  << ndr::kSolvedAccuracy << ")\n";
        table.print(std::cout);
        // Every run's figures, so a mean hides no seed.
        if (g.seeds.size() > 1) {
            Table perSeed({"model", "seed", "IID", "Longer"}, "l");
            for (const auto& m : g.models)
                for (size_t r = 0; r < m.seeds.size(); ++r)
                    perSeed.addRow(
                        {m.name, std::to_string(m.seeds[r]), fixed(m.iid[r], 3), fixed(m.test[r], 3)});
            std::cout << "Per seed\n";
            perSeed.print(std::cout);
        }
        // Tasks with operations: each model's accuracy per operation at the root of the expressions.
        if (std::any_of(g.models.begin(), g.models.end(),
                        [](const auto& m) { return !m.operations.empty(); })) {
            Table ops({"model", "operation", "IID", "Longer"}, "ll");
            for (const auto& m : g.models)
                for (size_t o = 0; o < m.operations.size(); ++o)
                    ops.addRow({m.name, m.operations[o], plusMinus(m.operationIid[o]),
                                plusMinus(m.operationTest[o])});
            std::cout << "Per operation at the root of the expression, at the same evaluations\n";
            ops.print(std::cout);
        }
        // Models that halt: the steps they run per depth, and their accuracy when they run every step.
        if (std::any_of(g.models.begin(), g.models.end(),
                        [](const auto& m) { return !m.haltSteps.empty(); })) {
            std::vector<std::string> haltHeader = {"model", "figure"};
            for (int d : ndr::allDepthsOf(g.config.task))
                haltHeader.push_back(ndr::depthColumnName(g.config.task, d));
            Table halting(haltHeader, "ll");
            for (const auto& m : g.models) {
                if (m.haltSteps.empty())
                    continue;
                std::vector<std::string> steps = {m.name, "steps run"}, every = {m.name, "every step"};
                for (size_t d = 0; d < m.depths.size(); ++d) {
                    steps.push_back(plusMinus(m.haltSteps[d], 2));
                    every.push_back(plusMinus(m.everyStep[d]));
                }
                halting.addRow(steps);
                halting.addRow(every);
            }
            std::cout << "Halting, at the same evaluations: mean steps run before halting, and the accuracy "
                         "when running every step\n";
            halting.print(std::cout);
        }
        out.push_back({{"group", g.group},
                       {"preset", g.config.preset},
                       {"seeds", g.seeds},
                       {"planned", g.planned},
                       {"evaluation", at},
                       {"std", "sample standard deviation (n-1)"},
                       {"reachedAt", ndr::kSolvedAccuracy},
                       {"models", models},
                       {"mostCommonAnswer", baseline},
                       {"config", json::parse(nlohmann::json(g.config).dump())}});
    }
    const json summary = {{"format", "ndr-studio-sweep"},
                          {"version", 2},
                          {"kind", ndr::sweepKindName(plan.kind)},
                          {"groups", out}};
    try {
        ndr::writeFileAtomic(dir / "summary.json", summary.dump(2) + "\n");
    } catch (const std::exception& e) {
        throw CliError(std::string("cannot save the summary: ") + e.what());
    }
    std::cout << "Saved " << (dir / "summary.json").string() << std::endl;
    return covered;
}

ndr::SweepPlan loadPlan(const fs::path& dir) {
    try {
        return ndr::loadSweepPlan(dir);
    } catch (const std::exception& e) {
        throw CliError(e.what());
    }
}

int runSweep(const SweepOptions& o) {
    const ndr::RunConfig base = configFromOptions(o);
    const fs::path out = o.out.empty()
                             ? fs::path("runs") / (ndr::fileStem(base.preset) + "-sweep-" + timestamp())
                             : fs::path(o.out);
    const ndr::SweepPlan plan = ndr::seedPlan(base, ndr::parseSeeds(o.seeds));
    if (!o.planOnly)
        checkEngine(o.engine); // before anything is written
    createPlanFolder(out, plan);
    std::cout << "Planned " << plan.runs.size() << " runs in " << (out / ndr::SweepPlan::kFileName).string()
              << std::endl;
    if (o.planOnly)
        return 0;
    const int code = runPlan(out, plan, o.engine, o.quiet, o.autosaveEvery);
    if (o.engine.engine == Engine::Local && collect(out, plan) == 0)
        return code ? code : kExitError;
    return code;
}

} // namespace

Command addSweepCommand(CLI::App& root) {
    auto opts = std::make_shared<SweepOptions>();
    auto* cmd = root.add_subcommand("sweep", "Train once per seed and summarise mean ± std over seeds");
    addTrainOptions(cmd, *opts);
    cmd->add_option("--seeds", opts->seeds,
                    "Seeds: N for 1..N, or a list of seeds and ranges (11-15, 1,4,9-10)")
        ->check(seedList());
    cmd->add_flag("--plan-only", opts->planOnly,
                  "Write the sweep folder's plan (sweep.json) and nothing else");
    addEngineOptions(cmd, opts->engine);
    cmd->footer(
        "A sweep is a folder with a plan, sweep.json; each run goes to <out>/seed-<s>/, the table to "
        "<out>/summary.json.\nOn any sweep folder: `ndr sweep run-one DIR INDEX`, `ndr sweep status DIR`, "
        "`ndr sweep collect DIR`, `ndr sweep resubmit DIR`.\n");

    struct DirIndex {
        std::string dir;
        int index = -1;
        EngineOptions engine;
        bool quiet = false;
    };
    auto sub = std::make_shared<DirIndex>();
    auto* runOne = cmd->add_subcommand("run-one", "Execute one entry of a sweep plan (skips a finished run, "
                                                  "resumes a partial one from its latest save)");
    runOne->add_option("dir", sub->dir, "The sweep folder")->required();
    runOne->add_option("index", sub->index, "The entry's index in the plan (0-based)")->required();
    runOne->add_flag("--quiet", sub->quiet, "No progress bar");
    auto* status =
        cmd->add_subcommand("status", "How many runs of a sweep are done, running, failed, not started");
    status->add_option("dir", sub->dir, "The sweep folder")->required();
    auto* collectCmd = cmd->add_subcommand("collect", "Print and save the summary of the finished runs");
    collectCmd->add_option("dir", sub->dir, "The sweep folder")->required();
    auto* resubmit = cmd->add_subcommand("resubmit", "Run or submit again every entry that is not done, "
                                                     "running or queued");
    resubmit->add_option("dir", sub->dir, "The sweep folder")->required();
    auto* resubmitEngine = addEngineOptions(resubmit, sub->engine);
    resubmit->add_flag("--quiet", sub->quiet, "No progress bar");
    for (auto* s : {runOne, status, collectCmd, resubmit})
        s->fallthrough(false);

    return {cmd, [opts, sub, runOne, status, collectCmd, resubmit, resubmitEngine] {
                if (runOne->parsed())
                    return runOneEntry(sub->dir, sub->index, sub->quiet);
                if (status->parsed())
                    return printStatus(sub->dir);
                if (collectCmd->parsed()) {
                    const ndr::SweepPlan plan = loadPlan(sub->dir);
                    if (plan.kind == ndr::SweepKind::Table1)
                        return printTableOne(sub->dir) > 0 ? 0 : kExitError;
                    if (collect(sub->dir, plan) == 0)
                        throw CliError("no run of " + sub->dir + " has finished yet (see `ndr sweep status " +
                                       sub->dir + "`)");
                    return 0;
                }
                sub->engine.engineGiven = resubmitEngine->count() > 0;
                if (resubmit->parsed())
                    return resubmitUnfinished(sub->dir, sub->engine, sub->quiet);
                if (opts->seeds.empty())
                    throw CliError(
                        "give --seeds N or --seeds A-B (or a command: run-one, status, collect, resubmit)",
                        kExitUsage);
                return runSweep(*opts);
            }};
}

} // namespace ndrcli
