// `ndr sweep`: one training run per seed and a table of mean ± std over seeds, like the paper's.
#include "commands.h"
#include "common.h"
#include "core/io/serialize.h"
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
    int seeds = 0;
};

struct Aggregate {
    std::vector<std::vector<double>> perDepth; // (depths, seeds done)
    std::vector<double> iid;                   // (seeds done) held-out examples of the training depths
    std::vector<double> test;                  // (seeds done) the test depths ("Longer")
};

json statsJson(const std::vector<double>& xs) {
    const auto [mean, sd] = meanStd(xs);
    return {{"mean", mean}, {"std", sd}, {"values", xs}};
}

std::string plusMinus(const std::vector<double>& xs) {
    if (xs.empty())
        return "-";
    const auto [mean, sd] = meanStd(xs);
    return fixed(mean, 3) + " ± " + fixed(sd, 3);
}

int runSweep(const SweepOptions& o) {
    const ndr::RunConfig base = configFromOptions(o);
    const fs::path out = o.out.empty()
                             ? fs::path("runs") / (ndr::fileStem(base.preset) + "-sweep-" + timestamp())
                             : fs::path(o.out);
    // Everything in the way is reported before the first seed spends minutes training.
    for (int s = 1; s <= o.seeds; ++s)
        checkOutputDir(out / ("seed-" + std::to_string(s)));
    if (std::error_code ec; fs::exists(out / "summary.json", ec))
        throw CliError((out / "summary.json").string() +
                       " already exists; choose another --out or remove it");
    const ndr::CtlTask shape(base.task);
    // Without a validation split the trainer's best evaluation is simply the latest one.
    const bool hasValid = !shape.depths(ndr::Split::Valid).empty();
    const std::string at = hasValid ? "best-validation" : "latest";
    const std::string atNote = hasValid ? "" : " (no validation split)";
    const auto depths = shape.allDepths();
    const size_t nModels = base.models.size();
    std::vector<Aggregate> agg(nModels, Aggregate{std::vector<std::vector<double>>(depths.size()), {}, {}});
    std::vector<int> seedsDone;

    InterruptGuard guard;
    for (int s = 1; s <= o.seeds && !stopRequested(); ++s) {
        ndr::RunConfig c = base;
        c.task.seed = c.train.seed = uint64_t(s);
        const fs::path dir = out / ("seed-" + std::to_string(s));
        if (!o.quiet)
            announce(c, dir, "[seed " + std::to_string(s) + "/" + std::to_string(o.seeds) + "] ");
        const TrainedRun run = trainAndSave(c, dir, o.quiet, o.autosaveEvery);
        if (run.interrupted)
            break; // a half-trained seed would bias the statistics
        seedsDone.push_back(s);
        std::string line = "seed " + std::to_string(s) + ": at the " + at + " evaluation:";
        for (size_t m = 0; m < nModels; ++m) {
            const auto& rec = run.record.models[m];
            if (rec.bestEval < 0 || rec.bestEval >= int(rec.history.size()))
                continue;
            const auto& best = rec.history[rec.bestEval];
            for (size_t d = 0; d < depths.size(); ++d) {
                const auto it = std::find(best.depths.begin(), best.depths.end(), depths[d]);
                if (it != best.depths.end())
                    agg[m].perDepth[d].push_back(best.accuracy[it - best.depths.begin()]);
            }
            agg[m].iid.push_back(best.trainAccuracy);
            agg[m].test.push_back(best.testAccuracy);
            line += (m ? "; " : " ") + rec.config.name + " IID " + fixed(best.trainAccuracy, 3) +
                    ", Longer " + fixed(best.testAccuracy, 3);
        }
        std::cerr << line << "\n";
    }
    if (seedsDone.empty()) {
        std::cerr << "ndr sweep: interrupted before the first seed finished; no summary\n";
        return kExitInterrupted;
    }

    std::vector<std::string> header = {"model"};
    for (int d : depths)
        header.push_back("d" + std::to_string(d));
    // IID: the held-out examples of the training depths; Longer: the test depths (the paper's Table 1).
    header.insert(header.end(), {"IID", "Longer"});
    Table table(header, "l");
    json models = json::array();
    for (size_t m = 0; m < nModels; ++m) {
        std::vector<std::string> row = {base.models[m].name};
        json perDepth = json::array();
        for (size_t d = 0; d < depths.size(); ++d) {
            row.push_back(plusMinus(agg[m].perDepth[d]));
            const auto split = shape.splitOf(depths[d]);
            json entry = {{"depth", depths[d]},
                          {"split", split == ndr::Split::Train   ? "train"
                                    : split == ndr::Split::Valid ? "valid"
                                                                 : "test"}};
            entry.update(statsJson(agg[m].perDepth[d]));
            perDepth.push_back(entry);
        }
        row.push_back(plusMinus(agg[m].iid));
        row.push_back(plusMinus(agg[m].test));
        table.addRow(row);
        models.push_back({{"name", base.models[m].name},
                          {"perDepth", perDepth},
                          {"iid", statsJson(agg[m].iid)},
                          {"test", statsJson(agg[m].test)}});
    }
    std::cout << "Accuracy at the " << at << " evaluation" << atNote << ", mean ± std over "
              << seedsDone.size() << " seeds (" << splitSummary(base.task) << "; chance "
              << fixed(1.0 / base.task.symbols, 3) << ")\n";
    table.print(std::cout);

    const json summary = {{"format", "ndr-studio-sweep"},
                          {"version", 1},
                          {"preset", base.preset},
                          {"seeds", seedsDone},
                          {"evaluation", at + atNote},
                          {"std", "sample standard deviation (n-1)"},
                          {"models", models},
                          {"config", json::parse(nlohmann::json(base).dump())}};
    try {
        ndr::writeFileAtomic(out / "summary.json", summary.dump(2) + "\n");
    } catch (const std::exception& e) {
        throw CliError(std::string("cannot save the summary: ") + e.what());
    }
    std::cout << "Saved " << (out / "summary.json").string() << " and the runs in " << out.string()
              << "/seed-*" << std::endl;
    if (stopRequested()) {
        std::cerr << "ndr sweep: interrupted; the summary covers the seeds that finished\n";
        return kExitInterrupted;
    }
    return 0;
}

} // namespace

Command addSweepCommand(CLI::App& root) {
    auto opts = std::make_shared<SweepOptions>();
    auto* cmd = root.add_subcommand("sweep", "Train once per seed 1..N and summarise mean ± std over seeds");
    addTrainOptions(cmd, *opts);
    cmd->add_option("--seeds", opts->seeds, "Number of seeds (runs 1..N, one after another)")
        ->required()
        ->check(positive());
    cmd->footer("Saves each seed's run in <out>/seed-<s>/ and the table in <out>/summary.json.\n");
    return {cmd, [opts] { return runSweep(*opts); }};
}

} // namespace ndrcli
