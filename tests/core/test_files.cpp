// Tests of files on disk: run records and checkpoints round-trip exactly, damaged or foreign files are
// refused with a message that says why (and quickly, without huge allocations), and saves are atomic.
#include "core/config/config.h"
#include "core/io/files.h"
#include "core/io/serialize.h"
#include "core/records/records.h"

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <sys/resource.h>

using namespace ndr;
using nlohmann::json;

namespace {

std::string readAll(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeAll(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
}

// The message of the exception of type E that `f` throws, or "" if it throws none.
template <typename E> QString errorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const E& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

#define EXPECT_ERROR(E, statement, text)                                                                     \
    do {                                                                                                     \
        const QString message_ = errorOf<E>([&] { statement; });                                             \
        QVERIFY2(!message_.isEmpty(), "no " #E " from: " #statement);                                        \
        QVERIFY2(message_.contains(text),                                                                    \
                 qPrintable("message: " + message_ + "\nexpected: " + QString(text)));                       \
    } while (0)

// A trace of a 2-step, 1-head model on `[B] 2 a [E]`, with the optional gate channels filled.
Trace smallTrace() {
    Trace t;
    t.steps = 2, t.heads = 1, t.positions = 4, t.symbols = 4;
    t.tokens = {8, 2, 4, 9};
    t.tokenNames = {"[B]", "10", "a", "[E]"};
    for (int i = 0; i < 2 * 1 * 4 * 4; ++i)
        t.attention.push_back(float(i) / 7.0f);
    t.attention[3] = 1e-30f; // tiny values survive too
    t.gates = {0.05f, 0.1f, 0.9f, 0.2f, 0.01f, 0.02f, 0.03f, 0.99f};
    t.change = {0.1f, 0.0f, 1.5f, 0.25f, 0.0f, 1e-7f, 0.5f, 2.0f};
    for (int i = 0; i < 2 * 4 * 3; ++i)
        t.gateChannels.push_back(float(i) * 0.01f);
    t.stepProbs = {0.25f, 0.25f, 0.25f, 0.25f, 0.1f, 0.2f, 0.3f, 0.4f, 0.f, 0.f, 1.f, 0.f};
    t.stepAnswers = {0, 3, 2};
    t.intermediates = {-1, 2, 1, 1};
    t.answer = 1;
    return t;
}

RunRecord smallRun() {
    RunRecord r;
    r.config = presetConfig("stub");
    for (int f = 0; f < r.config.task.functions; ++f) {
        r.tables.emplace_back();
        for (int x = 0; x < r.config.task.symbols; ++x)
            r.tables.back().push_back((x + f + 1) % r.config.task.symbols);
    }
    r.probe = {.symbol = 2, .functions = {0, 3, 1, 1, 2}, .tokens = {}, .treeDepth = 0};

    ModelRecord ndr;
    ndr.config = r.config.models[0];
    EvalRecord first;
    first.step = 250;
    first.elapsedSeconds = 1.25;
    first.stepsPerSecond = 200.5;
    first.trainLoss = 1.3862943611198906;
    first.depths = {1, 2, 3, 4, 5, 6, 7};
    first.accuracy = {1, 0.9, 0.8, 0.7, 0.4, 0.3, 0.26};
    first.loss = {0.01, 0.1, 0.2, 0.5, 1.1, 1.2, 1.3};
    first.baseline = {0.25, 0.3125, 0.27, 0.26, 0.28, 0.25, 0.262};
    first.trainAccuracy = 0.85;
    first.validAccuracy = std::numeric_limits<double>::quiet_NaN(); // the stub has no validation split
    first.testAccuracy = 0.32;
    first.probe = smallTrace();
    EvalRecord second = first;
    second.step = 500;
    second.accuracy[6] = 1.0 / 3.0;
    second.probe.gateChannels.clear();
    ndr.history = {first, second};
    ndr.bestEval = 1;
    ndr.stepsDone = 500;
    ndr.status = {ModelState::Finished, {}};
    ndr.checkpointFile = "ndr.ckpt";

    ModelRecord vanilla;
    vanilla.config = r.config.models[1];
    EvalRecord diverged = first;
    diverged.trainLoss = std::numeric_limits<double>::quiet_NaN();
    diverged.probe = Trace{}; // no trace
    vanilla.history = {diverged};
    vanilla.bestEval = -1;
    vanilla.stepsDone = 250;
    vanilla.status = {ModelState::Diverged, "the loss is NaN"};
    r.models = {ndr, vanilla};
    return r;
}

bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() &&
           (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

CheckpointData smallCheckpoint(bool withOptional) {
    CheckpointData d;
    d.model = ndrModel(8, 2, 16, 3);
    d.vocabSize = 11;
    d.symbols = 4;
    d.step = 1234567890123;
    d.layout = {{"embedding", 11, 8}, {"layer.w1", 16, 8}, {"layer.b1", 16, 1}, {"readout", 4, 8}};
    size_t n = 0;
    for (const TensorInfo& t : d.layout)
        n += size_t(t.rows) * t.cols;
    std::mt19937 rng(5);
    // Arbitrary bit patterns: denormals, infinities, NaN payloads and -0 must come back unchanged.
    auto fill = [&](std::vector<float>& v) {
        v.resize(n);
        for (float& x : v) {
            const uint32_t bits = rng();
            std::memcpy(&x, &bits, 4);
        }
    };
    fill(d.params);
    d.params[0] = -0.0f;
    if (withOptional) {
        fill(d.bestParams);
        fill(d.adamM);
        fill(d.adamV);
        d.training = ndr::TrainingState{"123 456\n789 text", "1 2 3 4", 42, 1.5};
    }
    return d;
}

// 64-bit FNV-1a, as the checkpoint format specifies.
uint64_t fnv1a(const std::string& bytes) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : bytes)
        h = (h ^ c) * 0x100000001b3ull;
    return h;
}

template <typename T> void putRaw(std::string& s, T v) {
    s.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// A checkpoint file built by hand around any header, with `payloadFloats` zeros and a valid checksum.
std::string handMadeCheckpoint(const json& header, size_t payloadFloats, uint32_t headerBytes = 0) {
    const std::string text = header.dump();
    std::string s = "NDRSCKPT";
    putRaw(s, uint32_t(1));
    putRaw(s, headerBytes ? headerBytes : uint32_t(text.size()));
    s += text;
    s.append(payloadFloats * 4, '\0');
    putRaw(s, fnv1a(s));
    return s;
}

json validHeader() {
    return {{"format", "ndr-studio-checkpoint"},
            {"version", 1},
            {"model", ndrModel(8, 2, 16, 3)},
            {"vocabSize", 11},
            {"symbols", 4},
            {"step", 10},
            {"layout", {{{"name", "w"}, {"rows", 4}, {"cols", 2}}}},
            {"counts", {{"params", 8}, {"bestParams", 0}, {"adamM", 8}, {"adamV", 8}}},
            {"rngState", ""}};
}

} // namespace

class TestFiles : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;
    std::string path(const std::string& name) const {
        return dir_.filePath(QString::fromStdString(name)).toStdString();
    }
    // Everything in a folder: a leftover temporary file would show here.
    static QStringList entries(const std::string& folder) {
        return QDir(QString::fromStdString(folder))
            .entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot);
    }

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    void runRecordRoundTrip() {
        const RunRecord run = smallRun();
        saveRunRecord(path("run.json"), run);
        const RunRecord back = loadRunRecord(path("run.json"));

        QCOMPARE(json(back.config), json(run.config));
        QCOMPARE(back.tables, run.tables);
        QCOMPARE(back.probe, run.probe);
        QCOMPARE(int(back.models.size()), 2);
        const ModelRecord& m = back.models[0];
        QCOMPARE(m.bestEval, 1);
        QCOMPARE(m.stepsDone, 500);
        QVERIFY(m.status == (ModelStatus{ModelState::Finished, {}}));
        QCOMPARE(m.checkpointFile, std::string("ndr.ckpt"));
        QCOMPARE(int(m.history.size()), 2);
        const EvalRecord &e = m.history[0], &want = run.models[0].history[0];
        QCOMPARE(e.step, 250);
        QCOMPARE(e.elapsedSeconds, want.elapsedSeconds);
        QCOMPARE(e.trainLoss, want.trainLoss);
        QCOMPARE(e.depths, want.depths);
        QCOMPARE(e.accuracy, want.accuracy);
        QCOMPARE(e.loss, want.loss);
        QCOMPARE(e.baseline, want.baseline);
        QVERIFY(std::isnan(e.validAccuracy));
        QCOMPARE(e.testAccuracy, want.testAccuracy);
        QCOMPARE(m.history[1].accuracy[6], 1.0 / 3.0);
        const Trace &t = e.probe, &wt = want.probe;
        QCOMPARE(t.steps, 2);
        QCOMPARE(t.tokens, wt.tokens);
        QCOMPARE(t.tokenNames, wt.tokenNames);
        QVERIFY(sameBits(t.attention, wt.attention));
        QVERIFY(sameBits(t.gates, wt.gates));
        QVERIFY(sameBits(t.gateChannels, wt.gateChannels));
        QVERIFY(sameBits(t.change, wt.change));
        QVERIFY(sameBits(t.stepProbs, wt.stepProbs));
        QCOMPARE(t.stepAnswers, wt.stepAnswers);
        QCOMPARE(t.intermediates, wt.intermediates);
        QCOMPARE(t.answer, 1);
        QCOMPARE(t.att(1, 0, 2, 3), wt.att(1, 0, 2, 3));
        QVERIFY(m.history[1].probe.gateChannels.empty());
        const ModelRecord& v = back.models[1];
        QCOMPARE(v.bestEval, -1);
        QVERIFY(v.status == (ModelStatus{ModelState::Diverged, "the loss is NaN"}));
        // The file keeps the status as text, as it always has.
        QCOMPARE(json(run)["models"][0]["status"], json("finished"));
        QCOMPARE(json(run)["models"][1]["status"], json("diverged: the loss is NaN"));
        QVERIFY(std::isnan(v.history[0].trainLoss));
        QCOMPARE(v.history[0].probe.positions, 0);
        // Everything else, through the JSON form (NaN is null on both sides).
        QCOMPARE(json(back), json(run));
        QCOMPARE(entries(dir_.path().toStdString()), QStringList{"run.json"});
    }

    // Reading without the evaluations' traces gives the record with each evaluation's trace empty and
    // everything else as written, the run's probe example included.
    void runRecordWithoutTraces() {
        const RunRecord run = smallRun();
        QVERIFY(run.models[0].history[0].probe.positions > 0);
        QVERIFY(!run.probe.functions.empty());
        saveRunRecord(path("traces.json"), run);
        const RunRecord back = loadRunRecord(path("traces.json"), RunFileParts::WithoutTraces);
        RunRecord want = run;
        for (ModelRecord& m : want.models)
            for (EvalRecord& e : m.history)
                e.probe = Trace{};
        QCOMPARE(back.probe, run.probe);
        QCOMPARE(back.models[0].history[0].probe.positions, 0);
        QCOMPARE(json(back), json(want));
        // A key spelt with an escape is the same key.
        std::string text = readFileBounded(path("traces.json"), 1 << 20);
        std::string escaped = text;
        for (size_t at = 0; (at = escaped.find("\"probe\": {", at)) != std::string::npos; at += 8)
            escaped.replace(at, 7, "\"pro\\u0062e\"");
        QVERIFY(escaped != text);
        QCOMPARE(json(runRecordFromText(escaped, RunFileParts::WithoutTraces)), json(want));
        // Text that is not JSON gets the message that reading all of it gives, at the file's byte.
        const std::string cutShort = text.substr(0, text.size() - 40);
        QString all, withoutTraces;
        try {
            runRecordFromText(cutShort);
        } catch (const FileError& e) {
            all = e.what();
        }
        try {
            runRecordFromText(cutShort, RunFileParts::WithoutTraces);
        } catch (const FileError& e) {
            withoutTraces = e.what();
        }
        QVERIFY(all.contains("invalid JSON at byte"));
        QCOMPARE(withoutTraces, all);
        // What is wrong in the rest of the file is still named.
        const size_t at = text.find("\"testAccuracy\"");
        QVERIFY(at != std::string::npos);
        text.replace(at, 14, "\"testAccuracX\"");
        writeAll(path("bad-traces.json"), text);
        EXPECT_ERROR(FileError, loadRunRecord(path("bad-traces.json"), RunFileParts::WithoutTraces),
                     "testAccuracy");
    }

    void everyStatusReadsBackAsWritten() {
        const std::vector<std::pair<ModelStatus, std::string>> cases = {
            {{ModelState::New, {}}, "new"},
            {{ModelState::Training, {}}, "training"},
            {{ModelState::Paused, {}}, "paused"},
            {{ModelState::Stopped, {}}, "stopped"},
            {{ModelState::Finished, {}}, "finished"},
            {{ModelState::Diverged, "the training loss became nan at step 3"},
             "diverged: the training loss became nan at step 3"},
            {{ModelState::Diverged, {}}, "diverged"},
            {{ModelState::Failed, "out of memory"}, "failed: out of memory"},
        };
        for (const auto& [status, text] : cases) {
            ModelRecord m;
            m.status = status;
            const json j = m;
            QCOMPARE(j.at("status").get<std::string>(), text);
            QVERIFY2(j.get<ModelRecord>().status == status, text.c_str());
        }
    }

    // Head routing and halting: the switches, the evaluation figures and the trace's weights come back
    // as saved; a version 1 file (without any of them) opens as a run without them.
    void routingAndHaltingRoundTrip() {
        RunRecord run = smallRun();
        ModelConfig& m = run.config.models[0];
        m.as<ndr::EncoderConfig>().headRouting = true;
        m.as<ndr::EncoderConfig>().routeTopK = 2;
        m.as<ndr::EncoderConfig>().routeDropped = DroppedHeads::SeedExact;
        m.as<ndr::EncoderConfig>().routeEntropy = 0.02;
        m.as<ndr::EncoderConfig>().thoughtCost = 0.01;
        m.as<ndr::EncoderConfig>().haltThreshold = 0.1;
        m.as<ndr::EncoderConfig>().haltOn = HaltSignal::Change;
        run.models[0].config = m;
        EvalRecord& e = run.models[0].history[0];
        e.routeEntropy = 0.4;
        e.headShare = {0.1, 0.2, 0.3, 0.4};
        e.haltCounts.assign(7, {0, 3, 5, 0, 0, 0, 0, 0, 0, 0, 2});
        e.everyStepAccuracy = {1.0, 0.9, 0.8, 0.75, 0.5, 0.25, 0.125};
        e.probe.heads = 4;
        e.probe.attention.resize(size_t(2 * 4 * 4 * 4), 0.25f);
        for (int i = 0; i < 2 * 4 * 4; ++i)
            e.probe.routing.push_back(float(i % 4) / 6.0f);
        saveRunRecord(path("routing.json"), run);
        const RunRecord back = loadRunRecord(path("routing.json"));
        QCOMPARE(json(back.config), json(run.config));
        QVERIFY(back.models[0].config == m);
        const EvalRecord& b = back.models[0].history[0];
        QCOMPARE(b.routeEntropy, 0.4);
        QCOMPARE(b.headShare, e.headShare);
        QCOMPARE(b.haltCounts, e.haltCounts);
        QCOMPARE(b.everyStepAccuracy, e.everyStepAccuracy);
        QCOMPARE(b.meanHaltStep(0), (3 * 1 + 5 * 2 + 2 * 10) / 10.0);
        QVERIFY(sameBits(b.probe.routing, e.probe.routing));
        QVERIFY(back.models[0].history[1].headShare.empty());

        json old = smallRun();
        old["version"] = 1;
        for (json* models : {&old["config"]["models"], &old["models"]})
            for (json& model : *models) {
                json& c = model.contains("config") ? model["config"] : model;
                for (const char* key : {"headRouting", "routeTopK", "routeDropped", "routeEntropy",
                                        "thoughtCost", "haltThreshold", "haltOn"})
                    c.erase(key);
            }
        QVERIFY(old.dump().find("headRouting") == std::string::npos);
        writeAll(path("version1.json"), old.dump());
        const RunRecord v1 = loadRunRecord(path("version1.json"));
        QVERIFY(!v1.config.models[0].as<ndr::EncoderConfig>().headRouting);
        QCOMPARE(v1.config.models[0].as<ndr::EncoderConfig>().haltThreshold, 0.0);
        QVERIFY(v1.config.models[0].as<ndr::EncoderConfig>().haltOn == HaltSignal::Gates);
        QVERIFY(v1.models[0].history[0].haltCounts.empty());
        QVERIFY(v1.models[0].history[0].everyStepAccuracy.empty());

        // A version 2 evaluation without the majority baseline opens with none; in version 3 every
        // evaluation has one.
        json noBaseline = smallRun();
        for (json& model : noBaseline["models"])
            for (json& eval : model["history"])
                eval.erase("baseline");
        writeAll(path("no-baseline.json"), noBaseline.dump());
        EXPECT_ERROR(FileError, loadRunRecord(path("no-baseline.json")),
                     "models[0].history[0].baseline: missing");
        noBaseline["version"] = 2;
        writeAll(path("no-baseline.json"), noBaseline.dump());
        const RunRecord nb = loadRunRecord(path("no-baseline.json"));
        QVERIFY(nb.models[0].history[0].baseline.empty());
        QCOMPARE(nb.models[0].history[0].accuracy, smallRun().models[0].history[0].accuracy);

        // A version 2 trace without each step's change, its readouts, operator selection or a loss
        // log opens without them: one readout, no selector, no change, no loss log.
        json noChange = smallRun();
        for (json& model : noChange["models"]) {
            model.erase("lossLog");
            for (json& eval : model["history"])
                for (const char* key : {"change", "readouts", "operators", "selection"})
                    eval["probe"].erase(key);
        }
        writeAll(path("no-change.json"), noChange.dump());
        EXPECT_ERROR(FileError, loadRunRecord(path("no-change.json")),
                     "models[0].history[0].probe.readouts: missing");
        noChange["version"] = 2;
        writeAll(path("no-change.json"), noChange.dump());
        const RunRecord nc = loadRunRecord(path("no-change.json"));
        QVERIFY(nc.models[0].history[0].probe.change.empty());
        QCOMPARE(nc.models[0].history[0].probe.readouts, 1);
        QCOMPARE(nc.models[0].history[0].probe.operators, 0);
        QVERIFY(nc.models[0].lossLog.steps.empty());
        QVERIFY(sameBits(nc.models[0].history[0].probe.gates, smallRun().models[0].history[0].probe.gates));

        // A version 3 trace does not name what its gates are: a copy gate, or with operators
        // ThoughtNet's operators' weight. In version 4 every trace names it.
        json unnamed = smallRun();
        for (json& model : unnamed["models"])
            for (json& eval : model["history"])
                eval["probe"].erase("gateMeaning");
        unnamed["models"][0]["history"][0]["probe"]["operators"] = 0;
        writeAll(path("unnamed-gates.json"), unnamed.dump());
        EXPECT_ERROR(FileError, loadRunRecord(path("unnamed-gates.json")),
                     "models[0].history[0].probe.gateMeaning: missing");
        unnamed["version"] = 3;
        writeAll(path("unnamed-gates.json"), unnamed.dump());
        QVERIFY(loadRunRecord(path("unnamed-gates.json")).models[0].history[0].probe.gateMeaning ==
                GateMeaning::CopyGate);
        json& probe = unnamed["models"][0]["history"][0]["probe"];
        const size_t cells = probe["steps"].get<size_t>() * probe["positions"].get<size_t>();
        probe["operators"] = 2;
        probe["selection"] = json(std::vector<float>(cells * 2, 0.5f));
        writeAll(path("unnamed-gates.json"), unnamed.dump());
        QVERIFY(loadRunRecord(path("unnamed-gates.json")).models[0].history[0].probe.gateMeaning ==
                GateMeaning::OperatorWeight);
    }

    void operationCountsRoundTrip() {
        RunRecord run = smallRun();
        EvalRecord& e = run.models[0].history[0];
        e.operations = {"*", "+"};
        e.operationExamples.assign(7, {3, 5});
        e.operationCorrect.assign(7, {1, 5});
        e.operationExamples[0] = {0, 4}; // depth 1 roots no product
        e.operationCorrect[0] = {0, 2};
        saveRunRecord(path("operations.json"), run);
        const RunRecord back = loadRunRecord(path("operations.json"));
        const EvalRecord& b = back.models[0].history[0];
        QCOMPARE(b.operations, e.operations);
        QCOMPARE(b.operationExamples, e.operationExamples);
        QCOMPARE(b.operationCorrect, e.operationCorrect);
        QVERIFY(std::isnan(b.operationAccuracy(0, 0)));
        QCOMPARE(b.operationAccuracy(0, 1), 0.5);
        QCOMPARE(b.operationAccuracy(3, 0), 1.0 / 3);
        // A task without operations writes none, and reads back none.
        QVERIFY(back.models[0].history[1].operations.empty());
        QVERIFY(readAll(path("operations.json")).find("operationCorrect") != std::string::npos);
        saveRunRecord(path("no-operations.json"), smallRun());
        QVERIFY(readAll(path("no-operations.json")).find("operation") == std::string::npos);
    }

    void runRecordFloatsAreCompact() {
        RunRecord run = smallRun();
        run.models[0].history[0].probe.attention[0] = 0.1f;
        saveRunRecord(path("compact.json"), run);
        const std::string text = readAll(path("compact.json"));
        QVERIFY(text.find("0.10000000149") == std::string::npos);
        QVERIFY(text.find("[0.1,") != std::string::npos);
        QVERIFY(text.find("\"format\": \"ndr-studio-run\"") != std::string::npos);
    }

    void runFileRefusals_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        const json good = smallRun();
        const auto with = [&](const std::function<void(json&)>& edit) {
            json j = good;
            edit(j);
            return QString::fromStdString(j.dump());
        };
        QTest::newRow("wrong format") << with([](json& j) { j["format"] = "ndr-studio-bench"; })
                                      << "not an NDR Studio run file (format 'ndr-studio-bench')";
        QTest::newRow("no format") << with([](json& j) { j.erase("format"); })
                                   << "not an NDR Studio run file";
        QTest::newRow("not an object") << QString("[1, 2, 3]") << "not an NDR Studio run file";
        QTest::newRow("newer version")
            << with([](json& j) { j["version"] = 7; })
            << QString("run file version 7 is newer than this NDR Studio understands (%1): update "
                       "NDR Studio")
                   .arg(RunRecord::kVersion);
        QTest::newRow("missing field") << with([](json& j) { j["models"][0]["history"][1].erase("loss"); })
                                       << "models[0].history[1].loss: missing";
        QTest::newRow("missing config field")
            << with([](json& j) { j["config"]["models"][1].erase("heads"); })
            << "config.models[1].heads: missing";
        QTest::newRow("wrong type") << with([](json& j) { j["models"][1]["stepsDone"] = "many"; })
                                    << "models[1].stepsDone: expected an integer, got string";
        QTest::newRow("invalid config") << with([](json& j) { j["config"]["models"][0]["heads"] = 5; })
                                        << "config.models[0].heads: 5 does not divide d_model 48";
        QTest::newRow("history lengths differ")
            << with([](json& j) { j["models"][0]["history"][0]["accuracy"].erase(0); })
            << "models[0].history[0].accuracy: has 6 values for 7 depths";
        QTest::newRow("baseline lengths differ")
            << with([](json& j) { j["models"][0]["history"][0]["baseline"].erase(0); })
            << "models[0].history[0].baseline: has 6 values for 7 depths";
        QTest::newRow("baseline not a share")
            << with([](json& j) { j["models"][0]["history"][1]["baseline"][2] = 1.5; })
            << "models[0].history[1].baseline[2]: must be a share between 0 and 1, got 1.5";
        QTest::newRow("every-step accuracy lengths differ") << with([](json& j) {
            j["models"][0]["history"][0]["everyStepAccuracy"] = {0.5, 0.5};
        }) << "models[0].history[0].everyStepAccuracy: has 2 values for 7 depths";
        const auto withOperations = [&](const std::function<void(json&)>& edit) {
            return with([&](json& j) {
                json& e = j["models"][0]["history"][0];
                e["operations"] = {"+", "MAX"};
                e["operationExamples"] = json::array();
                e["operationCorrect"] = json::array();
                for (int d = 0; d < 7; ++d) {
                    e["operationExamples"].push_back({4, 2});
                    e["operationCorrect"].push_back({1, 2});
                }
                edit(e);
            });
        };
        QTest::newRow("operations out of order") << withOperations([](json& e) {
            e["operations"] = {"MAX", "+"};
        }) << "models[0].history[0].operations: must be distinct non-empty names in ascending order";
        QTest::newRow("operation rows differ")
            << withOperations([](json& e) { e["operationExamples"].erase(0); })
            << "models[0].history[0].operationExamples: has 6 rows for 7 depths";
        QTest::newRow("operation columns differ")
            << withOperations([](json& e) { e["operationCorrect"][3] = {1}; })
            << "models[0].history[0].operationCorrect[3]: has 1 values for 2 operations";
        QTest::newRow("more right than examples")
            << withOperations([](json& e) { e["operationCorrect"][2][1] = 3; })
            << "models[0].history[0].operationCorrect[2][1]: counts 3 right answers of 2 examples";
        QTest::newRow("operation counts missing")
            << withOperations([](json& e) { e.erase("operationCorrect"); })
            << "models[0].history[0].operationCorrect: missing";
        QTest::newRow("bestEval out of range")
            << with([](json& j) { j["models"][0]["bestEval"] = 2; }) << "models[0].bestEval: must be -1";
        QTest::newRow("attention size")
            << with([](json& j) { j["models"][0]["history"][0]["probe"]["attention"].erase(0); })
            << "models[0].history[0].probe.attention: expected 32 values";
        QTest::newRow("gate channels size")
            << with([](json& j) { j["models"][0]["history"][0]["probe"]["gateChannels"].erase(0); })
            << "probe.gateChannels: expected a multiple of steps*positions = 8";
        QTest::newRow("change size") << with([](json& j) {
            j["models"][0]["history"][0]["probe"]["change"].erase(0);
        }) << "probe.change: expected 8 values";
        QTest::newRow("step answers size")
            << with([](json& j) { j["models"][0]["history"][0]["probe"]["stepAnswers"].erase(0); })
            << "probe.stepAnswers: expected 3 values";
        QTest::newRow("absurd trace dims")
            << with([](json& j) { j["models"][0]["history"][0]["probe"]["positions"] = 1000000; })
            << "probe.positions: must be between 0 and 4096, got 1000000";
        QTest::newRow("answer out of range")
            << with([](json& j) { j["models"][0]["history"][0]["probe"]["stepAnswers"][0] = 9; })
            << "probe.stepAnswers[0]: must be between -1 and 3";
        QTest::newRow("table shape") << with([](json& j) { j["tables"][2].erase(0); })
                                     << "tables[2]: expected 4 values";
        QTest::newRow("probe out of range") << with([](json& j) { j["probe"]["functions"][1] = 4; })
                                            << "probe.functions[1]: must be below task.functions (4)";
        QTest::newRow("checkpoint outside the folder")
            << with([](json& j) { j["models"][0]["checkpointFile"] = "../../etc/x"; })
            << "models[0].checkpointFile";
        const std::string goodText = good.dump();
        QTest::newRow("truncated JSON")
            << QString::fromStdString(goodText.substr(0, goodText.size() / 2)) << "invalid JSON at byte";
        QTest::newRow("empty file") << QString() << "invalid JSON at byte";
    }

    void runFileRefusals() {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        const std::string file = path("bad-run.json");
        writeAll(file, text.toStdString());
        const QString prefix = QString::fromStdString("cannot open run file '" + file + "': ");
        EXPECT_ERROR(FileError, loadRunRecord(file), prefix);
        EXPECT_ERROR(FileError, loadRunRecord(file), expected);
    }

    void runFileMissingOrHuge() {
        EXPECT_ERROR(FileError, loadRunRecord(path("absent.json")), "No such file or directory");
        EXPECT_ERROR(FileError, loadRunRecord(dir_.path().toStdString()), "folder");
        // A sparse file: refused by its size, without reading 600 MB.
        QFile huge(QString::fromStdString(path("huge.json")));
        QVERIFY(huge.open(QIODevice::WriteOnly));
        QVERIFY(huge.resize(qint64(600) << 20));
        huge.close();
        EXPECT_ERROR(FileError, loadRunRecord(path("huge.json")),
                     "it is 600 MB; run files larger than 512 MB are refused");
        EXPECT_ERROR(FileError, readFileBounded(path("huge.json"), 1 << 20),
                     "files larger than 1 MB are refused");
        QFile::remove(QString::fromStdString(path("huge.json")));
    }

    void readFileBoundedReads() {
        writeAll(path("small.txt"), std::string("hello\0world", 11));
        QCOMPARE(readFileBounded(path("small.txt"), 11), std::string("hello\0world", 11));
        EXPECT_ERROR(FileError, readFileBounded(path("small.txt"), 10), "small.txt");
    }

    void checkpointRoundTrip() {
        for (bool optional : {true, false}) {
            const CheckpointData d = smallCheckpoint(optional);
            saveCheckpoint(path("model.ckpt"), d);
            const CheckpointData back = loadCheckpoint(path("model.ckpt"));
            QCOMPARE(json(back.model), json(d.model));
            QCOMPARE(back.vocabSize, d.vocabSize);
            QCOMPARE(back.symbols, d.symbols);
            QCOMPARE(back.step, d.step);
            QCOMPARE(int(back.layout.size()), int(d.layout.size()));
            for (size_t i = 0; i < d.layout.size(); ++i)
                QVERIFY(back.layout[i] == d.layout[i]);
            QVERIFY(sameBits(back.params, d.params));
            QVERIFY(sameBits(back.bestParams, d.bestParams));
            QVERIFY(sameBits(back.adamM, d.adamM));
            QVERIFY(sameBits(back.adamV, d.adamV));
            QVERIFY(back.training == d.training);
            checkCheckpointMatches(back, d.model, d.layout);
        }
    }

    void checkpointRefusals() {
        const std::string good = path("good.ckpt");
        saveCheckpoint(good, smallCheckpoint(true));
        const std::string bytes = readAll(good);
        const std::string bad = path("bad.ckpt");
        const QString prefix = QString::fromStdString("cannot load checkpoint '" + bad + "': ");

        std::string b = bytes;
        b[0] = 'X';
        writeAll(bad, b);
        EXPECT_ERROR(FileError, loadCheckpoint(bad), prefix + "not an NDR Studio checkpoint");
        writeAll(bad, "{\"format\": \"ndr-studio-run\"}");
        EXPECT_ERROR(FileError, loadCheckpoint(bad), "not an NDR Studio checkpoint");

        b = bytes;
        b[8] = 3;
        writeAll(bad, b);
        EXPECT_ERROR(FileError, loadCheckpoint(bad),
                     "checkpoint version 3 is newer than this NDR Studio understands");
        b[8] = 0;
        writeAll(bad, b);
        EXPECT_ERROR(FileError, loadCheckpoint(bad), "version 0 is not valid");

        uint32_t headerBytes = 0;
        std::memcpy(&headerBytes, bytes.data() + 12, 4);
        writeAll(bad, "");
        EXPECT_ERROR(FileError, loadCheckpoint(bad), "the file is empty");
        for (size_t n : {size_t(5), size_t(15), size_t(20), size_t(16 + headerBytes / 2),
                         size_t(16 + headerBytes + 8), size_t(16 + headerBytes + 100), bytes.size() - 1}) {
            writeAll(bad, bytes.substr(0, n));
            const std::string found = "found " + std::to_string(n);
            EXPECT_ERROR(FileError, loadCheckpoint(bad), prefix + "truncated: expected ");
            EXPECT_ERROR(FileError, loadCheckpoint(bad), QString::fromStdString(found));
            if (n >= 16 + headerBytes + 8) // the header is complete: the exact size is known
                EXPECT_ERROR(
                    FileError, loadCheckpoint(bad),
                    QString::fromStdString("expected " + std::to_string(bytes.size()) + " bytes, " + found));
        }
        writeAll(bad, bytes + "x");
        EXPECT_ERROR(FileError, loadCheckpoint(bad), "expected " + QString::number(bytes.size()) + " bytes");

        for (size_t at : {size_t(16 + headerBytes + 3), bytes.size() - 200, bytes.size() - 1}) {
            b = bytes;
            b[at] = char(b[at] ^ 0x10);
            writeAll(bad, b);
            EXPECT_ERROR(FileError, loadCheckpoint(bad), "checksum mismatch: the file is damaged");
        }
        EXPECT_ERROR(FileError, loadCheckpoint(path("absent.ckpt")), "No such file or directory");
    }

    void checkpointAbsurdHeaders_data() {
        QTest::addColumn<QByteArray>("file");
        QTest::addColumn<QString>("expected");
        const auto row = [](const char* name, const std::string& bytes, const char* expected) {
            QTest::newRow(name) << QByteArray(bytes.data(), qsizetype(bytes.size())) << QString(expected);
        };
        const auto edited = [](const std::function<void(json&)>& edit) {
            json h = validHeader();
            edit(h);
            return handMadeCheckpoint(h, 24);
        };
        row("sane header", handMadeCheckpoint(validHeader(), 23), "truncated: expected");
        row("header length huge", handMadeCheckpoint(validHeader(), 24, 0xFFFFFFFFu),
            "the header claims 4294967295");
        row("header length beyond file", handMadeCheckpoint(validHeader(), 24, 1u << 20),
            "truncated: expected at least");
        row("header not JSON", edited([](json&) {}).replace(16, 1, "!"), "the header is not valid JSON");
        row("params count huge", edited([](json& h) { h["counts"]["params"] = int64_t(1) << 40; }),
            "header field counts.params");
        row("tensor side huge", edited([](json& h) { h["layout"][0]["rows"] = 1 << 21; }), "layout[0].rows");
        row("tensor side 0", edited([](json& h) { h["layout"][0]["rows"] = 0; }), "layout[0].rows");
        row("negative count", edited([](json& h) { h["counts"]["adamM"] = -8; }), "counts.adamM");
        row("params not the layout", edited([](json& h) { h["counts"]["params"] = 9; }),
            "counts 9 parameters but its layout adds up to 8");
        row("moments of another size", edited([](json& h) { h["counts"]["adamV"] = 7; }),
            "counts.adamV: 7 values, expected 0 or 8");
        // 2^28 parameters in a consistent header: refused by the file size, not by allocating 1 GB first.
        row("large but consistent", edited([](json& h) {
                h["layout"] = {{{"name", "w"}, {"rows", 1 << 14}, {"cols", 1 << 14}}};
                h["counts"] = {
                    {"params", 1 << 28}, {"bestParams", 1 << 28}, {"adamM", 1 << 28}, {"adamV", 1 << 28}};
            }),
            "truncated: expected 42949"); // 4.29 GB and the header's size
        row("foreign header format", edited([](json& h) { h["format"] = "other"; }), "header format 'other'");
        row("bad model", edited([](json& h) { h["model"]["heads"] = "x"; }),
            "header field model: heads: expected an integer, got string");
        row("missing field", edited([](json& h) { h.erase("layout"); }), "no 'layout' field");
    }

    void checkpointAbsurdHeaders() {
        QFETCH(QByteArray, file);
        QFETCH(QString, expected);
        const std::string bad = path("absurd.ckpt");
        writeAll(bad, file.toStdString());
        // That nothing is allocated from the claimed sizes is checked by test_bad_input's allocation bound.
        EXPECT_ERROR(FileError, loadCheckpoint(bad), expected);
    }

    void checkpointHandMadeValid() {
        // The format as specified, written independently of saveCheckpoint, loads.
        writeAll(path("hand.ckpt"), handMadeCheckpoint(validHeader(), 24));
        const CheckpointData d = loadCheckpoint(path("hand.ckpt"));
        QCOMPARE(int(d.params.size()), 8);
        QVERIFY(d.bestParams.empty());
        QCOMPARE(int(d.adamV.size()), 8);
        QCOMPARE(d.step, int64_t(10));
        QVERIFY(!d.training); // version 1 without a generator state: weights alone

        // Version 1 keeps the generators, Adam's step and the seconds in one text; they read into
        // their fields, the batch generator's words first, then the dropout generator's four.
        json v1 = validHeader();
        v1["rngState"] = "5 6 7 8 9 10 11 12 13 1000 2.5";
        writeAll(path("v1.ckpt"), handMadeCheckpoint(v1, 24));
        const CheckpointData old = loadCheckpoint(path("v1.ckpt"));
        QVERIFY(old.training);
        QCOMPARE(old.training->batchRng, std::string("5 6 7 8 9"));
        QCOMPARE(old.training->dropoutRng, std::string("10 11 12 13"));
        QCOMPARE(old.training->adamStep, int64_t(1000));
        QCOMPARE(old.training->seconds, 2.5);
        v1["rngState"] = "5 6 7 8 9 10 11 12 13 1000 soon";
        writeAll(path("v1.ckpt"), handMadeCheckpoint(v1, 24));
        EXPECT_ERROR(FileError, loadCheckpoint(path("v1.ckpt")), "the training generator state is damaged");
    }

    void checkpointMismatch() {
        const CheckpointData d = smallCheckpoint(true);
        ModelConfig other = d.model;
        other.as<ndr::EncoderConfig>().dropout = 0.5f; // training settings may differ
        other.as<ndr::EncoderConfig>().gateDropout = 0;
        other.as<ndr::EncoderConfig>().evalSteps = 10;
        other.name = "renamed";
        checkCheckpointMatches(d, other, d.layout);

        other = d.model;
        other.as<ndr::EncoderConfig>().dModel = 16;
        EXPECT_ERROR(FileError, checkCheckpointMatches(d, other, d.layout),
                     "checkpoint was saved for dModel 8 but the run's model has dModel 16");
        other = d.model;
        other.as<ndr::EncoderConfig>().attention = AttentionKind::Softmax;
        other.as<ndr::EncoderConfig>().sharedWeights = false;
        const QString both = errorOf<FileError>([&] { checkCheckpointMatches(d, other, d.layout); });
        QVERIFY2(both.contains("saved for attention geometric but the run's model has attention softmax"),
                 qPrintable(both));
        QVERIFY2(both.contains("sharedWeights true but the run's model has sharedWeights false"),
                 qPrintable(both));
        QVERIFY2(!both.contains(".ckpt"), qPrintable(both)); // the caller names the file

        std::vector<TensorInfo> layout = d.layout;
        layout[0].rows = 13; // another vocabulary
        EXPECT_ERROR(FileError, checkCheckpointMatches(d, d.model, layout), "'embedding' 11x8");
        layout.pop_back();
        EXPECT_ERROR(FileError, checkCheckpointMatches(d, d.model, layout), "4 tensors");

        CheckpointData shortMoments = d;
        shortMoments.adamM.pop_back();
        EXPECT_ERROR(FileError, checkCheckpointMatches(shortMoments, d.model, d.layout), "adamM has");
        EXPECT_ERROR(FileError, saveCheckpoint(path("never.ckpt"), shortMoments), "cannot save checkpoint");
        QVERIFY(!QFile::exists(QString::fromStdString(path("never.ckpt"))));
    }

    void atomicWriteReplaces() {
        const std::string folder = path("atomic");
        QVERIFY(QDir().mkpath(QString::fromStdString(folder)));
        const std::string target = folder + "/file.txt";
        writeFileAtomic(target, "first");
        writeFileAtomic(target, "second, longer");
        writeFileAtomic(target, "");
        writeFileAtomic(target, "third");
        QCOMPARE(readAll(target), std::string("third"));
        QCOMPARE(entries(folder), QStringList{"file.txt"});
    }

    void atomicWriteFailuresChangeNothing() {
        const std::string folder = path("failing");
        QVERIFY(QDir().mkpath(QString::fromStdString(folder + "/sub")));
        writeAll(folder + "/sub/inside.txt", "keep");
        writeAll(folder + "/target.txt", "old contents");

        // The target is a folder: the rename fails and the temporary file goes away.
        EXPECT_ERROR(FileError, writeFileAtomic(folder + "/sub", "x"),
                     QString::fromStdString("'" + folder + "/sub'"));
        QVERIFY(QFileInfo(QString::fromStdString(folder + "/sub")).isDir());
        QCOMPARE(readAll(folder + "/sub/inside.txt"), std::string("keep"));
        // The folder does not exist, or is a file.
        EXPECT_ERROR(FileError, writeFileAtomic(folder + "/absent/x.txt", "x"), "No such file or directory");
        EXPECT_ERROR(FileError, writeFileAtomic(folder + "/target.txt/x.txt", "x"), "Not a directory");

        // Writing fails half-way (a file size limit works even for root): the old contents stay.
        struct rlimit old {};
        QVERIFY(getrlimit(RLIMIT_FSIZE, &old) == 0);
        const auto oldHandler = std::signal(SIGXFSZ, SIG_IGN);
        struct rlimit small = old;
        small.rlim_cur = 1000;
        QVERIFY(setrlimit(RLIMIT_FSIZE, &small) == 0);
        const QString message =
            errorOf<FileError>([&] { writeFileAtomic(folder + "/target.txt", std::string(5000, 'n')); });
        setrlimit(RLIMIT_FSIZE, &old);
        std::signal(SIGXFSZ, oldHandler);
        QVERIFY2(message.contains("target.txt") && message.contains("writing"), qPrintable(message));
        QCOMPARE(readAll(folder + "/target.txt"), std::string("old contents"));

        QCOMPARE(entries(folder), (QStringList{"sub", "target.txt"}));
        QCOMPARE(entries(folder + "/sub"), QStringList{"inside.txt"});
    }

    void saveRunRecordFailureKeepsOldFile() {
        const RunRecord run = smallRun();
        saveRunRecord(path("keep.json"), run);
        const std::string before = readAll(path("keep.json"));
        EXPECT_ERROR(FileError, saveRunRecord(path("nowhere/keep.json"), run), "nowhere");
        QCOMPARE(readAll(path("keep.json")), before);
    }
};

QTEST_APPLESS_MAIN(TestFiles)
#include "test_files.moc"
