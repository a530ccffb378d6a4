// Configuration and run loading for the commands, with every failure turned into one clear CliError.
#include "common.h"

#include "core/io/serialize.h"
#include "core/train/sweep.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <ctime>
#include <iomanip>
#include <sstream>

namespace ndrcli {

namespace {

// Config files are small; anything bigger is a wrong path, not a config.
constexpr uint64_t kMaxConfigBytes = 4u << 20;

std::string joinLines(const std::vector<std::string>& lines) {
    std::string s;
    for (const auto& l : lines)
        s += "\n  " + l;
    return s;
}

} // namespace

ndr::RunConfig loadRunConfig(const std::string& preset, const std::string& configFile,
                             const ConfigOverrides& overrides) {
    ndr::RunConfig config;
    if (!configFile.empty()) {
        std::string text;
        try {
            text = ndr::readFileBounded(configFile, kMaxConfigBytes);
        } catch (const std::exception& e) {
            throw CliError(e.what());
        }
        try {
            config = ndr::runConfigFromJson(text);
        } catch (const std::exception& e) {
            // The core lists one problem per line; more than one get a count and an indented list.
            std::vector<std::string> problems;
            std::istringstream lines(e.what());
            for (std::string line; std::getline(lines, line);)
                if (!line.empty())
                    problems.push_back(line);
            if (problems.size() <= 1)
                throw CliError(configFile + ": " + e.what());
            throw CliError(configFile + ": " + std::to_string(problems.size()) +
                           " problems:" + joinLines(problems));
        }
    } else {
        try {
            config = ndr::presetConfig(preset);
        } catch (const std::exception& e) {
            throw CliError(e.what(), kExitUsage);
        }
    }
    if (overrides.seed)
        config.task.seed = config.train.seed = *overrides.seed;
    if (overrides.steps)
        config.train.steps = *overrides.steps;
    if (overrides.evalInterval)
        config.train.evalInterval = *overrides.evalInterval;
    if (overrides.threads)
        config.train.threads = *overrides.threads;
    const auto problems = ndr::validate(config);
    if (!problems.empty()) {
        const std::string source = configFile.empty() ? "preset " + preset : configFile;
        if (problems.size() == 1)
            throw CliError("invalid configuration (" + source + "): " + problems[0].text());
        throw CliError("invalid configuration (" + source + "), " + std::to_string(problems.size()) +
                       " problems:" + joinLines(ndr::problemTexts(problems)));
    }
    return config;
}

const char* weightsName(WeightsChoice weights) {
    return weights == WeightsChoice::Best ? "best" : "final";
}

void addWeightsOption(CLI::App* cmd, WeightsChoice& out, const std::string& description) {
    cmd->add_option_function<std::string>(
           "--weights",
           [&out](const std::string& name) {
               out = name == weightsName(WeightsChoice::Best) ? WeightsChoice::Best : WeightsChoice::Final;
           },
           description)
        ->check(CLI::IsMember({weightsName(WeightsChoice::Final), weightsName(WeightsChoice::Best)}));
}

LoadedRun loadRun(const fs::path& runFile, WeightsChoice weights, const std::vector<int>& only) {
    LoadedRun out;
    out.file = runFile;
    try {
        out.run = ndr::Run::open(runFile, only);
    } catch (const std::exception& e) {
        throw CliError(e.what());
    }
    out.record = out.run->record();
    out.task = &out.run->task();
    for (int i = 0; i < out.run->modelCount(); ++i) {
        const bool wanted = only.empty() || std::find(only.begin(), only.end(), i) != only.end();
        if (!wanted) {
            out.trainers.push_back(nullptr);
            out.weightsUsed.push_back(WeightsChoice::Final);
            continue;
        }
        ndr::Trainer& t = out.run->trainer(i);
        out.trainers.push_back(&t);
        out.weightsUsed.push_back(weights == WeightsChoice::Best && t.useBestWeights()
                                      ? WeightsChoice::Best
                                      : WeightsChoice::Final);
    }
    return out;
}

std::string timestamp() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm local{};
    localtime_r(&now, &local);
    std::ostringstream os;
    os << std::put_time(&local, "%Y%m%d-%H%M%S");
    return os.str();
}

void checkOutputDir(const fs::path& dir) {
    std::error_code ec;
    if (fs::exists(dir / "run.json", ec))
        throw CliError((dir / "run.json").string() +
                       " already exists; choose another --out directory or remove the old run");
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        throw CliError(dir.string() + " exists and is not a directory; choose another --out");
}

std::string fixed(double x, int decimals) {
    if (std::isnan(x))
        return "-";
    std::ostringstream os;
    os << std::fixed << std::setprecision(decimals) << x;
    return os.str();
}

std::string chanceText(const ndr::TaskConfig& task) {
    const double chance = ndr::chanceAccuracyOf(task);
    if (chance >= 0.0005)
        return fixed(chance, 3);
    std::ostringstream os;
    os << std::setprecision(1) << chance;
    return os.str();
}

std::string duration(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0)
        return "-";
    const long s = std::lround(seconds);
    std::ostringstream os;
    if (seconds < 60) {
        os << std::fixed << std::setprecision(seconds < 10 ? 1 : 0) << seconds << "s";
    } else if (s < 3600) {
        os << s / 60 << "m" << std::setw(2) << std::setfill('0') << s % 60 << "s";
    } else {
        os << s / 3600 << "h" << std::setw(2) << std::setfill('0') << (s % 3600) / 60 << "m";
    }
    return os.str();
}

std::pair<double, double> meanStd(const std::vector<double>& xs) {
    const ndr::Spread s = ndr::spreadOf(xs);
    return {s.mean, s.std};
}

} // namespace ndrcli
