// Bad input, catalogued: one table row per malformed expression, configuration value, config file, run
// file or checkpoint. Each row must be refused with a message naming what is wrong, without a crash,
// without a large allocation, and without changing anything already on disk.
#include "core/config/config.h"
#include "core/io/files.h"
#include "core/io/serialize.h"
#include "core/task/ctl_task.h"
#include "core/train/run.h"

#include <QTemporaryDir>
#include <QtTest>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <new>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

using namespace ndr;
using nlohmann::json;
namespace fs = std::filesystem;

// --- The largest single allocation while a load runs: a loader that trusts a size read from a file
// before checking it shows up here even when the allocation happens to succeed. ---

namespace {
std::atomic<bool> trackingAllocations{false};
std::atomic<size_t> largestAllocation{0};

void* allocate(size_t n) {
    if (trackingAllocations.load(std::memory_order_relaxed)) {
        size_t seen = largestAllocation.load(std::memory_order_relaxed);
        while (n > seen && !largestAllocation.compare_exchange_weak(seen, n)) {
        }
    }
    if (void* p = std::malloc(n ? n : 1))
        return p;
    throw std::bad_alloc();
}
} // namespace

void* operator new(size_t n) {
    return allocate(n);
}
void* operator new[](size_t n) {
    return allocate(n);
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete[](void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, size_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, size_t) noexcept {
    std::free(p);
}

namespace {

constexpr size_t kAllocationLimit = size_t(64) << 20;
// An expression's error sits under its input field: a pasted paragraph must not make it a paragraph.
constexpr size_t kMaxExpressionMessage = 400;

enum class Kind { Expression, ConfigValue, ConfigFile, RunFile, Checkpoint };

struct BadInput {
    Kind kind = Kind::Expression;
    std::string bytes;                    // the expression, config file, run file or checkpoint
    std::string expected;                 // a word or field name the message must contain
    Order order = Order::Forward;         // expressions: the run's presentation order
    int maxDepth = -1;                    // expressions: the model's depth limit
    std::function<void(RunConfig&)> edit; // configuration values
    bool onlyTheRunRefuses = false;       // run files and checkpoints: the loader alone accepts them
};

} // namespace

Q_DECLARE_METATYPE(BadInput)

namespace {

std::string readAll(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeAll(const fs::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
}

// Every file of a folder with its bytes and modification time: a rewrite with the same contents, a
// new file or a leftover temporary file all show as a difference.
using Snapshot = std::map<std::string, std::pair<std::string, int64_t>>;
Snapshot snapshot(const fs::path& dir) {
    Snapshot s;
    for (const auto& entry : fs::directory_iterator(dir)) {
        struct stat st {};
        ::stat(entry.path().c_str(), &st);
        s[entry.path().filename().string()] = {readAll(entry.path()),
                                               int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec};
    }
    return s;
}

struct Outcome {
    std::string message; // empty: nothing thrown
    bool fileError = false;
};

// Runs `f` and says what it threw; any exception counts (the row then checks its type).
Outcome outcomeOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const FileError& e) {
        return {e.what(), true};
    } catch (const std::exception& e) {
        return {std::string("[") + typeid(e).name() + "] " + e.what(), false};
    }
    return {};
}

#define EXPECT_REFUSED(outcome, mustBeFileError, expected)                                                   \
    do {                                                                                                     \
        const Outcome o_ = (outcome);                                                                        \
        QVERIFY2(!o_.message.empty(), "accepted");                                                           \
        QVERIFY2(!(mustBeFileError) || o_.fileError, ("not a FileError: " + o_.message).c_str());            \
        QVERIFY2(o_.message.find(expected) != std::string::npos,                                             \
                 ("message: " + o_.message + "\nexpected: " + (expected)).c_str());                          \
    } while (0)

template <typename T> void putRaw(std::string& s, T v) {
    s.append(reinterpret_cast<const char*>(&v), sizeof v);
}

uint64_t fnv1a(const std::string& bytes) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : bytes)
        h = (h ^ c) * 0x100000001b3ull;
    return h;
}

// A checkpoint file's parts, so a row can edit its header and keep the rest consistent.
struct CheckpointParts {
    json header;
    std::string payload; // the float buffers, without the checksum
};

CheckpointParts split(const std::string& bytes) {
    uint32_t headerBytes = 0;
    std::memcpy(&headerBytes, bytes.data() + 12, 4);
    return {json::parse(bytes.substr(16, headerBytes)),
            bytes.substr(16 + headerBytes, bytes.size() - 24 - headerBytes)};
}

// A checkpoint around header text and `payload` with a correct length field and checksum.
std::string assembleText(const std::string& text, const std::string& payload,
                         uint32_t version = ndr::CheckpointData::kVersion) {
    std::string s = "NDRSCKPT";
    putRaw(s, version);
    putRaw(s, uint32_t(text.size()));
    s += text + payload;
    putRaw(s, fnv1a(s));
    return s;
}

std::string assemble(const json& header, const std::string& payload,
                     uint32_t version = ndr::CheckpointData::kVersion) {
    return assembleText(header.dump(), payload, version);
}

std::string flipBit(std::string s, size_t at, int bit) {
    s.at(at) = char(s.at(at) ^ (1 << bit));
    return s;
}

// A run small enough to save and open in milliseconds: two 8-wide models, four training steps.
RunConfig tinyConfig() {
    RunConfig c = presetConfig("stub");
    c.task.evalExamplesPerDepth = 16;
    c.models = {ndrModel(8, 2, 8, 3), vanillaModel(8, 2, 8, 3)};
    c.models[0].as<ndr::EncoderConfig>().evalSteps = 4;
    c.train.batchSize = 8;
    c.train.steps = 4;
    c.train.evalInterval = 2;
    return c;
}

TaskConfig smallTask(Order order) {
    TaskConfig t = presetConfig("paper-forward").task; // S = 8 (names 000..111), F = 9 (a..i)
    t.order = order;
    t.evalExamplesPerDepth = 1;
    return t;
}

} // namespace

class TestBadInput : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;
    int folders_ = 0;
    fs::path goodRun_;                    // folder of a trained, saved run
    std::string runText_;                 // its run.json
    std::string ndrCheckpoint_;           // file name of its first model's checkpoint
    std::string ndrBytes_, vanillaBytes_; // the two checkpoints
    std::string otherSizeBytes_;          // the first model's checkpoint of a run with dModel 16
    std::string otherTaskBytes_;          // ... of a run whose task has 5 functions
    std::optional<CtlTask> forward_, backward_;

    fs::path freshFolder() {
        const fs::path p = fs::path(dir_.path().toStdString()) / ("case-" + std::to_string(folders_++));
        fs::create_directories(p);
        return p;
    }

    // Saves a trained run of `config` into a new folder; returns the folder.
    fs::path savedRun(const RunConfig& config) {
        const fs::path folder = freshFolder();
        Run run(config);
        for (int i = 0; i < run.modelCount(); ++i)
            run.trainer(i).run([](const TrainProgress&) {}, nullptr);
        run.save(folder / "run.json");
        return folder;
    }

    static std::string checkpointOf(const fs::path& folder, int model) {
        const RunRecord r = loadRunRecord(folder / "run.json");
        return readAll(folder / r.models.at(size_t(model)).checkpointFile);
    }

    fs::path copyOfGoodRun() {
        const fs::path folder = freshFolder();
        for (const auto& entry : fs::directory_iterator(goodRun_))
            fs::copy_file(entry.path(), folder / entry.path().filename());
        return folder;
    }

    // --- Rows ---

    static void expression(const char* name, const std::string& text, const std::string& expected,
                           Order order = Order::Forward, int maxDepth = -1) {
        BadInput in;
        in.kind = Kind::Expression;
        in.bytes = text;
        in.expected = expected;
        in.order = order;
        in.maxDepth = maxDepth;
        QTest::newRow((std::string("expression: ") + name).c_str()) << in;
    }

    static void configValue(const char* name, const std::function<void(RunConfig&)>& edit,
                            const std::string& expected) {
        BadInput in;
        in.kind = Kind::ConfigValue;
        in.edit = edit;
        in.expected = expected;
        QTest::newRow((std::string("config value: ") + name).c_str()) << in;
    }

    static void configFile(const char* name, const std::string& text, const std::string& expected) {
        BadInput in;
        in.kind = Kind::ConfigFile;
        in.bytes = text;
        in.expected = expected;
        QTest::newRow((std::string("config file: ") + name).c_str()) << in;
    }

    static void runFile(const char* name, const std::string& text, const std::string& expected,
                        bool onlyTheRunRefuses = false) {
        BadInput in;
        in.kind = Kind::RunFile;
        in.bytes = text;
        in.expected = expected;
        in.onlyTheRunRefuses = onlyTheRunRefuses;
        QTest::newRow((std::string("run file: ") + name).c_str()) << in;
    }

    static void checkpoint(const char* name, const std::string& bytes, const std::string& expected,
                           bool onlyTheRunRefuses = false) {
        BadInput in;
        in.kind = Kind::Checkpoint;
        in.bytes = bytes;
        in.expected = expected;
        in.onlyTheRunRefuses = onlyTheRunRefuses;
        QTest::newRow((std::string("checkpoint: ") + name).c_str()) << in;
    }

    void expressionRows();
    void configValueRows();
    void configFileRows();
    void runFileRows();
    void checkpointRows();

    // Puts the row's bytes in place of `fileName` in a copy of the saved run and opens the run.
    void checkRunFolderRefuses(const BadInput& in, const std::string& fileName);

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        goodRun_ = savedRun(tinyConfig());
        runText_ = readAll(goodRun_ / "run.json");
        const RunRecord record = runRecordFromText(runText_);
        QCOMPARE(int(record.models.size()), 2);
        QVERIFY(!record.models[0].history.empty());
        ndrCheckpoint_ = record.models[0].checkpointFile;
        ndrBytes_ = readAll(goodRun_ / ndrCheckpoint_);
        vanillaBytes_ = readAll(goodRun_ / record.models[1].checkpointFile);
        QVERIFY(Run::open(goodRun_ / "run.json") != nullptr);

        RunConfig wider = tinyConfig();
        wider.models[0] = ndrModel(16, 2, 8, 3);
        wider.models[0].as<ndr::EncoderConfig>().evalSteps = 4;
        otherSizeBytes_ = checkpointOf(savedRun(wider), 0);
        RunConfig otherTask = tinyConfig();
        otherTask.task.functions = 5;
        otherTaskBytes_ = checkpointOf(savedRun(otherTask), 0);

        forward_.emplace(smallTask(Order::Forward));
        backward_.emplace(smallTask(Order::Backward));
    }

    void badInput_data() {
        QTest::addColumn<BadInput>("input");
        expressionRows();
        configValueRows();
        configFileRows();
        runFileRows();
        checkpointRows();
    }

    void badInput() {
        QFETCH(BadInput, input);
        largestAllocation = 0;
        trackingAllocations = true;
        switch (input.kind) {
        case Kind::Expression: {
            const CtlTask& task = input.order == Order::Forward ? *forward_ : *backward_;
            const ParseResult r = task.parse(input.bytes, input.maxDepth);
            QVERIFY2(!r.example, "accepted");
            QVERIFY2(r.error.find(input.expected) != std::string::npos,
                     ("message: " + r.error + "\nexpected: " + input.expected).c_str());
            QVERIFY2(r.error.size() <= kMaxExpressionMessage,
                     ("a message of " + std::to_string(r.error.size()) + " bytes").c_str());
            if (r.tokenIndex >= 0)
                QVERIFY(r.charBegin >= 0 && r.charBegin < r.charEnd &&
                        size_t(r.charEnd) <= input.bytes.size());
            break;
        }
        case Kind::ConfigValue: {
            RunConfig c = tinyConfig();
            input.edit(c);
            std::string all;
            for (const Problem& p : validate(c))
                all += p.text() + "\n";
            QVERIFY2(all.find(input.expected) != std::string::npos,
                     ("problems: " + all + "\nexpected: " + input.expected).c_str());
            // The same configuration handed straight to a run is refused with the same words.
            const Outcome o = outcomeOf([&] { Run run(c); });
            QVERIFY2(o.message.find(input.expected) != std::string::npos, o.message.c_str());
            break;
        }
        case Kind::ConfigFile: {
            const fs::path folder = freshFolder();
            writeAll(folder / "config.json", input.bytes);
            const Snapshot before = snapshot(folder);
            EXPECT_REFUSED(
                outcomeOf([&] { runConfigFromJson(readFileBounded(folder / "config.json", 4 << 20)); }),
                false, input.expected);
            QVERIFY(snapshot(folder) == before);
            break;
        }
        case Kind::RunFile:
            if (input.onlyTheRunRefuses)
                runRecordFromText(input.bytes);
            else
                EXPECT_REFUSED(outcomeOf([&] { runRecordFromText(input.bytes); }), true, input.expected);
            checkRunFolderRefuses(input, "run.json");
            break;
        case Kind::Checkpoint:
            if (input.onlyTheRunRefuses)
                checkpointFromBytes(input.bytes);
            else
                EXPECT_REFUSED(outcomeOf([&] { checkpointFromBytes(input.bytes); }), true, input.expected);
            checkRunFolderRefuses(input, ndrCheckpoint_);
            break;
        }
        trackingAllocations = false;
        QVERIFY2(largestAllocation < kAllocationLimit,
                 ("an allocation of " + std::to_string(largestAllocation) + " bytes").c_str());
    }

    // Inputs people type that are not mistakes: accepted, with the same meaning.
    void toleratedExpressions() {
        const Example want{.symbol = 5, .functions = {1, 3}, .tokens = {}, .treeDepth = 0};
        for (const char* text : {"101 b d", "  101   b d  ", "\t101\nb\r\nd", "101 b d\n"})
            QVERIFY2(forward_->parse(text).example == want, text);
        QVERIFY(backward_->parse(" d  b 101 ").example == want);
    }

    // Every bit of a run file and of a checkpoint, flipped one at a time at a stride, and every
    // truncation length at a stride: the run either opens or is refused with FileError, and the
    // folder stays as it was.
    void damagedRunFolderSweep() {
        const fs::path folder = copyOfGoodRun();
        const auto tryOpen = [&](const char* what, size_t at) {
            const Snapshot before = snapshot(folder);
            const Outcome o = outcomeOf([&] { Run::open(folder / "run.json"); });
            QVERIFY2(o.message.empty() || o.fileError,
                     (std::string(what) + " at " + std::to_string(at) + ": " + o.message).c_str());
            QVERIFY2(snapshot(folder) == before, what);
        };
        int refused = 0;
        for (size_t at = 0; at < runText_.size(); at += runText_.size() / 60 + 1) {
            writeAll(folder / "run.json", flipBit(runText_, at, int(at % 8)));
            tryOpen("run file bit flip", at);
            writeAll(folder / "run.json", runText_.substr(0, at));
            tryOpen("run file truncation", at);
            refused += !outcomeOf([&] { Run::open(folder / "run.json"); }).message.empty();
        }
        writeAll(folder / "run.json", runText_);
        for (size_t at = 0; at < ndrBytes_.size(); at += ndrBytes_.size() / 60 + 1) {
            writeAll(folder / ndrCheckpoint_, flipBit(ndrBytes_, at, int(at % 8)));
            tryOpen("checkpoint bit flip", at);
            QVERIFY2(!outcomeOf([&] { Run::open(folder / "run.json"); }).message.empty(),
                     "a flipped bit went unnoticed");
            writeAll(folder / ndrCheckpoint_, ndrBytes_.substr(0, at));
            tryOpen("checkpoint truncation", at);
        }
        QVERIFY(refused > 0);
    }
};

// --- Expressions: a run with 8 symbols (000..111) and 9 functions (a..i) ---

void TestBadInput::expressionRows() {
    const Order back = Order::Backward;
    expression("empty", "", "empty expression");
    expression("only spaces", "    ", "empty expression");
    expression("only tabs and newlines", "\t\n\r\n", "empty expression");
    expression("unknown function", "101 b x", "unknown token 'x' at position 3");
    expression("unknown symbol", "102 b", "unknown token '102' at position 1: expected a symbol");
    expression("decimal symbol in a bit-string run", "5 b", "unknown token '5'");
    expression("upper-case function", "101 B", "unknown token 'B'");
    expression("negative symbol", "-1 b", "unknown token '-1'");
    expression("commas", "101,b,d", "unknown token '101,b,d'");
    expression("brackets of the model input", "[B] 101 b [E]", "unknown token '[B]'");
    expression("function-call syntax", "b(101)", "unknown token 'b(101)'");
    expression("extra spaces around an unknown token", "  101   b   x  ", "unknown token 'x' at position 3");
    expression("backward text in a forward run", "d b 101", "forward order");
    expression("forward text in a backward run", "101 b d", "backward order", back);
    expression("no symbol", "a b c", "has no symbol");
    expression("no symbol, backward", "a b c", "has no symbol", back);
    expression("two symbols", "101 a 010", "more than one symbol");
    expression("symbol in the middle", "b 101 c", "is a function, but this run is in forward order");
    expression("symbol alone", "101", "needs at least one function after the symbol");
    expression("symbol alone, backward", "101", "needs at least one function before the symbol", back);
    expression("function alone, backward", "b", "is a function", back);
    expression("too deep", "101 a b c d", "depth 4 is too deep: at most 3 functions; 'd' at position 5",
               Order::Forward, 3);
    expression("too deep, backward", "d c b a 101", "depth 4 is too deep", back, 3);
    std::string deep = "101";
    for (int i = 0; i < 10000; ++i)
        deep += " a";
    expression("deeper than any limit", deep, "depth 10000 is too deep", Order::Forward, 40);
    expression("accented letter", "101 b \xc3\xa4", "unknown token '\xc3\xa4'");
    expression("emoji", "101 \xf0\x9f\x98\x80", "unknown token '\xf0\x9f\x98\x80'");
    expression("full-width digits", "\xef\xbc\x91\xef\xbc\x90\xef\xbc\x91 b", "unknown token");
    expression("em space inside",
               "101\xe2\x80\x83"
               "b",
               "unknown token '101\xe2\x80\x83"
               "b'");
    expression("no-break space inside",
               "101 b\xc2\xa0"
               "d",
               "unknown token 'b\xc2\xa0"
               "d'");
    expression("NUL byte", std::string("101 b\0d", 7), "unknown token");
    expression("invalid UTF-8", "101 \xff\xfe", "unknown token");
    expression("a pasted paragraph", "101 " + std::string(100000, 'x'), "unknown token 'xxxxxxxx");
    // Found by fuzz_parser: the hint rewrote every typed function, so the message grew with the input
    // (501 bytes for this input of 194).
    expression("fuzz finding: long forward text in a backward run",
               readAll(fs::path(NDR_SOURCE_DIR) / "tests/fuzz/corpus/parser/regression-long-hint"),
               "'000' at position 1 is a symbol, but this run is in backward order", back);
    std::string longBackward;
    for (int i = 0; i < 500; ++i)
        longBackward += "a ";
    expression("long expression in the other order", longBackward + "101", "this run is in forward order");
}

// --- Configuration values, as the experiment panel hands them over ---

void TestBadInput::configValueRows() {
    configValue(
        "one symbol", [](RunConfig& c) { c.task.symbols = 1; }, "task.symbols: must be between 2 and 64");
    configValue(
        "65 symbols", [](RunConfig& c) { c.task.symbols = 65; }, "task.symbols");
    configValue(
        "no functions", [](RunConfig& c) { c.task.functions = 0; }, "task.functions");
    configValue(
        "27 functions", [](RunConfig& c) { c.task.functions = 27; }, "task.functions");
    configValue(
        "train depth 0", [](RunConfig& c) { c.task.trainMinDepth = 0; }, "task.trainMinDepth");
    configValue(
        "empty train split", [](RunConfig& c) { c.task.trainMaxDepth = 0; }, "task.trainMaxDepth");
    configValue(
        "depth beyond 40", [](RunConfig& c) { c.task.testMaxDepth = 41; }, "task.testMaxDepth");
    configValue(
        "overlapping splits", [](RunConfig& c) { c.task.testMinDepth = 3; }, "overlap");
    configValue(
        "no evaluation examples", [](RunConfig& c) { c.task.evalExamplesPerDepth = 0; },
        "task.evalExamplesPerDepth");
    configValue(
        "absurd evaluation set", [](RunConfig& c) { c.task.evalExamplesPerDepth = 1 << 30; },
        "task.evalExamplesPerDepth");
    configValue(
        "no models", [](RunConfig& c) { c.models.clear(); }, "models: must list between 1 and 4");
    configValue(
        "five models", [](RunConfig& c) { c.models.resize(5, c.models[0]); }, "models: must list");
    configValue(
        "empty name", [](RunConfig& c) { c.models[0].name.clear(); }, "models[0].name");
    configValue(
        "same name twice", [](RunConfig& c) { c.models[1].name = c.models[0].name; }, "already the name");
    configValue(
        "dModel 0", [](RunConfig& c) { c.models[0].as<ndr::EncoderConfig>().dModel = 0; },
        "models[0].dModel");
    configValue(
        "dModel 2^20", [](RunConfig& c) { c.models[0].as<ndr::EncoderConfig>().dModel = 1 << 20; },
        "models[0].dModel");
    configValue(
        "no heads", [](RunConfig& c) { c.models[1].as<ndr::EncoderConfig>().heads = 0; }, "models[1].heads");
    configValue(
        "heads not dividing", [](RunConfig& c) { c.models[0].as<ndr::EncoderConfig>().heads = 3; },
        "does not divide d_model");
    configValue(
        "dFF 0", [](RunConfig& c) { c.models[0].as<ndr::EncoderConfig>().dFF = 0; }, "models[0].dFF");
    configValue(
        "no steps", [](RunConfig& c) { c.models[0].as<ndr::EncoderConfig>().steps = 0; }, "models[0].steps");
    configValue(
        "65 steps", [](RunConfig& c) { c.models[1].as<ndr::EncoderConfig>().steps = 65; }, "models[1].steps");
    configValue(
        "fewer evaluation steps", [](RunConfig& c) { c.models[0].as<ndr::EncoderConfig>().evalSteps = 2; },
        "models[0].evalSteps");
    configValue(
        "more evaluation steps, unshared",
        [](RunConfig& c) {
            c.models[1].as<ndr::EncoderConfig>().sharedWeights = false,
            c.models[1].as<ndr::EncoderConfig>().evalSteps = 9;
        },
        "models[1].evalSteps");
    configValue(
        "dropout 1", [](RunConfig& c) { c.models[0].as<ndr::EncoderConfig>().dropout = 1; },
        "models[0].dropout");
    configValue(
        "dropout NaN", [](RunConfig& c) { c.models[0].as<ndr::EncoderConfig>().dropout = std::nanf(""); },
        "models[0].dropout: must be a finite number");
    configValue(
        "negative gate dropout",
        [](RunConfig& c) { c.models[0].as<ndr::EncoderConfig>().gateDropout = -0.1f; },
        "models[0].gateDropout");
    configValue(
        "infinite gate bias",
        [](RunConfig& c) { c.models[0].as<ndr::EncoderConfig>().gateBiasInit = -INFINITY; },
        "models[0].gateBiasInit");
    configValue(
        "model learning rate 2", [](RunConfig& c) { c.models[1].learningRate = 2; },
        "models[1].learningRate");
    configValue(
        "l1 norm with softmax",
        [](RunConfig& c) { c.models[1].as<ndr::EncoderConfig>().geomNorm = GeomNorm::L1; },
        "models[1].geomNorm");
    configValue(
        "batch 0", [](RunConfig& c) { c.train.batchSize = 0; }, "train.batchSize");
    configValue(
        "learning rate 0", [](RunConfig& c) { c.train.learningRate = 0; }, "train.learningRate");
    configValue(
        "learning rate NaN", [](RunConfig& c) { c.train.learningRate = std::nan(""); },
        "train.learningRate: must be a finite number");
    configValue(
        "weight decay 2", [](RunConfig& c) { c.train.weightDecay = 2; }, "train.weightDecay");
    configValue(
        "negative clip", [](RunConfig& c) { c.train.gradClip = -1; }, "train.gradClip");
    configValue(
        "no training steps", [](RunConfig& c) { c.train.steps = 0; }, "train.steps");
    configValue(
        "evaluation interval 0", [](RunConfig& c) { c.train.evalInterval = 0; }, "train.evalInterval");
    configValue(
        "1000 threads", [](RunConfig& c) { c.train.threads = 1000; }, "train.threads");
}

// --- Config files ---

void TestBadInput::configFileRows() {
    json full = tinyConfig();
    full["preset"] = "custom";
    const auto with = [&](const std::function<void(json&)>& edit) {
        json j = full;
        edit(j);
        return j.dump(2);
    };
    configFile("not JSON", "symbols = 8\n", "invalid JSON at byte 1");
    configFile("empty", "", "invalid JSON");
    configFile("truncated", with([](json&) {}).substr(0, 200), "invalid JSON");
    configFile("NaN literal", R"({"preset": "stub", "train": {"learningRate": NaN}})", "invalid JSON");
    configFile("number beyond double", R"({"preset": "stub", "train": {"learningRate": 1e400}})",
               "number overflow");
    configFile("an array", "[1, 2]", "must be a JSON object");
    configFile("a string", R"("stub")", "must be a JSON object, got string");
    configFile("misspelt section", R"({"preset": "stub", "tarin": {"steps": 10}})",
               "tarin: unknown field; did you mean train?");
    configFile("misspelt task field", R"({"preset": "stub", "task": {"symbls": 6}})",
               "task.symbls: unknown field; did you mean symbols?");
    configFile("misspelt model field", R"({"preset": "stub", "models": [{"preset": "ndr", "dropuot": 0.2}]})",
               "models[0].dropuot: unknown field; did you mean dropout?");
    configFile("field of another section", R"({"preset": "stub", "task": {"batchSize": 32}})",
               "task.batchSize: unknown field");
    configFile("unknown field, no near name", R"({"preset": "stub", "train": {"optimizer": "sgd"}})",
               "train.optimizer: unknown field; known fields are batchSize, cosineDecay, evalInterval");
    configFile("unknown field in a full config", with([](json& j) { j["models"][1]["layers"] = 6; }),
               "models[1].layers: unknown field");
    configFile("every unknown field named", R"({"preset": "stub", "task": {"x": 1}, "train": {"y": 2}})",
               "unknown field; known fields are evalExamplesPerDepth, functions, kind, operations, order, "
               "seed, symbols, "
               "testMaxDepth, testMinDepth, trainMaxDepth, trainMinDepth, validMaxDepth, "
               "validMinDepth\ntrain.y: unknown field");
    configFile("string for integer", with([](json& j) { j["task"]["symbols"] = "eight"; }),
               "task.symbols: expected an integer, got string");
    configFile("fraction for integer", with([](json& j) { j["models"][0]["heads"] = 2.5; }),
               "models[0].heads: expected an integer, got 2.5");
    configFile("integer beyond int", with([](json& j) { j["train"]["steps"] = 1e30; }), "train.steps");
    configFile("boolean for number", with([](json& j) { j["train"]["learningRate"] = true; }),
               "train.learningRate: expected a number, got boolean");
    configFile("null for number", with([](json& j) { j["models"][0]["dropout"] = nullptr; }),
               "models[0].dropout: expected a number, got null");
    configFile("negative seed", with([](json& j) { j["task"]["seed"] = -1; }), "task.seed");
    configFile("unknown order", with([](json& j) { j["task"]["order"] = "sideways"; }),
               "task.order: unknown value 'sideways'");
    configFile("models not a list", with([](json& j) { j["models"] = json::object(); }),
               "models: expected an array");
    configFile("task not an object", with([](json& j) { j["task"] = 8; }), "task: expected an object, got 8");
    configFile("missing field", with([](json& j) { j["train"].erase("steps"); }), "train.steps: missing");
    configFile("out of range", with([](json& j) { j["task"]["symbols"] = 100; }),
               "task.symbols: must be between 2 and 64, got 100");
    configFile("zero learning rate", R"({"preset": "stub", "train": {"learningRate": 0}})",
               "train.learningRate: must be above 0");
    configFile("unknown preset", R"({"preset": "gigantic"})", "unknown preset 'gigantic'");
    configFile("unknown model preset", R"({"preset": "stub", "models": [{"preset": "gru"}]})",
               "models[0].preset: unknown model preset 'gru'");
    configFile(
        "ten thousand unknown fields",
        [] {
            json j = {{"preset", "stub"}};
            for (int i = 0; i < 10000; ++i)
                j["task"]["x" + std::to_string(i)] = i;
            return j.dump();
        }(),
        "\n... and 9980 more unknown fields");
    configFile(
        "two million values",
        "[" +
            [] {
                std::string zeros;
                for (int i = 0; i < 2000000; ++i)
                    zeros += "0,";
                return zeros;
            }() +
            "0]",
        "JSON of about 2000002 values; at most 1048576 are read");
    configFile("nested 100000 deep",
               R"({"preset": "stub", "task": )" + std::string(100000, '[') + std::string(100000, ']') + "}",
               "JSON nested 100001 levels deep; at most 64 levels are read");
}

// --- Run files: the saved run's run.json, damaged ---

void TestBadInput::runFileRows() {
    const json good = json::parse(runText_);
    const auto with = [&](const std::function<void(json&)>& edit) {
        json j = good;
        edit(j);
        return j.dump(1);
    };
    // The record with raw text (an overflowing number, deep nesting) where `mark` puts kRaw.
    static constexpr const char* kRaw = "@@raw@@";
    const auto withRaw = [&](const std::function<void(json&)>& mark, const std::string& raw) {
        std::string s = with(mark);
        return s.replace(s.find(std::string("\"") + kRaw + "\""), std::strlen(kRaw) + 2, raw);
    };
    const std::string& text = runText_;
    runFile("empty", "", "invalid JSON at byte 1");
    runFile("not JSON", "ndr-studio-run v1", "invalid JSON");
    runFile("truncated at half", text.substr(0, text.size() / 2), "the file may be cut short");
    runFile("truncated by one byte", text.substr(0, text.size() - 2), "the file may be cut short");
    runFile("an array", "[]", "not an NDR Studio run file (expected a JSON object, got array)");
    runFile("a config file", json(tinyConfig()).dump(), "it has no 'format' field");
    runFile("another format", with([](json& j) { j["format"] = "ndr-studio-bench"; }),
            "format 'ndr-studio-bench'");
    runFile("format a number", with([](json& j) { j["format"] = 1; }),
            "not an NDR Studio run file (format 1)");
    runFile("newer version", with([](json& j) { j["version"] = RunRecord::kVersion + 1; }), "is newer");
    runFile("version 0", with([](json& j) { j["version"] = 0; }), "version: must be at least 1");
    runFile("version a string", with([](json& j) { j["version"] = "1"; }), "version: expected an integer");
    runFile("no config", with([](json& j) { j.erase("config"); }), "config: missing");
    runFile("no tables", with([](json& j) { j.erase("tables"); }), "tables: missing");
    runFile("no models", with([](json& j) { j.erase("models"); }), "models: missing");
    runFile("invalid config", with([](json& j) { j["config"]["models"][0]["heads"] = 3; }),
            "config.models[0].heads: 3 does not divide d_model 8");
    runFile("unknown enum in config", with([](json& j) { j["config"]["models"][0]["update"] = "gru"; }),
            "config.models[0].update: unknown value 'gru'");
    runFile("absurd symbols", with([](json& j) { j["config"]["task"]["symbols"] = int64_t(1) << 40; }),
            "config.task.symbols");
    runFile("one table too few", with([](json& j) { j["tables"].erase(0); }),
            "tables: expected 4 function tables");
    runFile("table entry out of range", with([](json& j) { j["tables"][1][2] = 4; }),
            "tables[1][2]: must be between 0 and 3");
    runFile("table not a bijection", with([](json& j) { j["tables"][0][0] = j["tables"][0][1]; }),
            "is not a bijection", true);
    runFile("probe symbol out of range", with([](json& j) { j["probe"]["symbol"] = 4; }), "probe.symbol");
    // The same record as an arithmetic run: it has no tables, its probe is an expression's tokens.
    const auto asArith = [](json& j) {
        json& t = j["config"]["task"];
        t["kind"] = "arith";
        t["trainMinDepth"] = 2, t["trainMaxDepth"] = 3;
        t["validMinDepth"] = 1, t["validMaxDepth"] = 0;
        t["testMinDepth"] = 4, t["testMaxDepth"] = 5;
    };
    runFile("arithmetic run with function tables", with(asArith), "tables: only a table lookup run has");
    runFile("arithmetic run with a table lookup probe", with([&](json& j) {
                asArith(j);
                j["tables"] = json::array();
            }),
            "probe: an expression run's probe has tokens");
    runFile("arithmetic probe not an expression", with([&](json& j) {
                asArith(j);
                j["tables"] = json::array();
                j["probe"] = {{"tokens", {0, 0}}, {"depth", 2}};
            }),
            "malformed expression", true);
    runFile("arithmetic probe nested 100000 deep", with([&](json& j) {
                asArith(j);
                j["tables"] = json::array();
                j["probe"] = {{"tokens", std::vector<int>(100000, 0)}, {"depth", 2}};
            }),
            "example of 100000 tokens", true);
    runFile("probe function out of range", with([](json& j) { j["probe"]["functions"][0] = 9; }),
            "probe.functions[0]");
    runFile("history not a list", with([](json& j) { j["models"][0]["history"] = 5; }),
            "models[0].history: expected an array, got 5");
    runFile("evaluation field missing", with([](json& j) { j["models"][0]["history"][0].erase("loss"); }),
            "models[0].history[0].loss: missing");
    runFile("steps done a string", with([](json& j) { j["models"][1]["stepsDone"] = "four"; }),
            "models[1].stepsDone: expected an integer, got string");
    runFile("steps done beyond int", with([](json& j) { j["models"][1]["stepsDone"] = int64_t(1) << 40; }),
            "models[1].stepsDone");
    runFile("best evaluation out of range", with([](json& j) { j["models"][0]["bestEval"] = 99; }),
            "models[0].bestEval: must be -1");
    runFile("trace claims 2^40 positions",
            with([](json& j) { j["models"][0]["history"][0]["probe"]["positions"] = int64_t(1) << 40; }),
            "probe.positions");
    runFile("trace claims 10^9 steps",
            with([](json& j) { j["models"][0]["history"][0]["probe"]["steps"] = 1000000000; }),
            "probe.steps: must be between 0 and 1024");
    runFile("trace at its bounds, arrays short", with([](json& j) {
                json& p = j["models"][0]["history"][0]["probe"];
                p["steps"] = 1024, p["heads"] = 256, p["positions"] = 4096;
            }),
            "expected 4096 values (positions)");
    runFile("attention too short",
            with([](json& j) { j["models"][0]["history"][0]["probe"]["attention"].erase(0); }),
            "probe.attention: expected");
    runFile("depths and accuracies differ",
            with([](json& j) { j["models"][0]["history"][1]["accuracy"].erase(0); }),
            "models[0].history[1].accuracy: has");
    runFile("loss log lengths differ",
            with([](json& j) { j["models"][0]["lossLog"]["steps"].push_back(99); }),
            "models[0].lossLog.loss");
    runFile("status a number", with([](json& j) { j["models"][0]["status"] = 3; }), "models[0].status");
    runFile("unknown status", with([](json& j) { j["models"][0]["status"] = "resting"; }),
            "models[0].status: unknown status 'resting'; expected new, training");
    runFile("a reason for a status that has none",
            with([](json& j) { j["models"][0]["status"] = "stopped: early"; }),
            "models[0].status: unknown status 'stopped: early'");
    runFile("a status in capitals", with([](json& j) { j["models"][0]["status"] = "Finished"; }),
            "unknown status 'Finished'");
    runFile("checkpoint outside the folder",
            with([](json& j) { j["models"][0]["checkpointFile"] = "../x.ckpt"; }),
            "models[0].checkpointFile");
    runFile("checkpoint by absolute path",
            with([](json& j) { j["models"][1]["checkpointFile"] = "/etc/passwd"; }),
            "models[1].checkpointFile");
    runFile("checkpoint missing", with([](json& j) { j["models"][0]["checkpointFile"] = "gone.ckpt"; }),
            "No such file or directory", true);
    runFile("no checkpoint named", with([](json& j) { j["models"][0]["checkpointFile"] = ""; }),
            "has no checkpoint file", true);
    runFile("one model record too few", with([](json& j) { j["models"].erase(1); }), "model records", true);
    runFile("number beyond double", withRaw([](json& j) { j["models"][0]["stepsDone"] = kRaw; }, "1e400"),
            "number overflow");
    // Before the nesting was bounded, 16 MB of '[' took over a GB of memory and seconds to refuse.
    runFile("16 MB of '['", std::string(16 << 20, '['), "JSON nested 16777216 levels deep");
    runFile("nested 100000 deep",
            withRaw([](json& j) { j["probe"] = kRaw; }, std::string(100000, '[') + std::string(100000, ']')),
            "JSON nested 100001 levels deep");
    const size_t brace = text.find('{');
    runFile("bit flip in a brace", flipBit(text, brace, 2), "invalid JSON at byte 1");
    runFile("bit flip in a key", flipBit(text, text.find("\"format\"") + 1, 0), "no 'format' field");
    const std::string version = "\"version\": " + std::to_string(RunRecord::kVersion);
    runFile("version 0", std::string(text).replace(text.find(version) + 11, 1, "0"),
            "version: must be at least 1");
    runFile("bit flip to invalid UTF-8", flipBit(text, text.find("\"finished\"") + 2, 7), "invalid JSON");
    runFile("NUL byte", std::string(text).insert(text.size() / 3, 1, '\0'), "invalid JSON");
}

// --- Checkpoints: the first model's checkpoint of the saved run, damaged ---

void TestBadInput::checkpointRows() {
    const std::string& b = ndrBytes_;
    const CheckpointParts parts = split(b);
    const auto header = [&](const std::function<void(json&)>& edit) {
        json h = parts.header;
        edit(h);
        return assemble(h, parts.payload);
    };
    const size_t payloadAt = b.size() - 8 - parts.payload.size();
    checkpoint("empty", "", "the file is empty");
    checkpoint("five bytes", "NDRSC", "truncated");
    checkpoint("another file's magic", "\x89PNG\r\n\x1a\n" + b.substr(8), "not an NDR Studio checkpoint");
    checkpoint("a run file instead", runText_, "not an NDR Studio checkpoint");
    checkpoint("newer version", assemble(parts.header, parts.payload, 3), "version 3 is newer");
    checkpoint("version 0", assemble(parts.header, parts.payload, 0), "version 0 is not valid");
    checkpoint("header length 4 GB", std::string(b).replace(12, 4, "\xff\xff\xff\xff"),
               "the header claims 4294967295");
    checkpoint("header length beyond the file",
               std::string(b).replace(12, 4, std::string("\x00\x00\x10\x00", 4)),
               "truncated: expected at least");
    checkpoint("truncated in the preamble", b.substr(0, 12), "truncated");
    checkpoint("truncated in the header", b.substr(0, 40), "truncated");
    checkpoint("truncated at half", b.substr(0, b.size() / 2),
               "truncated: expected " + std::to_string(b.size()));
    checkpoint("truncated by one byte", b.substr(0, b.size() - 1), "truncated");
    checkpoint("a byte too many", b + "x", "unexpected data after the end");
    checkpoint("bit flip in the weights", flipBit(b, payloadAt + 5, 3), "checksum mismatch");
    checkpoint("bit flip in the checksum", flipBit(b, b.size() - 1, 7), "checksum mismatch");
    checkpoint("bit flip in the magic", flipBit(b, 2, 1), "not an NDR Studio checkpoint");
    checkpoint("bit flip in the version", flipBit(b, 8, 0), "version 3 is newer");
    checkpoint("bit flip in the header length", flipBit(b, 15, 1), "the header claims");
    checkpoint("bit flip in a header key", flipBit(b, b.find("\"layout\"") + 1, 0), "no 'layout' field");
    checkpoint("header not JSON", std::string(b).replace(16, 1, "!"), "the header is not valid JSON");
    checkpoint("header nested a million deep", assembleText(std::string(1000000, '['), parts.payload),
               "the header: JSON nested 1000000 levels deep");
    checkpoint("header a list", assemble(json::array(), parts.payload), "the header is not a JSON object");
    checkpoint("header of another format", header([](json& h) { h["format"] = "ndr-studio-run"; }),
               "header format 'ndr-studio-run'");
    checkpoint("header version differs", header([](json& h) { h["version"] = 3; }), "header version 3");
    checkpoint("model field of the wrong type", header([](json& h) { h["model"]["dModel"] = "wide"; }),
               "header field model: dModel: expected an integer");
    checkpoint("no layout", header([](json& h) { h.erase("layout"); }), "no 'layout' field");
    checkpoint("layout not a list", header([](json& h) { h["layout"] = "w"; }), "layout: expected an array");
    checkpoint("tensor side 2^21", header([](json& h) { h["layout"][0]["rows"] = 1 << 21; }),
               "layout[0].rows");
    checkpoint("tensor of 2^40 elements",
               header([](json& h) { h["layout"][0]["rows"] = 1 << 20, h["layout"][0]["cols"] = 1 << 20; }),
               "layout adds up to");
    checkpoint("count of 2^40 parameters", header([](json& h) { h["counts"]["params"] = int64_t(1) << 40; }),
               "header field counts.params");
    checkpoint("2^28 parameters, consistently", header([](json& h) {
                   h["layout"] = {{{"name", "w"}, {"rows", 1 << 14}, {"cols", 1 << 14}}};
                   h["counts"] = {
                       {"params", 1 << 28}, {"bestParams", 1 << 28}, {"adamM", 1 << 28}, {"adamV", 1 << 28}};
               }),
               "truncated: expected 42949");
    checkpoint("moments of another size", header([](json& h) { h["counts"]["adamM"] = 7; }),
               "counts.adamM: 7 values");
    checkpoint("negative step", header([](json& h) { h["step"] = -1; }), "header field step");
    checkpoint("vocabulary 0", header([](json& h) { h["vocabSize"] = 0; }), "header field vocabSize");
    checkpoint("no training state", header([](json& h) { h.erase("training"); }), "no 'training' field");
    checkpoint("training state a number", header([](json& h) { h["training"] = 7; }),
               "header field training: expected an object or null");
    checkpoint("negative Adam step", header([](json& h) { h["training"]["adamStep"] = -1; }),
               "header field training.adamStep");
    checkpoint("training seconds a string", header([](json& h) { h["training"]["seconds"] = "long"; }),
               "header field training.seconds: expected a number of seconds");
    checkpoint("step beyond int", header([](json& h) { h["step"] = int64_t(1) << 40; }),
               "steps a run can record", true);
    checkpoint("another model size", otherSizeBytes_, "saved for dModel 16 but the run's model has dModel 8",
               true);
    checkpoint("the other model's", vanillaBytes_, "saved for attention softmax", true);
    checkpoint("another task's shapes", otherTaskBytes_, "was the task changed?", true);
    checkpoint("damaged generator state", header([](json& h) { h["training"]["batchRng"] = "12 x"; }),
               "generator state is damaged", true);
}

void TestBadInput::checkRunFolderRefuses(const BadInput& in, const std::string& fileName) {
    const fs::path folder = copyOfGoodRun();
    writeAll(folder / fileName, in.bytes);
    const Snapshot before = snapshot(folder);
    const Outcome o = outcomeOf([&] { Run::open(folder / "run.json"); });
    EXPECT_REFUSED(o, true, in.expected);
    QVERIFY2(o.message.find(folder.string()) != std::string::npos,
             ("the message does not name the file: " + o.message).c_str());
    QVERIFY2(snapshot(folder) == before, "opening a bad run changed its folder");
}

QTEST_APPLESS_MAIN(TestBadInput)
#include "test_bad_input.moc"
