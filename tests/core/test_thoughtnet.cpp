// ThoughtNet (docs/design.md §2) and its multi-digit arithmetic (§1): finite-difference gradients in
// double precision of an operator, the selector and the whole model (thought cost included, one and
// several readouts), halting at the fixed point against plain shorter runs, the encoder's readout at
// every position; the task's values, problem kinds, training mix, held-out sets and parser messages;
// the configuration (validation, JSON) and a short deterministic training run.
#include "core/config/model_kind.h"
#include "core/io/serialize.h"
#include "core/models/encoder/encoder.h"
#include "core/models/thoughtnet/thoughtnet.h"
#include "core/task/multidigit_task.h"
#include "core/train/halting.h"
#include "core/train/trainer.h"
#include "gradient_check.h"

#include <map>
#include <nlohmann/json.hpp>
#include <set>

using namespace ndr;
using namespace ndrtest;

namespace {

ModelConfig smallThoughtNet() {
    ModelConfig m = thoughtNetModel(6, 2, 5, 2, 3);
    m.as<ndr::ThoughtNetConfig>().positionDims = 4;
    m.as<ndr::ThoughtNetConfig>().thoughtCost = 0.05; // large enough that its gradient shows in the check
    return m;
}

TaskConfig digitsConfig(int evalExamples = 200) {
    TaskConfig c = presetConfig("thoughtnet").task;
    c.evalExamplesPerDepth = evalExamples;
    return c;
}

// Two examples of 5 tokens with one readout per position (vocabulary 7, 3 symbols).
Batch multiReadoutBatch() {
    Batch b;
    b.batch = 2;
    b.positions = 5;
    b.readouts = 5;
    b.tokens = {0, 3, 3, 5, 1, /**/ 1, 2, 6, 6, 4};
    b.lengths = {5, 5};
    b.targets = {2, 0, 1, 1, 2, /**/ 0, 0, 2, 1, 1};
    b.depths = {1, 2};
    return b;
}

} // namespace

class TestThoughtNet : public QObject {
    Q_OBJECT
private slots:
    // One operator: d sum(G * o) / d (parameters, input) against central differences.
    void operatorGradients() {
        std::mt19937_64 rng(3);
        const int C = 6, P = 4, F = 5;
        ParamStore<double> store;
        ThoughtOperator<double> op;
        op.declare(store, "op.", C, P, F, 2);
        store.finalize();
        op.init(store, rng);
        for (auto& v : store.values())
            v += 0.1 * std::normal_distribution<double>(0, 1)(rng);
        const BatchShape shape = kPackedShape;
        Md x = randomMat(shape.rows(), C + P, rng, 0.7);
        const Md g = randomMat(shape.rows(), C, rng);
        typename ThoughtOperator<double>::Cache cache;
        auto loss = [&] {
            op.forward(store, x, shape, cache);
            return (cache.o.array() * g.array()).sum();
        };
        loss();
        store.zeroGrad();
        Md dx = Md::Zero(x.rows(), x.cols());
        op.backward(store, x, shape, cache, g, dx);
        const AlignedVector<double> analytic = store.grads();
        checkParams("operator", store.values(), analytic, store.layout(), loss, 30, rng);
        checkInput("operator", x, dx, loss);
    }

    // The selector: d sum(G * s) / d (parameters, input); its rows are distributions.
    void selectorGradients() {
        std::mt19937_64 rng(5);
        const int in = 7, hidden = 5, choices = 4;
        ParamStore<double> store;
        OperatorSelector<double> sel;
        sel.declare(store, in, hidden, choices);
        store.finalize();
        sel.init(store, rng);
        Md x = randomMat(6, in, rng);
        const Md g = randomMat(6, choices, rng);
        typename OperatorSelector<double>::Cache cache;
        auto loss = [&] {
            sel.forward(store, x, cache);
            return (cache.s.array() * g.array()).sum();
        };
        loss();
        for (Index n = 0; n < cache.s.rows(); ++n)
            QVERIFY(std::abs(cache.s.row(n).sum() - 1.0) < 1e-12 && cache.s.row(n).minCoeff() > 0);
        store.zeroGrad();
        Md dx = Md::Zero(x.rows(), x.cols());
        sel.backward(store, x, cache, g, dx);
        const AlignedVector<double> analytic = store.grads();
        checkParams("selector", store.values(), analytic, store.layout(), loss, 40, rng);
        checkInput("selector", x, dx, loss);
    }

    // The whole model's loss (cross-entropy + urgency * thought cost) against central differences.
    void wholeModel_data() {
        QTest::addColumn<bool>("multi");
        QTest::newRow("[E] readout, examples of 5, 4 and 3 tokens") << false;
        QTest::newRow("a readout at every position") << true;
    }
    void wholeModel() {
        QFETCH(bool, multi);
        const ModelConfig cfg = smallThoughtNet();
        ThoughtNet<double> model(cfg, 7, 3);
        model.init(11);
        std::mt19937_64 rng(4);
        for (auto& v : model.params().values())
            v += 0.05 * std::normal_distribution<double>(0, 1)(rng);
        const Batch batch = multi ? multiReadoutBatch() : smallBatch();
        auto loss = [&] {
            Rng unused(8);
            return model.forward(batch, factsOf(cfg).steps, true, unused, true);
        };
        model.params().zeroGrad();
        loss();
        QVERIFY(model.stats().gateCost > 0);
        model.backward();
        const AlignedVector<double> analytic = model.params().grads();
        checkParams("ThoughtNet", model.params().values(), analytic, model.params().layout(), loss, 25, rng);
    }

    // The encoder reading every position: its gradient, and readout k of an example is the [E]-style
    // readout of a copy whose last position is k.
    void encoderReadsEveryPosition() {
        ModelConfig cfg = modelVariant(0);
        cfg.as<ndr::EncoderConfig>().dropout = cfg.as<ndr::EncoderConfig>().attentionDropout =
            cfg.as<ndr::EncoderConfig>().gateDropout = 0;
        Encoder<double> model(cfg, 7, 3);
        model.init(11);
        std::mt19937_64 rng(4);
        const Batch batch = multiReadoutBatch();
        auto loss = [&] {
            Rng unused(8);
            return model.forward(batch, factsOf(cfg).steps, true, unused, true);
        };
        model.params().zeroGrad();
        loss();
        model.backward();
        const AlignedVector<double> analytic = model.params().grads();
        checkParams("encoder, 5 readouts", model.params().values(), analytic, model.params().layout(), loss,
                    20, rng);
        Rng unused(8);
        model.forward(batch, factsOf(cfg).steps, false, unused, false);
        const Md all = model.logits();
        QCOMPARE(all.rows(), Index(10));
        // Row 7 is example 1's readout at position 2: the same as reading at position 2 in a batch
        // whose single readout sits there (attention sees the whole example either way).
        Batch one = batch;
        one.readouts = 1;
        one.targets = {0, 0};
        one.lengths = {5, 5};
        model.forward(one, factsOf(cfg).steps, false, unused, false);
        QVERIFY((model.logits().row(1) - all.row(9)).cwiseAbs().maxCoeff() < 1e-12);
    }

    // Halting: every example stops at its fixed point, and its logits are those of a plain run of that
    // many steps; by the operators' weight and by the change per step.
    void haltingMatchesShorterRuns_data() {
        QTest::addColumn<int>("signal");
        QTest::addColumn<double>("threshold");
        QTest::newRow("operators' weight") << int(HaltSignal::Gates) << 0.6;
        // The largest change per step falls from 0.52 and 0.81 to 0.35 and 0.26: one example stops at
        // step 5, the other runs all 6.
        QTest::newRow("change") << int(HaltSignal::Change) << 0.355;
    }
    void haltingMatchesShorterRuns() {
        QFETCH(int, signal);
        QFETCH(double, threshold);
        ModelConfig cfg = smallThoughtNet();
        cfg.as<ndr::ThoughtNetConfig>().steps = 6;
        cfg.as<ndr::ThoughtNetConfig>().haltThreshold = threshold;
        cfg.as<ndr::ThoughtNetConfig>().haltOn = HaltSignal(signal);
        ThoughtNet<double> model(cfg, 7, 3);
        model.init(2);
        // Bias the selector towards the zero operator so examples halt at different steps.
        model.params().value(model.params().layout().size() - 3)(0, 0) = 0.6;
        const Batch batch = multiReadoutBatch();
        Rng unused(1);
        model.forward(batch, factsOf(cfg).steps, false, unused, false);
        const std::vector<int> halts = model.stats().haltSteps;
        const Md halted = model.logits();
        QCOMPARE(halts.size(), size_t(2));
        bool early = false;
        for (int b = 0; b < 2; ++b) {
            QVERIFY(halts[size_t(b)] >= 1 && halts[size_t(b)] <= cfg.as<ndr::ThoughtNetConfig>().steps);
            early = early || halts[size_t(b)] < cfg.as<ndr::ThoughtNetConfig>().steps;
            // The trace's record of the signal stops the example at the same step.
            const std::vector<int> tokens(batch.tokens.begin() + b * 5, batch.tokens.begin() + b * 5 + 5);
            QCOMPARE(stopStep(model.trace(tokens, 5, cfg.as<ndr::ThoughtNetConfig>().steps),
                              {cfg.as<ndr::ThoughtNetConfig>().haltOn, float(threshold)}),
                     halts[size_t(b)]);
            model.setHalting(0, cfg.as<ndr::ThoughtNetConfig>().haltOn);
            model.forward(batch, halts[size_t(b)], false, unused, false);
            QVERIFY(
                (model.logits().middleRows(b * 5, 5) - halted.middleRows(b * 5, 5)).cwiseAbs().maxCoeff() <
                1e-12);
            model.setHalting(threshold, cfg.as<ndr::ThoughtNetConfig>().haltOn);
        }
        QVERIFY2(early, "no example halted before the last step");
        // The trace records the selector: rows are distributions over the K + 1 operators.
        const Trace tr = model.trace({0, 3, 3, 5, 1}, 5, cfg.as<ndr::ThoughtNetConfig>().steps);
        QCOMPARE(tr.operators, cfg.as<ndr::ThoughtNetConfig>().operators + 1);
        QCOMPARE(tr.selection.size(), size_t(cfg.as<ndr::ThoughtNetConfig>().steps) * 5 *
                                          size_t(cfg.as<ndr::ThoughtNetConfig>().operators + 1));
        QCOMPARE(tr.stepReadouts.size(), size_t(cfg.as<ndr::ThoughtNetConfig>().steps + 1) * 5);
        double sum = 0;
        for (int op = 0; op < tr.operators; ++op)
            sum += tr.select(0, 2, op);
        QVERIFY(std::abs(sum - 1) < 1e-5);
        QCOMPARE(tr.stepAnswers.back(),
                 spelledAnswer(&tr.stepReadouts[size_t(cfg.as<ndr::ThoughtNetConfig>().steps) * 5], 5, 3));
        // And how far each step moved each token's state.
        QCOMPARE(tr.change.size(), size_t(cfg.as<ndr::ThoughtNetConfig>().steps) * 5);
        for (float c : tr.change)
            QVERIFY(std::isfinite(c) && c > 0);
    }

    // ---- The task ----

    void handWorkedValues() {
        const MultiDigitTask task(digitsConfig());
        const Example e = MultiDigitTask::make(23, false, 123);
        QCOMPARE(task.format(e), std::string("0023+0123"));
        QCOMPARE(task.answer(e), 146);
        QCOMPARE(task.targets(e), (std::vector<int>{0, 0, 0, 0, 0, 0, 1, 4, 6}));
        QCOMPARE(e.depth(), 0); // 2 + 3 digits is none of the kinds
        const Example m = MultiDigitTask::make(29, true, 66);
        QCOMPARE(task.answer(m), 1914);
        QCOMPARE(m.depth(), 6);                                 // 2×2
        QCOMPARE(MultiDigitTask::make(7, true, 35).depth(), 5); // 1×2
        QCOMPARE(MultiDigitTask::make(35, true, 7).depth(), 5); // 2×1 is the same kind
        QCOMPARE(MultiDigitTask::make(9999, false, 9999).depth(), 7);
        QCOMPARE(task.answer(MultiDigitTask::make(9999, true, 9999)), 99980001);
        QCOMPARE(task.targets(MultiDigitTask::make(9999, true, 9999)),
                 (std::vector<int>{0, 9, 9, 9, 8, 0, 0, 0, 1}));
        const std::vector<int> digits = task.targets(m);
        QCOMPARE(spelledAnswer(digits.data(), 9, 10), 1914);
        QCOMPARE(depthLabel(task.config(), 5), std::string("1×2"));
        QCOMPARE(depthLabel(task.config(), 3), std::string("3+3"));
    }

    // With several readouts the majority baseline compares whole answers, not single digits: 146 twice
    // and 1914 once is 146 for two of three, although most digits of all three are 0.
    void majorityBaselineComparesWholeAnswers() {
        const MultiDigitTask task(digitsConfig());
        const Example a = MultiDigitTask::make(23, false, 123), b = MultiDigitTask::make(29, true, 66);
        const MajorityBaseline base = majorityBaseline(task, {b, a, MultiDigitTask::make(100, false, 46)});
        QCOMPARE(base.targets, task.targets(a));
        QCOMPARE(base.accuracy, 2.0 / 3.0);
    }

    // Generated examples have their kind's digit counts; case counts and enumerations agree.
    void kinds() {
        const MultiDigitTask task(digitsConfig());
        std::mt19937_64 rng(9);
        for (int d = 1; d <= MultiDigitTask::kindCount(); ++d) {
            std::set<std::string> seen;
            for (int i = 0; i < 2000; ++i) {
                const Example e = task.sample(d, rng);
                QCOMPARE(e.depth(), d);
                QCOMPARE(e.tokens.size(), size_t(9));
                seen.insert(task.format(e));
            }
            if (task.caseCount(d) <= 200)
                QCOMPARE(int64_t(seen.size()), task.caseCount(d));
        }
        QCOMPARE(task.caseCount(1), int64_t(100));
        QCOMPARE(task.caseCount(5), int64_t(2 * 10 * 90));
        QCOMPARE(task.caseCount(6), int64_t(90 * 90));
        QCOMPARE(task.evalSet(1).size(), size_t(100)); // every 1+1 problem
    }

    // The fixed training set has the write-up's mix and none of the held-out problems.
    void trainingMix() {
        const MultiDigitTask task(digitsConfig(500));
        std::map<int, int> perKind;
        for (const Example& e : task.trainingSet())
            ++perKind[e.depth()];
        QCOMPARE(perKind,
                 (std::map<int, int>{{1, 500}, {2, 2000}, {3, 5000}, {4, 500}, {5, 2000}, {6, 5000}}));
        int swapped = 0;
        for (const Example& e : task.trainingSet()) {
            QVERIFY(!task.isHeldOut(e));
            swapped += e.depth() == 5 && e.tokens[3] != 0 && e.tokens[2] != 0; // 2-digit first operand
        }
        QVERIFY2(swapped > 800 && swapped < 1200, qPrintable(QString::number(swapped)));
        // 2+2 (8100 problems) keeps its 500 test problems out of training; 1+1 cannot.
        QVERIFY(task.evalSetHeldOut(2) && !task.evalSetHeldOut(1));
        std::set<std::string> train;
        for (const Example& e : task.trainingSet())
            train.insert(task.format(e));
        for (int d : {2, 3, 6, 7, 8})
            for (const Example& e : task.evalSet(d))
                QVERIFY2(!train.count(task.format(e)), qPrintable(QString::fromStdString(task.format(e))));
        // Batches come from the training set, with one target per position.
        std::mt19937_64 rng(1);
        const Batch b = task.trainBatch(64, rng);
        QCOMPARE(b.readouts, 9);
        QCOMPARE(b.targets.size(), size_t(64 * 9));
        QCOMPARE(b.positions, 9);
        // Deterministic in the seed.
        const MultiDigitTask again(digitsConfig(500));
        QCOMPARE(again.trainingSet(), task.trainingSet());
        // Each kind's training problems, each once: together the training set's distinct problems.
        size_t distinct = 0;
        for (int d = 1; d <= 6; ++d) {
            const auto problems = task.fixedTrainingExamples(d);
            QVERIFY(problems && !problems->empty());
            std::set<std::string> kind;
            for (const Example& e : *problems) {
                QCOMPARE(e.depth(), d);
                kind.insert(task.format(e));
            }
            QCOMPARE(kind.size(), problems->size());
            distinct += kind.size();
        }
        QCOMPARE(distinct, train.size());
        QVERIFY(task.fixedTrainingExamples(7)->empty()); // 4+4 is never trained on
    }

    void parsing_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("error"); // empty: parses
        QTest::addColumn<int>("charBegin");
        QTest::newRow("short numbers") << "29*66"
                                       << "" << -1;
        QTest::newRow("padded, spaces") << " 0023 + 0123 "
                                        << "" << -1;
        QTest::newRow("letter") << "12a+3"
                                << "'a' is not a digit" << 2;
        QTest::newRow("five digits") << "12345+1"
                                     << "more than 4 digits" << 4;
        QTest::newRow("two operations") << "1+2+3"
                                        << "one operation" << 3;
        QTest::newRow("operation first") << "+12"
                                         << "needs a number before it" << 0;
        QTest::newRow("no operation") << "1234"
                                      << "expected '+' or '*'" << 4;
        QTest::newRow("no second number") << "12*"
                                          << "expected a number after" << 3;
        QTest::newRow("empty") << "   "
                               << "type two numbers" << -1;
    }
    void parsing() {
        QFETCH(QString, text);
        QFETCH(QString, error);
        QFETCH(int, charBegin);
        const MultiDigitTask task(digitsConfig());
        const ParseResult r = task.parseQuestion(text.toStdString());
        if (error.isEmpty()) {
            QVERIFY2(r.example.has_value(), r.error.c_str());
            return;
        }
        QVERIFY(!r.example);
        QVERIFY2(QString::fromStdString(r.error).contains(error), r.error.c_str());
        QCOMPARE(r.charBegin, charBegin);
    }

    // ---- Configuration and training ----

    void configuration() {
        RunConfig c = presetConfig("thoughtnet");
        QVERIFY(validate(c).empty());
        QVERIFY(c.models[0].is<ThoughtNetConfig>());
        const RunConfig back = nlohmann::json(c).get<RunConfig>();
        QCOMPARE(back, c);
        c.models.push_back(lstmModel());
        c.models[0].as<ndr::ThoughtNetConfig>().operators = 0;
        c.models[0].as<ndr::ThoughtNetConfig>().positionDims = 3;
        c.models[0].as<ndr::ThoughtNetConfig>().heads = 3;
        const std::vector<Problem> problems = validate(c);
        const auto has = [&](const std::string& s) {
            return std::any_of(problems.begin(), problems.end(),
                               [&](const Problem& p) { return p.text().find(s) != std::string::npos; });
        };
        QVERIFY(has("models[2].kind: the LSTM reads one answer"));
        QVERIFY(has("models[0].operators: must be between 1 and 16, got 0"));
        QVERIFY(has("models[0].positionDims: must be even"));
        QVERIFY(has("models[0].heads: 3 does not divide d_model " +
                    std::to_string(c.models[0].as<ndr::ThoughtNetConfig>().stateSize)));
        TaskConfig t = c.task;
        t.testMaxDepth = 9;
        QVERIFY(!validate(t).empty());
    }

    // A short run learns something, halts before the last step on average, and repeats exactly.
    void trainsAndRepeats() {
        RunConfig c = presetConfig("thoughtnet");
        c.task.evalExamplesPerDepth = 50;
        c.models = {thoughtNetModel(16, 2, 16, 2, 4)};
        c.train.batchSize = 32;
        const auto task = makeTask(c.task);
        auto run = [&] {
            Trainer t(c, 0, *task, task->firstEvalExample(1));
            std::vector<double> losses;
            for (int i = 0; i < 30; ++i)
                losses.push_back(t.trainStep());
            return losses;
        };
        const std::vector<double> a = run(), b = run();
        QCOMPARE(a, b);
        QVERIFY2(a.back() < a.front(), qPrintable(QString("%1 -> %2").arg(a.front()).arg(a.back())));
    }
};

QTEST_APPLESS_MAIN(TestThoughtNet)
#include "test_thoughtnet.moc"
