// A sweep is a folder with a plan: `sweep.json` lists every run (its name, its folder inside the sweep
// folder and its full configuration), so that any runner (this process, a pool of processes, a Slurm
// job array) can execute one entry on its own (docs/design.md §7).
#pragma once

#include "core/config/config.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace ndr {

struct SweepEntry {
    std::string name;  // "seed-2", or "ndr/forward/seed-2" in a table1 plan
    std::string dir;   // the run's folder, relative to the sweep folder (a plain relative path)
    std::string group; // runs of one group are summarised together ("" in a seed sweep)
    RunConfig config;  // everything the run needs, seed included
    bool operator==(const SweepEntry&) const = default;
};

// A sweep over seeds of one configuration, or the rows of Table 1 in both orders over seeds.
enum class SweepKind { Seeds, Table1 };
// "seeds" or "table1", as sweep.json and summary.json spell it.
const char* sweepKindName(SweepKind kind);

struct SweepPlan {
    static constexpr const char* kFormat = "ndr-studio-sweep-plan";
    static constexpr int kVersion = 1;
    static constexpr const char* kFileName = "sweep.json";
    SweepKind kind = SweepKind::Seeds;
    std::vector<SweepEntry> runs;
    bool operator==(const SweepPlan&) const = default;
};

std::string sweepPlanToText(const SweepPlan& plan);
// The plan held in `text`; FileError (without a file name) naming the entry and field that is wrong:
// a bad configuration, a folder that is absolute, climbs out with "..", holds a control character,
// repeats another entry's or lies inside it (or it inside this one).
SweepPlan sweepPlanFromText(std::string_view text);
// Reads `folder`/sweep.json; FileError naming the file when the folder holds no plan or a bad one.
SweepPlan loadSweepPlan(const std::filesystem::path& folder);
// Writes `folder`/sweep.json atomically (the folder must exist).
void saveSweepPlan(const std::filesystem::path& folder, const SweepPlan& plan);

} // namespace ndr
