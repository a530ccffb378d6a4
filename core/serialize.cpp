// JSON forms of configurations and records. Reading is strict: every field is checked for presence,
// type and range, and errors carry the field's path ("models[1].heads: expected an integer, got string")
// because these files are written by hand (configs) or may be damaged (runs).
#include "serialize.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace ndr {

using nlohmann::json;

namespace {

// Bounds on trace dimensions, checked before any size is computed from them: a damaged file must not
// be able to ask for an absurd allocation or overflow a product.
constexpr int kMaxTracePositions = 4096;
constexpr int kMaxTraceSteps = 1024;
constexpr int kMaxTraceHeads = 256;
constexpr int kMaxTraceSymbols = 64;

// --- Paths and errors ---

std::string field(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
}
std::string item(const std::string& path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw std::runtime_error(path.empty() ? what : path + ": " + what);
}

// Numbers are shown by value ("got 2.5"), anything else by its JSON type ("got string").
std::string describe(const json& v) {
    if (v.is_number())
        return v.dump();
    return v.type_name();
}

void expectObject(const json& j, const std::string& path) {
    if (!j.is_object())
        fail(path, "expected an object, got " + describe(j));
}
void expectArray(const json& j, const std::string& path) {
    if (!j.is_array())
        fail(path, "expected an array, got " + describe(j));
}

const json* find(const json& obj, const char* key) {
    const auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
}

const json& require(const json& obj, const char* key, const std::string& path) {
    const json* v = find(obj, key);
    if (!v)
        fail(field(path, key), "missing");
    return *v;
}

// --- Scalars ---

// Integral-valued floats (1e4) are accepted: JSON does not distinguish them and people write them.
int64_t toInt64(const json& v, const std::string& path) {
    if (v.is_number_integer() && !v.is_number_unsigned())
        return v.get<int64_t>();
    if (v.is_number_unsigned()) {
        if (v.get<uint64_t>() > uint64_t(INT64_MAX))
            fail(path,
                 "expected an integer of at most " + std::to_string(INT64_MAX) + ", got " + describe(v));
        return int64_t(v.get<uint64_t>());
    }
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::isfinite(d) && d == std::floor(d) && std::abs(d) < 9.2e18)
            return int64_t(d);
    }
    fail(path, "expected an integer, got " + describe(v));
}

int toInt(const json& v, const std::string& path) {
    const int64_t x = toInt64(v, path);
    if (x < INT_MIN || x > INT_MAX)
        fail(path, "expected an integer between " + std::to_string(INT_MIN) + " and " +
                       std::to_string(INT_MAX) + ", got " + describe(v));
    return int(x);
}

int toIntIn(const json& v, const std::string& path, int lo, int hi) {
    const int x = toInt(v, path);
    if (x < lo || x > hi)
        fail(path, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " +
                       std::to_string(x));
    return x;
}

uint64_t toUint64(const json& v, const std::string& path) {
    if (v.is_number_unsigned())
        return v.get<uint64_t>();
    if ((v.is_number_integer() && v.get<int64_t>() < 0) || (v.is_number_float() && v.get<double>() < 0))
        fail(path, "expected a non-negative integer, got " + describe(v));
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::isfinite(d) && d == std::floor(d) && d < 1.8e19)
            return uint64_t(d);
    }
    fail(path, "expected a non-negative integer, got " + describe(v));
}

// null stands for NaN where a value may be undefined (the accuracy of an empty split); JSON has no NaN.
double toDouble(const json& v, const std::string& path, bool nullIsNaN) {
    if (v.is_number())
        return v.get<double>();
    if (v.is_null() && nullIsNaN)
        return std::numeric_limits<double>::quiet_NaN();
    fail(path, "expected a number, got " + describe(v));
}

float toFloat(const json& v, const std::string& path, bool nullIsNaN) {
    return float(toDouble(v, path, nullIsNaN));
}

bool toBool(const json& v, const std::string& path) {
    if (!v.is_boolean())
        fail(path, "expected true or false, got " + describe(v));
    return v.get<bool>();
}

std::string toString(const json& v, const std::string& path) {
    if (!v.is_string())
        fail(path, "expected a string, got " + describe(v));
    return v.get<std::string>();
}

// A float written through its shortest decimal form ("0.1", not "0.10000000149011612"), which reads
// back to the same float.
json floatJson(float f) {
    if (!std::isfinite(f))
        return nullptr;
    char buf[32];
    const auto end = std::to_chars(buf, buf + sizeof buf, f).ptr;
    double d = 0;
    std::from_chars(buf, end, d);
    return d;
}

json doubleJson(double d) {
    if (!std::isfinite(d))
        return nullptr;
    return d;
}

template <typename T, typename Convert>
std::vector<T> toArray(const json& v, const std::string& path, Convert convert) {
    expectArray(v, path);
    std::vector<T> out;
    out.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i)
        out.push_back(convert(v[i], item(path, i)));
    return out;
}

json floatArrayJson(const std::vector<float>& xs) {
    json a = json::array();
    for (float x : xs)
        a.push_back(floatJson(x));
    return a;
}

json doubleArrayJson(const std::vector<double>& xs) {
    json a = json::array();
    for (double x : xs)
        a.push_back(doubleJson(x));
    return a;
}

// --- Enums as strings ---

template <typename E> struct EnumName {
    E value;
    const char* name;
};

constexpr EnumName<Order> kOrders[] = {{Order::Forward, "forward"}, {Order::Backward, "backward"}};
constexpr EnumName<AttentionKind> kAttentions[] = {{AttentionKind::Softmax, "softmax"},
                                                   {AttentionKind::Geometric, "geometric"}};
constexpr EnumName<UpdateKind> kUpdates[] = {{UpdateKind::Residual, "residual"},
                                             {UpdateKind::CopyGate, "copy-gate"}};
constexpr EnumName<PositionalKind> kPositionals[] = {{PositionalKind::None, "none"},
                                                     {PositionalKind::Sinusoidal, "sinusoidal"}};
constexpr EnumName<GeomNorm> kGeomNorms[] = {{GeomNorm::Off, "off"}, {GeomNorm::L1, "l1"}};

template <typename E, size_t N> std::string enumName(E value, const EnumName<E> (&names)[N]) {
    for (const auto& n : names)
        if (n.value == value)
            return n.name;
    return "invalid(" + std::to_string(int(value)) + ")";
}

template <typename E, size_t N>
E toEnum(const json& v, const std::string& path, const EnumName<E> (&names)[N]) {
    std::string expected;
    for (size_t i = 0; i < N; ++i)
        expected += std::string(i == 0 ? "" : i + 1 == N ? " or " : ", ") + names[i].name;
    if (!v.is_string())
        fail(path, "expected one of " + expected + ", got " + describe(v));
    const std::string s = v.get<std::string>();
    for (const auto& n : names)
        if (s == n.name)
            return n.value;
    fail(path, "unknown value '" + s + "'; expected " + expected);
}

// The fields of one object. With required = false (overrides of a preset) absent fields keep their
// current value; present ones are always checked.
class Fields {
public:
    Fields(const json& j, std::string path, bool required)
        : j_(j), path_(std::move(path)), required_(required) {
        expectObject(j_, path_);
    }

    std::string path(const char* key) const { return field(path_, key); }
    const json* get(const char* key) const {
        const json* v = find(j_, key);
        if (!v && required_)
            fail(path(key), "missing");
        return v;
    }

    void read(const char* key, int& out) const {
        if (const json* v = get(key))
            out = toInt(*v, path(key));
    }
    void read(const char* key, int64_t& out) const {
        if (const json* v = get(key))
            out = toInt64(*v, path(key));
    }
    void read(const char* key, uint64_t& out) const {
        if (const json* v = get(key))
            out = toUint64(*v, path(key));
    }
    void read(const char* key, double& out, bool nullIsNaN = false) const {
        if (const json* v = get(key))
            out = toDouble(*v, path(key), nullIsNaN);
    }
    void read(const char* key, float& out) const {
        if (const json* v = get(key))
            out = toFloat(*v, path(key), false);
    }
    void read(const char* key, bool& out) const {
        if (const json* v = get(key))
            out = toBool(*v, path(key));
    }
    void read(const char* key, std::string& out) const {
        if (const json* v = get(key))
            out = toString(*v, path(key));
    }
    template <typename E, size_t N>
    void readEnum(const char* key, E& out, const EnumName<E> (&names)[N]) const {
        if (const json* v = get(key))
            out = toEnum(*v, path(key), names);
    }

private:
    const json& j_;
    std::string path_;
    bool required_;
};

// --- Readers with paths ---

void readTask(const json& j, TaskConfig& c, const std::string& path, bool required) {
    const Fields f(j, path, required);
    f.read("symbols", c.symbols);
    f.read("functions", c.functions);
    f.read("trainMinDepth", c.trainMinDepth);
    f.read("trainMaxDepth", c.trainMaxDepth);
    f.read("validMinDepth", c.validMinDepth);
    f.read("validMaxDepth", c.validMaxDepth);
    f.read("testMinDepth", c.testMinDepth);
    f.read("testMaxDepth", c.testMaxDepth);
    f.readEnum("order", c.order, kOrders);
    f.read("seed", c.seed);
    f.read("evalExamplesPerDepth", c.evalExamplesPerDepth);
}

void readModel(const json& j, ModelConfig& c, const std::string& path, bool required) {
    const Fields f(j, path, required);
    f.read("name", c.name);
    f.readEnum("attention", c.attention, kAttentions);
    f.readEnum("update", c.update, kUpdates);
    f.readEnum("positional", c.positional, kPositionals);
    f.readEnum("geomNorm", c.geomNorm, kGeomNorms);
    f.read("sharedWeights", c.sharedWeights);
    f.read("dModel", c.dModel);
    f.read("heads", c.heads);
    f.read("dFF", c.dFF);
    f.read("steps", c.steps);
    f.read("evalSteps", c.evalSteps);
    f.read("dropout", c.dropout);
    f.read("attentionDropout", c.attentionDropout);
    f.read("gateDropout", c.gateDropout);
    f.read("gateBiasInit", c.gateBiasInit);
    // Added after format version 1 was first written: optional, 0 (the run's rate) when absent.
    if (j.is_object() && j.contains("learningRate")) f.read("learningRate", c.learningRate);
}

void readTrain(const json& j, TrainConfig& c, const std::string& path, bool required) {
    const Fields f(j, path, required);
    f.read("batchSize", c.batchSize);
    f.read("learningRate", c.learningRate);
    f.read("weightDecay", c.weightDecay);
    f.read("gradClip", c.gradClip);
    f.read("steps", c.steps);
    f.read("evalInterval", c.evalInterval);
    f.read("seed", c.seed);
    f.read("threads", c.threads);
}

std::vector<ModelConfig> readModels(const json& j, const std::string& path) {
    expectArray(j, path);
    std::vector<ModelConfig> models(j.size());
    for (size_t i = 0; i < j.size(); ++i)
        readModel(j[i], models[i], item(path, i), true);
    return models;
}

void readRunConfig(const json& j, RunConfig& c, const std::string& path) {
    // "preset" is only a label of where the configuration came from: optional.
    Fields(j, path, false).read("preset", c.preset);
    readTask(require(j, "task", path), c.task, field(path, "task"), true);
    c.models = readModels(require(j, "models", path), field(path, "models"));
    readTrain(require(j, "train", path), c.train, field(path, "train"), true);
}

void readExample(const json& j, Example& e, const std::string& path) {
    const Fields f(j, path, true);
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

void readTrace(const json& j, Trace& t, const std::string& path) {
    const Fields f(j, path, true);
    t.steps = toIntIn(*f.get("steps"), f.path("steps"), 0, kMaxTraceSteps);
    t.heads = toIntIn(*f.get("heads"), f.path("heads"), 0, kMaxTraceHeads);
    t.positions = toIntIn(*f.get("positions"), f.path("positions"), 0, kMaxTracePositions);
    t.symbols = toIntIn(*f.get("symbols"), f.path("symbols"), 0, kMaxTraceSymbols);
    const size_t steps = size_t(t.steps), heads = size_t(t.heads), T = size_t(t.positions),
                 S = size_t(t.symbols);
    // An empty trace (no probe example) has no per-step readouts either.
    const size_t readouts = T > 0 ? steps + 1 : 0;

    const auto symbolOrMinus1 = [&](const json& v, const std::string& p) {
        return toIntIn(v, p, -1, t.symbols - 1);
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

    const json& gates = *f.get("gates");
    expectArray(gates, f.path("gates"));
    if (!gates.empty())
        checkSize(gates, f.path("gates"), steps * T, "steps*positions, or none");
    t.gates = toArray<float>(gates, f.path("gates"), anyFloat);

    const json& channels = *f.get("gateChannels");
    expectArray(channels, f.path("gateChannels"));
    if (!channels.empty() && (steps * T == 0 || channels.size() % (steps * T) != 0))
        fail(f.path("gateChannels"), "expected a multiple of steps*positions = " + std::to_string(steps * T) +
                                         " values, or none, got " + std::to_string(channels.size()));
    t.gateChannels = toArray<float>(channels, f.path("gateChannels"), anyFloat);

    const json& probs = *f.get("stepProbs");
    checkSize(probs, f.path("stepProbs"), readouts * S, "(steps+1)*symbols");
    t.stepProbs = toArray<float>(probs, f.path("stepProbs"), anyFloat);
    const json& answers = *f.get("stepAnswers");
    checkSize(answers, f.path("stepAnswers"), readouts, "steps+1");
    t.stepAnswers = toArray<int>(answers, f.path("stepAnswers"), symbolOrMinus1);

    const json& inter = *f.get("intermediates");
    checkSize(inter, f.path("intermediates"), T, "positions");
    t.intermediates = toArray<int>(inter, f.path("intermediates"), symbolOrMinus1);
    t.answer = symbolOrMinus1(*f.get("answer"), f.path("answer"));
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
    f.read("trainAccuracy", r.trainAccuracy, true);
    f.read("validAccuracy", r.validAccuracy, true);
    f.read("testAccuracy", r.testAccuracy, true);
    readTrace(*f.get("probe"), r.probe, f.path("probe"));
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
    f.read("status", r.status);
    f.read("checkpointFile", r.checkpointFile);
    // The checkpoint sits beside the run file; a path out of that folder is a damaged or hostile file.
    const std::string& file = r.checkpointFile;
    if (!file.empty() && (file.front() == '/' || file.find("..") != std::string::npos))
        fail(f.path("checkpointFile"),
             "'" + file + "' must be a file name relative to the run file's folder");
}

} // namespace

// --- Configuration ---

void to_json(json& j, const TaskConfig& c) {
    j = json{{"symbols", c.symbols},
             {"functions", c.functions},
             {"trainMinDepth", c.trainMinDepth},
             {"trainMaxDepth", c.trainMaxDepth},
             {"validMinDepth", c.validMinDepth},
             {"validMaxDepth", c.validMaxDepth},
             {"testMinDepth", c.testMinDepth},
             {"testMaxDepth", c.testMaxDepth},
             {"order", enumName(c.order, kOrders)},
             {"seed", c.seed},
             {"evalExamplesPerDepth", c.evalExamplesPerDepth}};
}
void from_json(const json& j, TaskConfig& c) {
    readTask(j, c, "", true);
}

void to_json(json& j, const ModelConfig& c) {
    j = json{{"name", c.name},
             {"attention", enumName(c.attention, kAttentions)},
             {"update", enumName(c.update, kUpdates)},
             {"positional", enumName(c.positional, kPositionals)},
             {"geomNorm", enumName(c.geomNorm, kGeomNorms)},
             {"sharedWeights", c.sharedWeights},
             {"dModel", c.dModel},
             {"heads", c.heads},
             {"dFF", c.dFF},
             {"steps", c.steps},
             {"evalSteps", c.evalSteps},
             {"dropout", floatJson(c.dropout)},
             {"attentionDropout", floatJson(c.attentionDropout)},
             {"gateDropout", floatJson(c.gateDropout)},
             {"gateBiasInit", floatJson(c.gateBiasInit)},
             {"learningRate", c.learningRate}};
}
void from_json(const json& j, ModelConfig& c) {
    readModel(j, c, "", true);
}

void to_json(json& j, const TrainConfig& c) {
    j = json{{"batchSize", c.batchSize},
             {"learningRate", doubleJson(c.learningRate)},
             {"weightDecay", doubleJson(c.weightDecay)},
             {"gradClip", doubleJson(c.gradClip)},
             {"steps", c.steps},
             {"evalInterval", c.evalInterval},
             {"seed", c.seed},
             {"threads", c.threads}};
}
void from_json(const json& j, TrainConfig& c) {
    readTrain(j, c, "", true);
}

void to_json(json& j, const RunConfig& c) {
    j = json{{"preset", c.preset}, {"task", c.task}, {"models", c.models}, {"train", c.train}};
}
void from_json(const json& j, RunConfig& c) {
    readRunConfig(j, c, "");
}

// --- Records ---

void to_json(json& j, const Example& e) {
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
             {"gateChannels", floatArrayJson(t.gateChannels)},
             {"stepProbs", floatArrayJson(t.stepProbs)},
             {"stepAnswers", t.stepAnswers},
             {"intermediates", t.intermediates},
             {"answer", t.answer}};
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
             {"trainAccuracy", doubleJson(r.trainAccuracy)},
             {"validAccuracy", doubleJson(r.validAccuracy)},
             {"testAccuracy", doubleJson(r.testAccuracy)},
             {"probe", r.probe}};
}
void from_json(const json& j, EvalRecord& r) {
    readEval(j, r, "");
}

void to_json(json& j, const ModelRecord& r) {
    j = json{{"config", r.config},       {"history", r.history}, {"bestEval", r.bestEval},
             {"stepsDone", r.stepsDone}, {"status", r.status},   {"checkpointFile", r.checkpointFile}};
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
    const std::vector<std::string> problems = validate(r.config);
    if (!problems.empty()) {
        std::string message = "the configuration is invalid:";
        for (const std::string& p : problems)
            message += "\n  config." + p;
        fail("", message);
    }
    const TaskConfig& task = r.config.task;

    // Table shapes and the probe's range are checked here so that no later index can go out of bounds;
    // whether each table is a bijection is CtlTask::setTables' business.
    const json& tables = require(j, "tables", "");
    expectArray(tables, "tables");
    if (int(tables.size()) != task.functions)
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
    if (r.probe.symbol >= task.symbols)
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

// --- Config files ---

namespace {

json parseJson(const std::string& text) {
    try {
        return json::parse(text);
    } catch (const json::parse_error& e) {
        // nlohmann's message starts with an internal id ("[json.exception.parse_error.101] ").
        std::string what = e.what();
        if (const size_t cut = what.find("] ");
            what.rfind("[json.exception", 0) == 0 && cut != std::string::npos)
            what.erase(0, cut + 2);
        throw std::runtime_error("invalid JSON at byte " + std::to_string(e.byte) + ": " + what);
    }
}

// "models" of a preset-based config: replaces the preset's list. An entry starts from the model preset
// it names ("ndr" sized like the preset's first model, "vanilla" like its second), else from the
// preset's model at the same index; its fields override. Beyond the preset's list an entry without a
// model preset must give every field.
std::vector<ModelConfig> readModelOverrides(const json& j, const std::vector<ModelConfig>& base) {
    expectArray(j, "models");
    std::vector<ModelConfig> models(j.size());
    for (size_t i = 0; i < j.size(); ++i) {
        const std::string path = item("models", i);
        expectObject(j[i], path);
        ModelConfig& m = models[i];
        if (const json* preset = find(j[i], "preset")) {
            const std::string name = toString(*preset, field(path, "preset"));
            const ModelConfig& sizes = base.at(name == "vanilla" && base.size() > 1 ? 1 : 0);
            if (name == "ndr")
                m = ndrModel(sizes.dModel, sizes.heads, sizes.dFF, sizes.steps);
            else if (name == "vanilla")
                m = vanillaModel(sizes.dModel, sizes.heads, sizes.dFF, sizes.steps);
            else
                fail(field(path, "preset"), "unknown model preset '" + name + "'; expected ndr or vanilla");
            readModel(j[i], m, path, false);
        } else if (i < base.size()) {
            m = base[i];
            readModel(j[i], m, path, false);
        } else {
            readModel(j[i], m, path, true);
        }
    }
    return models;
}

} // namespace

RunConfig runConfigFromJson(const std::string& text) {
    const json j = parseJson(text);
    if (!j.is_object())
        fail("", "a run configuration must be a JSON object, got " + describe(j));
    RunConfig c;
    const json* preset = find(j, "preset");
    const std::string presetName = preset ? toString(*preset, "preset") : "custom";
    const auto names = presetNames();
    const bool builtIn = std::find(names.begin(), names.end(), presetName) != names.end();
    const bool complete = find(j, "task") && find(j, "models") && find(j, "train");
    if (builtIn) {
        c = presetConfig(presetName);
        if (const json* task = find(j, "task"))
            readTask(*task, c.task, "task", false);
        if (const json* train = find(j, "train"))
            readTrain(*train, c.train, "train", false);
        if (const json* models = find(j, "models"))
            c.models = readModelOverrides(*models, presetConfig(presetName).models);
    } else if (presetName == "custom" || complete) {
        // A full configuration; its "preset" is only a label.
        try {
            readRunConfig(j, c, "");
        } catch (const std::runtime_error& e) {
            const std::string what = e.what();
            if (what.size() < 9 || what.compare(what.size() - 9, 9, ": missing") != 0)
                throw;
            throw std::runtime_error(what + " (a configuration without a built-in \"preset\" must give every "
                                            "field; {\"preset\": \"stub\", ...} gives only the changes)");
        }
    } else {
        try {
            presetConfig(presetName);
        } catch (const std::invalid_argument& e) {
            fail("preset", e.what());
        }
    }
    const std::vector<std::string> problems = validate(c);
    if (!problems.empty()) {
        std::string message;
        for (const std::string& p : problems)
            message += (message.empty() ? "" : "\n") + p;
        throw std::runtime_error(message);
    }
    return c;
}

} // namespace ndr
