// The inspector's head routing map: on a hand-made trace it holds each head's weight per token at the
// shown step; in a real run it appears only for the model that routes heads, matches that model's trace,
// follows the step slider and exports with the frames; the halting threshold is the model's own.
#include "core/train/halting.h"
#include "testutil.h"
#include "ui/inspector/inspector.h"
#include "ui/inspector/model_step_view.h"
#include "ui/plots/heatmap_plot.h"
#include "ui/training/training_session.h"
#include "view_fixture.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QTableWidget>
#include <QtTest>
#include <random>

using namespace ndrui;

namespace {

// A trace of `steps` steps, 3 heads and 4 positions whose routing weight of (t, p, h) is unique.
ndr::Trace routedTrace(int steps) {
    ndr::Trace t = viewtest::longTrace(steps, 3, true);
    t.positions = 4;
    t.tokens.resize(4);
    t.tokenNames = {"1", "a", "b", "[E]"};
    t.attention.assign(size_t(steps) * 3 * 4 * 4, 0.25f);
    t.gates.assign(size_t(steps) * 4, 0.5f);
    t.routing.clear();
    for (int s = 0; s < steps; ++s)
        for (int p = 0; p < 4; ++p)
            for (int h = 0; h < 3; ++h)
                t.routing.push_back(float(s * 100 + p * 10 + h) / 1000.0f);
    return t;
}

ndr::RunConfig routedRun() {
    ndr::RunConfig c = ndr::presetConfig("stub");
    c.task.evalExamplesPerDepth = 16;
    ndr::ModelConfig routed = ndr::ndrModel(16, 4, 32, 6);
    routed.name = "NDR top-2";
    routed.as<ndr::EncoderConfig>().headRouting = true;
    routed.as<ndr::EncoderConfig>().routeTopK = 2;
    routed.as<ndr::EncoderConfig>().haltThreshold = 0.15;
    c.models = {routed, ndr::vanillaModel(16, 2, 32, 4)};
    c.train.batchSize = 16;
    c.train.steps = 200;
    c.train.evalInterval = 100;
    c.train.seed = 7;
    return c;
}

} // namespace

class TestInspectorRouting : public QObject {
    Q_OBJECT

private slots:
    void mapHoldsTheWeightsOfTheStep() {
        const ndr::Trace t = routedTrace(5);
        ModelStepView view(0, "NDR");
        view.resize(500, 900);
        view.setTrace(viewtest::borrowed(t));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        HeatmapPlot* map = view.routingMap();
        QVERIFY(map->isVisible());
        view.setStep(3);
        QCOMPARE(map->rows(), 3);
        QCOMPARE(map->columns(), 4);
        for (int h = 0; h < 3; ++h)
            for (int p = 0; p < 4; ++p)
                QCOMPARE(map->value(h, p), double(float(2 * 100 + p * 10 + h) / 1000.0f));
        QVERIFY(map->shownTitle().contains("head routing"));
        // Step 0 is the embeddings: nothing routed yet; beyond the trace, its last step.
        view.setStep(0);
        QCOMPARE(map->value(2, 3), 0.0);
        view.setStep(99);
        QCOMPARE(map->value(1, 2), double(float(400 + 20 + 1) / 1000.0f));
        QVERIFY(viewtest::shoot(&view, "inspector_routing_map"));
        // The frame export draws the strip too: its bottom band is not the bare window colour.
        const QImage frame = view.render(QSize(600, 700));
        const QImage band = frame.copy(0, 700 - 150, 600, 150);
        int coloured = 0;
        for (int y = 0; y < band.height(); y += 3)
            for (int x = 0; x < band.width(); x += 3)
                coloured += band.pixelColor(x, y) != view.palette().color(QPalette::Window);
        QVERIFY(coloured > 200);

        const ndr::Trace plain = viewtest::longTrace(5, 3, true); // no routing
        view.setTrace(viewtest::borrowed(plain));
        QVERIFY(!map->isVisible());
        QCOMPARE(routingAt(plain, 2), std::vector<float>(size_t(3) * plain.positions, 0.0f));
    }

    void inspectorShowsTheMapOfTheRoutedModelOnly() {
        TrainingSession session;
        QString error;
        QVERIFY2(session.start(routedRun(), &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(session.state(), TrainingSession::State::Ready, ndrtest::waitMs(60000));
        Inspector inspector(session);
        inspector.resize(1280, 800);
        inspector.show();
        QVERIFY(QTest::qWaitForWindowExposed(&inspector));
        auto* field = inspector.findChild<QLineEdit*>("inspector.expression");
        QVERIFY(field);
        std::mt19937_64 rng(11);
        field->setText(QString::fromStdString(session.task()->format(session.task()->sample(3, rng))));
        QTRY_VERIFY_WITH_TIMEOUT(inspector.tracesComplete(), ndrtest::waitMs(10000));

        const ndr::Trace* routed = inspector.trace(0);
        QVERIFY(routed && !routed->routing.empty());
        QVERIFY(inspector.trace(1) && inspector.trace(1)->routing.empty());
        QVERIFY(inspector.modelView(0)->routingMap()->isVisible());
        QVERIFY(!inspector.modelView(1)->routingMap()->isVisible());
        for (int step : {1, routed->steps}) {
            inspector.setStep(step);
            HeatmapPlot* map = inspector.modelView(0)->routingMap();
            QCOMPARE(map->rows(), 4);
            QCOMPARE(map->columns(), routed->positions);
            double kept = 0;
            for (int h = 0; h < 4; ++h) {
                QCOMPARE(map->value(h, 0), double(routed->route(step - 1, 0, h)));
                kept += map->value(h, 0) > 0;
            }
            QCOMPARE(kept, 2.0); // top-2 of 4, the others masked to exactly 0
        }
        // A model that halts at evaluation sets the inspector's halting threshold.
        auto* threshold = inspector.findChild<QDoubleSpinBox*>("inspector.threshold");
        QVERIFY(threshold);
        QCOMPARE(threshold->value(), 0.15);
        QVERIFY(viewtest::shoot(&inspector, "inspector_routing"));
    }

    // A model that halts at evaluation on the change sets the inspector's signal and its threshold;
    // a run where no model halts leaves both as they were.
    void aModelHaltingOnTheChangeSetsTheSignal() {
        ndr::RunConfig c = routedRun();
        c.models[0].as<ndr::EncoderConfig>().headRouting = false;
        c.models[0].as<ndr::EncoderConfig>().haltThreshold = 0;
        c.models[1].as<ndr::EncoderConfig>().haltThreshold = 0.25;
        c.models[1].as<ndr::EncoderConfig>().haltOn = ndr::HaltSignal::Change;
        c.train.steps = 100;
        TrainingSession session;
        QString error;
        QVERIFY2(session.start(c, &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(session.state(), TrainingSession::State::Ready, ndrtest::waitMs(60000));
        Inspector inspector(session);
        auto* signal = inspector.findChild<QComboBox*>("inspector.haltSignal");
        auto* threshold = inspector.findChild<QDoubleSpinBox*>("inspector.threshold");
        QVERIFY(signal && threshold);
        QCOMPARE(signal->currentData().toInt(), int(ndr::HaltSignal::Change));
        QCOMPARE(threshold->value(), 0.25);
        // The halting cell of the model that halts at evaluation also says where its evaluation stops:
        // as it goes, without looking ahead.
        inspector.resize(1280, 800);
        inspector.show();
        QVERIFY(QTest::qWaitForWindowExposed(&inspector));
        inspector.findChild<QCheckBox*>("inspector.halt")->setChecked(true);
        std::mt19937_64 rng(5);
        inspector.findChild<QLineEdit*>("inspector.expression")
            ->setText(QString::fromStdString(session.task()->format(session.task()->sample(4, rng))));
        QTRY_VERIFY_WITH_TIMEOUT(inspector.tracesComplete() && inspector.trace(1), ndrtest::waitMs(10000));
        const int stop = ndr::stopStep(*inspector.trace(1), {ndr::HaltSignal::Change, 0.25f});
        QVERIFY(stop >= 1);
        const QTableWidgetItem* cell = inspector.findChild<QTableWidget*>("inspector.answers")->item(1, 2);
        QVERIFY(cell);
        QVERIFY2(
            cell->toolTip().endsWith(
                QString("At evaluation (change below 0.25, as it goes) it stops after step %1").arg(stop)),
            qPrintable(cell->toolTip()));
        QVERIFY(!inspector.findChild<QTableWidget*>("inspector.answers")
                     ->item(0, 2)
                     ->toolTip()
                     .contains("At evaluation"));

        c.models[1].as<ndr::EncoderConfig>().haltThreshold = 0;
        QVERIFY2(session.start(c, &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(session.state(), TrainingSession::State::Ready, ndrtest::waitMs(60000));
        QCOMPARE(signal->currentData().toInt(), int(ndr::HaltSignal::Change));
        QCOMPARE(threshold->value(), 0.25);
    }
};

QTEST_MAIN(TestInspectorRouting)
#include "test_inspector_routing.moc"
