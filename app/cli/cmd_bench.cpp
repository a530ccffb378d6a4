// `ndr bench`: training steps/s, GFLOP/s and peak memory per configuration, against Eigen's sgemm on the
// same shapes; with --to-accuracy, the time a preset's NDR takes to reach an accuracy on its test depths.
#include "commands.h"
#include "common.h"
#include "core/config/model_kind.h"
#include "core/io/files.h"
#include "core/nn/isa.h"
#include "core/train/bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace ndrcli {

namespace {

using json = nlohmann::ordered_json; // keys in the order written: the case first

struct BenchOptions {
    std::vector<std::string> cases;
    int runs = 5;
    double seconds = 2;
    std::string jsonFile;
    bool list = false;
    bool toAccuracy = false;
    std::vector<std::string> presets; // with toAccuracy
    std::string seeds = "3";          // with toAccuracy, as ndr::parseSeeds reads it
    double target = 0.99;
    int threads = 0; // with toAccuracy; 0: not given (one thread)
};

json resultJson(const ndr::BenchResult& r) {
    const auto& c = r.config;
    return {{"case", c.name},
            {"dModel", ndr::intFieldOf(c.model, "dModel", 0)},
            {"heads", ndr::intFieldOf(c.model, "heads", 0)},
            {"dFF", ndr::intFieldOf(c.model, "dFF", 0)},
            {"steps", ndr::intFieldOf(c.model, "steps", 0)},
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
            {"gemmGflopsPerRun", r.gemmPerRun},
            {"fractionPerRun", r.fractionPerRun},
            {"fractionOfGemm", r.fractionOfGemm},
            {"peakMemoryMiB", r.peakMemoryMiB}};
}

json accuracyJson(const ndr::AccuracyResult& r) {
    return {{"preset", r.config.preset},
            {"seed", r.seed},
            {"target", r.target},
            {"evalInterval", r.config.evalInterval},
            {"maxSteps", r.config.maxSteps},
            {"threads", r.config.threads},
            {"reached", r.reached},
            {"step", r.step},
            {"testAccuracy", r.testAccuracy},
            {"seconds", r.seconds},
            {"evalSeconds", r.evalSeconds},
            {"peakMemoryMiB", r.peakMemoryMiB}};
}

void saveJson(const std::string& file, const json& doc) {
    try {
        ndr::writeFileAtomic(file, doc.dump(2) + "\n");
    } catch (const std::exception& e) {
        throw CliError(std::string("cannot write the results: ") + e.what());
    }
    std::cout << "Saved " << file << std::endl;
}

// The median of the seeds' times, a seed that never reached the target counting as slower than every
// other; infinity when that puts an unreached seed in the middle.
double medianSeconds(const std::vector<ndr::AccuracyResult>& rs) {
    std::vector<double> t;
    for (const auto& r : rs)
        t.push_back(r.reached ? r.seconds : std::numeric_limits<double>::infinity());
    std::sort(t.begin(), t.end());
    if (t.empty())
        return std::numeric_limits<double>::infinity();
    const size_t n = t.size();
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

int runToAccuracy(const BenchOptions& o) {
    const auto all = ndr::defaultAccuracyCases();
    std::vector<ndr::AccuracyCase> chosen;
    for (const auto& name : o.presets) {
        const auto it = std::find_if(all.begin(), all.end(), [&](const auto& c) { return c.preset == name; });
        if (it == all.end()) {
            std::string names;
            for (const auto& c : all)
                names += (names.empty() ? "" : ", ") + c.preset;
            throw CliError("--preset " + name + ": time to accuracy is measured for " + names, kExitUsage);
        }
        chosen.push_back(*it);
    }
    if (chosen.empty())
        chosen = all;
    const std::vector<uint64_t> seeds = ndr::parseSeeds(o.seeds);
    const int threads = std::max(1, o.threads);
    for (auto& c : chosen)
        c.threads = threads;
    std::printf("engine: %s; the preset's NDR alone, %d thread%s, until the mean test accuracy >= %g\n",
                ndr::describeLevel(ndr::engineLevel()).c_str(), threads, threads == 1 ? "" : "s", o.target);
    std::printf("%-14s %4s  %8s  %6s  %8s  %8s  %6s  %8s\n", "preset", "seed", "reached", "step", "accuracy",
                "seconds", "eval", "peak MiB");
    std::printf("%s\n", std::string(75, '-').c_str());
    std::fflush(stdout);
    const bool tty = isatty(STDERR_FILENO) != 0; // progress on a terminal only
    json results = json::array(), medians = json::array();
    for (const auto& c : chosen) {
        std::vector<ndr::AccuracyResult> rs;
        for (const uint64_t seed : seeds) {
            const auto progress = [&](const ndr::AccuracyResult& r) {
                if (!tty)
                    return;
                std::fprintf(stderr, "\r%s seed %llu: step %d, accuracy %.3f, %.0f s   ", c.preset.c_str(),
                             (unsigned long long)seed, r.step, r.testAccuracy, r.seconds);
            };
            const ndr::AccuracyResult r = ndr::timeToAccuracy(c, seed, o.target, progress);
            if (tty)
                std::fprintf(stderr, "\r%s\r", std::string(60, ' ').c_str());
            std::printf("%-14s %4llu  %8s  %6d  %8.3f  %8.1f  %5.0f%%  %8.0f\n", c.preset.c_str(),
                        (unsigned long long)seed, r.reached ? "yes" : "no", r.step, r.testAccuracy, r.seconds,
                        r.seconds > 0 ? 100 * r.evalSeconds / r.seconds : 0.0, r.peakMemoryMiB);
            std::fflush(stdout);
            rs.push_back(r);
            results.push_back(accuracyJson(r));
        }
        const double m = medianSeconds(rs);
        if (std::isfinite(m))
            std::printf("%-14s median over %zu seeds: %.1f s\n", c.preset.c_str(), seeds.size(), m);
        else
            std::printf("%-14s median over %zu seeds: not reached within %d steps\n", c.preset.c_str(),
                        seeds.size(), c.maxSteps);
        medians.push_back(
            {{"preset", c.preset}, {"medianSeconds", std::isfinite(m) ? json(m) : json(nullptr)}});
    }
    if (!o.jsonFile.empty())
        saveJson(o.jsonFile, {{"format", "ndr-studio-time-to-accuracy"},
                              {"version", 1},
                              {"level", ndr::engineLevel()},
                              {"target", o.target},
                              {"results", results},
                              {"medians", medians}});
    return 0;
}

int runBench(const BenchOptions& o) {
    if (o.toAccuracy)
        return runToAccuracy(o);
    if (!o.presets.empty())
        throw CliError("--preset names a time-to-accuracy preset: give --to-accuracy as well", kExitUsage);
    if (o.threads != 0)
        throw CliError("--threads sets the time-to-accuracy model's threads (a case's are fixed): give "
                       "--to-accuracy as well",
                       kExitUsage);
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
    std::printf("%-*s  %4s %3s %5s %5s %5s %3s  %5s  %9s  %15s  %8s  %8s  %8s  %8s\n", w, "case", "d", "H",
                "dff", "steps", "batch", "thr", "rows", "steps/s", "(min..max)", "GFLOP/s", "sgemm",
                "fraction", "peak MiB");
    std::printf("%s\n", std::string(nameWidth + 109, '-').c_str());
    std::fflush(stdout);
    json results = json::array();
    for (const auto& c : chosen) {
        const ndr::BenchResult r = ndr::runBench(c, o.runs, o.seconds);
        const auto [lo, hi] = std::minmax_element(r.stepsPerSecond.begin(), r.stepsPerSecond.end());
        const std::string spread = r.stepsPerSecond.empty() ? "-" : fixed(*lo, 1) + ".." + fixed(*hi, 1);
        std::printf("%-*s  %4d %3d %5d %5d %5d %3d  %5.0f  %9.1f  %15s  %8.2f  %8.2f  %8.2f  %8.0f\n", w,
                    c.name.c_str(), int(ndr::intFieldOf(c.model, "dModel", 0)),
                    int(ndr::intFieldOf(c.model, "heads", 0)), int(ndr::intFieldOf(c.model, "dFF", 0)),
                    int(ndr::intFieldOf(c.model, "steps", 0)), c.batchSize, c.threads, r.rows,
                    r.medianStepsPerSecond, ("(" + spread + ")").c_str(), r.gflops, r.gemmGflops,
                    r.fractionOfGemm, r.peakMemoryMiB);
        std::fflush(stdout);
        results.push_back(resultJson(r));
    }
    if (!o.jsonFile.empty())
        saveJson(o.jsonFile, {{"format", "ndr-studio-bench"},
                              {"version", 1},
                              {"level", ndr::engineLevel()},
                              {"runs", o.runs},
                              {"secondsPerRun", o.seconds},
                              {"results", results}});
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
    cmd->add_flag("--to-accuracy", opts->toAccuracy,
                  "Instead: seconds (training and evaluations, one thread unless --threads) until the "
                  "preset's NDR first "
                  "reaches --target on its test depths, per seed and their median");
    cmd->add_option("--preset", opts->presets,
                    "With --to-accuracy: stub or paper-forward (repeatable; default both)")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    cmd->add_option("--seeds", opts->seeds,
                    "With --to-accuracy: N for seeds 1..N, or a list of seeds and ranges (11-15, 1,4,9-10)")
        ->capture_default_str()
        ->check(seedList());
    cmd->add_option("--target", opts->target, "With --to-accuracy: the mean test accuracy to reach")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1.0));
    cmd->add_option("--threads", opts->threads,
                    "With --to-accuracy: threads of the model, default 1 (a training step splits its batch "
                    "over them)")
        ->check(CLI::Range(1, 64));
    cmd->footer("sgemm is Eigen's matrix product alone on the step's product shapes, one pass after each\n"
                "training step, each side timed on its own;\n"
                "fraction = the median over the runs of the run's GFLOP/s / the run's sgemm rate.\n"
                "peak MiB is the process's peak resident memory while the case ran.\n");
    return {cmd, [opts] { return runBench(*opts); }};
}

} // namespace ndrcli
