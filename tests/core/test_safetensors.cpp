// The safetensors reader and writer, and exported models read back (core/io/safetensors.h,
// core/train/weights.h): round trips, and one table row per malformed file or description, each
// refused with a message naming what is wrong.
#include "core/io/safetensors.h"
#include "core/io/serialize.h"
#include "core/nn/model.h"
#include "core/train/run.h"
#include "core/train/weights.h"

#include <QTemporaryDir>
#include <QtTest>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

using namespace ndr;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

struct Row {
    std::string bytes;    // a safetensors file
    std::string expected; // what the message must contain
};

} // namespace

Q_DECLARE_METATYPE(Row)

namespace {

std::string readAll(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeAll(const fs::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
}

// A file of `header` text (its length field computed) and `data` bytes.
std::string fileOf(const std::string& header, const std::string& data) {
    std::string s;
    const uint64_t n = header.size();
    s.append(reinterpret_cast<const char*>(&n), 8);
    return s + header + data;
}

std::string floats(std::initializer_list<float> xs) {
    std::string s;
    for (float x : xs)
        s.append(reinterpret_cast<const char*>(&x), 4);
    return s;
}

// Two tensors: a (2) at [0, 8), b (1) at [8, 12).
std::string twoTensors(const std::string& aEntry, const std::string& bEntry, const std::string& data) {
    return fileOf("{\"a\":" + aEntry + ",\"b\":" + bEntry + "}", data);
}
const std::string kA = R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})";
const std::string kB = R"({"dtype":"F32","shape":[1],"data_offsets":[8,12]})";
const std::string kData = floats({1, 2, 3});

std::string refusal(const std::function<void()>& f) {
    try {
        f();
    } catch (const FileError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("[not a FileError] ") + e.what();
    }
    return {};
}

#define EXPECT_REFUSAL(call, expected)                                                                       \
    do {                                                                                                     \
        const std::string m_ = refusal([&] { call; });                                                       \
        QVERIFY2(!m_.empty(), "accepted");                                                                   \
        QVERIFY2(m_.find(expected) != std::string::npos,                                                     \
                 ("message: " + m_ + "\nexpected: " + std::string(expected)).c_str());                       \
    } while (0)

// A saved run of two tiny models and their exported files.
struct Exported {
    std::unique_ptr<Run> run;
    std::vector<ExportedModel> models;
};

RunConfig tinyConfig() {
    RunConfig c = presetConfig("stub");
    c.task.evalExamplesPerDepth = 8;
    c.models = {ndrModel(8, 2, 8, 3), vanillaModel(8, 2, 8, 3)};
    c.train.steps = 2;
    c.train.evalInterval = 2;
    return c;
}

} // namespace

class TestSafetensors : public QObject {
    Q_OBJECT

private slots:
    void roundTripKeepsEveryTensorAndTheMetadata() {
        SafetensorsFile f;
        f.tensors = {{"w", {2, 3}, {1, 2, 3, 4, 5, 6}},
                     {"scalar", {}, {7}},
                     {"empty", {0, 3}, {}},
                     {"b", {3}, {-1.5f, 0, 1e-30f}}};
        f.metadata = {{"format", "x"}, {"note", "ü"}};
        const std::string bytes = safetensorsToBytes(f);
        uint64_t n = 0;
        std::memcpy(&n, bytes.data(), 8);
        QCOMPARE((8 + n) % 8, uint64_t(0)); // the data starts aligned
        const SafetensorsFile back = safetensorsFromBytes(bytes);
        QCOMPARE(back.metadata, f.metadata);
        QCOMPARE(back.tensors.size(), f.tensors.size());
        for (const SafetensorsTensor& t : f.tensors) {
            const SafetensorsTensor* b = back.find(t.name);
            QVERIFY2(b, t.name.c_str());
            QVERIFY(*b == t);
        }
        QCOMPARE(safetensorsToBytes(back),
                 safetensorsToBytes(safetensorsFromBytes(safetensorsToBytes(back))));
    }

    // Files written elsewhere: keys in any order, the data in another order than the keys', the
    // header padded with spaces, a one-row tensor written [1, cols].
    void readsOtherWritersLayouts() {
        const std::string header =
            R"({"__metadata__":{"k":"v"},"z":{"dtype":"F32","shape":[1,2],"data_offsets":[4,12]},)"
            R"("a":{"shape":[1],"data_offsets":[0,4],"dtype":"F32"}}   )";
        const SafetensorsFile f = safetensorsFromBytes(fileOf(header, floats({9, 1, 2})));
        QCOMPARE(f.tensors.size(), size_t(2));
        QCOMPARE(f.tensors[0].name, std::string("a")); // data order
        QCOMPARE(f.find("z")->values, (std::vector<float>{1, 2}));
        QCOMPARE(f.metadata.at("k"), std::string("v"));
        QVERIFY((weightsFromSafetensors(f, {{"a", 1, 1}, {"z", 1, 2}}) == std::vector<float>{9, 1, 2}));
    }

    void refusesBadFiles_data() {
        QTest::addColumn<Row>("row");
        const auto add = [](const char* name, std::string bytes, std::string expected) {
            QTest::newRow(name) << Row{std::move(bytes), std::move(expected)};
        };
        const std::string good = twoTensors(kA, kB, kData);
        add("empty file", "", "truncated");
        add("shorter than the length field", "abc", "truncated");
        add("header length beyond the file", good.substr(0, 20), "runs beyond the end of the file");
        std::string huge = good;
        const uint64_t big = uint64_t(1) << 40;
        std::memcpy(huge.data(), &big, 8);
        add("header length of 2^40", huge, "runs beyond the end of the file");
        add("header not JSON", fileOf("{\"a\": [1,", ""), "not valid JSON");
        add("header an array", fileOf("[1, 2]", ""), "not a JSON object");
        add("nested too deep", fileOf(std::string(100, '[') + std::string(100, ']'), ""),
            "nested 100 levels deep");
        add("dtype F16", twoTensors(R"({"dtype":"F16","shape":[4],"data_offsets":[0,8]})", kB, kData),
            "dtype F16; NDR Studio reads F32");
        add("dtype unknown", twoTensors(R"({"dtype":"F31","shape":[2],"data_offsets":[0,8]})", kB, kData),
            "not a safetensors dtype");
        add("dtype not a string", twoTensors(R"({"dtype":32,"shape":[2],"data_offsets":[0,8]})", kB, kData),
            "dtype is not a string");
        add("negative side", twoTensors(R"({"dtype":"F32","shape":[-2],"data_offsets":[0,8]})", kB, kData),
            "shape[0]: expected a non-negative integer");
        add("fractional side", twoTensors(R"({"dtype":"F32","shape":[2.5],"data_offsets":[0,8]})", kB, kData),
            "shape[0]");
        add("shape and offsets disagree",
            twoTensors(R"({"dtype":"F32","shape":[3],"data_offsets":[0,8]})", kB, kData),
            "needs 12 bytes of F32 but data_offsets [0, 8] hold 8");
        add("too many values",
            twoTensors(R"({"dtype":"F32","shape":[65536,65536],"data_offsets":[0,8]})", kB, kData),
            "holds more than");
        add("overlapping offsets",
            twoTensors(kA, R"({"dtype":"F32","shape":[1],"data_offsets":[4,8]})", kData), "overlap");
        add("a gap between tensors",
            twoTensors(kA, R"({"dtype":"F32","shape":[1],"data_offsets":[12,16]})", floats({1, 2, 3, 4})),
            "belong to no tensor");
        add("offsets past the data",
            twoTensors(kA, R"({"dtype":"F32","shape":[1],"data_offsets":[8,12]})", floats({1, 2})),
            "run past the end of the data (8 bytes)");
        add("bytes after the last tensor", twoTensors(kA, kB, kData + "xyz!"), "after the last tensor");
        add("offsets reversed", twoTensors(kA, R"({"dtype":"F32","shape":[0],"data_offsets":[12,8]})", kData),
            "end before they begin");
        add("no data_offsets", twoTensors(kA, R"({"dtype":"F32","shape":[1]})", kData),
            "tensor 'b' has no 'data_offsets'");
        add("offsets not a pair", twoTensors(kA, R"({"dtype":"F32","shape":[1],"data_offsets":[8]})", kData),
            "not a pair");
        add("unknown field",
            twoTensors(kA, R"({"dtype":"F32","shape":[1],"data_offsets":[8,12],"x":1})", kData),
            "unknown field 'x'");
        add("a name twice", fileOf("{\"a\":" + kA + ",\"a\":" + kA + "}", floats({1, 2})), "names 'a' twice");
        add("metadata not strings", fileOf(R"({"__metadata__":{"n":1}})", ""), "__metadata__ field 'n'");
        add("metadata not an object", fileOf(R"({"__metadata__":[]})", ""), "__metadata__ is not an object");
        add("an empty name", fileOf("{\"\":" + kA + "}", floats({1, 2})), "empty name");
    }

    void refusesBadFiles() {
        QFETCH(Row, row);
        EXPECT_REFUSAL(safetensorsFromBytes(row.bytes), row.expected);
    }

    void writerRefusesValuesThatDoNotFit() {
        SafetensorsFile f;
        f.tensors = {{"a", {2, 2}, {1, 2, 3}}};
        EXPECT_REFUSAL(safetensorsToBytes(f), "has 3 values for shape [2, 2]");
        f.tensors = {{"a", {1}, {1}}, {"a", {1}, {2}}};
        EXPECT_REFUSAL(safetensorsToBytes(f), "two tensors are named 'a'");
        f.tensors = {{"__metadata__", {1}, {1}}};
        EXPECT_REFUSAL(safetensorsToBytes(f), "cannot be named");
    }

    void loadNamesTheFile() {
        QTemporaryDir dir;
        const fs::path p = fs::path(dir.path().toStdString()) / "w.safetensors";
        writeAll(p, "1234");
        EXPECT_REFUSAL(loadSafetensors(p), "cannot load weights '" + p.string() + "': truncated");
    }

    // The engine's names and shapes: a one-row tensor as [cols] (or [1, cols]); a missing, misshapen or
    // extra tensor is refused by name.
    void weightsFollowTheLayout() {
        const std::vector<TensorInfo> layout = {{"embedding", 3, 2}, {"readout.b", 1, 2}};
        const SafetensorsFile f = weightsToSafetensors(layout, {1, 2, 3, 4, 5, 6, 7, 8});
        QCOMPARE(f.find("embedding")->shape, (std::vector<int64_t>{3, 2}));
        QCOMPARE(f.find("readout.b")->shape, (std::vector<int64_t>{2}));
        QCOMPARE(weightsFromSafetensors(f, layout), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
        SafetensorsFile missing = f;
        missing.tensors.pop_back();
        EXPECT_REFUSAL(weightsFromSafetensors(missing, layout), "tensor 'readout.b' is missing");
        SafetensorsFile wrong = f;
        wrong.tensors[0].shape = {2, 3};
        EXPECT_REFUSAL(weightsFromSafetensors(wrong, layout), "tensor 'embedding' has shape [2, 3] but this "
                                                              "model's is [3, 2]");
        SafetensorsFile extra = f;
        extra.tensors.push_back({"layer.att.wz", {1}, {0}});
        EXPECT_REFUSAL(weightsFromSafetensors(extra, layout), "tensor 'layer.att.wz' is no parameter");
    }

    // Every tensor name of every model kind is unique, so the files name each tensor once.
    void engineNamesAreUnique() {
        RunConfig c = tinyConfig();
        ModelConfig routed = ndrModel(8, 2, 8, 3);
        routed.as<EncoderConfig>().headRouting = true;
        ModelConfig separate = tableOneModel("absrel-gate", 8, 2, 8, 3);
        separate.as<EncoderConfig>().sharedWeights = false;
        separate.name = "separate";
        for (const ModelConfig& m :
             {c.models[0], c.models[1], routed, separate, lstmModel(8, 4), thoughtNetModel(8, 2, 8, 3, 3)}) {
            const auto model = makeModel<float>(m, 11, 4);
            std::set<std::string> names;
            for (const TensorInfo& t : model->params().layout())
                QVERIFY2(names.insert(t.name).second, (m.name + ": " + t.name + " twice").c_str());
            QVERIFY(names.size() >= 7);
        }
    }

    void exportThenImportGivesTheSameRun() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        Run run(tinyConfig());
        run.trainer(0).trainStep();
        const std::vector<ExportedModel> models = exportModels(run, false);
        QCOMPARE(models.size(), size_t(2));
        writeExportedModels(root / "out", models, false);
        EXPECT_REFUSAL(writeExportedModels(root / "out", models, false), "already holds ndr.json");
        const ImportedRun back = importModels(root / "out");
        QVERIFY(back.record.config.task == run.config().task);
        QVERIFY(back.record.config.train == run.config().train);
        QCOMPARE(back.record.tables, run.record().tables);
        for (int i = 0; i < 2; ++i) {
            QVERIFY(back.record.config.models[size_t(i)] == run.config().models[size_t(i)]);
            QCOMPARE(back.checkpoints[size_t(i)].params, run.trainer(i).checkpoint().params);
            QCOMPARE(back.checkpoints[size_t(i)].layout, run.trainer(i).checkpoint().layout);
        }
        QCOMPARE(back.record.models[0].stepsDone, 1);
        // One description alone is a run of that model.
        QCOMPARE(importModels(root / "out" / "transformer.json").record.models.size(), size_t(1));
    }

    // One row per malformed description or weights file of an export; the import reads only.
    void importRefusesBadDescriptions() {
        QTemporaryDir dir;
        const fs::path root = dir.path().toStdString();
        Run run(tinyConfig());
        writeExportedModels(root / "good", exportModels(run, false), false);
        const json good = json::parse(readAll(root / "good" / "ndr.json"));
        struct Case {
            const char* name;
            std::function<void(json&)> edit;
            std::string expected;
        };
        const std::vector<Case> cases = {
            {"another format", [](json& j) { j["format"] = "ndr-studio-run"; },
             "not an NDR Studio model description"},
            {"no format", [](json& j) { j.erase("format"); }, "has no \"format\""},
            {"a newer version", [](json& j) { j["version"] = 2; }, "newer than this NDR Studio reads"},
            {"an unknown field", [](json& j) { j["colour"] = "red"; }, "unknown field 'colour'"},
            {"weights in another folder", [](json& j) { j["weights"] = "../ndr.safetensors"; },
             "is not the name of a file beside"},
            {"no task", [](json& j) { j.erase("task"); }, "has no \"task\""},
            {"a task field of the wrong type", [](json& j) { j["task"]["symbols"] = "four"; },
             "task.symbols"},
            {"an invalid model", [](json& j) { j["model"]["heads"] = 3; }, "does not divide"},
            {"a model wider than its weights", [](json& j) { j["model"]["dModel"] = 16; },
             "has shape [11, 8] but this model's is [11, 16]"},
            {"separate layers for shared weights", [](json& j) { j["model"]["sharedWeights"] = false; },
             "tensor 'layer0.att.wq' is missing"},
            {"another vocabulary", [](json& j) { j["vocabulary"][4] = "e"; },
             "token 4 is 'e' but the task's is 'a'"},
            {"tables that are no bijection",
             [](json& j) {
                 j["tables"][0] = {0, 0, 1, 2};
             },
             "bijection"},
            {"a negative step", [](json& j) { j["step"] = -1; }, "step: expected an integer"},
        };
        for (const Case& c : cases) {
            const fs::path folder = root / c.name;
            fs::create_directories(folder);
            fs::copy_file(root / "good" / "ndr.safetensors", folder / "ndr.safetensors");
            json j = good;
            c.edit(j);
            writeAll(folder / "ndr.json", j.dump());
            const auto before = fs::last_write_time(folder / "ndr.safetensors");
            const std::string m = refusal([&] { importModels(folder); });
            QVERIFY2(m.find(c.expected) != std::string::npos, (std::string(c.name) + ": " + m).c_str());
            QVERIFY2(m.find((folder / "ndr").string()) != std::string::npos,
                     ("names the file: " + m).c_str());
            QCOMPARE(fs::last_write_time(folder / "ndr.safetensors"), before);
        }
        // Weights: truncated, of another format, missing.
        const fs::path bad = root / "bad-weights";
        fs::create_directories(bad);
        writeAll(bad / "ndr.json", good.dump());
        const std::string bytes = readAll(root / "good" / "ndr.safetensors");
        writeAll(bad / "ndr.safetensors", bytes.substr(0, bytes.size() - 4));
        EXPECT_REFUSAL(importModels(bad), "run past the end of the data");
        writeAll(bad / "ndr.safetensors", bytes.substr(0, 100));
        EXPECT_REFUSAL(importModels(bad), "header length");
        SafetensorsFile other = safetensorsFromBytes(bytes);
        other.metadata["format"] = "something-else";
        writeAll(bad / "ndr.safetensors", safetensorsToBytes(other));
        EXPECT_REFUSAL(importModels(bad), "metadata names the format 'something-else'");
        fs::remove(bad / "ndr.safetensors");
        EXPECT_REFUSAL(importModels(bad), "ndr.safetensors");
        // Not JSON; an empty folder; two models of different tasks.
        writeAll(bad / "ndr.json", "{\"format\": ");
        EXPECT_REFUSAL(importModels(bad), "not valid JSON");
        fs::remove(bad / "ndr.json");
        EXPECT_REFUSAL(importModels(bad), "holds no model description");
        const fs::path mixed = root / "mixed";
        fs::copy(root / "good", mixed);
        json other2 = json::parse(readAll(mixed / "transformer.json"));
        other2["task"]["seed"] = 99;
        writeAll(mixed / "transformer.json", other2.dump());
        EXPECT_REFUSAL(importModels(mixed), "describes another task");
    }
};

QTEST_APPLESS_MAIN(TestSafetensors)
#include "test_safetensors.moc"
