// JSON forms of the records training produces (evaluations, traces, run records), read strictly with
// every size bounded before anything is allocated from it.
#include "core/io/json_fields.h"

namespace ndr {

using namespace jsonio;

namespace {

// Table lookup examples are {"symbol", "functions"}; expression examples {"tokens", "depth"}.
void readExample(const json& j, Example& e, const std::string& path) {
    const Fields f(j, path, true);
    if (j.is_object() && j.contains("tokens")) {
        e.tokens = toArray<int>(*f.get("tokens"), f.path("tokens"),
                                [](const json& v, const std::string& p) { return toIntIn(v, p, 0, 255); });
        e.treeDepth = toIntIn(*f.get("depth"), f.path("depth"), 1, INT_MAX);
        return;
    }
    e.symbol = toIntIn(*f.get("symbol"), f.path("symbol"), 0, INT_MAX);
    e.functions = toArray<int>(*f.get("functions"), f.path("functions"),
                               [](const json& v, const std::string& p) { return toIntIn(v, p, 0, INT_MAX); });
}

// Checks that an array has the size its dimensions imply; `what` spells the product for the message.
void checkSize(const json& array, const std::string& path, size_t expected, const std::string& what) {
    expectArray(array, path);
    if (array.size() != expected)
        fail(path, "expected " + std::to_string(expected) + " values (" + what + "), got " +
                       std::to_string(array.size()));
}

// A model's status as run files store it (statusText): a state's name, and for diverged and failed
// ": " and why; finished may say how (early stopping).
ModelStatus readStatus(const json& v, const std::string& path) {
    const std::string text = toString(v, path);
    const size_t colon = text.find(": ");
    const std::string name = text.substr(0, colon);
    ModelStatus status;
    status.message = colon == std::string::npos ? "" : text.substr(colon + 2);
    for (ModelState s : {ModelState::New, ModelState::Training, ModelState::Paused, ModelState::Stopped,
                         ModelState::Finished, ModelState::Diverged, ModelState::Failed}) {
        const bool explained =
            s == ModelState::Diverged || s == ModelState::Failed || s == ModelState::Finished;
        if (name == stateName(s) && (explained || status.message.empty())) {
            status.state = s;
            return status;
        }
    }
    std::string shown = text.substr(0, 60);
    if (shown.size() < text.size())
        shown += "...";
    fail(path,
         "unknown status '" + shown +
             "'; expected new, training, paused, stopped, finished, 'finished: <how>', 'diverged: <why>' or "
             "'failed: <why>'");
}

void readTrace(const json& j, Trace& t, const std::string& path) {
    const Fields f(j, path, true);
    t.steps = toIntIn(*f.get("steps"), f.path("steps"), 0, kMaxTraceSteps);
    t.heads = toIntIn(*f.get("heads"), f.path("heads"), 0, kMaxTraceHeads);
    t.positions = toIntIn(*f.get("positions"), f.path("positions"), 0, kMaxTracePositions);
    t.symbols = toIntIn(*f.get("symbols"), f.path("symbols"), 0, kMaxTraceSymbols);
    const size_t steps = size_t(t.steps), heads = size_t(t.heads), T = size_t(t.positions),
                 S = size_t(t.symbols);
    t.readouts = toIntIn(*f.get("readouts"), f.path("readouts"), 1, kMaxTracePositions);
    const size_t R = size_t(t.readouts);
    // An empty trace (no probe example) has no per-step readouts either.
    const size_t readouts = T > 0 ? steps + 1 : 0;

    const auto symbolOrMinus1 = [&](const json& v, const std::string& p) {
        return toIntIn(v, p, -1, t.symbols - 1);
    };
    // An answer of several readouts is the number they spell.
    const auto answerOrMinus1 = [&](const json& v, const std::string& p) {
        return R == 1 ? symbolOrMinus1(v, p) : toIntIn(v, p, -1, INT_MAX);
    };
    const auto anyFloat = [](const json& v, const std::string& p) { return toFloat(v, p, true); };

    const json& tokens = *f.get("tokens");
    checkSize(tokens, f.path("tokens"), T, "positions");
    t.tokens = toArray<int>(tokens, f.path("tokens"),
                            [](const json& v, const std::string& p) { return toIntIn(v, p, 0, INT_MAX); });
    const json& names = *f.get("tokenNames");
    checkSize(names, f.path("tokenNames"), T, "positions");
    t.tokenNames = toArray<std::string>(names, f.path("tokenNames"), toString);

    const json& attention = *f.get("attention");
    checkSize(attention, f.path("attention"), steps * heads * T * T, "steps*heads*positions*positions");
    t.attention = toArray<float>(attention, f.path("attention"), anyFloat);

    // An array of `size` floats (`what` spells the product), or none.
    const auto floatsOrNone = [&](const char* key, size_t size, const char* what) {
        const json& v = *f.get(key);
        expectArray(v, f.path(key));
        if (!v.empty())
            checkSize(v, f.path(key), size, what);
        return toArray<float>(v, f.path(key), anyFloat);
    };
    t.gates = floatsOrNone("gates", steps * T, "steps*positions, or none");
    t.gateMeaning = toEnum(*f.get("gateMeaning"), f.path("gateMeaning"), kGateMeanings);

    const json& channels = *f.get("gateChannels");
    expectArray(channels, f.path("gateChannels"));
    if (!channels.empty() && (steps * T == 0 || channels.size() % (steps * T) != 0))
        fail(f.path("gateChannels"), "expected a multiple of steps*positions = " + std::to_string(steps * T) +
                                         " values, or none, got " + std::to_string(channels.size()));
    t.gateChannels = toArray<float>(channels, f.path("gateChannels"), anyFloat);

    t.routing = floatsOrNone("routing", steps * T * heads, "steps*positions*heads, or none");
    t.operators = toIntIn(*f.get("operators"), f.path("operators"), 0, 64);
    t.selection =
        floatsOrNone("selection", steps * T * size_t(t.operators), "steps*positions*operators, or none");
    t.change = floatsOrNone("change", steps * T, "steps*positions, or none");

    const json& probs = *f.get("stepProbs");
    checkSize(probs, f.path("stepProbs"), readouts * R * S, "(steps+1)*readouts*symbols");
    t.stepProbs = toArray<float>(probs, f.path("stepProbs"), anyFloat);
    const json& answers = *f.get("stepAnswers");
    checkSize(answers, f.path("stepAnswers"), readouts, "steps+1");
    t.stepAnswers = toArray<int>(answers, f.path("stepAnswers"), answerOrMinus1);
    if (R > 1) {
        const json& digits = *f.get("stepReadouts");
        checkSize(digits, f.path("stepReadouts"), readouts * R, "(steps+1)*readouts");
        t.stepReadouts = toArray<int>(digits, f.path("stepReadouts"), symbolOrMinus1);
    } else {
        t.stepReadouts = t.stepAnswers;
    }

    const json& inter = *f.get("intermediates");
    checkSize(inter, f.path("intermediates"), T, "positions");
    t.intermediates = toArray<int>(inter, f.path("intermediates"), symbolOrMinus1);
    t.answer = answerOrMinus1(*f.get("answer"), f.path("answer"));
}

void readEval(const json& j, EvalRecord& r, const std::string& path) {
    const Fields f(j, path, true);
    r.step = toIntIn(*f.get("step"), f.path("step"), 0, INT_MAX);
    f.read("elapsedSeconds", r.elapsedSeconds, true);
    f.read("stepsPerSecond", r.stepsPerSecond, true);
    f.read("trainLoss", r.trainLoss, true);
    const auto nullable = [](const json& v, const std::string& p) { return toDouble(v, p, true); };
    r.depths = toArray<int>(*f.get("depths"), f.path("depths"),
                            [](const json& v, const std::string& p) { return toIntIn(v, p, 1, INT_MAX); });
    r.accuracy = toArray<double>(*f.get("accuracy"), f.path("accuracy"), nullable);
    r.loss = toArray<double>(*f.get("loss"), f.path("loss"), nullable);
    if (r.accuracy.size() != r.depths.size())
        fail(f.path("accuracy"), "has " + std::to_string(r.accuracy.size()) + " values for " +
                                     std::to_string(r.depths.size()) + " depths");
    if (r.loss.size() != r.depths.size())
        fail(f.path("loss"), "has " + std::to_string(r.loss.size()) + " values for " +
                                 std::to_string(r.depths.size()) + " depths");
    // A (depths) array of shares between 0 and 1, empty or one per depth.
    const auto readShares = [&](const char* key, std::vector<double>& out) {
        out = toArray<double>(*f.get(key), f.path(key), [](const json& v, const std::string& p) {
            const double share = toDouble(v, p, false);
            if (!(share >= 0 && share <= 1))
                fail(p, "must be a share between 0 and 1, got " + v.dump());
            return share;
        });
        if (!out.empty() && out.size() != r.depths.size())
            fail(f.path(key), "has " + std::to_string(out.size()) + " values for " +
                                  std::to_string(r.depths.size()) + " depths");
    };
    readShares("baseline", r.baseline);
    f.read("trainAccuracy", r.trainAccuracy, true);
    f.read("validAccuracy", r.validAccuracy, true);
    f.read("testAccuracy", r.testAccuracy, true);
    readTrace(*f.get("probe"), r.probe, f.path("probe"));
    f.read("routeEntropy", r.routeEntropy, true);
    r.headShare = toArray<double>(*f.get("headShare"), f.path("headShare"), nullable);
    {
        const json& counts = *f.get("haltCounts");
        expectArray(counts, f.path("haltCounts"));
        if (!counts.empty() && counts.size() != r.depths.size())
            fail(f.path("haltCounts"), "has " + std::to_string(counts.size()) + " rows for " +
                                           std::to_string(r.depths.size()) + " depths");
        r.haltCounts.resize(counts.size());
        for (size_t d = 0; d < counts.size(); ++d)
            r.haltCounts[d] =
                toArray<int>(counts[d], item(f.path("haltCounts"), d),
                             [](const json& v, const std::string& p) { return toIntIn(v, p, 0, INT_MAX); });
    }
    readShares("everyStepAccuracy", r.everyStepAccuracy);
    // On tasks with operations: all three, or none.
    if (j.contains("operations")) {
        r.operations = toArray<std::string>(*f.get("operations"), f.path("operations"), toString);
        for (size_t o = 0; o < r.operations.size(); ++o)
            if (r.operations[o].empty() || (o > 0 && !(r.operations[o - 1] < r.operations[o])))
                fail(f.path("operations"), "must be distinct non-empty names in ascending order");
        const auto readTable = [&](const char* key, std::vector<std::vector<int>>& out) {
            const json& rows = *f.get(key);
            expectArray(rows, f.path(key));
            if (rows.size() != r.depths.size())
                fail(f.path(key), "has " + std::to_string(rows.size()) + " rows for " +
                                      std::to_string(r.depths.size()) + " depths");
            out.resize(rows.size());
            for (size_t d = 0; d < rows.size(); ++d) {
                out[d] = toArray<int>(rows[d], item(f.path(key), d), [](const json& v, const std::string& p) {
                    return toIntIn(v, p, 0, INT_MAX);
                });
                if (out[d].size() != r.operations.size())
                    fail(item(f.path(key), d), "has " + std::to_string(out[d].size()) + " values for " +
                                                   std::to_string(r.operations.size()) + " operations");
            }
        };
        readTable("operationExamples", r.operationExamples);
        readTable("operationCorrect", r.operationCorrect);
        for (size_t d = 0; d < r.depths.size(); ++d)
            for (size_t o = 0; o < r.operations.size(); ++o)
                if (r.operationCorrect[d][o] > r.operationExamples[d][o])
                    fail(item(item(f.path("operationCorrect"), d), o),
                         "counts " + std::to_string(r.operationCorrect[d][o]) + " right answers of " +
                             std::to_string(r.operationExamples[d][o]) + " examples");
    }
}

void readModelRecord(const json& j, ModelRecord& r, const std::string& path) {
    const Fields f(j, path, true);
    readModel(*f.get("config"), r.config, f.path("config"), true);
    const json& history = *f.get("history");
    expectArray(history, f.path("history"));
    r.history.assign(history.size(), EvalRecord{});
    for (size_t i = 0; i < history.size(); ++i)
        readEval(history[i], r.history[i], item(f.path("history"), i));
    r.bestEval = toInt(*f.get("bestEval"), f.path("bestEval"));
    if (r.bestEval < -1 || r.bestEval >= int(r.history.size()))
        fail(f.path("bestEval"), "must be -1 (none yet) or an index into the " +
                                     std::to_string(r.history.size()) + " evaluations, got " +
                                     std::to_string(r.bestEval));
    r.stepsDone = toIntIn(*f.get("stepsDone"), f.path("stepsDone"), 0, INT_MAX);
    {
        const Fields lf(*f.get("lossLog"), f.path("lossLog"), true);
        r.lossLog.steps =
            toArray<int>(*lf.get("steps"), lf.path("steps"),
                         [](const json& v, const std::string& p) { return toIntIn(v, p, 0, INT_MAX); });
        r.lossLog.loss =
            toArray<double>(*lf.get("loss"), lf.path("loss"),
                            [](const json& v, const std::string& p) { return toDouble(v, p, true); });
        if (r.lossLog.loss.size() != r.lossLog.steps.size())
            fail(lf.path("loss"), "has " + std::to_string(r.lossLog.loss.size()) + " values for " +
                                      std::to_string(r.lossLog.steps.size()) + " steps");
    }
    if (const json* status = f.get("status"))
        r.status = readStatus(*status, f.path("status"));
    f.read("checkpointFile", r.checkpointFile);
    // The checkpoint sits beside the run file; a path out of that folder is a damaged or hostile file.
    const std::string& file = r.checkpointFile;
    if (!file.empty() && (file.front() == '/' || file.find("..") != std::string::npos))
        fail(f.path("checkpointFile"),
             "'" + file + "' must be a file name relative to the run file's folder");
}

} // namespace

// --- Records ---

void to_json(json& j, const Example& e) {
    if (!e.tokens.empty())
        j = json{{"tokens", e.tokens}, {"depth", e.treeDepth}};
    else
        j = json{{"symbol", e.symbol}, {"functions", e.functions}};
}
void from_json(const json& j, Example& e) {
    readExample(j, e, "");
}

void to_json(json& j, const Trace& t) {
    j = json{{"tokens", t.tokens},
             {"tokenNames", t.tokenNames},
             {"steps", t.steps},
             {"heads", t.heads},
             {"positions", t.positions},
             {"symbols", t.symbols},
             {"attention", floatArrayJson(t.attention)},
             {"gates", floatArrayJson(t.gates)},
             {"gateMeaning", enumName(t.gateMeaning, kGateMeanings)},
             {"gateChannels", floatArrayJson(t.gateChannels)},
             {"routing", floatArrayJson(t.routing)},
             {"readouts", t.readouts},
             {"operators", t.operators},
             {"selection", floatArrayJson(t.selection)},
             {"change", floatArrayJson(t.change)},
             {"stepProbs", floatArrayJson(t.stepProbs)},
             {"stepAnswers", t.stepAnswers},
             {"intermediates", t.intermediates},
             {"answer", t.answer}};
    // With one readout the digits are the answers.
    if (t.readouts != 1)
        j["stepReadouts"] = t.stepReadouts;
}
void from_json(const json& j, Trace& t) {
    readTrace(j, t, "");
}

void to_json(json& j, const EvalRecord& r) {
    j = json{{"step", r.step},
             {"elapsedSeconds", doubleJson(r.elapsedSeconds)},
             {"stepsPerSecond", doubleJson(r.stepsPerSecond)},
             {"trainLoss", doubleJson(r.trainLoss)},
             {"depths", r.depths},
             {"accuracy", doubleArrayJson(r.accuracy)},
             {"loss", doubleArrayJson(r.loss)},
             {"baseline", r.baseline},
             {"trainAccuracy", doubleJson(r.trainAccuracy)},
             {"validAccuracy", doubleJson(r.validAccuracy)},
             {"testAccuracy", doubleJson(r.testAccuracy)},
             {"probe", r.probe},
             {"routeEntropy", doubleJson(r.routeEntropy)},
             {"headShare", doubleArrayJson(r.headShare)},
             {"haltCounts", r.haltCounts},
             {"everyStepAccuracy", r.everyStepAccuracy}};
    if (!r.operations.empty()) {
        j["operations"] = r.operations;
        j["operationExamples"] = r.operationExamples;
        j["operationCorrect"] = r.operationCorrect;
    }
}
void from_json(const json& j, EvalRecord& r) {
    readEval(j, r, "");
}

void to_json(json& j, const ModelRecord& r) {
    j = json{{"config", r.config},
             {"history", r.history},
             {"bestEval", r.bestEval},
             {"stepsDone", r.stepsDone},
             {"status", statusText(r.status)},
             {"checkpointFile", r.checkpointFile},
             {"lossLog", json{{"steps", r.lossLog.steps}, {"loss", doubleArrayJson(r.lossLog.loss)}}}};
}
void from_json(const json& j, ModelRecord& r) {
    readModelRecord(j, r, "");
}

void to_json(json& j, const RunRecord& r) {
    j = json{{"format", RunRecord::kFormat},
             {"version", RunRecord::kVersion},
             {"config", r.config},
             {"tables", r.tables},
             {"probe", r.probe},
             {"models", r.models}};
}

void from_json(const json& j, RunRecord& r) {
    if (!j.is_object())
        fail("", "not an NDR Studio run file (expected a JSON object, got " + describe(j) + ")");
    const json* format = find(j, "format");
    if (!format)
        fail("", "not an NDR Studio run file (it has no 'format' field)");
    if (!format->is_string() || format->get<std::string>() != RunRecord::kFormat)
        fail("", "not an NDR Studio run file (format " +
                     (format->is_string() ? "'" + format->get<std::string>() + "'" : describe(*format)) +
                     ")");
    const int64_t version = toInt64(require(j, "version", ""), "version");
    if (version > RunRecord::kVersion)
        fail("", "run file version " + std::to_string(version) +
                     " is newer than this NDR Studio understands (" + std::to_string(RunRecord::kVersion) +
                     "): update NDR Studio");
    if (version < 1)
        fail("version", "must be at least 1, got " + std::to_string(version) + "; the file is damaged");

    readRunConfig(require(j, "config", ""), r.config, "config");
    const std::vector<Problem> problems = validate(r.config);
    if (!problems.empty()) {
        std::string message = "the configuration is invalid:";
        for (const Problem& p : problems)
            message += "\n  config." + p.text();
        fail("", message);
    }
    const TaskConfig& task = r.config.task;

    // Table shapes and the probe's range are checked here so that no later index can go out of bounds;
    // whether each table is a bijection is CtlTask::setTables' business, whether an expression probe
    // is well formed the task's (Run::load).
    const bool ctl = factsOf(task.kind).tables;
    const json& tables = require(j, "tables", "");
    expectArray(tables, "tables");
    if (!ctl && !tables.empty())
        fail("tables", "only a table lookup run has function tables, got " + std::to_string(tables.size()));
    if (ctl && int(tables.size()) != task.functions)
        fail("tables", "expected " + std::to_string(task.functions) + " function tables, got " +
                           std::to_string(tables.size()));
    r.tables.assign(tables.size(), {});
    for (size_t f = 0; f < tables.size(); ++f) {
        const std::string p = item("tables", f);
        checkSize(tables[f], p, size_t(task.symbols), "symbols");
        r.tables[f] = toArray<int>(tables[f], p, [&](const json& v, const std::string& vp) {
            return toIntIn(v, vp, 0, task.symbols - 1);
        });
    }

    readExample(require(j, "probe", ""), r.probe, "probe");
    if (ctl != r.probe.tokens.empty())
        fail("probe", ctl ? "a table lookup run's probe has a symbol and functions, not tokens"
                          : "an expression run's probe has tokens");
    if (ctl && r.probe.symbol >= task.symbols)
        fail("probe.symbol", "must be below task.symbols (" + std::to_string(task.symbols) + "), got " +
                                 std::to_string(r.probe.symbol));
    for (size_t i = 0; i < r.probe.functions.size(); ++i)
        if (r.probe.functions[i] >= task.functions)
            fail(item("probe.functions", i), "must be below task.functions (" +
                                                 std::to_string(task.functions) + "), got " +
                                                 std::to_string(r.probe.functions[i]));

    const json& models = require(j, "models", "");
    expectArray(models, "models");
    r.models.assign(models.size(), ModelRecord{});
    for (size_t i = 0; i < models.size(); ++i)
        readModelRecord(models[i], r.models[i], item("models", i));
}

} // namespace ndr
