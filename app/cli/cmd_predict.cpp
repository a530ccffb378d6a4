// `ndr predict`: one expression of any depth the run answers through a saved run's models; the answers
// and the per-step trace of docs/design.md §5 as JSON on stdout.
#include "commands.h"
#include "common.h"
#include "core/config/model_kind.h"
#include "core/train/halting.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

namespace ndrcli {

namespace {

// Keys keep the order written here: the answer first, the bulky trace last.
using json = nlohmann::ordered_json;

struct PredictOptions {
    std::string runFile, expression, model;
    int steps = 0;
    WeightsChoice weights = WeightsChoice::Final;
};

// Six decimals are far below what a plot or a reader can tell apart and keep the attention arrays small.
double round6(float x) {
    return std::round(double(x) * 1e6) / 1e6;
}

std::string lower(std::string s) {
    for (auto& c : s)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// Indented JSON, except that arrays of numbers or strings stay on one line: an attention matrix then
// reads as rows instead of one number per line.
void writeJson(std::ostream& os, const json& j, int indent) {
    const std::string pad(size_t(indent) * 2, ' '), inner(size_t(indent + 1) * 2, ' ');
    if (j.is_object() && !j.empty()) {
        os << "{\n";
        size_t i = 0;
        for (const auto& [key, value] : j.items()) {
            os << inner << json(key).dump() << ": ";
            writeJson(os, value, indent + 1);
            os << (++i < j.size() ? ",\n" : "\n");
        }
        os << pad << "}";
    } else if (j.is_array() &&
               std::any_of(j.begin(), j.end(), [](const json& e) { return e.is_structured(); })) {
        os << "[\n";
        for (size_t i = 0; i < j.size(); ++i) {
            os << inner;
            writeJson(os, j[i], indent + 1);
            os << (i + 1 < j.size() ? ",\n" : "\n");
        }
        os << pad << "]";
    } else {
        os << j.dump();
    }
}

// The trace as nested arrays, indexed as docs/design.md §5 writes them.
json traceJson(const ndr::Trace& tr, const ndr::Task& task) {
    const int T = tr.positions, H = tr.heads, S = tr.symbols;
    json attention = json::array();
    for (int t = 0; t < tr.steps; ++t) {
        json heads = json::array();
        for (int h = 0; h < H; ++h) {
            json rows = json::array();
            for (int i = 0; i < T; ++i) {
                json row = json::array();
                for (int j = 0; j < T; ++j)
                    row.push_back(round6(tr.att(t, h, i, j)));
                rows.push_back(std::move(row));
            }
            heads.push_back(std::move(rows));
        }
        attention.push_back(std::move(heads));
    }
    // A (steps, positions) record (gates, change) as one array per step; null where the trace has none.
    const auto perStep = [&](const std::vector<float>& values) {
        json rows = nullptr;
        if (values.empty())
            return rows;
        rows = json::array();
        for (int t = 0; t < tr.steps; ++t) {
            json row = json::array();
            for (int p = 0; p < T; ++p)
                row.push_back(round6(values[size_t(t) * T + p]));
            rows.push_back(std::move(row));
        }
        return rows;
    };
    const json gates = perStep(tr.gates), change = perStep(tr.change);
    json routing = nullptr;
    if (!tr.routing.empty()) {
        routing = json::array();
        for (int t = 0; t < tr.steps; ++t) {
            json rows = json::array();
            for (int p = 0; p < T; ++p) {
                json row = json::array();
                for (int h = 0; h < H; ++h)
                    row.push_back(round6(tr.route(t, p, h)));
                rows.push_back(std::move(row));
            }
            routing.push_back(std::move(rows));
        }
    }
    json stepProbs = json::array(), stepAnswers = json::array();
    // One array of S per step, or with several readouts one such array per readout.
    const auto probsOf = [&](int t, int k) {
        json row = json::array();
        for (int s = 0; s < S; ++s)
            row.push_back(round6(tr.probsAfter(t, k)[s]));
        return row;
    };
    for (int t = 0; t <= tr.steps; ++t) {
        json row = tr.readouts == 1 ? probsOf(t, 0) : json::array();
        for (int k = 0; tr.readouts > 1 && k < tr.readouts; ++k)
            row.push_back(probsOf(t, k));
        stepProbs.push_back(std::move(row));
        stepAnswers.push_back(task.symbolName(tr.stepAnswers[t]));
    }
    return {{"steps", tr.steps},
            {"heads", H},
            {"positions", T},
            {"tokens", tr.tokenNames},
            {"attention", attention},
            {"attentionIndex", "[step][head][target][source]"},
            {"gates", gates},
            {"gatesIndex", "[step][position], mean over channels"},
            {"change", change},
            {"changeIndex", "[step][position], |state after - state before| / |state before|"},
            {"routing", routing},
            {"routingIndex", "[step][position][head], head routing weights"},
            {"stepAnswers", stepAnswers},
            {"stepProbabilities", stepProbs},
            {"stepIndex", "after 0..steps steps; 0 is the embeddings"}};
}

int runPredict(const PredictOptions& o) {
    // Reading the record first lets a wrong --model fail before any weights are read.
    std::vector<int> selected;
    {
        ndr::RunRecord rec;
        try {
            rec = ndr::loadRunRecord(o.runFile, ndr::RunFileParts::WithoutTraces);
        } catch (const std::exception& e) {
            throw CliError(e.what());
        }
        std::string names;
        for (size_t m = 0; m < rec.config.models.size(); ++m) {
            names += (names.empty() ? "" : ", ") + rec.config.models[m].name;
            if (o.model.empty() || lower(rec.config.models[m].name) == lower(o.model))
                selected.push_back(int(m));
        }
        if (selected.empty())
            throw CliError("--model " + o.model + ": no such model in the run; it has " + names, kExitUsage);
    }
    LoadedRun run = loadRun(o.runFile, o.weights, selected);
    const ndr::Task& task = *run.task;

    const ndr::ParseResult parsed = task.parseQuestion(o.expression);
    if (!parsed.example)
        throw CliError(parsed.error, kExitUsage);
    const ndr::Example& ex = *parsed.example;

    const auto tokens = task.tokens(ex);
    const auto inter = task.intermediates(ex);
    json tokenNames = json::array(), intermediates = json::array();
    for (size_t p = 0; p < tokens.size(); ++p) {
        tokenNames.push_back(task.tokenName(tokens[p]));
        intermediates.push_back(inter[p] < 0 ? json(nullptr) : json(task.symbolName(inter[p])));
    }
    const int answer = task.answer(ex);
    // Only table lookup names the steps a question needs; the expression tasks leave it null.
    const bool routed = task.routesOneStepPerDepth();
    json models = json::array();
    for (int m : selected) {
        const auto& cfg = run.record.models[m].config;
        const ndr::ModelFacts facts = ndr::factsOf(cfg);
        const int steps = o.steps > 0 ? o.steps : facts.evalSteps;
        const ndr::Trace tr = run.trainers[m]->traceOf(ex, steps);
        // A halting model answers after the step its evaluation stops at.
        const int halted =
            facts.haltThreshold > 0 ? ndr::stopStep(tr, {facts.haltOn, float(facts.haltThreshold)}) : -1;
        const int predicted = tr.stepAnswers[size_t(halted >= 0 ? halted : tr.steps)];
        // Fewer steps than one per function: the answer is the model's all the same, but it cannot have
        // been routed the way NDR routes (docs/design.md §1). An LSTM reads token by token: it has no
        // steps to count.
        const bool stepped = facts.stepped;
        const bool below = stepped && routed && ndr::stepsBelowDepth(ex.depth(), steps);
        if (below)
            std::cerr << "ndr predict: " << cfg.name << " runs " << steps << " steps, fewer than the "
                      << ndr::routingSteps(ex.depth()) << " that route a depth-" << ex.depth()
                      << " expression one function per step; its answer is given all the same\n";
        // Per answer value, or per readout (one object of digit probabilities each).
        const int at = halted >= 0 ? halted : tr.steps;
        const auto probsOf = [&](int k) {
            json probs = json::object();
            for (int s = 0; s < tr.symbols; ++s)
                probs[task.symbolName(s)] = round6(tr.probsAfter(at, k)[s]);
            return probs;
        };
        json probs = tr.readouts == 1 ? probsOf(0) : json::array();
        for (int k = 0; tr.readouts > 1 && k < tr.readouts; ++k)
            probs.push_back(probsOf(k));
        models.push_back({{"name", cfg.name},
                          {"weights", weightsName(run.weightsUsed[m])},
                          {"steps", stepped ? json(steps) : json(nullptr)},
                          {"stepsBelowDepth", below},
                          {"haltedAfter", halted >= 0 ? json(halted) : json(nullptr)},
                          {"answer", task.symbolName(predicted)},
                          {"correct", predicted == answer},
                          {"probabilities", probs},
                          {"trace", traceJson(tr, task)}});
    }
    const json out = {{"run", o.runFile},
                      {"expression", task.format(ex)},
                      {"depth", ex.depth()},
                      // One step per function, one to [E].
                      {"routingSteps", routed ? json(ndr::routingSteps(ex.depth())) : json(nullptr)},
                      {"answer", task.symbolName(answer)},
                      {"symbols", task.symbolNames()}, // the order of every probability array
                      {"tokens", tokenNames},
                      {"intermediates", intermediates},
                      {"models", models}};
    writeJson(std::cout, out, 0);
    std::cout << std::endl;
    return 0;
}

} // namespace

Command addPredictCommand(CLI::App& root) {
    auto opts = std::make_shared<PredictOptions>();
    auto* cmd = root.add_subcommand("predict", "Answer one expression with a saved run's models; JSON with "
                                               "the per-step trace on stdout");
    cmd->add_option("run", opts->runFile, "Run file (run.json) written by `ndr train`")->required();
    cmd->add_option(
           "expression", opts->expression,
           "The question as the run's task writes it: table lookup in the run's order, tokens separated by "
           "spaces (\"101 b d h\"); arithmetic \"((3*4)+7)\"; ListOps \"[MAX 2 [MIN 4 7 ] 0 ]\"")
        ->required();
    cmd->add_option("--model", opts->model, "Only this model (by name, any case)");
    cmd->add_option("--steps", opts->steps, "Steps to run (default: the model's evaluation steps)")
        ->check(CLI::Range(1, 1024)); // traces grow with steps; beyond this is a typo
    addWeightsOption(cmd, opts->weights, "Weights to load: final, or best (at the best validation)");
    cmd->footer(
        "Any depth up to twice the run's deepest test depth is answered by every model with its "
        "steps (or --steps); a model with fewer steps than the depth + 1 that route the expression one "
        "function per step says so (\"stepsBelowDepth\": true, and a note on stderr; table lookup only). A "
        "model with a halt "
        "threshold answers after the first step at which every position's signal (its mean gate, or "
        "with haltOn \"change\" how far the step moved it) is below it (\"haltedAfter\"). A bad expression "
        "prints the parser's error and exits with status 2.\n");
    return {cmd, [opts] { return runPredict(*opts); }};
}

} // namespace ndrcli
