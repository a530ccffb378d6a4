// The `ndr` subcommands. Each add* function declares its options on `root` and returns the action that
// runs once the command line has parsed; actions throw CliError for anything that goes wrong.
#pragma once

#include "core/train/sweep.h"

#include <CLI/CLI.hpp>
#include <functional>

namespace ndrcli {

// Accepts numbers above zero, with a message that says so (CLI11's own names the whole double range).
inline CLI::Validator positive() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            double v = 0;
            if (!CLI::detail::lexical_cast(text, v))
                return "expected a number, got " + text;
            if (!(v > 0))
                return "must be above 0, got " + text;
            return {};
        },
        "POSITIVE");
}

// Accepts a seed list as ndr::parseSeeds reads it: "5" is seeds 1..5, "11-15" and "1,4,9-10" name them.
inline CLI::Validator seedList() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            try {
                ndr::parseSeeds(text);
            } catch (const std::invalid_argument& e) {
                return e.what();
            }
            return {};
        },
        "SEEDS");
}

struct Command {
    CLI::App* app = nullptr;
    std::function<int()> run;
};

Command addTrainCommand(CLI::App& root);
Command addSweepCommand(CLI::App& root);
Command addEvalCommand(CLI::App& root);
Command addPredictCommand(CLI::App& root);
Command addBenchCommand(CLI::App& root);
Command addExportCommand(CLI::App& root);
Command addTable1Command(CLI::App& root);
Command addExportWeightsCommand(CLI::App& root);
Command addImportWeightsCommand(CLI::App& root);

// Prints the Table 1 report of a table1 sweep folder and saves table1.json and table1.csv beside the
// plan; returns how many runs it covers (cmd_table1.cpp; `ndr sweep collect` uses it too).
int printTableOne(const std::string& dir);

} // namespace ndrcli
