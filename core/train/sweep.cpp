// Sweep plans, run states read from sweep folders, and summaries (see sweep.h).
#include "core/train/sweep.h"

#include "core/io/files.h"
#include "core/task/task.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <unistd.h>

namespace ndr {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr uint64_t kMaxStatusBytes = 1u << 20;

const char* stateText(RunnerStatus::State s) {
    switch (s) {
    case RunnerStatus::State::Running:
        return "running";
    case RunnerStatus::State::Stopped:
        return "stopped";
    case RunnerStatus::State::Done:
        return "done";
    case RunnerStatus::State::Failed:
        return "failed";
    }
    return "running";
}

bool processExists(long long pid) {
    if (pid <= 0)
        return false;
    return ::kill(pid_t(pid), 0) == 0 || errno == EPERM;
}

bool finished(const RunRecord& record) {
    return !record.models.empty() &&
           std::all_of(record.models.begin(), record.models.end(),
                       [](const ModelRecord& m) { return m.status.state == ModelState::Finished; });
}

} // namespace

Spread spreadOf(const std::vector<double>& values, double target) {
    Spread s;
    s.n = int(values.size());
    if (values.empty()) {
        s.mean = s.std = std::nan("");
        return s;
    }
    double sum = 0;
    for (double x : values) {
        sum += x;
        s.reached += x >= target ? 1 : 0;
    }
    s.mean = sum / double(values.size());
    double sq = 0;
    for (double x : values)
        sq += (x - s.mean) * (x - s.mean);
    s.std = values.size() > 1 ? std::sqrt(sq / double(values.size() - 1)) : 0.0;
    return s;
}

std::vector<uint64_t> parseSeeds(const std::string& text) {
    constexpr uint64_t kMaxSeeds = 10000; // a sweep of more runs is a typo
    const auto number = [&](const std::string& part, const std::string& digits) {
        if (digits.empty() || digits.size() > 18 ||
            digits.find_first_not_of("0123456789") != std::string::npos)
            throw std::invalid_argument("seeds '" + text + "': '" + part +
                                        "' is not a seed or a range of seeds such as 11-15");
        return std::stoull(digits);
    };
    std::vector<uint64_t> seeds;
    const auto add = [&](uint64_t s, const std::string& part) {
        if (std::find(seeds.begin(), seeds.end(), s) != seeds.end())
            throw std::invalid_argument("seeds '" + text + "': seed " + std::to_string(s) +
                                        " is given twice");
        if (seeds.size() >= kMaxSeeds)
            throw std::invalid_argument("seeds '" + text + "': more than " + std::to_string(kMaxSeeds) +
                                        " seeds (at '" + part + "')");
        seeds.push_back(s);
    };
    if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) {
        const uint64_t n = number(text, text);
        if (n == 0)
            throw std::invalid_argument("seeds '0': give a count of at least 1, or a range such as 11-15");
        if (n > kMaxSeeds)
            throw std::invalid_argument("seeds '" + text + "': more than " + std::to_string(kMaxSeeds) +
                                        " seeds");
        for (uint64_t s = 1; s <= n; ++s)
            seeds.push_back(s);
        return seeds;
    }
    size_t start = 0;
    while (start <= text.size()) {
        const size_t comma = std::min(text.find(',', start), text.size());
        const std::string part = text.substr(start, comma - start);
        const size_t dash = part.find('-');
        if (dash == std::string::npos) {
            add(number(part, part), part);
        } else {
            const uint64_t lo = number(part, part.substr(0, dash)), hi = number(part, part.substr(dash + 1));
            if (hi < lo)
                throw std::invalid_argument("seeds '" + text + "': the range '" + part + "' runs backwards");
            if (hi - lo >= kMaxSeeds)
                throw std::invalid_argument("seeds '" + text + "': more than " + std::to_string(kMaxSeeds) +
                                            " seeds (at '" + part + "')");
            for (uint64_t s = lo; s <= hi; ++s)
                add(s, part);
        }
        start = comma + 1;
    }
    return seeds;
}

std::string seedsText(const std::vector<uint64_t>& seeds) {
    std::string out;
    for (size_t i = 0; i < seeds.size();) {
        size_t j = i;
        while (j + 1 < seeds.size() && seeds[j + 1] == seeds[j] + 1)
            ++j;
        out += (out.empty() ? "" : ",") + std::to_string(seeds[i]);
        if (j > i)
            out += "-" + std::to_string(seeds[j]);
        i = j + 1;
    }
    return out;
}

SweepPlan seedPlan(const RunConfig& base, const std::vector<uint64_t>& seeds) {
    SweepPlan plan;
    plan.kind = SweepKind::Seeds;
    for (const uint64_t s : seeds) {
        SweepEntry e;
        e.name = e.dir = "seed-" + std::to_string(s);
        e.config = base;
        e.config.task.seed = e.config.train.seed = s;
        plan.runs.push_back(std::move(e));
    }
    return plan;
}

void saveRunnerStatus(const fs::path& runDir, const RunnerStatus& s) {
    const json j = {{"state", stateText(s.state)},
                    {"host", s.host},
                    {"pid", s.pid},
                    {"job", s.job},
                    {"message", s.message}};
    writeFileAtomic(runDir / RunnerStatus::kFileName, j.dump(1) + "\n");
}

std::optional<RunnerStatus> loadRunnerStatus(const fs::path& runDir) {
    const fs::path file = runDir / RunnerStatus::kFileName;
    std::error_code ec;
    if (!fs::exists(file, ec))
        return std::nullopt;
    const std::string text = readFileBounded(file, kMaxStatusBytes);
    try {
        const json j = json::parse(text);
        RunnerStatus s;
        const std::string state = j.at("state").get<std::string>();
        if (state == "running")
            s.state = RunnerStatus::State::Running;
        else if (state == "stopped")
            s.state = RunnerStatus::State::Stopped;
        else if (state == "done")
            s.state = RunnerStatus::State::Done;
        else if (state == "failed")
            s.state = RunnerStatus::State::Failed;
        else
            throw std::runtime_error("state: expected running, stopped, done or failed, got \"" + state +
                                     "\"");
        s.host = j.at("host").get<std::string>();
        s.pid = j.at("pid").get<long long>();
        s.job = j.at("job").get<std::string>();
        s.message = j.at("message").get<std::string>();
        return s;
    } catch (const std::exception& e) {
        throw FileError(file.string() + ": " + e.what());
    }
}

const char* runStateName(RunState s) {
    switch (s) {
    case RunState::NotStarted:
        return "not started";
    case RunState::Running:
        return "running";
    case RunState::Interrupted:
        return "interrupted";
    case RunState::Failed:
        return "failed";
    case RunState::Done:
        return "done";
    }
    return "";
}

RunProgress runProgress(const fs::path& sweepDir, const SweepEntry& entry, const AliveFn& alive) {
    RunProgress p;
    const fs::path dir = sweepDir / entry.dir;
    p.totalSteps = entry.config.train.steps * int(entry.config.models.size());
    std::error_code ec;
    const bool hasRun = fs::exists(dir / "run.json", ec);
    if (hasRun) {
        try {
            const RunRecord record = loadRunRecord(dir / "run.json", RunFileParts::WithoutTraces);
            for (const auto& m : record.models)
                p.stepsDone += m.stepsDone;
            if (finished(record)) {
                p.state = RunState::Done;
                return p;
            }
        } catch (const std::exception& e) {
            p.detail = e.what(); // a damaged save: a runner starting over reports it
        }
    }
    std::optional<RunnerStatus> status;
    try {
        status = loadRunnerStatus(dir);
    } catch (const std::exception& e) {
        p.state = RunState::Failed;
        p.detail = e.what();
        return p;
    }
    if (status && status->state == RunnerStatus::State::Failed) {
        p.state = RunState::Failed;
        p.detail = status->message;
        return p;
    }
    if (status && status->state == RunnerStatus::State::Running) {
        std::optional<bool> live = alive ? alive(*status) : std::nullopt;
        if (!live)
            live = status->host != hostName() || processExists(status->pid);
        p.state = *live ? RunState::Running : RunState::Interrupted;
        p.detail =
            status->job.empty() ? status->host + " pid " + std::to_string(status->pid) : "job " + status->job;
        return p;
    }
    p.state = hasRun || (status && status->state == RunnerStatus::State::Stopped) ? RunState::Interrupted
                                                                                  : RunState::NotStarted;
    return p;
}

namespace {

GroupSummary emptyGroup(const std::string& group, const RunConfig& config) {
    GroupSummary s;
    s.group = group;
    s.config = config;
    const std::vector<int> depths = allDepthsOf(config.task);
    const auto empty = [&depths](const std::string& name) {
        ModelSummary m;
        m.name = name;
        m.depths = depths;
        m.perDepth.assign(depths.size(), {});
        return m;
    };
    for (const auto& m : config.models)
        s.models.push_back(empty(m.name));
    s.baseline = empty("most common answer");
    return s;
}

// Adds one run's value per depth to `to` (s.depths long, made so when empty): values[i] is of
// depths[i], matched by depth.
void addPerDepth(const ModelSummary& s, std::vector<std::vector<double>>& to, const std::vector<int>& depths,
                 const std::vector<double>& values) {
    to.resize(s.depths.size());
    for (size_t d = 0; d < s.depths.size(); ++d) {
        const auto it = std::find(depths.begin(), depths.end(), s.depths[d]);
        if (it != depths.end() && size_t(it - depths.begin()) < values.size())
            to[d].push_back(values[size_t(it - depths.begin())]);
    }
}

// Adds a halting evaluation's mean steps run and every-step accuracy per depth.
void addHalting(ModelSummary& s, const EvalRecord& e) {
    if (e.haltCounts.empty())
        return;
    std::vector<double> steps;
    for (size_t d = 0; d < e.haltCounts.size(); ++d)
        steps.push_back(e.meanHaltStep(d));
    addPerDepth(s, s.haltSteps, e.depths, steps);
    addPerDepth(s, s.everyStep, e.depths, e.everyStepAccuracy);
}

// Adds an evaluation's split means per root operation; the group's first run with operations names
// them, and a run with other operations adds none.
void addOperations(ModelSummary& s, const EvalRecord& e, const TaskConfig& task) {
    if (e.operations.empty())
        return;
    if (s.operations.empty()) {
        s.operations = e.operations;
        s.operationIid.assign(e.operations.size(), {});
        s.operationTest.assign(e.operations.size(), {});
    }
    if (e.operations != s.operations)
        return;
    for (size_t o = 0; o < e.operations.size(); ++o) {
        // A split without an example of the operation adds nothing.
        if (const double iid = operationSplitMean(e, o, task, Split::Train); !std::isnan(iid))
            s.operationIid[o].push_back(iid);
        if (const double test = operationSplitMean(e, o, task, Split::Test); !std::isnan(test))
            s.operationTest[o].push_back(test);
    }
}

// Adds a finished run's figures at its best evaluation; FileError when its models do not match.
void addRun(GroupSummary& g, const RunRecord& record, const std::string& where) {
    if (record.models.size() != g.models.size())
        throw FileError(where + ": has " + std::to_string(record.models.size()) + " models, its group " +
                        std::to_string(g.models.size()));
    g.seeds.push_back(record.config.train.seed);
    for (size_t m = 0; m < record.models.size(); ++m) {
        const ModelRecord& rec = record.models[m];
        ModelSummary& ms = g.models[m];
        if (rec.bestEval < 0 || rec.bestEval >= int(rec.history.size()))
            continue;
        const EvalRecord& best = rec.history[size_t(rec.bestEval)];
        addPerDepth(ms, ms.perDepth, best.depths, best.accuracy);
        ms.iid.push_back(best.trainAccuracy);
        ms.test.push_back(best.testAccuracy);
        ms.seeds.push_back(record.config.train.seed);
        addOperations(ms, best, record.config.task);
        addHalting(ms, best);
    }
    // Every evaluation of a run has the same baseline: that of its sets.
    for (const ModelRecord& rec : record.models) {
        if (rec.history.empty() || rec.history.back().baseline.empty())
            continue;
        const EvalRecord& e = rec.history.back();
        addPerDepth(g.baseline, g.baseline.perDepth, e.depths, e.baseline);
        g.baseline.iid.push_back(splitMean(record.config.task, e.depths, e.baseline, Split::Train));
        g.baseline.test.push_back(splitMean(record.config.task, e.depths, e.baseline, Split::Test));
        break;
    }
}

} // namespace

GroupSummary summariseRuns(const std::string& group, const std::vector<RunRecord>& runs) {
    if (runs.empty())
        return {};
    GroupSummary g = emptyGroup(group, runs.front().config);
    g.planned = int(runs.size());
    for (size_t i = 0; i < runs.size(); ++i)
        addRun(g, runs[i], "run " + std::to_string(i + 1));
    return g;
}

std::vector<GroupSummary> summariseSweep(const fs::path& sweepDir, const SweepPlan& plan) {
    std::vector<GroupSummary> groups;
    for (const SweepEntry& e : plan.runs) {
        auto g =
            std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.group == e.group; });
        if (g == groups.end()) {
            groups.push_back(emptyGroup(e.group, e.config));
            g = groups.end() - 1;
        }
        ++g->planned;
        if (runProgress(sweepDir, e).state != RunState::Done)
            continue;
        const fs::path file = sweepDir / e.dir / "run.json";
        addRun(*g, loadRunRecord(file, RunFileParts::WithoutTraces), file.string());
    }
    return groups;
}

} // namespace ndr
