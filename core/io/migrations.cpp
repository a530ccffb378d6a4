// The older versions of the run file and the checkpoint header, brought to the current shape before
// they are read (docs/design.md §7).
#include "core/io/migrations.h"

#include "core/io/files.h"

#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <vector>

namespace ndr::migrations {

using nlohmann::json;

namespace {

// Sets each absent key of an object to its value; anything but an object is left alone.
void fillAbsent(json& object, std::initializer_list<std::pair<const char*, json>> defaults) {
    if (!object.is_object())
        return;
    for (const auto& [key, value] : defaults)
        if (!object.contains(key))
            object[key] = value;
}

template <typename F> void forEachIn(json& object, const char* key, F f) {
    if (!object.is_object())
        return;
    const auto it = object.find(key);
    if (it != object.end() && it->is_array())
        for (json& x : *it)
            f(x);
}

// Version 2: an evaluation of a run without head routing or halting, a trace with one readout, no
// operator selection and no record of state changes, a model without a loss log. Version 1 lacks
// the head routing and halting fields as well.
void upgradeTrace(json& trace) {
    fillAbsent(trace, {{"routing", json::array()},
                       {"readouts", 1},
                       {"operators", 0},
                       {"selection", json::array()},
                       {"change", json::array()}});
}

// Version 3: a trace's gates are what its operators say, ThoughtNet's operators' weight or else a copy
// gate (no model halted by a learned rule).
void nameGateMeaning(json& trace) {
    if (!trace.is_object() || trace.contains("gateMeaning"))
        return;
    const auto operators = trace.find("operators");
    const bool weights = operators != trace.end() && operators->is_number() && operators->get<double>() > 0;
    trace["gateMeaning"] = weights ? "operator-weight" : "copy-gate";
}

void upgradeEvaluation(json& eval) {
    fillAbsent(eval, {{"baseline", json::array()},
                      {"routeEntropy", nullptr},
                      {"headShare", json::array()},
                      {"haltCounts", json::array()},
                      {"everyStepAccuracy", json::array()}});
    if (eval.is_object() && eval.contains("probe"))
        upgradeTrace(eval["probe"]);
}

void upgradeModel(json& model) {
    fillAbsent(model, {{"lossLog", {{"steps", json::array()}, {"loss", json::array()}}}});
    forEachIn(model, "history", upgradeEvaluation);
}

} // namespace

void upgradeRunFile(json& run, int64_t version) {
    if (version < 3)
        forEachIn(run, "models", upgradeModel);
    if (version < 4)
        forEachIn(run, "models", [](json& model) {
            forEachIn(model, "history", [](json& eval) {
                if (eval.is_object() && eval.contains("probe"))
                    nameGateMeaning(eval["probe"]);
            });
        });
}

void upgradeCheckpointHeader(json& header, int64_t version) {
    if (version >= 2 || !header.is_object())
        return;
    // Version 1: "rngState" is "<batch generator> <dropout generator> <Adam's step> <seconds>" as the
    // generators stream themselves: the batch generator's words, then the dropout generator's four.
    const auto it = header.find("rngState");
    if (it == header.end())
        throw FileError("the header has no 'rngState' field");
    if (!it->is_string())
        throw FileError("header field rngState: expected a string");
    const std::string text = it->get<std::string>();
    header.erase(it);
    if (text.empty()) {
        header["training"] = nullptr;
        return;
    }
    std::istringstream is(text);
    std::vector<std::string> words;
    for (std::string w; is >> w;)
        words.push_back(w);
    constexpr size_t kDropoutWords = 4;
    if (words.size() < kDropoutWords + 3)
        throw FileError("the training generator state is damaged");
    const auto join = [&](size_t from, size_t to) {
        std::string s;
        for (size_t i = from; i < to; ++i)
            s += (i > from ? " " : "") + words[i];
        return s;
    };
    const size_t n = words.size(), dropoutFrom = n - 2 - kDropoutWords;
    std::istringstream tail(words[n - 2] + " " + words[n - 1]);
    int64_t step = 0;
    double seconds = 0;
    if (!(tail >> step >> seconds) || !(tail >> std::ws).eof())
        throw FileError("the training generator state is damaged");
    const json training = {{"batchRng", join(0, dropoutFrom)},
                           {"dropoutRng", join(dropoutFrom, n - 2)},
                           {"adamStep", step},
                           {"seconds", seconds}};
    header["training"] = training;
}

} // namespace ndr::migrations
