// Halting and settling on hand-made traces: the step after which the gates stay closed, and the step
// from which the answer stays right, with their summaries over examples; an evaluation of a halting
// model, which also measures it running every step; and the change of each position's state that a
// trace records per step.
#include "core/models/encoder/encoder.h"
#include "core/task/ctl_task.h"
#include "core/train/halting.h"
#include "core/train/trainer.h"

#include <QtTest>
#include <algorithm>
#include <cmath>
#include <set>

using namespace ndr;

namespace {

// A trace of one position whose readout after steps 0..answers.size()-1 is `answers`, true answer 2,
// with gates `gates` (one per step; none for a residual model).
Trace trace(const std::vector<int>& answers, const std::vector<float>& gates) {
    Trace t;
    t.steps = int(answers.size()) - 1;
    t.positions = 1;
    t.answer = 2;
    t.stepAnswers = answers;
    t.gates = gates;
    return t;
}

} // namespace

class TestHalting : public QObject {
    Q_OBJECT

private slots:
    void settledStepIsWhereTheAnswerStaysRight() {
        QCOMPARE(settledStep(trace({0, 1, 2, 2, 2}, {})), 2);
        QCOMPARE(settledStep(trace({2, 2, 2}, {})), 0);
        QCOMPARE(settledStep(trace({0, 2, 1, 2}, {})), 3); // right at step 1, wrong again at 2
        QCOMPARE(settledStep(trace({2, 2, 1}, {})), -1);   // wrong at the end
        QCOMPARE(settledStep(trace({}, {})), -1);
    }

    void haltingStepIsAfterTheLastOpenGate() {
        QCOMPARE(haltingStep(trace({0, 1, 2, 2}, {0.9f, 0.5f, 0.05f}), 0.1f), 2);
        QCOMPARE(haltingStep(trace({0, 1, 2, 2}, {0.9f, 0.5f, 0.5f}), 0.1f), 3); // never within the run
        QCOMPARE(haltingStep(trace({0, 1}, {}), 0.1f), -1);                      // no gates
    }

    // By change: the step after the last one that moves some position by the threshold or more,
    // whatever the gates say (open gates over still columns, as a trained NDR leaves them).
    void haltingByChangeIsAfterTheLastMovingStep() {
        Trace t = trace({0, 1, 2, 2}, {0.9f, 0.5f, 0.5f});
        QCOMPARE(haltingStep(t, HaltingRule{HaltSignal::Change, 0.2f}), -1); // no change recorded
        t.change = {1.2f, 0.9f, 0.05f};
        QCOMPARE(haltingStep(t, HaltingRule{HaltSignal::Change, 0.2f}), 2);
        QCOMPARE(haltingStep(t, HaltingRule{HaltSignal::Change, 1.0f}), 1);
        QCOMPARE(haltingStep(t, HaltingRule{HaltSignal::Change, 1.5f}), 0);
        QCOMPARE(haltingStep(t, HaltingRule{HaltSignal::Change, 0.01f}), 3); // the last step still moves
        QCOMPARE(haltingStep(t, HaltingRule{HaltSignal::Gates, 0.2f}), 3);   // the gates: never
        QCOMPARE(haltingStep(t, HaltingRule{HaltSignal::Gates, 0.2f}), haltingStep(t, 0.2f));
        t.change[2] = std::nanf("");
        QCOMPARE(haltingStep(t, HaltingRule{HaltSignal::Change, 0.2f}), 3); // NaN does not stand still
        // Every position counts: two positions, the second moves at step 2.
        Trace two = t;
        two.positions = 2;
        two.change = {1.0f, 0.1f, 0.1f, 0.5f, 0.1f, 0.1f};
        QCOMPARE(haltingStep(two, HaltingRule{HaltSignal::Change, 0.2f}), 2);
        // A change record shorter than steps x positions is no signal.
        two.change.pop_back();
        QCOMPARE(haltingStep(two, HaltingRule{HaltSignal::Change, 0.2f}), -1);
    }

    void haltSignalFollowsTheModel() {
        ModelConfig ndrModel; // the defaults: an encoder with copy gates
        QVERIFY(hasHaltSignal(ndrModel, HaltSignal::Gates));
        QVERIFY(hasHaltSignal(ndrModel, HaltSignal::Change));
        ModelConfig residual = ndrModel;
        residual.as<ndr::EncoderConfig>().update = UpdateKind::Residual;
        QVERIFY(!hasHaltSignal(residual, HaltSignal::Gates));
        QVERIFY(hasHaltSignal(residual, HaltSignal::Change));
        ModelConfig lstm = ndrModel;
        lstm.kind = LstmConfig{};
        QVERIFY(!hasHaltSignal(lstm, HaltSignal::Gates));
        QVERIFY(!hasHaltSignal(lstm, HaltSignal::Change));
        ModelConfig thoughtnet = residual;
        thoughtnet.kind = ThoughtNetConfig{};
        QVERIFY(hasHaltSignal(thoughtnet, HaltSignal::Gates));
    }

    void summaryByChangeHaltsWhereTheGatesDoNot() {
        Trace a = trace({0, 2, 2, 2}, {0.4f, 0.4f, 0.4f}); // gates partly open throughout
        a.change = {0.9f, 0.01f, 0.01f};                   // but still after step 1
        Trace b = trace({0, 1, 2, 2}, {0.4f, 0.4f, 0.4f});
        b.change = {0.9f, 0.8f, 0.01f}; // still after step 2
        const HaltingSummary byGates = summariseHalting({&a, &b}, HaltingRule{HaltSignal::Gates, 0.3f});
        QCOMPARE(byGates.halted, 0);
        const HaltingSummary byChange = summariseHalting({&a, &b}, HaltingRule{HaltSignal::Change, 0.2f});
        QCOMPARE(byChange.halted, 2);
        QCOMPARE(byChange.minStep, 1);
        QCOMPARE(byChange.maxStep, 2);
        QCOMPARE(byChange.meanStep, 1.5);
        QCOMPARE(byChange.correctAtHalt, 2);
    }

    void stopStepIsTheFirstStillStep() {
        const HaltingRule gates{HaltSignal::Gates, 0.1f}, change{HaltSignal::Change, 0.1f};
        QCOMPARE(stopStep(trace({0, 1, 2, 2}, {0.9f, 0.05f, 0.5f}), gates), 2); // reopening is not seen
        QCOMPARE(stopStep(trace({0, 1, 2, 2}, {0.05f, 0.9f, 0.9f}), gates), 1);
        QCOMPARE(stopStep(trace({0, 1, 2, 2}, {0.9f, 0.5f, 0.5f}), gates), 3); // never closed: every step
        QCOMPARE(stopStep(trace({0, 1}, {}), gates), -1);
        // By the change: the gates do not count, each position's change does; NaN is not still.
        Trace t = trace({0, 1, 2, 2}, {0.9f, 0.9f, 0.9f});
        QCOMPARE(stopStep(t, change), -1); // no change recorded
        t.positions = 2;
        t.gates = {0.9f, 0.9f, 0.9f, 0.9f, 0.9f, 0.9f};
        t.change = {0.5f, 0.05f, /**/ 0.05f, 0.5f, /**/ 0.05f, 0.05f};
        QCOMPARE(stopStep(t, change), 3);
        QCOMPARE(stopStep(t, HaltingRule{HaltSignal::Change, 0.6f}), 1);
        t.change[4] = std::nanf("");
        QCOMPARE(stopStep(t, change), 3); // never still: every step
        QCOMPARE(stopStep(t, gates), 3);
    }

    // The encoder's halting at evaluation stops each example where stopStep reads its trace, and
    // answers what the trace answers after that step: NDR by its gates and by the change, a
    // Transformer (no gates) by the change.
    void encoderHaltsWhereItsTraceSays_data() {
        QTest::addColumn<bool>("gated");
        QTest::addColumn<int>("signal");
        QTest::newRow("NDR, gates") << true << int(HaltSignal::Gates);
        QTest::newRow("NDR, change") << true << int(HaltSignal::Change);
        QTest::newRow("Transformer, change") << false << int(HaltSignal::Change);
    }
    void encoderHaltsWhereItsTraceSays() {
        QFETCH(bool, gated);
        QFETCH(int, signal);
        const RunConfig run = presetConfig("stub");
        ModelConfig cfg = gated ? run.models[0] : run.models[1];
        cfg.as<ndr::EncoderConfig>().haltOn = HaltSignal(signal);
        cfg.as<ndr::EncoderConfig>().gateBiasInit =
            0; // gates near 0.5 with spread, so examples stop at different steps
        cfg.as<ndr::EncoderConfig>().dModel = 16, cfg.as<ndr::EncoderConfig>().dFF = 32,
        cfg.as<ndr::EncoderConfig>().heads = 2;
        const CtlTask task(run.task);
        Encoder<float> plain(cfg, task.vocabSize(), run.task.symbols);
        plain.init(3);
        const int steps = cfg.as<ndr::EncoderConfig>().effectiveEvalSteps();
        std::vector<Example> examples;
        for (int d : {1, 2, 3, 4, 5, 6, 7})
            for (int i = 0; i < 4; ++i)
                examples.push_back(task.evalSet(d)[size_t(i)]);
        std::vector<float> values;
        std::vector<Trace> traces;
        for (const Example& e : examples) {
            traces.push_back(plain.trace(task.tokens(e), 1, steps));
            const std::vector<float>& v =
                signal == int(HaltSignal::Gates) ? traces.back().gates : traces.back().change;
            values.insert(values.end(), v.begin(), v.end());
        }
        // About half the positions still at a step, so that examples stop at different steps.
        std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
        cfg.as<ndr::EncoderConfig>().haltThreshold = values[values.size() / 2] * 1.05;
        Encoder<float> halting(cfg, task.vocabSize(), run.task.symbols);
        halting.init(3);
        Rng unused(0);
        halting.forward(task.makeBatch(examples), steps, false, unused, false);
        const auto& stops = halting.stats().haltSteps;
        QCOMPARE(stops.size(), examples.size());
        std::set<int> distinct;
        for (size_t i = 0; i < examples.size(); ++i) {
            const int want = stopStep(traces[i], {cfg.as<ndr::EncoderConfig>().haltOn,
                                                  float(cfg.as<ndr::EncoderConfig>().haltThreshold)});
            QCOMPARE(stops[i], want);
            distinct.insert(want);
            Index arg;
            halting.logits().row(Index(i)).maxCoeff(&arg);
            QCOMPARE(int(arg), traces[i].stepAnswers[size_t(want)]);
        }
        QVERIFY2(distinct.size() >= 2, "the examples stop at different steps");
    }

    // Trace::change holds |after - before| / |before| per position (Euclidean norms over a row), a
    // state of norm 0 counting as 1e-12; rows past the positions are not recorded.
    void changeIsTheRelativeStepOfEachRow() {
        Mat<double> before(3, 2), after(3, 2);
        before << 3, 4, 1, 0, 0, 0;
        after << 3, 4, 4, 4, 0, 2e-12;
        Trace two;
        recordChange(before, after, 2, two);
        QCOMPARE(two.change, (std::vector<float>{0.0f, 5.0f})); // |(3, 4)| / |(1, 0)|
        Trace three;
        recordChange(before, after, 3, three);
        QCOMPARE(three.change.size(), size_t(3));
        QVERIFY(std::abs(three.change[2] - 2.0f) < 1e-5f);
    }

    // An encoder's trace records how far every step moved every position: nothing with the copy gates
    // shut, something everywhere with them half open or without gates (a residual layer).
    void encoderTraceRecordsEachStepsChange() {
        const RunConfig run = presetConfig("stub");
        const CtlTask task(run.task);
        const std::vector<int> tokens = task.tokens(task.evalSet(3)[0]);
        const size_t T = tokens.size();
        const int steps = 4;
        ModelConfig ndr = run.models[0];
        ndr.as<ndr::EncoderConfig>().dModel = 16, ndr.as<ndr::EncoderConfig>().dFF = 32,
        ndr.as<ndr::EncoderConfig>().heads = 2;
        for (float bias : {-60.0f, 0.0f}) {
            ndr.as<ndr::EncoderConfig>().gateBiasInit = bias;
            Encoder<double> model(ndr, task.vocabSize(), run.task.symbols);
            model.init(5);
            const Trace tr = model.trace(tokens, 1, steps);
            QCOMPARE(tr.change.size(), size_t(steps) * T);
            for (float c : tr.change)
                QVERIFY2(bias < 0 ? c < 1e-12f : c > 1e-3f,
                         qPrintable(QString("gate bias %1: change %2").arg(double(bias)).arg(double(c))));
        }
        Encoder<double> vanilla(run.models[1], task.vocabSize(), run.task.symbols);
        vanilla.init(5);
        const Trace tr = vanilla.trace(tokens, 1, steps);
        QVERIFY(tr.gates.empty());
        QCOMPARE(tr.change.size(), size_t(steps) * T);
        for (float c : tr.change)
            QVERIFY(c > 1e-3f);
    }

    // An evaluation of a halting model also measures it running every step; without halting it does not.
    void evaluationMeasuresWhatHaltingCosts() {
        RunConfig c = presetConfig("stub");
        c.task.evalExamplesPerDepth = 40;
        c.models.resize(1);
        // Above the gates of a barely trained model: most examples stop early.
        c.models[0].as<ndr::EncoderConfig>().haltThreshold = 0.5;
        const auto task = makeTask(c.task);
        Trainer t(c, 0, *task, task->firstEvalExample(1));
        for (int i = 0; i < 20; ++i)
            t.trainStep();
        const EvalRecord r = t.evaluate();
        QCOMPARE(r.everyStepAccuracy.size(), r.depths.size());
        QCOMPARE(r.haltCounts.size(), r.depths.size());
        const int steps = c.models[0].as<ndr::EncoderConfig>().effectiveEvalSteps();
        QVERIFY2(meanStepsRun(r) < steps, "examples halt before the last step");
        bool differs = false;
        for (size_t d = 0; d < r.depths.size(); ++d) {
            const std::vector<Example>& set = task->evalSet(r.depths[d]);
            QCOMPARE(t.accuracy(set).first, r.accuracy[d]);
            t.model().setHalting(0, HaltSignal::Gates);
            QCOMPARE(t.accuracy(set).first, r.everyStepAccuracy[d]);
            t.model().setHalting(c.models[0].as<ndr::EncoderConfig>().haltThreshold, HaltSignal::Gates);
            differs = differs || r.everyStepAccuracy[d] != r.accuracy[d];
        }
        QVERIFY2(differs, "halting changes the answers at some depth");

        // No gate closes this far: every example runs every step, and the two accuracies are one.
        c.models[0].as<ndr::EncoderConfig>().haltThreshold = 1e-9;
        Trainer never(c, 0, *task, task->firstEvalExample(1));
        const EvalRecord n = never.evaluate();
        QCOMPARE(meanStepsRun(n), double(steps));
        QCOMPARE(n.everyStepAccuracy, n.accuracy);

        c.models[0].as<ndr::EncoderConfig>().haltThreshold = 0;
        Trainer plain(c, 0, *task, task->firstEvalExample(1));
        const EvalRecord p = plain.evaluate();
        QVERIFY(p.haltCounts.empty());
        QVERIFY(p.everyStepAccuracy.empty());
    }

    void suggestedThresholdSitsBetweenClosedAndOpen() {
        // Closed near 0.3 (the level a stub NDR reaches), one gate open per step.
        Trace t;
        t.steps = 3;
        t.positions = 4;
        t.gates = {0.95f, 0.30f, 0.31f, 0.29f, 0.30f, 0.9f, 0.30f, 0.32f, 0.28f, 0.30f, 0.97f, 0.30f};
        const GateLevels levels = gateLevels(t);
        QCOMPARE(levels.rest, 0.30f);
        QCOMPARE(levels.open, 0.97f);
        QCOMPARE(suggestedHaltingThreshold(t), 0.635f); // (0.3 + 0.97) / 2
        // Closed near 0.02: the threshold moves down with them, and halting finds the fixed point.
        for (float& g : t.gates)
            g = g > 0.5f ? g : g / 15.0f;
        const float low = suggestedHaltingThreshold(t);
        QVERIFY2(low > 0.45f && low < 0.55f, qPrintable(QString::number(low)));
        t.stepAnswers = {0, 0, 0, 0};
        t.gates.insert(t.gates.end(), {0.02f, 0.02f, 0.02f, 0.02f}); // a fourth step, all closed
        t.steps = 4;
        QCOMPARE(haltingStep(t, low), 3);
        QCOMPARE(suggestedHaltingThreshold(trace({0, 1}, {})), -1.0f);
        QCOMPARE(gateLevels(trace({0, 1}, {})).open, 0.0f);
    }

    void suggestedThresholdFindsGatesThatOpenPartway() {
        // Gates that rest near 0.3 and open only to about 0.45 (position means of a trained stub NDR):
        // the threshold lies below the open ones, so halting is after the last step with one open.
        Trace t;
        t.steps = 4;
        t.positions = 4;
        t.gates = {0.45f, 0.30f, 0.29f, 0.31f, 0.30f, 0.44f, 0.30f, 0.28f,
                   0.31f, 0.29f, 0.46f, 0.30f, 0.30f, 0.31f, 0.29f, 0.30f};
        t.stepAnswers = {0, 0, 0, 0, 0};
        const float threshold = suggestedHaltingThreshold(t);
        QCOMPARE(threshold, 0.38f); // (0.30 + 0.46) / 2
        QCOMPARE(haltingStep(t, threshold), 3);
        // A threshold set a quarter of the way to fully open (0.475) would lie above every gate.
        QCOMPARE(haltingStep(t, 0.475f), 0);
    }

    void summaryCountsBoth() {
        const Trace a = trace({0, 2, 2, 2}, {0.9f, 0.05f, 0.05f}); // halts after 1, settles at 1
        const Trace b = trace({0, 1, 1, 2}, {0.9f, 0.9f, 0.9f});   // never halts, settles at 3
        const Trace c = trace({0, 2, 2, 1}, {0.9f, 0.05f, 0.05f}); // wrong at the end
        const HaltingSummary s = summariseHalting({&a, &b, &c}, 0.1f);
        QCOMPARE(s.examples, 3);
        QCOMPARE(s.halted, 2);
        // a and c are read after step 1, b after the last: all right, though c ends wrong (what the
        // answers-based settled count shows).
        QCOMPARE(s.correctAtHalt, 3);
        QCOMPARE(s.settled, 2);
        QCOMPARE(s.minSettled, 1);
        QCOMPARE(s.maxSettled, 3);
        QCOMPARE(s.meanSettled, 2.0);
    }
};

QTEST_APPLESS_MAIN(TestHalting)
#include "test_halting.moc"
