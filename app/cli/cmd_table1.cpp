// `ndr table1`: the paper's Table 1 (every row in both orders over N seeds) as a sweep folder, run here
// or on Slurm, resumable, and printed as the paper prints it with the paper's figures beside each cell.
#include "commands.h"
#include "common.h"
#include "core/train/sweep.h"
#include "core/train/table_one.h"
#include "sweep_runner.h"
#include "table.h"
#include "training.h"

#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

namespace ndrcli {

namespace {

struct Table1Options {
    std::string seeds = "3";       // as ndr::parseSeeds reads it
    std::vector<std::string> rows; // ids of ndr::paperTableOne(); empty: every row
    int steps = 0;
    std::string recipe = "laptop";
    std::string out;
    bool planOnly = false, quiet = false, replan = false;
    EngineOptions engine;
};

// "1.00 ± 0.00 5/5 (1.00)": mean ± std over seeds, how many seeds reach ndr::kSolvedAccuracy, the paper.
std::string cell(const std::vector<double>& xs, double paper) {
    const std::string ours = xs.empty() ? "-" : [&] {
        const ndr::Spread s = ndr::spreadOf(xs);
        // One seed has no spread to show: its value alone.
        return (xs.size() == 1 ? fixed(s.mean, 2) : fixed(s.mean, 2) + " ± " + fixed(s.std, 2)) + " " +
               std::to_string(s.reached) + "/" + std::to_string(s.n);
    }();
    return ours + " (" + fixed(paper, 2) + ")";
}

// Every finished run of the plan: its figures at the best validation, the steps it trained, how it
// ended and its training time, so that no seed hides behind a mean.
void printRuns(const fs::path& dir, const ndr::SweepPlan& plan) {
    Table table({"run", "steps", "ended", "IID", "Longer", "training"}, "l");
    for (const ndr::SweepEntry& e : plan.runs) {
        if (ndr::runProgress(dir, e).state != ndr::RunState::Done)
            continue;
        ndr::RunRecord record;
        try {
            record = ndr::loadRunRecord(dir / e.dir / "run.json", ndr::RunFileParts::WithoutTraces);
        } catch (const std::exception&) {
            continue; // the table above has said what it could read
        }
        if (record.models.empty())
            continue;
        const ndr::ModelRecord& m = record.models[0];
        if (m.bestEval < 0 || m.bestEval >= int(m.history.size()))
            continue;
        const ndr::EvalRecord& best = m.history[size_t(m.bestEval)];
        const bool early = m.stepsDone < record.config.train.steps;
        table.addRow({e.name, std::to_string(m.stepsDone), early ? "early stop" : "all steps",
                      fixed(best.trainAccuracy, 3), fixed(best.testAccuracy, 3),
                      duration(m.history.empty() ? 0.0 : m.history.back().elapsedSeconds)});
    }
    std::cout
        << "Every finished run, at its best-validation evaluation (training time: one core, evaluations "
           "excluded)\n";
    table.print(std::cout);
}

// Prints Table 1 from the finished runs and writes table1.json and table1.csv; returns the runs covered.
int printTable(const fs::path& dir, const ndr::SweepPlan& plan) {
    const auto groups = ndr::summariseSweep(dir, plan);
    std::map<std::string, const ndr::GroupSummary*> byGroup;
    int covered = 0;
    for (const auto& g : groups) {
        byGroup[g.group] = &g;
        covered += int(g.seeds.size());
    }
    Table table({"model", "IID fwd", "IID bwd", "Longer fwd", "Longer bwd", "runs"}, "l");
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    std::string csv = "row,model,order,split,mean,std,runs,reached,paper\n";
    for (const ndr::PaperTableOneRow& row : ndr::paperTableOne()) {
        auto figures = [&](ndr::Order order, bool longer) -> std::vector<double> {
            const auto it = byGroup.find(ndr::tableOneGroup(row.id, order));
            if (it == byGroup.end() || it->second->models.empty())
                return {};
            return longer ? it->second->models[0].test : it->second->models[0].iid;
        };
        const auto iidF = figures(ndr::Order::Forward, false), iidB = figures(ndr::Order::Backward, false);
        const auto lonF = figures(ndr::Order::Forward, true), lonB = figures(ndr::Order::Backward, true);
        table.addRow({row.label, cell(iidF, row.iidForward), cell(iidB, row.iidBackward),
                      cell(lonF, row.longerForward), cell(lonB, row.longerBackward),
                      std::to_string(lonF.size() + lonB.size())});
        nlohmann::ordered_json r = {{"row", row.id}, {"model", row.label}};
        for (const auto& [key, xs, paper] : {std::tuple{"iidForward", &iidF, row.iidForward},
                                             std::tuple{"iidBackward", &iidB, row.iidBackward},
                                             std::tuple{"longerForward", &lonF, row.longerForward},
                                             std::tuple{"longerBackward", &lonB, row.longerBackward}}) {
            const auto [mean, sd] = meanStd(*xs);
            const int reached = ndr::spreadOf(*xs).reached;
            r[key] = {{"mean", xs->empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(mean)},
                      {"std", xs->empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(sd)},
                      {"values", *xs},
                      {"reached", reached},
                      {"paper", paper}};
            const std::string k = key;
            const std::string order = k.find("Forward") != std::string::npos ? "forward" : "backward";
            const std::string split = k.rfind("iid", 0) == 0 ? "IID" : "Longer";
            csv += row.id + ",\"" + row.label + "\"," + order + "," + split + "," +
                   (xs->empty() ? "" : fixed(mean, 4)) + "," + (xs->empty() ? "" : fixed(sd, 4)) + "," +
                   std::to_string(xs->size()) + "," + std::to_string(reached) + "," + fixed(paper, 2) + "\n";
        }
        rows.push_back(r);
    }
    std::cout
        << "Table 1 (CTL), mean ± std over the finished seeds at each run's best-validation evaluation, "
           "k/n seeds at >= "
        << ndr::kSolvedAccuracy
        << ", the paper's figure in brackets; IID: held-out examples of the training depths, Longer: the "
           "test depths ("
        << covered << " of " << plan.runs.size() << " runs finished)\n";
    table.print(std::cout);
    printRuns(dir, plan);
    const nlohmann::ordered_json j = {
        {"format", "ndr-studio-table1"}, {"version", 1}, {"reachedAt", ndr::kSolvedAccuracy}, {"rows", rows}};
    try {
        ndr::writeFileAtomic(dir / "table1.json", j.dump(2) + "\n");
        ndr::writeFileAtomic(dir / "table1.csv", csv);
    } catch (const std::exception& e) {
        throw CliError(std::string("cannot save the table: ") + e.what());
    }
    std::cout << "Saved " << (dir / "table1.json").string() << " and " << (dir / "table1.csv").string()
              << std::endl;
    return covered;
}

// Adopts `plan` in a folder that holds another: runs whose entry (name and configuration) is unchanged
// are kept; the folders of changed or dropped entries move to replaced-<n>/ (nothing is deleted), so
// those runs train again under the new plan. Returns how many were moved.
int replan(const fs::path& out, const ndr::SweepPlan& existing, const ndr::SweepPlan& plan) {
    std::map<std::string, const ndr::SweepEntry*> next;
    for (const auto& e : plan.runs)
        next[e.dir] = &e;
    fs::path aside;
    for (int n = 1; aside.empty() || fs::exists(aside); ++n)
        aside = out / ("replaced-" + std::to_string(n));
    int moved = 0;
    for (const auto& e : existing.runs) {
        const auto it = next.find(e.dir);
        if (it != next.end() && *it->second == e)
            continue;
        std::error_code ec;
        if (!fs::exists(out / e.dir, ec))
            continue;
        fs::create_directories((aside / e.dir).parent_path(), ec);
        fs::rename(out / e.dir, aside / e.dir, ec);
        if (ec)
            throw CliError("cannot move " + (out / e.dir).string() + " aside: " + ec.message());
        std::cerr << e.name << ": its settings changed; moved to " << (aside / e.dir).string() << std::endl;
        ++moved;
    }
    try {
        ndr::saveSweepPlan(out, plan);
    } catch (const std::exception& e) {
        throw CliError(e.what());
    }
    return moved;
}

int runTable1(const Table1Options& o) {
    const auto recipe = o.recipe == "paper" ? ndr::TableOneRecipe::Paper : ndr::TableOneRecipe::Laptop;
    ndr::SweepPlan plan;
    try {
        plan = ndr::tableOnePlan(recipe, ndr::parseSeeds(o.seeds), o.steps, o.rows);
    } catch (const std::invalid_argument& e) {
        throw CliError(e.what(), kExitUsage);
    }
    const fs::path out = o.out.empty() ? fs::path("runs") / ("table1-" + o.recipe) : fs::path(o.out);
    if (!o.planOnly)
        checkEngine(o.engine);
    std::error_code ec;
    if (fs::exists(out / ndr::SweepPlan::kFileName, ec)) {
        // Running the same command again resumes: finished runs are kept, interrupted ones continue.
        ndr::SweepPlan existing;
        try {
            existing = ndr::loadSweepPlan(out);
        } catch (const std::exception& e) {
            throw CliError(e.what());
        }
        if (!(existing == plan) && !o.replan)
            throw CliError(out.string() +
                           " holds another plan (other seeds, recipe or steps); choose another --out, or "
                           "--replan to keep the runs whose settings are unchanged");
        if (!(existing == plan)) {
            const int moved = replan(out, existing, plan);
            std::cerr << "Replanned " << out.string() << ": " << moved << " run folder(s) moved aside"
                      << std::endl;
        }
        std::cerr << "Resuming the Table 1 sweep in " << out.string() << std::endl;
    } else {
        createPlanFolder(out, plan);
        std::cout << "Planned " << plan.runs.size() << " runs in "
                  << (out / ndr::SweepPlan::kFileName).string() << std::endl;
    }
    if (o.planOnly)
        return 0;
    if (o.engine.engine == Engine::Slurm)
        return resubmitUnfinished(out.string(), o.engine, o.quiet);
    const int code = runPlan(out, plan, o.engine, o.quiet, 1);
    printTable(out, plan);
    return code;
}

} // namespace

int printTableOne(const std::string& dir) {
    ndr::SweepPlan plan;
    try {
        plan = ndr::loadSweepPlan(dir);
    } catch (const std::exception& e) {
        throw CliError(e.what());
    }
    return printTable(dir, plan);
}

Command addTable1Command(CLI::App& root) {
    auto o = std::make_shared<Table1Options>();
    auto* cmd =
        root.add_subcommand("table1", "Train every row of the paper's Table 1 in both orders over N seeds "
                                      "and print the table beside the paper's");
    cmd->add_option("--seeds", o->seeds,
                    "Seeds per row and order: N for 1..N, or a list of seeds and ranges (11-15, 1,4,9-10)")
        ->check(seedList());
    std::string rowIds;
    for (const ndr::PaperTableOneRow& r : ndr::paperTableOne())
        rowIds += (rowIds.empty() ? "" : ", ") + r.id;
    cmd->add_option("--rows", o->rows, "Only these rows (" + rowIds + "); every row when not given")
        ->delimiter(',');
    cmd->add_option("--recipe", o->recipe,
                    "laptop (minutes per run) or paper (the authors' sizes, for a cluster)")
        ->check(CLI::IsMember({"laptop", "paper"}));
    cmd->add_option("--steps", o->steps, "Override every run's training steps")->check(positive());
    cmd->add_option("--out", o->out, "The sweep folder (default runs/table1-<recipe>); run again to resume");
    cmd->add_flag("--plan-only", o->planOnly, "Write the plan (sweep.json) and nothing else");
    cmd->add_flag("--replan", o->replan,
                  "When the folder holds another plan (a newer recipe, more seeds): adopt this one, keeping "
                  "the runs whose settings are unchanged and moving the others to replaced-<n>/");
    cmd->add_flag("--quiet", o->quiet, "No progress bars");
    addEngineOptions(cmd, o->engine);
    cmd->footer("Runs go to <out>/<row>/<order>/seed-<s>/; the table to <out>/table1.json and table1.csv.\n"
                "`ndr sweep status|collect|resubmit <out>` work on it as on any sweep.\n");
    return {cmd, [o] { return runTable1(*o); }};
}

} // namespace ndrcli
