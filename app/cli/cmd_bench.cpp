// `ndr bench`: training steps/s and GFLOP/s per configuration, against Eigen's sgemm on the same shapes.
#include "commands.h"
#include "common.h"
#include "core/io/files.h"
#include "core/nn/isa.h"
#include "core/train/bench.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

namespace ndrcli {

namespace {

using json = nlohmann::ordered_json; // keys in the order written: the case first

struct BenchOptions {
    std::vector<std::string> cases;
    int runs = 5;
    double seconds = 2;
    std::string jsonFile;
    bool list = false;
};

json resultJson(const ndr::BenchResult& r) {
    const auto& c = r.config;
    return {{"case", c.name},
            {"dModel", c.model.dModel},
            {"heads", c.model.heads},
            {"dFF", c.model.dFF},
            {"steps", c.model.steps},
            {"batch", c.batchSize},
            {"threads", c.threads},
            {"positions", r.positions},
            {"rows", r.rows},
            {"paddedRows", c.paddedRows},
            {"stepsPerSecond", r.stepsPerSecond},
            {"medianStepsPerSecond", r.medianStepsPerSecond},
            {"flopsPerStep", r.flopsPerStep},
            {"gflops", r.gflops},
            {"gemmGflops", r.gemmGflops},
            {"fractionOfGemm", r.fractionOfGemm}};
}

int runBench(const BenchOptions& o) {
    const auto all = ndr::defaultBenchCases();
    if (o.list) {
        for (const auto& c : all)
            std::cout << c.name << "\n";
        return 0;
    }
    std::vector<ndr::BenchCase> chosen;
    for (const auto& name : o.cases) {
        const auto it = std::find_if(all.begin(), all.end(), [&](const auto& c) { return c.name == name; });
        if (it == all.end()) {
            std::string names;
            for (const auto& c : all)
                names += (names.empty() ? "\"" : ", \"") + c.name + "\"";
            throw CliError("--case \"" + name + "\": no such case; the cases are " + names, kExitUsage);
        }
        chosen.push_back(*it);
    }
    if (chosen.empty())
        chosen = all;

    // The level the numbers come from, and the others this CPU could run (NDR_ISA picks one).
    std::string levels;
    for (const auto& l : ndr::supportedLevels())
        levels += (levels.empty() ? "" : ", ") + l;
    std::printf(
        "engine: %s%s\n", ndr::describeLevel(ndr::engineLevel()).c_str(),
        ndr::engineDispatches()
            ? (", chosen at start-up; this CPU runs " + levels + " (NDR_ISA=LEVEL for a lower one)").c_str()
            : "");
    // Rows are printed as each case finishes (a full bench takes minutes), so widths are fixed up front.
    size_t nameWidth = 4;
    for (const auto& c : chosen)
        nameWidth = std::max(nameWidth, c.name.size());
    const int w = int(nameWidth);
    std::printf("%-*s  %4s %3s %5s %5s %5s %3s  %5s  %9s  %15s  %8s  %8s  %8s\n", w, "case", "d", "H", "dff",
                "steps", "batch", "thr", "rows", "steps/s", "(min..max)", "GFLOP/s", "sgemm", "fraction");
    std::printf("%s\n", std::string(nameWidth + 99, '-').c_str());
    std::fflush(stdout);
    json results = json::array();
    for (const auto& c : chosen) {
        const ndr::BenchResult r = ndr::runBench(c, o.runs, o.seconds);
        const auto [lo, hi] = std::minmax_element(r.stepsPerSecond.begin(), r.stepsPerSecond.end());
        const std::string spread = r.stepsPerSecond.empty() ? "-" : fixed(*lo, 1) + ".." + fixed(*hi, 1);
        std::printf("%-*s  %4d %3d %5d %5d %5d %3d  %5.0f  %9.1f  %15s  %8.2f  %8.2f  %8.2f\n", w,
                    c.name.c_str(), c.model.dModel, c.model.heads, c.model.dFF, c.model.steps, c.batchSize,
                    c.threads, r.rows, r.medianStepsPerSecond, ("(" + spread + ")").c_str(), r.gflops,
                    r.gemmGflops, r.fractionOfGemm);
        std::fflush(stdout);
        results.push_back(resultJson(r));
    }
    if (!o.jsonFile.empty()) {
        const json doc = {{"format", "ndr-studio-bench"}, {"version", 1},
                          {"level", ndr::engineLevel()},  {"runs", o.runs},
                          {"secondsPerRun", o.seconds},   {"results", results}};
        try {
            ndr::writeFileAtomic(o.jsonFile, doc.dump(2) + "\n");
        } catch (const std::exception& e) {
            throw CliError(std::string("cannot write the results: ") + e.what());
        }
        std::cout << "Saved " << o.jsonFile << std::endl;
    }
    return 0;
}

} // namespace

Command addBenchCommand(CLI::App& root) {
    auto opts = std::make_shared<BenchOptions>();
    auto* cmd = root.add_subcommand("bench", "Measure training steps/s and GFLOP/s per configuration");
    cmd->add_option("--case", opts->cases, "Case to run (repeatable; default: all, see --list)")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    cmd->add_option("--runs", opts->runs, "Timed runs per case; the median is reported")->check(positive());
    cmd->add_option("--seconds", opts->seconds, "Seconds per timed run")->check(positive());
    cmd->add_option("--json", opts->jsonFile, "Also write the results to this JSON file");
    cmd->add_flag("--list", opts->list, "Print the case names and exit");
    cmd->footer(
        "sgemm is Eigen's matrix product alone on the step's product shapes; fraction = GFLOP/s / sgemm.\n");
    return {cmd, [opts] { return runBench(*opts); }};
}

} // namespace ndrcli
