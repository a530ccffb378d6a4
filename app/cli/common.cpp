// Configuration and run loading for the commands, with every failure turned into one clear CliError.
#include "common.h"

#include "serialize.h"

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
            throw CliError("invalid configuration (" + source + "): " + problems[0]);
        throw CliError("invalid configuration (" + source + "), " + std::to_string(problems.size()) +
                       " problems:" + joinLines(problems));
    }
    return config;
}

LoadedRun loadRun(const fs::path& runFile, const std::string& weights, const std::vector<int>& only) {
    LoadedRun run;
    run.file = runFile;
    try {
        run.record = ndr::loadRunRecord(runFile);
    } catch (const std::exception& e) {
        throw CliError(e.what());
    }
    const auto& rec = run.record;
    if (rec.models.size() != rec.config.models.size())
        throw CliError(runFile.string() + ": the run lists " + std::to_string(rec.models.size()) +
                       " model records for " + std::to_string(rec.config.models.size()) +
                       " configured models; the file is damaged");
    try {
        run.task = std::make_unique<ndr::CtlTask>(rec.config.task);
        run.task->setTables(rec.tables);
    } catch (const std::exception& e) {
        throw CliError(runFile.string() + ": " + e.what());
    }
    for (size_t i = 0; i < rec.models.size(); ++i) {
        const bool wanted = only.empty() || std::find(only.begin(), only.end(), int(i)) != only.end();
        if (!wanted) {
            run.trainers.emplace_back();
            run.weightsUsed.emplace_back();
            continue;
        }
        const auto& model = rec.models[i];
        if (model.checkpointFile.empty())
            throw CliError(runFile.string() + ": model " + model.config.name +
                           " has no checkpoint file; train the run again to get its weights");
        const fs::path ckptPath = runFile.parent_path() / model.checkpointFile;
        auto trainer = std::make_unique<ndr::Trainer>(rec.config, int(i), *run.task, rec.probe);
        std::string used = weights;
        try {
            const ndr::CheckpointData data = ndr::loadCheckpoint(ckptPath);
            auto& values = trainer->model().params().values();
            ndr::checkCheckpointMatches(data, rec.config.models[i], trainer->model().params().layout(),
                                        ckptPath);
            if (weights == "best" && data.bestParams.size() == values.size()) {
                values.assign(data.bestParams.begin(), data.bestParams.end());
            } else {
                values.assign(data.params.begin(), data.params.end());
                used = "final";
            }
        } catch (const std::exception& e) {
            throw CliError(e.what());
        }
        run.trainers.push_back(std::move(trainer));
        run.weightsUsed.push_back(used);
    }
    return run;
}

std::string fileStem(const std::string& modelName) {
    std::string s;
    for (unsigned char ch : modelName) {
        if (std::isalnum(ch)) {
            s += char(std::tolower(ch));
        } else if (!s.empty() && s.back() != '-') {
            s += '-';
        }
    }
    while (!s.empty() && s.back() == '-')
        s.pop_back();
    return s.empty() ? "model" : s;
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
    if (xs.empty())
        return {std::nan(""), std::nan("")};
    double sum = 0;
    for (double x : xs)
        sum += x;
    const double mean = sum / double(xs.size());
    if (xs.size() < 2)
        return {mean, 0.0};
    double sq = 0;
    for (double x : xs)
        sq += (x - mean) * (x - mean);
    return {mean, std::sqrt(sq / double(xs.size() - 1))};
}

} // namespace ndrcli
