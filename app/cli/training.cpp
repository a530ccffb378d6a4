// One thread per model, a progress board on the main thread, and the save at the end.
#include "training.h"

#include "commands.h"
#include "progress.h"
#include "routing_report.h"
#include "table.h"

#include "core/config/task_kinds.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>
#include <unistd.h>

namespace ndrcli {

namespace {

// A signal handler can reach nothing but globals; a lock-free atomic is safe to set from it.
std::atomic<bool> gStop{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void onInterrupt(int) {
    if (gStop.exchange(true)) {
        constexpr char msg[] = "\nndr: interrupted twice, quitting without saving\n";
        [[maybe_unused]] auto n = write(STDERR_FILENO, msg, sizeof msg - 1);
        std::_Exit(kExitInterrupted);
    }
}

using Clock = std::chrono::steady_clock;

std::string range(int lo, int hi) {
    return lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
}

} // namespace

InterruptGuard::InterruptGuard() {
    gStop = false;
    // Without SA_RESTART (which std::signal sets on glibc): a blocking wait for child processes
    // returns on the signal, so a sweep's runner passes it on to its children at once.
    struct sigaction action = {};
    action.sa_handler = onInterrupt;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;
    ::sigaction(SIGINT, &action, nullptr);
    ::sigaction(SIGTERM, &action, nullptr); // what a scheduler sends to cancel a job
}

InterruptGuard::~InterruptGuard() {
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
}

bool stopRequested() {
    return gStop.load();
}

std::string splitSummary(const ndr::TaskConfig& t) {
    std::string s;
    if (ndr::factsOf(t.kind).operations && t.operations != ndr::listOpsOperationNames()) {
        s = "operations";
        for (const std::string& op : t.operations)
            s += " " + op;
        s += ", ";
    }
    s += "train " + range(t.trainMinDepth, t.trainMaxDepth);
    if (t.validMinDepth <= t.validMaxDepth)
        s += ", valid " + range(t.validMinDepth, t.validMaxDepth);
    return s + ", test " + range(t.testMinDepth, t.testMaxDepth);
}

void addTrainOptions(CLI::App* cmd, TrainOptions& o) {
    std::string presets;
    for (const auto& n : ndr::presetNames())
        presets += (presets.empty() ? "" : ", ") + n;
    auto* preset = cmd->add_option("--preset", o.preset, "Built-in preset: " + presets);
    auto* config = cmd->add_option("--config", o.configFile,
                                   "Run configuration file (JSON): a full configuration, or "
                                   "{\"preset\": NAME, ...overrides}");
    preset->excludes(config);
    cmd->add_option("--out", o.out, "Output folder (default runs/<preset>-<date>-<time>)");
    cmd->add_option_function<int>(
           "--steps", [&o](int v) { o.overrides.steps = v; }, "Training steps per model")
        ->check(positive());
    cmd->add_option_function<int>(
           "--eval-interval", [&o](int v) { o.overrides.evalInterval = v; }, "Evaluate every N steps")
        ->check(positive());
    cmd->add_option_function<int>(
           "--threads", [&o](int v) { o.overrides.threads = v; },
           "Threads per model: a training step splits its batch over them")
        ->check(positive());
    cmd->add_flag("--quiet,-q", o.quiet, "No progress display on stderr");
    cmd->add_option("--autosave-every", o.autosaveEvery,
                    "Save the run folder every N evaluations while training (0: only at the end)")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
}

ndr::RunConfig configFromOptions(const TrainOptions& o) {
    if (o.preset.empty() && o.configFile.empty()) {
        std::string names;
        for (const auto& n : ndr::presetNames())
            names += (names.empty() ? "" : ", ") + n;
        throw CliError("give --preset NAME or --config FILE (presets: " + names + ")", kExitUsage);
    }
    return loadRunConfig(o.preset, o.configFile, o.overrides);
}

void announce(const ndr::RunConfig& c, const fs::path& out, const std::string& prefix) {
    std::string models;
    for (const auto& m : c.models)
        models += (models.empty() ? "" : ", ") + m.name;
    std::cerr << prefix << "Training " << models << " (" << c.preset << ": " << ndr::taskName(c.task) << ", "
              << splitSummary(c.task) << ") for " << c.train.steps << " steps, seed " << c.train.seed
              << " -> " << out.string() << std::endl;
}

namespace {

// The latest state each training thread handed over for an autosave.
struct Autosave {
    struct State {
        ndr::ModelRecord record;
        ndr::CheckpointData checkpoint;
    };
    std::mutex mutex;
    std::vector<std::optional<State>> latest; // (models)
    bool dirty = false;

    // Writes the run folder once every model has handed over a state; false if there is nothing new.
    bool write(const ndr::Run& run, const fs::path& runFile) {
        ndr::RunRecord rec;
        std::vector<ndr::CheckpointData> checkpoints;
        {
            std::lock_guard lock(mutex);
            if (!dirty || std::any_of(latest.begin(), latest.end(), [](const auto& s) { return !s; }))
                return false;
            dirty = false;
            rec.config = run.config();
            rec.tables = run.task().savedTables();
            rec.probe = run.probe();
            for (const auto& s : latest) {
                rec.models.push_back(s->record);
                rec.models.back().status = {ndr::ModelState::Stopped, {}}; // an autosave can be continued
                checkpoints.push_back(s->checkpoint);
            }
        }
        ndr::saveRunFiles(runFile, rec, checkpoints);
        return true;
    }
};

} // namespace

TrainedRun trainAndSave(const ndr::RunConfig& config, const fs::path& outDir, bool quiet, int autosaveEvery) {
    checkOutputDir(outDir);
    std::error_code ec;
    fs::create_directories(outDir, ec);
    if (ec)
        throw CliError("cannot create the output folder " + outDir.string() + ": " + ec.message());
    // One process trains a run folder at a time (`train --resume`, a sweep runner, the app's save).
    const ndr::RunFileLock lock(outDir / "run.json");
    ndr::Run run(config);
    return trainAndSave(run, outDir, quiet, autosaveEvery);
}

TrainedRun trainAndSave(ndr::Run& run, const fs::path& outDir, bool quiet, int autosaveEvery) {
    const ndr::RunConfig& config = run.config();
    TrainedRun out;
    out.runFile = outDir / "run.json";
    const int n = run.modelCount();
    std::vector<std::string> names;
    for (const auto& m : config.models)
        names.push_back(m.name);

    ProgressBoard board(names, quiet);
    Autosave autosave;
    autosave.latest.resize(size_t(n));
    std::vector<std::optional<ndr::ModelStatus>> failures(n);
    out.wallSeconds.assign(n, 0);
    std::vector<std::thread> threads;
    for (int i = 0; i < n; ++i) {
        threads.emplace_back([&, i] {
            const auto t0 = Clock::now();
            ndr::ModelStatus status;
            try {
                int evaluations = 0;
                status = run.trainer(i).run(
                    [&](const ndr::TrainProgress& p) {
                        board.update(i, p);
                        if (p.eval && autosaveEvery > 0 && ++evaluations % autosaveEvery == 0) {
                            // Copied on this thread, which owns the trainer; written by the main thread.
                            Autosave::State state{run.trainer(i).record(), run.trainer(i).checkpoint()};
                            std::lock_guard lock(autosave.mutex);
                            autosave.latest[size_t(i)] = std::move(state);
                            autosave.dirty = true;
                        }
                    },
                    &gStop);
            } catch (const std::exception& e) {
                status = {ndr::ModelState::Failed, e.what()};
                failures[i] = status;
            }
            out.wallSeconds[i] = std::chrono::duration<double>(Clock::now() - t0).count();
            board.finish(i, status, out.wallSeconds[i]);
        });
    }
    bool noted = false;
    bool autosaveFailed = false;
    while (!board.waitAndDraw(0.25)) {
        if (gStop && !noted) {
            board.note("ndr: stopping; what was trained will be saved (Ctrl-C again quits without saving)");
            noted = true;
        }
        try {
            autosave.write(run, out.runFile);
        } catch (const std::exception& e) {
            if (!autosaveFailed)
                board.note(std::string("ndr: autosave failed (training goes on): ") + e.what());
            autosaveFailed = true;
        }
    }
    for (auto& t : threads)
        t.join();
    out.interrupted = gStop.load();

    out.record = run.record();
    std::vector<ndr::CheckpointData> checkpoints;
    for (int i = 0; i < n; ++i) {
        if (failures[i])
            out.record.models[i].status = *failures[i];
        checkpoints.push_back(run.trainer(i).checkpoint());
    }
    try {
        ndr::saveRunFiles(out.runFile, out.record, checkpoints);
    } catch (const std::exception& e) {
        throw CliError(std::string("cannot save the run: ") + e.what());
    }
    return out;
}

void printRunSummary(const TrainedRun& run, std::ostream& os) {
    const auto& rec = run.record;
    const auto depths = ndr::allDepthsOf(rec.config.task);
    std::vector<std::string> header = {"model", "evaluation", "step"};
    for (int d : depths)
        header.push_back(ndr::depthColumnName(rec.config.task, d));
    // IID: the held-out examples of the training depths; Longer: the test depths (the paper's Table 1).
    header.insert(header.end(), {"IID", "Longer", "status", "time"});
    Table table(header, "ll" + std::string(depths.size() + 3, 'r') + "ll");

    auto evalRow = [&](const std::string& model, const std::string& label, const ndr::EvalRecord& e) {
        std::vector<std::string> row = {model, label, std::to_string(e.step)};
        for (int d : depths) {
            const auto it = std::find(e.depths.begin(), e.depths.end(), d);
            row.push_back(it == e.depths.end() ? "-" : fixed(e.accuracy[it - e.depths.begin()], 3));
        }
        row.push_back(fixed(e.trainAccuracy, 3));
        row.push_back(fixed(e.testAccuracy, 3));
        return row;
    };
    const bool hasValid = !ndr::depthsOf(rec.config.task, ndr::Split::Valid).empty();
    std::vector<std::string> notes;
    for (size_t i = 0; i < rec.models.size(); ++i) {
        const auto& m = rec.models[i];
        const std::string time = i < run.wallSeconds.size() ? duration(run.wallSeconds[i]) : "-";
        if (i > 0 && hasValid)
            table.addRule();
        if (m.history.empty()) {
            table.addRow({m.config.name, "(none)", std::to_string(m.stepsDone)});
        } else {
            auto row = evalRow(m.config.name, "final", m.history.back());
            row.insert(row.end(), {ndr::statusText(m.status), time});
            table.addRow(row);
            if (m.bestEval >= 0 && m.bestEval < int(m.history.size())) {
                const auto& best = m.history[m.bestEval];
                // Without a validation split the best evaluation is the latest: the row would repeat.
                if (hasValid)
                    table.addRow(evalRow("", "best valid", best));
                notes.push_back(m.config.name + " IID " + fixed(best.trainAccuracy, 3) + ", Longer " +
                                fixed(best.testAccuracy, 3) + " (step " + std::to_string(best.step) + ")");
            }
        }
    }
    // What always giving each depth's most common answer scores on the same sets.
    for (const auto& m : rec.models)
        if (!m.history.empty() && !m.history.back().baseline.empty()) {
            // Only the fields evalRow reads: the evaluation's trace is not copied.
            const ndr::EvalRecord& last = m.history.back();
            ndr::EvalRecord base;
            base.depths = last.depths;
            base.accuracy = last.baseline;
            base.trainAccuracy =
                ndr::splitMean(rec.config.task, last.depths, last.baseline, ndr::Split::Train);
            base.testAccuracy = ndr::splitMean(rec.config.task, last.depths, last.baseline, ndr::Split::Test);
            auto row = evalRow("most common answer", "", base);
            row[2] = "";
            table.addRule();
            table.addRow(row);
            break;
        }
    os << "Accuracy per depth (" << splitSummary(rec.config.task) << "; chance "
       << chanceText(rec.config.task) << ")\n";
    table.print(os);
    for (const auto& m : rec.models)
        if (!m.history.empty())
            for (const std::string& line :
                 routingReport(m.config, m.history.back(), ndr::factsOf(m.config).evalSteps, rec.config.task))
                os << line << "\n";
    if (!notes.empty()) {
        os << (hasValid ? "At the best validation:" : "At the latest evaluation (no validation split):");
        for (size_t i = 0; i < notes.size(); ++i)
            os << (i ? "; " : " ") << notes[i];
        os << "\n";
    }
}

} // namespace ndrcli
