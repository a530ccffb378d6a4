// Helpers shared by the `ndr` commands: the error type that carries an exit status, loading a run
// configuration from a preset or a file, loading a saved run with its weights, and small formatting.
#pragma once

#include "core/config/config.h"
#include "core/io/files.h"
#include "core/records/records.h"
#include "core/task/task.h"
#include "core/train/run.h"
#include "core/train/trainer.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ndrcli {

namespace fs = std::filesystem;

// Exit statuses of the tool.
constexpr int kExitError = 1;         // a file, a configuration or the training failed
constexpr int kExitUsage = 2;         // bad command-line values or a bad expression
constexpr int kExitInterrupted = 130; // Ctrl-C: what was trained is saved, but the run is incomplete

// An error the command reports as one message on stderr; main() turns it into the exit status.
class CliError : public std::runtime_error {
public:
    explicit CliError(const std::string& message, int exitCode = kExitError)
        : std::runtime_error(message), code(exitCode) {}
    int code;
};

// Command-line values that override a loaded configuration; unset ones leave it as it is.
struct ConfigOverrides {
    std::optional<uint64_t> seed; // both task.seed and train.seed
    std::optional<int> steps, evalInterval, threads;
};

// The run configuration from `--preset NAME` or `--config FILE`, with overrides applied and validated.
// Throws CliError naming every problem.
ndr::RunConfig loadRunConfig(const std::string& preset, const std::string& configFile,
                             const ConfigOverrides& overrides);

// Which weights of a checkpoint a command uses: the final ones, or those of the best validation.
enum class WeightsChoice { Final, Best };
// "final" or "best", as `--weights` and the commands' output spell it.
const char* weightsName(WeightsChoice weights);
// `--weights final|best` on `cmd`, read into `out`.
void addWeightsOption(CLI::App* cmd, WeightsChoice& out, const std::string& description);

// A saved run with one trainer per model holding the saved weights, ready to evaluate or trace.
struct LoadedRun {
    fs::path file;
    std::unique_ptr<ndr::Run> run;
    ndr::RunRecord record;                  // as saved
    const ndr::Task* task = nullptr;        // the run's task
    std::vector<ndr::Trainer*> trainers;    // (models) null for a model not loaded
    std::vector<WeightsChoice> weightsUsed; // (models) the weights loaded
};

// Loads RUN.json, rebuilds its task with the saved tables and each model's checkpoint (path relative to
// the run file). A checkpoint without best weights falls back to the final ones (weightsUsed says so). Only
// models whose index is in `only` are loaded when it is non-empty.
LoadedRun loadRun(const fs::path& runFile, WeightsChoice weights, const std::vector<int>& only = {});

// Local time as YYYYmmdd-HHMMSS.
std::string timestamp();
// Refuses to overwrite an earlier run: throws CliError if `dir` already holds a run.json.
void checkOutputDir(const fs::path& dir);

// Fixed-point text of x, or "-" when x is NaN.
std::string fixed(double x, int decimals);
// The task's chance accuracy as a table header gives it: "0.100", or "1e-09" where three decimals would
// read 0.
std::string chanceText(const ndr::TaskConfig& task);
// "42s", "3m05s", "1h02m".
std::string duration(double seconds);
// Mean and sample standard deviation (n-1; 0 for one value) of xs.
std::pair<double, double> meanStd(const std::vector<double>& xs);

} // namespace ndrcli
