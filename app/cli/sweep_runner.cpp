// Executing sweep plans locally or on Slurm, and reading back their state (see sweep_runner.h).
#include "sweep_runner.h"

#include "commands.h"

#include "core/train/sweep.h"
#include "process.h"
#include "slurm.h"
#include "training.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace ndrcli {

namespace {

fs::path logFile(const fs::path& dir, int index) {
    return dir / "logs" / (std::to_string(index) + ".log");
}

std::string lastLine(const fs::path& file) {
    std::ifstream in(file);
    std::string line, last;
    while (std::getline(in, line))
        if (line.find_first_not_of(" \t\r") != std::string::npos)
            last = line;
    return last;
}

// --- Local ---

// Executes one entry in this process. The caller holds the InterruptGuard.
int executeEntry(const fs::path& dir, const ndr::SweepPlan& plan, int index, bool quiet, int autosaveEvery) {
    const ndr::SweepEntry& entry = plan.runs[size_t(index)];
    const fs::path runDir = dir / entry.dir;
    if (ndr::runProgress(dir, entry).state == ndr::RunState::Done) {
        std::cerr << entry.name << ": already done" << std::endl;
        return 0;
    }
    std::error_code ec;
    fs::create_directories(runDir, ec);
    if (ec)
        throw CliError("cannot create " + runDir.string() + ": " + ec.message());
    // Another runner of this entry (a second `sweep run-one`) is refused before it touches its status.
    const ndr::RunFileLock lock(runDir / "run.json");
    ndr::RunnerStatus status;
    status.host = ndr::hostName();
    status.pid = ::getpid();
    if (const char* job = std::getenv("SLURM_ARRAY_JOB_ID"))
        status.job = std::string(job) + "_" +
                     (std::getenv("SLURM_ARRAY_TASK_ID") ? std::getenv("SLURM_ARRAY_TASK_ID") : "");
    ndr::saveRunnerStatus(runDir, status);
    try {
        std::unique_ptr<ndr::Run> run;
        if (fs::exists(runDir / "run.json", ec)) {
            run = ndr::Run::open(runDir / "run.json");
            if (!(run->config() == entry.config))
                throw CliError((runDir / "run.json").string() +
                               " was trained with another configuration than "
                               "the plan's entry " +
                               std::to_string(index) + "; move it away to start over");
            std::cerr << entry.name << ": resuming from its latest save" << std::endl;
        } else {
            run = std::make_unique<ndr::Run>(entry.config);
        }
        if (!quiet)
            announce(entry.config, runDir, "[" + entry.name + "] ");
        const TrainedRun trained = trainAndSave(*run, runDir, quiet, autosaveEvery);
        std::string problem;
        for (const auto& m : trained.record.models)
            if (m.status.state != ndr::ModelState::Finished && problem.empty())
                problem = m.config.name + " " + ndr::statusText(m.status);
        if (trained.interrupted) {
            status.state = ndr::RunnerStatus::State::Stopped;
            ndr::saveRunnerStatus(runDir, status);
            return kExitInterrupted;
        }
        status.state = problem.empty() ? ndr::RunnerStatus::State::Done : ndr::RunnerStatus::State::Failed;
        status.message = problem;
        ndr::saveRunnerStatus(runDir, status);
        std::cerr << entry.name << ": " << (problem.empty() ? "done" : problem) << std::endl;
        return problem.empty() ? 0 : kExitError;
    } catch (const std::exception& e) {
        status.state = ndr::RunnerStatus::State::Failed;
        status.message = e.what();
        ndr::saveRunnerStatus(runDir, status);
        throw;
    }
}

// Runs the entries as child processes `ndr sweep run-one`, `jobs` at a time, each logging to logs/<i>.log.
int runChildren(const fs::path& dir, const ndr::SweepPlan& plan, const std::vector<int>& indices, int jobs) {
    std::error_code ec;
    fs::create_directories(dir / "logs", ec);
    const std::string exe = selfExe();
    std::map<pid_t, int> running;
    size_t next = 0;
    int firstFailure = 0;
    auto launch = [&](int index) {
        const std::string log = logFile(dir, index).string();
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        posix_spawn_file_actions_adddup2(&actions, 1, 2);
        std::vector<std::string> argv = {exe,       "sweep",      "run-one",
                                         "--quiet", dir.string(), std::to_string(index)};
        std::vector<char*> args;
        for (auto& a : argv)
            args.push_back(a.data());
        args.push_back(nullptr);
        pid_t pid = 0;
        const int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, args.data(), environ);
        posix_spawn_file_actions_destroy(&actions);
        if (rc != 0)
            throw CliError("cannot start " + exe + " for entry " + std::to_string(index));
        running[pid] = index;
        std::cerr << plan.runs[size_t(index)].name << ": started (log " << log << ")" << std::endl;
    };
    bool forwarded = false;
    while (next < indices.size() || !running.empty()) {
        while (!stopRequested() && next < indices.size() && int(running.size()) < jobs)
            launch(indices[next++]);
        if (stopRequested() && !forwarded) {
            for (const auto& [pid, index] : running)
                ::kill(pid, SIGTERM); // each saves what it trained and stops
            forwarded = true;
        }
        if (running.empty())
            break;
        int status = 0;
        const pid_t pid = ::waitpid(-1, &status, 0);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        const auto it = running.find(pid);
        if (it == running.end())
            continue;
        const int index = it->second;
        running.erase(it);
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        const std::string& name = plan.runs[size_t(index)].name;
        if (code == 0)
            std::cerr << name << ": done" << std::endl;
        else {
            std::cerr << name << ": exit status " << code << ": " << lastLine(logFile(dir, index))
                      << std::endl;
            if (!firstFailure)
                firstFailure = code;
        }
    }
    return stopRequested() ? kExitInterrupted : firstFailure;
}

ndr::SweepPlan loadPlanOrFail(const fs::path& dir) {
    try {
        return ndr::loadSweepPlan(dir);
    } catch (const std::exception& e) {
        throw CliError(e.what());
    }
}

struct EntryState {
    ndr::RunProgress progress;
    std::string queued; // the Slurm state of its array task ("PENDING", ...), "" when not queued
};

std::vector<EntryState> entryStates(const fs::path& dir, const ndr::SweepPlan& plan) {
    const auto tasks = queuedTasks(dir);
    const ndr::AliveFn alive = [&](const ndr::RunnerStatus& s) -> std::optional<bool> {
        if (s.job.empty() || !tasks)
            return std::nullopt;
        const auto cut = s.job.find('_');
        if (cut == std::string::npos)
            return std::nullopt;
        try {
            return tasks->count(std::stoi(s.job.substr(cut + 1))) > 0;
        } catch (const std::exception&) {
            return std::nullopt;
        }
    };
    std::vector<EntryState> out;
    for (size_t i = 0; i < plan.runs.size(); ++i) {
        EntryState e;
        e.progress = ndr::runProgress(dir, plan.runs[i], alive);
        if (tasks && e.progress.state != ndr::RunState::Done && e.progress.state != ndr::RunState::Running)
            if (const auto it = tasks->find(int(i)); it != tasks->end())
                e.queued = it->second;
        out.push_back(e);
    }
    return out;
}

} // namespace

void createPlanFolder(const fs::path& dir, const ndr::SweepPlan& plan) {
    std::error_code ec;
    if (fs::exists(dir / ndr::SweepPlan::kFileName, ec))
        throw CliError(dir.string() + " already holds a sweep; see `ndr sweep status " + dir.string() +
                       "`, or choose another --out");
    for (const auto& e : plan.runs)
        checkOutputDir(dir / e.dir);
    fs::create_directories(dir, ec);
    if (ec)
        throw CliError("cannot create the sweep folder " + dir.string() + ": " + ec.message());
    try {
        ndr::saveSweepPlan(dir, plan);
    } catch (const std::exception& e) {
        throw CliError(e.what());
    }
}

int runPlan(const fs::path& dir, const ndr::SweepPlan& plan, const EngineOptions& engine, bool quiet,
            int autosaveEvery, const std::vector<int>& indices) {
    if (engine.engine == Engine::Slurm)
        return submitArray(dir, plan, engine, indices);
    std::vector<int> todo;
    int done = 0;
    for (size_t i = 0; i < plan.runs.size(); ++i) {
        if (!indices.empty() && std::find(indices.begin(), indices.end(), int(i)) == indices.end())
            continue;
        // A finished run is never trained again: skip it here rather than start a process for it.
        if (ndr::runProgress(dir, plan.runs[i]).state == ndr::RunState::Done)
            ++done;
        else
            todo.push_back(int(i));
    }
    if (done > 0)
        std::cerr << done << (done == 1 ? " run is" : " runs are") << " already done" << std::endl;
    InterruptGuard guard;
    if (engine.jobs > 1)
        return runChildren(dir, plan, todo, engine.jobs);
    int firstFailure = 0;
    for (int i : todo) {
        if (stopRequested())
            return kExitInterrupted;
        int code = 0;
        try {
            code = executeEntry(dir, plan, i, quiet, autosaveEvery);
        } catch (const std::exception& e) {
            std::cerr << plan.runs[size_t(i)].name << ": " << e.what() << std::endl;
            code = kExitError;
        }
        if (code == kExitInterrupted)
            return code;
        if (code && !firstFailure)
            firstFailure = code;
    }
    return firstFailure;
}

int runOneEntry(const std::string& dirText, int index, bool quiet) {
    const fs::path dir(dirText);
    const ndr::SweepPlan plan = loadPlanOrFail(dir);
    if (index < 0 || size_t(index) >= plan.runs.size())
        throw CliError("index " + std::to_string(index) + " is outside the plan: it has " +
                           std::to_string(plan.runs.size()) + " runs (0.." +
                           std::to_string(plan.runs.size() - 1) + ")",
                       kExitUsage);
    InterruptGuard guard;
    return executeEntry(dir, plan, index, quiet, 1);
}

int printStatus(const std::string& dirText) {
    const fs::path dir(dirText);
    const ndr::SweepPlan plan = loadPlanOrFail(dir);
    const auto states = entryStates(dir, plan);
    std::map<std::string, int> counts;
    std::vector<std::string> lines;
    for (size_t i = 0; i < states.size(); ++i) {
        const auto& s = states[i];
        const std::string name = plan.runs[i].name + " (" + std::to_string(i) + ")";
        std::string state = s.queued.empty() ? ndr::runStateName(s.progress.state) : "queued";
        ++counts[state];
        std::string line = "  " + name + ": " + state;
        if (s.progress.state == ndr::RunState::Failed) {
            std::string why = lastLine(logFile(dir, int(i)));
            if (why.empty())
                why = s.progress.detail;
            line += ": " + why;
        } else if (s.progress.state == ndr::RunState::Running ||
                   s.progress.state == ndr::RunState::Interrupted) {
            line += ", " + std::to_string(s.progress.stepsDone) + "/" +
                    std::to_string(s.progress.totalSteps) + " steps saved" +
                    (s.progress.detail.empty() ? "" : " (" + s.progress.detail + ")");
        } else if (!s.queued.empty()) {
            line += " (" + s.queued + ")";
        }
        lines.push_back(line);
    }
    std::cout << dir.string() << ": " << plan.runs.size() << " runs:";
    bool first = true;
    for (const char* key : {"done", "running", "queued", "interrupted", "failed", "not started"}) {
        std::cout << (first ? " " : ", ") << counts[key] << " " << key;
        first = false;
    }
    std::cout << "\n";
    for (const auto& l : lines)
        std::cout << l << "\n";
    return 0;
}

int resubmitUnfinished(const std::string& dirText, const EngineOptions& engine, bool quiet) {
    const fs::path dir(dirText);
    const ndr::SweepPlan plan = loadPlanOrFail(dir);
    EngineOptions chosen = engine;
    std::error_code ec;
    if (!engine.engineGiven && fs::exists(dir / kSbatchFile, ec))
        chosen.engine = Engine::Slurm; // the sweep was submitted to Slurm: submit there again
    checkEngine(chosen);
    const auto states = entryStates(dir, plan);
    std::vector<int> todo;
    for (size_t i = 0; i < states.size(); ++i) {
        const auto state = states[i].progress.state;
        if (states[i].queued.empty() && state != ndr::RunState::Done && state != ndr::RunState::Running)
            todo.push_back(int(i));
    }
    if (todo.empty()) {
        std::cout << "Nothing to resubmit: every run is done, running or queued." << std::endl;
        return 0;
    }
    std::cout << "Resubmitting " << todo.size() << " of " << plan.runs.size() << " runs" << std::endl;
    return runPlan(dir, plan, chosen, quiet, 1, todo);
}

CLI::Option* addEngineOptions(CLI::App* cmd, EngineOptions& e) {
    auto* engine = cmd->add_option("--engine", e.engine,
                                   "Where the runs execute: local (this machine) or slurm (a job array)")
                       ->transform(CLI::CheckedTransformer(std::map<std::string, Engine>{
                           {"local", Engine::Local}, {"slurm", Engine::Slurm}}));
    cmd->add_option("--jobs", e.jobs, "local: how many runs at once (each in its own process when above 1)")
        ->check(positive());
    cmd->add_option("--max-parallel", e.maxParallel,
                    "slurm: at most this many array tasks at once (0: no limit)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--cpus-per-task", e.cpusPerTask, "slurm: CPUs per run")->check(positive());
    cmd->add_option("--time", e.time, "slurm: time limit per run (e.g. 2:00:00)");
    cmd->add_option("--mem", e.mem, "slurm: memory per run (e.g. 4G)");
    cmd->add_option("--partition", e.partition, "slurm: the partition to submit to");
    cmd->add_option("--sbatch-option", e.extra,
                    "slurm: one more #SBATCH line (repeatable), e.g. --account=x");
    return engine;
}

void checkEngine(const EngineOptions& engine) {
    if (engine.engine == Engine::Slurm)
        checkSbatch();
}

} // namespace ndrcli
