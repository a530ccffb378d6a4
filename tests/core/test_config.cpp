// Tests of run configurations: the presets, every validation rule with its field path, JSON round trips,
// preset-based config files, and the messages bad JSON gets.
#include "core/config/config.h"
#include "core/config/model_kind.h"
#include "core/io/serialize.h"

#include <QtTest>
#include <cmath>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

using namespace ndr;
using nlohmann::json;

namespace {

// The first differing field of two configurations, or "" when equal. Floats compare exactly.
std::string configDiff(const RunConfig& a, const RunConfig& b) {
    std::string d;
    auto check = [&](const std::string& field, const auto& x, const auto& y) {
        if (d.empty() && !(x == y))
            d = field + " differs";
    };
    check("preset", a.preset, b.preset);
    check("task.symbols", a.task.symbols, b.task.symbols);
    check("task.functions", a.task.functions, b.task.functions);
    check("task.trainMinDepth", a.task.trainMinDepth, b.task.trainMinDepth);
    check("task.trainMaxDepth", a.task.trainMaxDepth, b.task.trainMaxDepth);
    check("task.validMinDepth", a.task.validMinDepth, b.task.validMinDepth);
    check("task.validMaxDepth", a.task.validMaxDepth, b.task.validMaxDepth);
    check("task.testMinDepth", a.task.testMinDepth, b.task.testMinDepth);
    check("task.testMaxDepth", a.task.testMaxDepth, b.task.testMaxDepth);
    check("task.order", a.task.order, b.task.order);
    check("task.seed", a.task.seed, b.task.seed);
    check("task.evalExamplesPerDepth", a.task.evalExamplesPerDepth, b.task.evalExamplesPerDepth);
    check("task.operations", a.task.operations, b.task.operations);
    check("task (a field not listed above)", a.task == b.task, true);
    check("models.size", a.models.size(), b.models.size());
    for (size_t i = 0; d.empty() && i < a.models.size(); ++i) {
        const ModelConfig &x = a.models[i], &y = b.models[i];
        const std::string at = "models[" + std::to_string(i) + "].";
        check(at + "kind", kindOf(x).id, kindOf(y).id);
        if (d.empty())
            for (const ModelField& f : modelFieldsOf(kindOf(x)))
                check(at + f.key, f.get(x), f.get(y));
        check(at + "(a field not listed above)", x == y, true);
    }
    check("train.batchSize", a.train.batchSize, b.train.batchSize);
    check("train.learningRate", a.train.learningRate, b.train.learningRate);
    check("train.weightDecay", a.train.weightDecay, b.train.weightDecay);
    check("train.gradClip", a.train.gradClip, b.train.gradClip);
    check("train.lrDecaySteps", a.train.lrDecaySteps, b.train.lrDecaySteps);
    check("train.lrDecayFactor", a.train.lrDecayFactor, b.train.lrDecayFactor);
    check("train.warmupSteps", a.train.warmupSteps, b.train.warmupSteps);
    check("train.cosineDecay", a.train.cosineDecay, b.train.cosineDecay);
    check("train.steps", a.train.steps, b.train.steps);
    check("train.evalInterval", a.train.evalInterval, b.train.evalInterval);
    check("train.seed", a.train.seed, b.train.seed);
    check("train.threads", a.train.threads, b.train.threads);
    return d;
}

std::string joined(const std::vector<Problem>& problems) {
    std::string s;
    for (const auto& p : problems)
        s += "\n  " + p.text();
    return s;
}

// The message of the std::runtime_error `f` throws, or "" if it throws none.
QString errorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::runtime_error& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

// One validation rule broken on purpose: applied to the stub preset, it must give problems about
// `field` only, one of them containing `text`.
struct Rule {
    const char* name;
    std::function<void(RunConfig&)> breakIt;
    const char* field;
    const char* text;
};

std::vector<Rule> rules() {
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    return {
        {"symbols too few", [](RunConfig& c) { c.task.symbols = 1; }, "task.symbols",
         "between 2 and 64, got 1"},
        {"symbols too many", [](RunConfig& c) { c.task.symbols = 65; }, "task.symbols", "got 65"},
        {"no functions", [](RunConfig& c) { c.task.functions = 0; }, "task.functions", "between 1 and 26"},
        {"too many functions", [](RunConfig& c) { c.task.functions = 27; }, "task.functions", "got 27"},
        {"train depth 0", [](RunConfig& c) { c.task.trainMinDepth = 0; }, "task.trainMinDepth", "at least 1"},
        {"empty train range", [](RunConfig& c) { c.task.trainMinDepth = 3, c.task.trainMaxDepth = 2; },
         "task.trainMaxDepth", "at least one depth"},
        {"empty test range", [](RunConfig& c) { c.task.testMinDepth = 7, c.task.testMaxDepth = 6; },
         "task.testMaxDepth", "at least one depth"},
        {"test overlaps train", [](RunConfig& c) { c.task.testMinDepth = 4; }, "task.testMinDepth",
         "test depths 4..7 overlap train depths 1..4"},
        {"valid overlaps test", [](RunConfig& c) { c.task.validMinDepth = 7, c.task.validMaxDepth = 9; },
         "task.testMinDepth", "overlap validation depths 7..9"},
        {"valid depth 0", [](RunConfig& c) { c.task.validMinDepth = 0, c.task.validMaxDepth = 0; },
         "task.validMinDepth", "at least 1"},
        {"too deep", [](RunConfig& c) { c.task.testMaxDepth = 41; }, "task.testMaxDepth", "at most 40"},
        {"no eval examples", [](RunConfig& c) { c.task.evalExamplesPerDepth = 0; },
         "task.evalExamplesPerDepth", "between 1 and 100000"},
        {"too many eval examples", [](RunConfig& c) { c.task.evalExamplesPerDepth = 100001; },
         "task.evalExamplesPerDepth", "got 100001"},
        {"no models", [](RunConfig& c) { c.models.clear(); }, "models", "between 1 and 4 models, got 0"},
        {"five models",
         [](RunConfig& c) {
             c.models.resize(5, c.models[0]);
             for (size_t i = 0; i < c.models.size(); ++i)
                 c.models[i].name = std::string(1, char('a' + i)); // unique
         },
         "models", "got 5"},
        {"empty name", [](RunConfig& c) { c.models[0].name.clear(); }, "models[0].name", "must not be empty"},
        {"duplicate name", [](RunConfig& c) { c.models[1].name = c.models[0].name; }, "models[1].name",
         "unique"},
        {"dModel 0",
         [](RunConfig& c) {
             c.models[0].as<ndr::EncoderConfig>().dModel = 0, c.models[0].as<ndr::EncoderConfig>().heads = 1;
         },
         "models[0].dModel", "between 1 and 4096"},
        {"dModel too big", [](RunConfig& c) { c.models[1].as<ndr::EncoderConfig>().dModel = 8192; },
         "models[1].dModel", "got 8192"},
        {"heads not dividing", [](RunConfig& c) { c.models[0].as<ndr::EncoderConfig>().heads = 5; },
         "models[0].heads", "5 does not divide d_model 48"},
        {"heads 0", [](RunConfig& c) { c.models[1].as<ndr::EncoderConfig>().heads = 0; }, "models[1].heads",
         "at least 1"},
        {"dFF 0", [](RunConfig& c) { c.models[0].as<ndr::EncoderConfig>().dFF = 0; }, "models[0].dFF",
         "between 1 and 16384"},
        {"dFF too big", [](RunConfig& c) { c.models[0].as<ndr::EncoderConfig>().dFF = 16385; },
         "models[0].dFF", "got 16385"},
        {"steps 0", [](RunConfig& c) { c.models[0].as<ndr::EncoderConfig>().steps = 0; }, "models[0].steps",
         "between 1 and 64"},
        {"steps too many",
         [](RunConfig& c) {
             c.models[0].as<ndr::EncoderConfig>().steps = 65;
             c.models[0].as<ndr::EncoderConfig>().evalSteps = 0;
         },
         "models[0].steps", "got 65"},
        {"evalSteps below steps", [](RunConfig& c) { c.models[0].as<ndr::EncoderConfig>().evalSteps = 5; },
         "models[0].evalSteps", "between steps (8) and 128"},
        {"evalSteps too many", [](RunConfig& c) { c.models[0].as<ndr::EncoderConfig>().evalSteps = 129; },
         "models[0].evalSteps", "got 129"},
        {"separate layers unrolled",
         [](RunConfig& c) {
             c.models[1].as<ndr::EncoderConfig>().sharedWeights = false,
             c.models[1].as<ndr::EncoderConfig>().evalSteps = 12;
         },
         "models[1].evalSteps", "separate layers cannot be unrolled"},
        {"dropout 1", [](RunConfig& c) { c.models[0].as<ndr::EncoderConfig>().dropout = 1; },
         "models[0].dropout", "below 1"},
        {"attention dropout negative",
         [](RunConfig& c) { c.models[0].as<ndr::EncoderConfig>().attentionDropout = -0.1f; },
         "models[0].attentionDropout", "at least 0"},
        {"gate dropout NaN", [nan](RunConfig& c) { c.models[0].as<ndr::EncoderConfig>().gateDropout = nan; },
         "models[0].gateDropout", "finite"},
        {"gate bias infinite",
         [inf](RunConfig& c) { c.models[0].as<ndr::EncoderConfig>().gateBiasInit = -inf; },
         "models[0].gateBiasInit", "finite"},
        {"L1 with softmax",
         [](RunConfig& c) { c.models[1].as<ndr::EncoderConfig>().geomNorm = GeomNorm::L1; },
         "models[1].geomNorm", "geometric attention"},
        {"relative positions with geometric attention",
         [](RunConfig& c) { c.models[0].as<ndr::EncoderConfig>().positional = PositionalKind::Relative; },
         "models[0].positional", "use softmax attention"},
        {"abs/rel positions with geometric attention",
         [](RunConfig& c) { c.models[0].as<ndr::EncoderConfig>().positional = PositionalKind::AbsRel; },
         "models[0].positional", "geometric attention has its own directional encoding"},
        {"halting on gates without gates",
         [](RunConfig& c) { c.models[1].as<ndr::EncoderConfig>().haltThreshold = 0.2; },
         "models[1].haltThreshold", "halt on the change"},
        {"halting threshold 1", [](RunConfig& c) { c.models[0].as<ndr::EncoderConfig>().haltThreshold = 1; },
         "models[0].haltThreshold", "in (0, 1), got 1"},
        {"batch 0", [](RunConfig& c) { c.train.batchSize = 0; }, "train.batchSize", "between 1 and 8192"},
        {"batch too big", [](RunConfig& c) { c.train.batchSize = 8193; }, "train.batchSize", "got 8193"},
        {"learning rate 0", [](RunConfig& c) { c.train.learningRate = 0; }, "train.learningRate", "above 0"},
        {"learning rate above 1", [](RunConfig& c) { c.train.learningRate = 1.5; }, "train.learningRate",
         "at most 1"},
        {"learning rate NaN", [](RunConfig& c) { c.train.learningRate = std::nan(""); }, "train.learningRate",
         "finite"},
        {"weight decay negative", [](RunConfig& c) { c.train.weightDecay = -0.01; }, "train.weightDecay",
         "between 0 and 1"},
        {"grad clip negative", [](RunConfig& c) { c.train.gradClip = -1; }, "train.gradClip", "at least 0"},
        {"grad clip infinite", [](RunConfig& c) { c.train.gradClip = HUGE_VAL; }, "train.gradClip", "finite"},
        {"decay interval negative", [](RunConfig& c) { c.train.lrDecaySteps = -1; }, "train.lrDecaySteps",
         "at least 0"},
        {"decay factor 0", [](RunConfig& c) { c.train.lrDecayFactor = 0; }, "train.lrDecayFactor", "above 0"},
        {"decay factor above 1", [](RunConfig& c) { c.train.lrDecayFactor = 2; }, "train.lrDecayFactor",
         "at most 1, got 2"},
        {"warm-up negative", [](RunConfig& c) { c.train.warmupSteps = -5; }, "train.warmupSteps",
         "between 0 and 10000000"},
        {"cosine and stepwise decay",
         [](RunConfig& c) { c.train.cosineDecay = true, c.train.lrDecaySteps = 100; }, "train.cosineDecay",
         "not both"},
        {"train steps 0", [](RunConfig& c) { c.train.steps = 0; }, "train.steps", "between 1 and 10000000"},
        {"train steps too many", [](RunConfig& c) { c.train.steps = 10000001; }, "train.steps",
         "got 10000001"},
        {"eval interval 0", [](RunConfig& c) { c.train.evalInterval = 0; }, "train.evalInterval",
         "at least 1"},
        {"threads 0", [](RunConfig& c) { c.train.threads = 0; }, "train.threads", "between 1 and 64"},
        {"threads too many", [](RunConfig& c) { c.train.threads = 65; }, "train.threads", "got 65"},
    };
}

} // namespace

class TestConfig : public QObject {
    Q_OBJECT

private slots:
    void presetsAreValid() {
        const auto names = presetNames();
        // The eight built-in presets, then those the model kinds bring (each kind's tests check its own).
        std::vector<std::string> fromKinds;
        for (const ModelKindInfo* k : modelKinds())
            for (const RunPreset& p : k->runPresets)
                fromKinds.push_back(p.name);
        QCOMPARE(names.size(), 8 + fromKinds.size());
        for (const std::string& name : names) {
            const RunConfig c = presetConfig(name);
            const auto problems = validate(c);
            QVERIFY2(problems.empty(), (name + joined(problems)).c_str());
            QCOMPARE(c.preset, name);
            if (std::find(fromKinds.begin(), fromKinds.end(), name) != fromKinds.end())
                continue;
            if (name == "thoughtnet") // ThoughtNet beside NDR: test_thoughtnet
                continue;
            QCOMPARE(c.models[0].name, std::string("NDR"));
            const bool tree = name == "arith" || name == "listops";
            QCOMPARE(c.task.kind, name == "arith"     ? TaskKind::Arith
                                  : name == "listops" ? TaskKind::ListOps
                                                      : TaskKind::Ctl);
            QVERIFY(!tree || (c.task.trainMinDepth == 2 && c.task.testMaxDepth == 9));
            if (name.rfind("stub-", 0) != 0) {
                QCOMPARE(int(c.models.size()), 2);
                QCOMPARE(c.models[1].name, std::string("Transformer"));
            }
        }
        // stub-routing: NDR and the Transformer, each plain and with top-2-of-4 head routing.
        const RunConfig routing = presetConfig("stub-routing");
        QCOMPARE(int(routing.models.size()), 4);
        for (int m = 0; m < 4; ++m) {
            QCOMPARE(routing.models[m].as<ndr::EncoderConfig>().headRouting, m % 2 == 1);
            QCOMPARE(routing.models[m].as<ndr::EncoderConfig>().heads, 4);
            if (m % 2 == 1) {
                QCOMPARE(routing.models[m].as<ndr::EncoderConfig>().routeTopK, 2);
                ModelConfig plain = routing.models[m];
                plain.as<ndr::EncoderConfig>().headRouting = false;
                plain.as<ndr::EncoderConfig>().routeTopK = 0;
                plain.as<ndr::EncoderConfig>().routeEntropy = 0;
                plain.name = routing.models[m - 1].name;
                QVERIFY(plain == routing.models[m - 1]); // routing is the only difference
            }
        }
        // stub-thought-cost: the stub's NDR with and without the cost, both halting at evaluation.
        const RunConfig cost = presetConfig("stub-thought-cost");
        QCOMPARE(int(cost.models.size()), 2);
        QCOMPARE(cost.models[0].as<ndr::EncoderConfig>().thoughtCost, 0.0);
        QVERIFY(cost.models[1].as<ndr::EncoderConfig>().thoughtCost > 0);
        QVERIFY(cost.models[0].as<ndr::EncoderConfig>().haltThreshold > 0);
        QCOMPARE(cost.models[0].as<ndr::EncoderConfig>().haltThreshold,
                 cost.models[1].as<ndr::EncoderConfig>().haltThreshold);
        const RunConfig stub = presetConfig("stub");
        QVERIFY(stub.task.validMinDepth > stub.task.validMaxDepth); // no validation split
        QCOMPARE(stub.task.testMinDepth, 5);
        QCOMPARE(stub.task.testMaxDepth, 7);
        QCOMPARE(presetConfig("paper-forward").task.order, Order::Forward);
        QCOMPARE(presetConfig("paper-backward").task.order, Order::Backward);
    }

    void modelPresets() {
        const ModelConfig ndr = ndrModel(48, 4, 96, 8);
        QCOMPARE(ndr.as<ndr::EncoderConfig>().attention, AttentionKind::Geometric);
        QCOMPARE(ndr.as<ndr::EncoderConfig>().update, UpdateKind::CopyGate);
        QCOMPARE(ndr.as<ndr::EncoderConfig>().positional, PositionalKind::None);
        QCOMPARE(ndr.as<ndr::EncoderConfig>().geomNorm, GeomNorm::Off);
        QVERIFY(ndr.as<ndr::EncoderConfig>().sharedWeights);
        QCOMPARE(ndr.as<ndr::EncoderConfig>().gateBiasInit, -3.0f);
        QCOMPARE(ndr.as<ndr::EncoderConfig>().gateDropout, 0.1f);
        const ModelConfig vanilla = vanillaModel(64, 2, 128, 6);
        QCOMPARE(vanilla.as<ndr::EncoderConfig>().attention, AttentionKind::Softmax);
        QCOMPARE(vanilla.as<ndr::EncoderConfig>().update, UpdateKind::Residual);
        QCOMPARE(vanilla.as<ndr::EncoderConfig>().positional, PositionalKind::Sinusoidal);
        QCOMPARE(vanilla.as<ndr::EncoderConfig>().gateDropout, 0.0f);
        QCOMPARE(vanilla.as<ndr::EncoderConfig>().dModel, 64);
        QCOMPARE(vanilla.as<ndr::EncoderConfig>().heads, 2);
        QCOMPARE(vanilla.as<ndr::EncoderConfig>().dFF, 128);
        QCOMPARE(vanilla.as<ndr::EncoderConfig>().steps, 6);
    }

    void tableOneRows() {
        const std::vector<std::string> rows = ndr::tableOneRows();
        QCOMPARE(rows,
                 (std::vector<std::string>{"transformer", "rel", "rel-gate", "absrel-gate", "geom", "ndr"}));
        // The two ends of the table are the built-in models.
        RunConfig a = presetConfig("stub"), b = a;
        a.models = {tableOneModel("ndr", 48, 4, 96, 8), tableOneModel("transformer", 32, 2, 64, 6)};
        b.models = {ndrModel(48, 4, 96, 8), vanillaModel(32, 2, 64, 6)};
        QVERIFY2(configDiff(a, b).empty(), configDiff(a, b).c_str());
        std::set<std::string> names;
        for (const std::string& row : rows) {
            const ModelConfig m = tableOneModel(row, 32, 4, 64, 6);
            QCOMPARE(tableOneRowOf(m), row);
            QCOMPARE(m.as<ndr::EncoderConfig>().dModel, 32);
            QCOMPARE(m.as<ndr::EncoderConfig>().heads, 4);
            QCOMPARE(m.as<ndr::EncoderConfig>().dFF, 64);
            QCOMPARE(m.as<ndr::EncoderConfig>().steps, 6);
            QVERIFY(m.as<ndr::EncoderConfig>().sharedWeights);
            QCOMPARE(m.as<ndr::EncoderConfig>().gateDropout,
                     copyGated(m.as<ndr::EncoderConfig>().update) ? 0.1f : 0.0f);
            // No absolute encoding at the input of the relative, gated or geometric rows.
            QCOMPARE(m.as<ndr::EncoderConfig>().positional == PositionalKind::Sinusoidal,
                     row == "transformer");
            names.insert(m.name);
            RunConfig c = presetConfig("stub");
            c.models = {m};
            QVERIFY2(validate(c).empty(), (row + joined(validate(c))).c_str());
        }
        QCOMPARE(names.size(), rows.size());
        const ModelConfig gated = tableOneModel("absrel-gate", 16, 2, 32, 4);
        QCOMPARE(gated.as<ndr::EncoderConfig>().attention, AttentionKind::Softmax);
        QCOMPARE(gated.as<ndr::EncoderConfig>().update, UpdateKind::CopyGateTanh);
        QCOMPARE(gated.as<ndr::EncoderConfig>().positional, PositionalKind::AbsRel);
        QCOMPARE(tableOneModel("rel", 16, 2, 32, 4).as<ndr::EncoderConfig>().update, UpdateKind::Residual);
        QCOMPARE(tableOneModel("geom", 16, 2, 32, 4).as<ndr::EncoderConfig>().attention,
                 AttentionKind::Geometric);
        ModelConfig custom = ndrModel(16, 2, 32, 4);
        custom.as<ndr::EncoderConfig>().update = UpdateKind::Residual;
        custom.as<ndr::EncoderConfig>().positional = PositionalKind::Sinusoidal;
        QCOMPARE(tableOneRowOf(custom), std::string());
        try {
            tableOneModel("lstm-ish", 16, 2, 32, 4);
            QFAIL("no exception");
        } catch (const std::invalid_argument& e) {
            QCOMPARE(std::string(e.what()),
                     std::string("unknown Table 1 row 'lstm-ish': known rows are "
                                 "transformer, rel, rel-gate, absrel-gate, geom, ndr"));
        }
    }

    // Config files name rows as model presets: gated rows take the preset's NDR sizes, the others its
    // Transformer's; the new switch values round-trip through JSON.
    void configFileNamesRows() {
        const RunConfig c = runConfigFromJson(R"json({"preset": "paper-forward", "models": [
            {"preset": "absrel-gate"}, {"preset": "rel", "name": "+rel (d 32)", "dModel": 32},
            {"preset": "rel-gate", "positional": "abs-rel", "name": "switched"}, {"preset": "geom"}]})json");
        const RunConfig base = presetConfig("paper-forward");
        const ModelConfig &ndr = base.models[0], &vanilla = base.models[1];
        RunConfig expected = c;
        expected.models = {
            tableOneModel("absrel-gate", ndr.as<ndr::EncoderConfig>().dModel,
                          ndr.as<ndr::EncoderConfig>().heads, ndr.as<ndr::EncoderConfig>().dFF,
                          ndr.as<ndr::EncoderConfig>().steps),
            tableOneModel("rel", vanilla.as<ndr::EncoderConfig>().dModel,
                          vanilla.as<ndr::EncoderConfig>().heads, vanilla.as<ndr::EncoderConfig>().dFF,
                          vanilla.as<ndr::EncoderConfig>().steps),
            tableOneModel("rel-gate", ndr.as<ndr::EncoderConfig>().dModel, ndr.as<ndr::EncoderConfig>().heads,
                          ndr.as<ndr::EncoderConfig>().dFF, ndr.as<ndr::EncoderConfig>().steps),
            tableOneModel("geom", vanilla.as<ndr::EncoderConfig>().dModel,
                          vanilla.as<ndr::EncoderConfig>().heads, vanilla.as<ndr::EncoderConfig>().dFF,
                          vanilla.as<ndr::EncoderConfig>().steps)};
        expected.models[1].name = "+rel (d 32)";
        expected.models[1].as<ndr::EncoderConfig>().dModel = 32;
        expected.models[2].name = "switched";
        expected.models[2].as<ndr::EncoderConfig>().positional = PositionalKind::AbsRel;
        QVERIFY2(configDiff(expected, c).empty(), configDiff(expected, c).c_str());
        const std::string text = json(c).dump(2);
        for (const char* name : {"\"copy-gate-tanh\"", "\"relative\"", "\"abs-rel\""})
            QVERIFY2(text.find(name) != std::string::npos, name);
        const RunConfig back = runConfigFromJson(text);
        QVERIFY2(configDiff(c, back).empty(), configDiff(c, back).c_str());
    }

    void unknownPreset() {
        try {
            presetConfig("nosuch");
            QFAIL("no exception");
        } catch (const std::invalid_argument& e) {
            // The built-in presets, then those of the model kinds.
            const std::string what = e.what();
            const std::string builtIn = "unknown preset 'nosuch': known presets are stub, stub-routing, "
                                        "stub-thought-cost, paper-forward, paper-backward, arith, listops, "
                                        "thoughtnet";
            QVERIFY2(what.rfind(builtIn, 0) == 0, what.c_str());
        }
    }

    void validateNamesTheField_data() {
        QTest::addColumn<int>("rule");
        const auto all = rules();
        for (size_t i = 0; i < all.size(); ++i)
            QTest::newRow(all[i].name) << int(i);
    }

    void validateNamesTheField() {
        QFETCH(int, rule);
        const Rule r = rules()[size_t(rule)];
        RunConfig c = presetConfig("stub");
        r.breakIt(c);
        const auto problems = validate(c);
        const std::string prefix = std::string(r.field) + ": ";
        bool found = false;
        for (const Problem& p : problems) {
            QVERIFY2(p.field == r.field, ("a problem about another field:" + joined(problems)).c_str());
            QVERIFY2(p.text().rfind(prefix, 0) == 0, ("text without its field:" + joined(problems)).c_str());
            found = found || p.message.find(r.text) != std::string::npos;
        }
        QVERIFY2(found, ("no problem mentions '" + std::string(r.text) + "':" + joined(problems)).c_str());
    }

    void validateAcceptsEdges() {
        RunConfig c = presetConfig("stub");
        c.task.validMinDepth = 8, c.task.validMaxDepth = 7;   // empty validation split anywhere
        c.train.gradClip = 0;                                 // 0 disables clipping
        c.models[0].as<ndr::EncoderConfig>().evalSteps = 128; // shared weights unroll further
        c.models[1].as<ndr::EncoderConfig>().sharedWeights = false;
        c.models[1].as<ndr::EncoderConfig>().evalSteps =
            c.models[1].as<ndr::EncoderConfig>().steps; // separate layers: only as many as trained
        c.models[0].as<ndr::EncoderConfig>().geomNorm = GeomNorm::L1;
        c.models[0].as<ndr::EncoderConfig>().dropout = 0;
        c.models[1].as<ndr::EncoderConfig>().haltThreshold = 0.2; // a residual model halts on the change
        c.models[1].as<ndr::EncoderConfig>().haltOn = HaltSignal::Change;
        c.task.testMaxDepth = 40;
        c.task.symbols = 64, c.task.functions = 26;
        auto problems = validate(c);
        QVERIFY2(problems.empty(), joined(problems).c_str());
        c.models.resize(4, c.models[0]);
        c.models[2].name = "third", c.models[3].name = "fourth";
        problems = validate(c);
        QVERIFY2(problems.empty(), joined(problems).c_str());
    }

    void validateReportsEveryProblem() {
        RunConfig c = presetConfig("stub");
        c.task.symbols = 1;
        c.models[0].as<ndr::EncoderConfig>().heads = 5;
        c.train.learningRate = 0;
        QCOMPARE(int(validate(c).size()), 3);
    }

    void jsonRoundTripOfPresets() {
        for (const std::string& name : presetNames()) {
            const RunConfig c = presetConfig(name);
            const std::string text = json(c).dump();
            const RunConfig back = json::parse(text).get<RunConfig>();
            QVERIFY2(configDiff(c, back).empty(), (name + ": " + configDiff(c, back)).c_str());
            const RunConfig viaFile = runConfigFromJson(text);
            QVERIFY2(configDiff(c, viaFile).empty(), (name + ": " + configDiff(c, viaFile)).c_str());
        }
    }

    void jsonRoundTripOfCustomConfig() {
        RunConfig c = presetConfig("paper-forward");
        c.preset = "custom";
        c.task.seed = 0xFFFFFFFFFFFFFFF1ull; // beyond int64
        c.task.order = Order::Backward;
        c.models[0].as<ndr::EncoderConfig>().geomNorm = GeomNorm::L1;
        c.models[0].as<ndr::EncoderConfig>().evalSteps = 30;
        c.models[0].as<ndr::EncoderConfig>().dropout = 0.3f;
        c.models[0].as<ndr::EncoderConfig>().attentionDropout = 1e-7f;
        c.models[0].as<ndr::EncoderConfig>().gateBiasInit = -2.7182817f;
        c.models[0].as<ndr::EncoderConfig>().readout = ReadoutColumn::First;
        c.models[1].as<ndr::EncoderConfig>().sharedWeights = false;
        c.train.learningRate = 1.5e-4;
        c.train.weightDecay = 0.0025;
        c.train.threads = 2;
        c.train.lrDecaySteps = 1500;
        c.train.lrDecayFactor = 0.3;
        c.train.warmupSteps = 250;
        const std::string text = json(c).dump(2);
        QVERIFY2(text.find("\"copy-gate\"") != std::string::npos, text.c_str());
        QVERIFY2(text.find("\"dropout\": 0.3,") != std::string::npos, text.c_str()); // floats stay compact
        const RunConfig back = runConfigFromJson(text);
        QVERIFY2(configDiff(c, back).empty(), configDiff(c, back).c_str());
        // Without a "preset" label it is still a full configuration.
        json j = json::parse(text);
        j.erase("preset");
        c.preset = "custom";
        QVERIFY2(configDiff(c, runConfigFromJson(j.dump())).empty(), "without preset");
        // Files written before the learning-rate decay existed read as a constant rate.
        j["train"].erase("lrDecaySteps");
        j["train"].erase("lrDecayFactor");
        const RunConfig older = runConfigFromJson(j.dump());
        QCOMPARE(older.train.lrDecaySteps, 0);
        QCOMPARE(older.train.lrDecayFactor, TrainConfig{}.lrDecayFactor);
        // and those from before the choice of readout column read at [E].
        QVERIFY2(text.find("\"readout\": \"first\"") != std::string::npos, text.c_str());
        j["models"][0].erase("readout");
        QCOMPARE(runConfigFromJson(j.dump()).models[0].as<ndr::EncoderConfig>().readout, ReadoutColumn::Last);
        j["models"][0]["readout"] = "middle";
        QCOMPARE(errorOf([&] { runConfigFromJson(j.dump()); }),
                 QString("models[0].readout: unknown value 'middle'; expected last or first"));
    }

    // Reading at [B] is for encoders on tasks with one answer per example.
    void readoutFirstOnlyWhereThereIsOneColumn() {
        RunConfig c = presetConfig("listops");
        for (auto& m : c.models)
            m.as<ndr::EncoderConfig>().readout = ReadoutColumn::First;
        QVERIFY2(validate(c).empty(), joined(validate(c)).c_str());
        // The LSTM and ThoughtNet have no readout to choose: a config file that gives one is refused.
        QCOMPARE(
            errorOf([] {
                runConfigFromJson(
                    R"({"preset": "listops", "models": [{}, {"preset": "lstm", "readout": "first"}]})");
            }),
            QString("models[1].readout: is a field of encoder models; this model is of kind lstm (LSTM)"));
        RunConfig digits = presetConfig("thoughtnet");
        digits.models[1].as<ndr::EncoderConfig>().readout = ReadoutColumn::First;
        QCOMPARE(
            problemTexts(validate(digits)),
            std::vector<std::string>{"models[1].readout: multi-digit arithmetic reads answer digit k at "
                                     "position k; 'first' is for tasks with one answer per example: set it "
                                     "to last"});
        QVERIFY(!factsOf(digits.models[0]).readoutChoice);
    }

    // ListOps' operation subset: validated by name, written for ListOps alone, absent in older files.
    void listOpsOperations() {
        RunConfig c = presetConfig("listops");
        QCOMPARE(c.task.operations, listOpsOperationNames());
        c.task.operations = {"MAX", "MIN"};
        QVERIFY2(validate(c).empty(), joined(validate(c)).c_str());
        json j = c;
        QCOMPARE(j["task"]["operations"], json({"MAX", "MIN"}));
        QVERIFY2(configDiff(c, runConfigFromJson(j.dump())).empty(), j.dump().c_str());
        j["task"].erase("operations");
        QCOMPARE(runConfigFromJson(j.dump()).task.operations, listOpsOperationNames());
        const RunConfig over =
            runConfigFromJson(R"({"preset": "listops", "task": {"operations": ["SM", "MED"]}})");
        QCOMPARE(over.task.operations, (std::vector<std::string>{"SM", "MED"}));

        c.task.operations = {"MAX", "SUM", "MAX"};
        QCOMPARE(problemTexts(validate(c)),
                 (std::vector<std::string>{
                     "task.operations: unknown operation 'SUM'; expected MIN, MAX, MED or SM",
                     "task.operations: lists MAX twice"}));
        c.task.operations = {};
        QCOMPARE(problemTexts(validate(c)),
                 std::vector<std::string>{"task.operations: must list at least one of MIN, MAX, MED, SM"});
        RunConfig arith = presetConfig("arith");
        QVERIFY(!json(arith)["task"].contains("operations"));
        arith.task.operations = {"MIN"};
        QCOMPARE(problemTexts(validate(arith)),
                 std::vector<std::string>{"task.operations: chooses ListOps' operations; "
                                          "this task has none: leave it out"});
    }

    void presetWithOverrides() {
        const std::string text = R"({
            "preset": "paper-backward",
            "task": {"symbols": 6, "seed": 7},
            "train": {"learningRate": 5e-4, "steps": 200},
            "models": [{"preset": "vanilla", "heads": 8},
                       {"preset": "ndr", "name": "NDR long", "evalSteps": 20}],
            "comment": "unknown fields are ignored"
        })";
        const RunConfig c = runConfigFromJson(text);
        const RunConfig base = presetConfig("paper-backward");
        QCOMPARE(c.preset, std::string("paper-backward"));
        QCOMPARE(c.task.symbols, 6);
        QCOMPARE(c.task.seed, uint64_t(7));
        QCOMPARE(c.task.functions, base.task.functions);
        QCOMPARE(c.task.order, Order::Backward);
        QCOMPARE(c.train.learningRate, 5e-4);
        QCOMPARE(c.train.steps, 200);
        QCOMPARE(c.train.batchSize, base.train.batchSize);
        QCOMPARE(int(c.models.size()), 2);
        ModelConfig want = vanillaModel(
            base.models[1].as<ndr::EncoderConfig>().dModel, base.models[1].as<ndr::EncoderConfig>().heads,
            base.models[1].as<ndr::EncoderConfig>().dFF, base.models[1].as<ndr::EncoderConfig>().steps);
        want.as<ndr::EncoderConfig>().heads = 8;
        RunConfig expected = c;
        expected.models = {want, ndrModel(base.models[0].as<ndr::EncoderConfig>().dModel,
                                          base.models[0].as<ndr::EncoderConfig>().heads,
                                          base.models[0].as<ndr::EncoderConfig>().dFF,
                                          base.models[0].as<ndr::EncoderConfig>().steps)};
        expected.models[1].name = "NDR long";
        expected.models[1].as<ndr::EncoderConfig>().evalSteps = 20;
        QVERIFY2(configDiff(expected, c).empty(), configDiff(expected, c).c_str());
    }

    void presetAloneAndModelsByIndex() {
        QVERIFY(configDiff(presetConfig("stub"), runConfigFromJson(R"({"preset": "stub"})")).empty());
        // Entries without a model preset start from the preset's model at the same index.
        const RunConfig c = runConfigFromJson(
            R"({"preset": "stub", "models": [{"dModel": 16, "heads": 2}, {"dModel": 16, "heads": 2}]})");
        QCOMPARE(c.models[0].name, std::string("NDR"));
        QCOMPARE(c.models[0].as<ndr::EncoderConfig>().update, UpdateKind::CopyGate);
        QCOMPARE(c.models[1].name, std::string("Transformer"));
        QCOMPARE(c.models[1].as<ndr::EncoderConfig>().dModel, 16);
        QCOMPARE(c.models[1].as<ndr::EncoderConfig>().dFF,
                 presetConfig("stub").models[1].as<ndr::EncoderConfig>().dFF); // not overridden: the preset's
        // One model only: the list is replaced entirely.
        QCOMPARE(int(runConfigFromJson(R"({"preset": "stub", "models": [{"preset": "ndr"}]})").models.size()),
                 1);
    }

    void jsonErrorsNameThePath_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        json full = presetConfig("stub");
        full["preset"] = "custom";
        const auto with = [&](const std::function<void(json&)>& edit) {
            json j = full;
            edit(j);
            return QString::fromStdString(j.dump());
        };
        QTest::newRow("string for integer") << with([](json& j) { j["models"][1]["heads"] = "four"; })
                                            << "models[1].heads: expected an integer, got string";
        QTest::newRow("float for integer") << with([](json& j) { j["models"][0]["heads"] = 2.5; })
                                           << "models[0].heads: expected an integer, got 2.5";
        QTest::newRow("integer too big") << with([](json& j) { j["models"][0]["dFF"] = 1e12; })
                                         << "models[0].dFF: expected an integer between";
        QTest::newRow("negative seed") << with([](json& j) { j["task"]["seed"] = -3; })
                                       << "task.seed: expected a non-negative integer, got -3";
        QTest::newRow("string for number") << with([](json& j) { j["train"]["learningRate"] = "fast"; })
                                           << "train.learningRate: expected a number, got string";
        QTest::newRow("null for number") << with([](json& j) { j["train"]["weightDecay"] = nullptr; })
                                         << "train.weightDecay: expected a number, got null";
        QTest::newRow("string for bool") << with([](json& j) { j["models"][0]["sharedWeights"] = "yes"; })
                                         << "models[0].sharedWeights: expected true or false, got string";
        QTest::newRow("unknown attention")
            << with([](json& j) { j["models"][0]["attention"] = "linear"; })
            << "models[0].attention: unknown value 'linear'; expected softmax or "
               "geometric";
        QTest::newRow("unknown order")
            << with([](json& j) { j["task"]["order"] = "sideways"; })
            << "task.order: unknown value 'sideways'; expected forward or backward";
        QTest::newRow("unknown update")
            << with([](json& j) { j["models"][1]["update"] = "gate"; })
            << "models[1].update: unknown value 'gate'; expected residual, copy-gate or copy-gate-tanh";
        QTest::newRow("unknown halting signal")
            << with([](json& j) { j["models"][0]["haltOn"] = "gate"; })
            << "models[0].haltOn: unknown value 'gate'; expected gates or change";
        QTest::newRow("number for enum") << with([](json& j) { j["models"][1]["geomNorm"] = 1; })
                                         << "models[1].geomNorm: expected one of off or l1, got 1";
        QTest::newRow("missing model field")
            << with([](json& j) { j["models"][1].erase("dFF"); }) << "models[1].dFF: missing";
        QTest::newRow("missing task field")
            << with([](json& j) { j["task"].erase("order"); }) << "task.order: missing";
        QTest::newRow("missing section") << with([](json& j) { j.erase("train"); }) << "train: missing";
        QTest::newRow("task not an object")
            << with([](json& j) { j["task"] = json::array(); }) << "task: expected an object, got array";
        QTest::newRow("models not an array")
            << with([](json& j) { j["models"] = json::object(); }) << "models: expected an array, got object";
        QTest::newRow("override of wrong type")
            << QString(R"({"preset": "stub", "train": {"steps": "many"}})")
            << "train.steps: expected an integer";
        QTest::newRow("model override of wrong type")
            << QString(R"({"preset": "stub", "models": [{"preset": "ndr", "dropout": true}]})")
            << "models[0].dropout: expected a number, got boolean";
        QTest::newRow("unknown preset") << QString(R"({"preset": "nosuch", "task": {}})")
                                        << "unknown preset 'nosuch': known presets are stub, stub-routing, "
                                           "stub-thought-cost, paper-forward, paper-backward";
        QTest::newRow("unknown model preset")
            << QString(R"({"preset": "stub", "models": [{"preset": "gru"}]})")
            << "models[0].preset: unknown model preset 'gru'; expected one of transformer, rel, rel-gate, "
               "absrel-gate, geom, ndr, lstm, thoughtnet";
        QTest::newRow("unknown Table 1 row")
            << QString(R"({"preset": "stub", "models": [{"preset": "rel-gates"}]})")
            << "models[0].preset: unknown model preset 'rel-gates'; expected one of transformer, rel, "
               "rel-gate, absrel-gate, geom, ndr, lstm, thoughtnet";
        QTest::newRow("unknown positional")
            << with([](json& j) { j["models"][1]["positional"] = "rotary"; })
            << "models[1].positional: unknown value 'rotary'; expected none, sinusoidal, relative or abs-rel";
        QTest::newRow("operations not an array")
            << QString(R"({"preset": "listops", "task": {"operations": "MIN MAX"}})")
            << "task.operations: expected an array, got string";
        QTest::newRow("operation not a string")
            << QString(R"({"preset": "listops", "task": {"operations": ["MIN", 3]}})")
            << "task.operations[1]: expected a string";
        QTest::newRow("syntax error") << QString(R"({"preset": "stub",)") << "invalid JSON at byte";
        QTest::newRow("not an object") << QString("[1, 2]") << "must be a JSON object";
        QTest::newRow("invalid after overrides")
            << QString(R"({"preset": "stub", "models": [{"preset": "ndr", "heads": 5}]})")
            << "models[0].heads: 5 does not divide d_model 48";
    }

    void jsonErrorsNameThePath() {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        const QString message = errorOf([&] { runConfigFromJson(text.toStdString()); });
        QVERIFY2(!message.isEmpty(), "accepted");
        QVERIFY2(message.contains(expected), qPrintable("message: " + message));
    }

    void allValidationProblemsListed() {
        const QString message = errorOf([] {
            runConfigFromJson(R"({"preset": "stub", "task": {"symbols": 1}, "train": {"threads": 0}})");
        });
        const QStringList lines = message.split('\n');
        QCOMPARE(lines.size(), 2);
        QVERIFY2(lines[0].startsWith("task.symbols: "), qPrintable(message));
        QVERIFY2(lines[1].startsWith("train.threads: "), qPrintable(message));
    }

    void fromJsonOfOneStruct() {
        json j = ndrModel(48, 4, 96, 8);
        QCOMPARE(j.get<ModelConfig>().as<ndr::EncoderConfig>().dModel, 48);
        j["heads"] = "x";
        const QString message = errorOf([&] { j.get<ModelConfig>(); });
        QCOMPARE(message, QString("heads: expected an integer, got string"));
        json t = TrainConfig{};
        t["steps"] = 1e4; // integral, written the short way
        QCOMPARE(t.get<TrainConfig>().steps, 10000);
    }
};

QTEST_APPLESS_MAIN(TestConfig)
#include "test_config.moc"
