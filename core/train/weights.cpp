// Exported models: the safetensors weights under the engine's tensor names and the JSON description
// beside them, written from a run and read back into a run record (see weights.h).
#include "core/train/weights.h"
#include "core/config/model_kind.h"

#include "core/io/serialize.h"
#include "core/nn/model.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <map>
#include <set>
#include <sstream>

namespace ndr {

using nlohmann::json;
using nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

// A description is a few kilobytes (the function tables are its largest part).
constexpr uint64_t kMaxDescriptionBytes = 4u << 20;

std::string quote(const fs::path& p) {
    return "'" + p.string() + "'";
}

// Runs `read`, turning a refusal into a FileError that starts with `prefix`.
template <typename Read> auto withPrefix(const std::string& prefix, Read&& read) -> decltype(read()) {
    try {
        return read();
    } catch (const std::exception& e) {
        throw FileError(prefix + e.what());
    }
}

std::vector<std::string> vocabularyOf(const Task& task) {
    std::vector<std::string> v;
    for (int t = 0; t < task.vocabSize(); ++t)
        v.push_back(task.tokenName(t));
    return v;
}

// Objects indented, arrays of numbers or strings on one line (a function table per line).
void appendPretty(std::string& out, const ordered_json& j, int depth) {
    const std::string pad(size_t(depth) * 2, ' '), inner(size_t(depth + 1) * 2, ' ');
    const auto plain = [](const ordered_json& v) {
        return v.dump(-1, ' ', false, json::error_handler_t::replace);
    };
    if (j.is_object() && !j.empty()) {
        out += "{\n";
        size_t i = 0;
        for (const auto& [key, value] : j.items()) {
            out += inner + plain(key) + ": ";
            appendPretty(out, value, depth + 1);
            out += ++i < j.size() ? ",\n" : "\n";
        }
        out += pad + "}";
    } else if (j.is_array() &&
               std::any_of(j.begin(), j.end(), [](const auto& e) { return e.is_structured(); })) {
        out += "[\n";
        for (size_t i = 0; i < j.size(); ++i) {
            out += inner;
            appendPretty(out, j[i], depth + 1);
            out += i + 1 < j.size() ? ",\n" : "\n";
        }
        out += pad + "]";
    } else {
        out += plain(j);
    }
}

std::vector<int64_t> tensorShape(const TensorInfo& t) {
    if (t.rows == 1)
        return {int64_t(t.cols)};
    return {int64_t(t.rows), int64_t(t.cols)};
}

// A description as read from its file.
struct Description {
    fs::path file;
    int index = -1; // the model's place in its run; -1: not given
    std::string weights;
    int64_t step = 0;
    TaskConfig task;
    bool hasTables = false;
    std::vector<std::vector<int>> tables;
    ModelConfig model;
    bool hasTrain = false;
    TrainConfig train;
    bool hasVocabulary = false, hasAnswers = false;
    std::vector<std::string> vocabulary, answers;
};

std::vector<std::string> stringList(const json& v, const std::string& what) {
    if (!v.is_array())
        throw FileError(what + ": expected an array of strings");
    std::vector<std::string> out;
    for (const json& e : v) {
        if (!e.is_string())
            throw FileError(what + ": expected an array of strings, found " + e.dump());
        out.push_back(e.get<std::string>());
    }
    return out;
}

Description parseDescription(const std::string& text, const fs::path& file) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::parse_error& e) {
        throw FileError("it is not valid JSON (byte " + std::to_string(e.byte) + ")");
    }
    if (!j.is_object())
        throw FileError("it is not a JSON object");
    const auto format = j.find("format");
    if (format == j.end() || !format->is_string())
        throw FileError("it has no \"format\"; export-weights writes \"format\": \"" +
                        std::string(kModelDescriptionFormat) + "\"");
    if (format->get<std::string>() != kModelDescriptionFormat)
        throw FileError("it is not an NDR Studio model description (format '" + format->get<std::string>() +
                        "'); import-weights reads the files export-weights writes");
    static const std::set<std::string> known = {"format", "version", "index", "weights",    "step",   "task",
                                                "tables", "model",   "train", "vocabulary", "answers"};
    for (const auto& [key, value] : j.items())
        if (!known.count(key))
            throw FileError("unknown field '" + key + "'");
    const auto need = [&](const char* key) -> const json& {
        const auto it = j.find(key);
        if (it == j.end())
            throw FileError("it has no \"" + std::string(key) + "\"");
        return *it;
    };
    const auto integer = [](const json& v, const std::string& what, int64_t lo, int64_t hi) {
        if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(hi)) ||
            (!v.is_number_unsigned() && (v.get<int64_t>() < lo || v.get<int64_t>() > hi)))
            throw FileError(what + ": expected an integer in " + std::to_string(lo) + ".." +
                            std::to_string(hi) + ", got " + v.dump());
        return v.get<int64_t>();
    };
    Description d;
    d.file = file;
    const int64_t version = integer(need("version"), "version", 0, INT32_MAX);
    if (version > kModelDescriptionVersion)
        throw FileError("version " + std::to_string(version) + " is newer than this NDR Studio reads (" +
                        std::to_string(kModelDescriptionVersion) + "): update NDR Studio");
    if (version < 1)
        throw FileError("version " + std::to_string(version) + " is not valid");
    if (const auto it = j.find("index"); it != j.end())
        d.index = int(integer(*it, "index", 0, 4096));
    const json& weights = need("weights");
    if (!weights.is_string())
        throw FileError("weights: expected the name of the safetensors file beside it");
    d.weights = weights.get<std::string>();
    if (d.weights.empty() || d.weights == "." || d.weights == ".." ||
        d.weights.find('/') != std::string::npos || d.weights.find('\0') != std::string::npos)
        throw FileError("weights: '" + d.weights + "' is not the name of a file beside the description");
    d.step = integer(need("step"), "step", 0, INT_MAX);
    const auto config = [&](const char* key, auto& out) {
        try {
            from_json(need(key), out);
        } catch (const FileError&) {
            throw;
        } catch (const std::exception& e) {
            throw FileError(std::string(key) + "." + e.what());
        }
    };
    config("task", d.task);
    config("model", d.model);
    if (j.contains("train")) {
        config("train", d.train);
        d.hasTrain = true;
    }
    if (const auto it = j.find("tables"); it != j.end()) {
        d.hasTables = true;
        if (!it->is_array())
            throw FileError("tables: expected an array of function tables");
        for (size_t f = 0; f < it->size(); ++f) {
            const json& row = (*it)[f];
            if (!row.is_array() || row.size() > 64)
                throw FileError("tables[" + std::to_string(f) + "]: expected an array of at most 64 symbols");
            std::vector<int> table;
            for (size_t x = 0; x < row.size(); ++x)
                table.push_back(int(
                    integer(row[x], "tables[" + std::to_string(f) + "][" + std::to_string(x) + "]", 0, 63)));
            d.tables.push_back(std::move(table));
        }
    }
    if (const auto it = j.find("vocabulary"); it != j.end()) {
        d.vocabulary = stringList(*it, "vocabulary");
        d.hasVocabulary = true;
    }
    if (const auto it = j.find("answers"); it != j.end()) {
        d.answers = stringList(*it, "answers");
        d.hasAnswers = true;
    }
    return d;
}

// The first place two lists of names part, for messages.
std::string firstDifference(const std::vector<std::string>& got, const std::vector<std::string>& wanted,
                            const std::string& what) {
    for (size_t i = 0; i < std::max(got.size(), wanted.size()); ++i) {
        const std::string g = i < got.size() ? "'" + got[i] + "'" : "nothing";
        const std::string w = i < wanted.size() ? "'" + wanted[i] + "'" : "nothing";
        if (g != w)
            return what + " " + std::to_string(i) + " is " + g + " but the task's is " + w;
    }
    return {};
}

std::vector<fs::path> descriptionFiles(const fs::path& path) {
    std::error_code ec;
    if (fs::is_regular_file(path, ec))
        return {path};
    if (!fs::is_directory(path, ec))
        throw FileError("cannot import " + quote(path) + ": no such folder or file");
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(path, ec))
        if (entry.path().extension() == ".json" && entry.is_regular_file(ec))
            files.push_back(entry.path());
    if (ec)
        throw FileError("cannot list " + quote(path) + ": " + ec.message());
    std::sort(files.begin(), files.end());
    if (files.empty())
        throw FileError("cannot import " + quote(path) +
                        ": it holds no model description (<model>.json, as export-weights writes)");
    return files;
}

} // namespace

SafetensorsFile weightsToSafetensors(const std::vector<TensorInfo>& layout,
                                     const std::vector<float>& values) {
    SafetensorsFile file;
    size_t at = 0;
    for (const TensorInfo& t : layout) {
        const size_t n = size_t(t.rows) * size_t(t.cols);
        if (at + n > values.size())
            throw FileError("the weights hold fewer values than the layout's tensors");
        file.tensors.push_back({t.name, tensorShape(t),
                                std::vector<float>(values.begin() + std::ptrdiff_t(at),
                                                   values.begin() + std::ptrdiff_t(at + n))});
        at += n;
    }
    if (at != values.size())
        throw FileError("the weights hold more values than the layout's tensors");
    return file;
}

std::vector<float> weightsFromSafetensors(const SafetensorsFile& file,
                                          const std::vector<TensorInfo>& layout) {
    std::vector<float> values;
    std::set<std::string> wanted;
    for (const TensorInfo& t : layout) {
        wanted.insert(t.name);
        const SafetensorsTensor* s = file.find(t.name);
        if (!s)
            throw FileError("tensor '" + t.name + "' is missing; this model needs it with shape " +
                            shapeText(tensorShape(t)));
        const bool fits = s->shape == tensorShape(t) ||
                          (t.rows == 1 && s->shape == std::vector<int64_t>{1, int64_t(t.cols)});
        if (!fits)
            throw FileError("tensor '" + t.name + "' has shape " + shapeText(s->shape) +
                            " but this model's is " + shapeText(tensorShape(t)) +
                            " (do the weights fit the description's model and task?)");
        values.insert(values.end(), s->values.begin(), s->values.end());
    }
    for (const SafetensorsTensor& s : file.tensors)
        if (!wanted.count(s.name))
            throw FileError("tensor '" + s.name +
                            "' is no parameter of this model (docs/design.md §7 lists the names)");
    return values;
}

std::vector<ExportedModel> exportModels(const Run& run, bool best) {
    const RunRecord record = run.record();
    const std::vector<std::string> stems = checkpointStems(record.config.models);
    const Task& task = run.task();
    std::vector<ExportedModel> out;
    for (int i = 0; i < run.modelCount(); ++i) {
        if (!run.restored(i))
            throw FileError("model " + record.models[size_t(i)].config.name + " has no weights to export");
        const CheckpointData ckpt = run.trainer(i).checkpoint();
        ExportedModel m;
        m.stem = stems[size_t(i)];
        m.bestWeights = best && !ckpt.bestParams.empty();
        m.weights = weightsToSafetensors(ckpt.layout, m.bestWeights ? ckpt.bestParams : ckpt.params);
        m.weights.metadata = {
            {"format", kWeightsFormat},          {"version", "1"},
            {"model", ckpt.model.name},          {"kind", kindOf(ckpt.model).id},
            {"step", std::to_string(ckpt.step)}, {"weights", m.bestWeights ? "best" : "final"}};
        ordered_json d;
        d["format"] = kModelDescriptionFormat;
        d["version"] = kModelDescriptionVersion;
        d["index"] = i;
        d["weights"] = m.stem + ".safetensors";
        d["step"] = ckpt.step;
        d["task"] = ordered_json::parse(json(record.config.task).dump());
        if (!record.tables.empty())
            d["tables"] = record.tables;
        d["model"] = ordered_json::parse(json(ckpt.model).dump());
        d["train"] = ordered_json::parse(json(record.config.train).dump());
        d["vocabulary"] = vocabularyOf(task);
        d["answers"] = task.symbolNames();
        appendPretty(m.description, d, 0);
        m.description += "\n";
        out.push_back(std::move(m));
    }
    return out;
}

void writeExportedModels(const fs::path& dir, const std::vector<ExportedModel>& models, bool overwrite) {
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        throw FileError(dir.string() + " exists and is not a folder");
    if (!overwrite) {
        std::vector<std::string> there;
        for (const ExportedModel& m : models)
            for (const std::string& name : {m.stem + ".json", m.stem + ".safetensors"})
                if (fs::exists(dir / name, ec))
                    there.push_back(name);
        if (!there.empty()) {
            std::string list;
            for (const std::string& name : there)
                list += (list.empty() ? "" : ", ") + name;
            throw FileError((dir / "").string() + " already holds " + list +
                            "; choose another folder or pass --overwrite");
        }
    }
    fs::create_directories(dir, ec);
    if (ec)
        throw FileError("cannot create the folder " + dir.string() + ": " + ec.message());
    // The weights first: a description never names a file that is not there.
    for (const ExportedModel& m : models) {
        saveSafetensors(dir / (m.stem + ".safetensors"), m.weights);
        writeFileAtomic(dir / (m.stem + ".json"), m.description);
    }
}

ImportedRun importModels(const fs::path& path) {
    std::vector<Description> ds;
    for (const fs::path& file : descriptionFiles(path)) {
        const std::string text = readFileBounded(file, kMaxDescriptionBytes);
        ds.push_back(
            withPrefix("cannot import " + quote(file) + ": ", [&] { return parseDescription(text, file); }));
    }
    // The run's order: by index, then (descriptions without one) by file name.
    std::stable_sort(ds.begin(), ds.end(), [](const Description& a, const Description& b) {
        return (a.index < 0 ? INT_MAX : a.index) < (b.index < 0 ? INT_MAX : b.index);
    });
    const Description& first = ds.front();
    const auto refuse = [](const Description& d, const std::string& what) {
        return FileError("cannot import " + quote(d.file) + ": " + what);
    };
    for (size_t i = 1; i < ds.size(); ++i) {
        const Description& d = ds[i];
        const std::string other =
            " than " + quote(first.file) + " (the models of one import must come from one run)";
        if (d.index >= 0 && d.index == ds[i - 1].index)
            throw refuse(d, "index " + std::to_string(d.index) + " is also that of " + quote(ds[i - 1].file));
        if (!(d.task == first.task))
            throw refuse(d, "it describes another task" + other);
        if (d.hasTables != first.hasTables || d.tables != first.tables)
            throw refuse(d, "its function tables differ from those of " + quote(first.file));
        if (d.hasTrain && first.hasTrain && !(d.train == first.train))
            throw refuse(d, "its training settings differ" + other);
    }

    RunConfig config;
    config.preset = "imported";
    config.task = first.task;
    for (const Description& d : ds)
        config.models.push_back(d.model);
    int64_t maxStep = 0;
    for (const Description& d : ds)
        maxStep = std::max(maxStep, d.step);
    if (first.hasTrain) {
        config.train = first.train;
    } else {
        config.train.steps = int(std::max<int64_t>(1, maxStep));
        config.train.evalInterval = std::max(1, std::min(config.train.evalInterval, config.train.steps));
    }
    if (const auto problems = validate(config); !problems.empty()) {
        std::string all;
        for (const Problem& p : problems)
            all += (all.empty() ? "" : "; ") + p.text();
        throw refuse(first, "the configuration it describes is not valid: " + all);
    }

    std::unique_ptr<Task> task;
    try {
        task = makeTask(config.task);
        if (first.hasTables)
            task->restoreTables(first.tables);
    } catch (const std::invalid_argument& e) {
        throw refuse(first, e.what());
    }
    const std::vector<std::string> vocabulary = vocabularyOf(*task), answers = task->symbolNames();
    for (const Description& d : ds) {
        if (d.hasVocabulary)
            if (const std::string diff = firstDifference(d.vocabulary, vocabulary, "token"); !diff.empty())
                throw refuse(d, "its vocabulary is not the task's: " + diff);
        if (d.hasAnswers)
            if (const std::string diff = firstDifference(d.answers, answers, "answer"); !diff.empty())
                throw refuse(d, "its answers are not the task's: " + diff);
    }

    ImportedRun out;
    out.record.config = config;
    out.record.tables = task->savedTables();
    out.record.probe = defaultProbe(*task);
    for (const Description& d : ds) {
        std::unique_ptr<Model<float>> model;
        try {
            model = makeModel<float>(d.model, task->vocabSize(), task->answerCount());
        } catch (const std::invalid_argument& e) {
            throw refuse(d, std::string("model: ") + e.what());
        }
        const fs::path weightsFile = d.file.parent_path() / d.weights;
        const SafetensorsFile weights = loadSafetensors(weightsFile);
        if (const auto it = weights.metadata.find("format");
            it != weights.metadata.end() && it->second != kWeightsFormat)
            throw FileError("cannot import " + quote(weightsFile) + ": its metadata names the format '" +
                            it->second + "', not " + kWeightsFormat);
        CheckpointData ckpt;
        ckpt.model = d.model;
        ckpt.vocabSize = task->vocabSize();
        ckpt.symbols = task->answerCount();
        ckpt.step = d.step;
        ckpt.layout = model->params().layout();
        ckpt.params = withPrefix("cannot import " + quote(weightsFile) + ": ",
                                 [&] { return weightsFromSafetensors(weights, ckpt.layout); });
        ModelRecord m;
        m.config = d.model;
        m.stepsDone = int(d.step);
        m.status = {ModelState::Finished, "imported weights"};
        out.record.models.push_back(std::move(m));
        out.checkpoints.push_back(std::move(ckpt));
        out.descriptions.push_back(d.file);
    }
    return out;
}

} // namespace ndr
