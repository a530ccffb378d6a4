// Halting and settling on hand-made traces: the step after which the gates stay closed, and the step
// from which the answer stays right, with their summaries over examples.
#include "core/train/halting.h"

#include <QtTest>

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

    void suggestedThresholdSitsAboveTheClosedLevel() {
        // Closed near 0.3 (the level a stub NDR reaches), one gate open per step.
        Trace t;
        t.steps = 3;
        t.positions = 4;
        t.gates = {0.95f, 0.30f, 0.31f, 0.29f, 0.30f, 0.9f, 0.30f, 0.32f, 0.28f, 0.30f, 0.97f, 0.30f};
        QCOMPARE(suggestedHaltingThreshold(t), 0.475f); // 0.3 + (1 - 0.3) / 4
        // Closed near 0.02: the threshold moves down with them, and halting finds the fixed point.
        for (float& g : t.gates)
            g = g > 0.5f ? g : g / 15.0f;
        const float low = suggestedHaltingThreshold(t);
        QVERIFY2(low > 0.2f && low < 0.3f, qPrintable(QString::number(low)));
        t.stepAnswers = {0, 0, 0, 0};
        t.gates.insert(t.gates.end(), {0.02f, 0.02f, 0.02f, 0.02f}); // a fourth step, all closed
        t.steps = 4;
        QCOMPARE(haltingStep(t, low), 3);
        QCOMPARE(suggestedHaltingThreshold(trace({0, 1}, {})), -1.0f);
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
