// The Universal Transformer with ACT (docs/design.md §2, "UT + ACT"): finite-difference gradients of
// the whole model in double precision (ponder cost included, both positional encodings, both row
// layouts), the halting rule on hand-set halting units, the trace against the forward, its steps at
// evaluation, the configuration (validation, JSON, preset) and a short deterministic training run.
#include "core/config/model_kind.h"
#include "core/io/serialize.h"
#include "core/models/act/act.h"
#include "core/train/halting.h"
#include "core/train/trainer.h"
#include "gradient_check.h"

#include <nlohmann/json.hpp>

using namespace ndr;
using namespace ndrtest;

namespace {

ModelConfig smallAct(PositionalKind positional) {
    ModelConfig m = actModel(8, 2, 12, 4);
    ActConfig& c = m.as<ActConfig>();
    c.positional = positional;
    c.dropout = 0.2f;
    c.attentionDropout = 0.15f;
    c.haltAt = 0.9;
    c.ponderCost = 0.2; // large enough that its gradient shows in the check
    return m;
}

// The model with its halting bias set to `bias`, so that p = sigmoid(w h + bias).
void setHaltBias(ActTransformer<double>& model, double bias) {
    const auto& layout = model.params().layout();
    size_t offset = 0;
    for (const auto& t : layout) {
        if (t.name == "halt.b")
            model.params().values()[offset] = bias;
        offset += size_t(t.rows) * t.cols;
    }
}

} // namespace

class TestAct : public QObject {
    Q_OBJECT
private slots:
    void wholeModel_data() {
        QTest::addColumn<int>("positional");
        QTest::addColumn<bool>("packed");
        QTest::addColumn<double>("haltBias");
        QTest::newRow("sinusoidal, packed rows") << int(PositionalKind::Sinusoidal) << true << -0.3;
        QTest::newRow("sinusoidal, padded rows") << int(PositionalKind::Sinusoidal) << false << -0.3;
        QTest::newRow("relative, packed rows") << int(PositionalKind::Relative) << true << 0.2;
    }
    // d loss / d parameters against central differences, on a batch whose positions halt at different
    // steps (some before the last), so that both the p and the remainder paths carry gradient.
    void wholeModel() {
        QFETCH(int, positional);
        QFETCH(bool, packed);
        QFETCH(double, haltBias);
        const ModelConfig cfg = smallAct(PositionalKind(positional));
        ActTransformer<double> model(cfg, 7, 3);
        model.setPackedRows(packed);
        model.init(11);
        std::mt19937_64 rng(4);
        for (auto& v : model.params().values())
            v += 0.05 * std::normal_distribution<double>(0, 1)(rng);
        setHaltBias(model, haltBias);
        const Batch batch = smallBatch();
        Rng unused(0);
        model.forward(batch, 4, false, unused, false);
        const std::vector<int> steps = model.stats().haltSteps;
        QVERIFY2(*std::min_element(steps.begin(), steps.end()) < 4,
                 "every example ran every step: the check would miss the halting");
        auto loss = [&] {
            Rng drop(8);
            return model.forward(batch, 4, true, drop, true);
        };
        model.params().zeroGrad();
        loss();
        QVERIFY(model.stats().gateCost > 0);
        model.backward();
        const AlignedVector<double> analytic = model.params().grads();
        checkParams("UT + ACT", model.params().values(), analytic, model.params().layout(), loss, 25, rng);
    }

    // Halting units set by hand: with p = sigmoid(8) ~ 0.9997 every position halts at its first step
    // with weight 1; with p = sigmoid(-8) none reaches 0.99 and the last step halts them all with the
    // remainder 1 - 3p.
    void haltingRule() {
        const ModelConfig cfg = smallAct(PositionalKind::Sinusoidal);
        ActTransformer<double> model(cfg, 7, 3);
        model.init(2);
        const auto& layout = model.params().layout();
        size_t offset = 0;
        for (const auto& t : layout) {
            if (t.name == "halt.w")
                std::fill_n(model.params().values().begin() + long(offset), t.cols, 0.0);
            offset += size_t(t.rows) * t.cols;
        }
        const Batch batch = smallBatch();
        Rng unused(0);
        setHaltBias(model, 8);
        model.forward(batch, 4, false, unused, false);
        QCOMPARE(model.stats().haltSteps, std::vector<int>(3, 1));
        QVERIFY(std::abs(model.stats().gateCost - (1 - 0.0)) < 1e-12); // R = 1 at the first step
        setHaltBias(model, -8);
        model.forward(batch, 4, false, unused, false);
        QCOMPARE(model.stats().haltSteps, std::vector<int>(3, 4));
        const double p = 1 / (1 + std::exp(8.0));
        QVERIFY(std::abs(model.stats().gateCost - (1 - 3 * p)) < 1e-12);
    }

    // The trace's halting weights sum to 1 per position, stop where the forward's steps say, and its
    // last readout is the forward's answer.
    void traceMatchesForward_data() {
        QTest::addColumn<double>("haltBias");
        QTest::newRow("some position runs every step") << 0.5;
        QTest::newRow("every position halts early") << 3.0;
    }
    void traceMatchesForward() {
        QFETCH(double, haltBias);
        const ModelConfig cfg = smallAct(PositionalKind::Sinusoidal);
        ActTransformer<double> model(cfg, 7, 3);
        model.init(5);
        setHaltBias(model, haltBias);
        const std::vector<int> tokens = {4, 0, 3, 3, 5};
        const Trace tr = model.trace(tokens, 1, 6);
        Batch batch;
        batch.batch = 1, batch.positions = 5, batch.readouts = 1;
        batch.tokens = tokens;
        batch.lengths = {5};
        batch.targets = {0};
        batch.depths = {0};
        Rng unused(0);
        model.forward(batch, 6, false, unused, false);
        int lastWeighted = 0;
        for (int i = 0; i < 5; ++i) {
            double sum = 0;
            for (int t = 0; t < 6; ++t) {
                sum += tr.gate(t, i);
                if (tr.gate(t, i) > 0)
                    lastWeighted = std::max(lastWeighted, t + 1);
            }
            QVERIFY2(std::abs(sum - 1) < 1e-6, qPrintable(QString("position %1: %2").arg(i).arg(sum)));
        }
        QCOMPARE(model.stats().haltSteps, std::vector<int>{lastWeighted});
        const bool haltsEarly = lastWeighted < 6;
        QCOMPARE(haltsEarly, haltBias > 1);
        // The inspector's halting reads the model's own rule, whatever signal and threshold are chosen;
        // other models keep the chosen rule.
        const HaltingRule chosen{HaltSignal::Gates, 0.99f};
        const HaltingRule own = haltingRuleOf(cfg, chosen);
        QVERIFY(own.learned);
        QCOMPARE(haltingStep(tr, own), lastWeighted);
        QCOMPARE(stopStep(tr, own), lastWeighted);
        // The gates' rule at 0.99 reads a halting weight below 0.99 as a closed gate: it halts earlier.
        QVERIFY(haltingStep(tr, chosen) < lastWeighted);
        QVERIFY(!haltingRuleOf(ndrModel(8, 2, 12, 4), chosen).learned);
        const Mat<double>& logits = model.logits();
        Index best = 0;
        logits.row(0).maxCoeff(&best);
        QCOMPARE(tr.stepReadouts.back(), int(best));
    }

    void configuration() {
        RunConfig c = presetConfig("ut-act");
        QVERIFY(validate(c).empty());
        QVERIFY(c.models[1].is<ActConfig>());
        QCOMPARE(kindOf(c.models[1]).id, std::string("ut-act"));
        const RunConfig back = nlohmann::json(c).get<RunConfig>();
        QCOMPARE(back, c);
        c.models[1].as<ActConfig>().haltAt = 1.5;
        c.models[1].as<ActConfig>().heads = 3;
        const std::vector<Problem> problems = validate(c);
        const auto has = [&](const std::string& s) {
            return std::any_of(problems.begin(), problems.end(),
                               [&](const Problem& p) { return p.text().find(s) != std::string::npos; });
        };
        QVERIFY(has("models[1].haltAt: must be in (0, 1), got 1.5"));
        QVERIFY(has("models[1].heads: 3 does not divide d_model 128"));
        QVERIFY(modelPresetNamed("ut-act"));
        QVERIFY(modelPresetNamed("ut-act")->matches(actModel(8, 2, 12, 4)));
    }

    // A short run learns something, reports its steps at evaluation, and repeats exactly.
    void trainsAndRepeats() {
        RunConfig c = presetConfig("stub");
        c.task.evalExamplesPerDepth = 50;
        c.models = {actModel(16, 2, 32, 6)};
        c.train.batchSize = 32;
        const auto task = makeTask(c.task);
        auto run = [&] {
            Trainer t(c, 0, *task, task->firstEvalExample(1));
            std::vector<double> losses;
            for (int i = 0; i < 40; ++i)
                losses.push_back(t.trainStep());
            const EvalRecord e = t.evaluate();
            return std::make_pair(losses, e);
        };
        const auto [a, ea] = run();
        const auto [b, eb] = run();
        QCOMPARE(a, b);
        QVERIFY2(a.back() < a.front(), qPrintable(QString("%1 -> %2").arg(a.front()).arg(a.back())));
        QCOMPARE(ea.haltCounts.size(), ea.depths.size());
        QVERIFY(ea.everyStepAccuracy.empty()); // learned halting has no run of every step
        QCOMPARE(ea.accuracy, eb.accuracy);
    }
};

QTEST_APPLESS_MAIN(TestAct)
#include "test_act.moc"
