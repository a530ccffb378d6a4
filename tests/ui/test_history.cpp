// The dashboard's history slider: dragged to an evaluation, the depth bars, attention maps and gate
// map show that evaluation's figures and probe trace and the learning curves mark its step; it stays
// there while training adds evaluations; Live follows the latest again.
#include "core/train/run.h"
#include "ui/dashboard/dashboard.h"
#include "ui/plots/attention_grid_view.h"
#include "ui/plots/depth_bars_view.h"
#include "ui/plots/gate_map_view.h"
#include "ui/plots/learning_curves_view.h"
#include "ui/plots/length_generalisation_view.h"

#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QtTest>
#include <qcustomplot.h>

using namespace ndrui;

namespace {

// A small run of both models evaluated `evaluations` times, 10 steps apart.
ndr::RunRecord trainedRecord(ndr::Run& run, int evaluations) {
    for (int e = 0; e < evaluations; ++e)
        for (int m = 0; m < run.modelCount(); ++m) {
            for (int s = 0; s < 10; ++s)
                run.trainer(m).trainStep();
            run.trainer(m).evaluate();
        }
    return run.record();
}

ndr::RunConfig tiny() {
    ndr::RunConfig c = ndr::presetConfig("stub");
    c.task.evalExamplesPerDepth = 16;
    c.models = {ndr::ndrModel(16, 2, 32, 4), ndr::vanillaModel(16, 2, 32, 4)};
    c.train.batchSize = 8;
    return c;
}

// Whether the attention and gate views show exactly `trace` for `model`.
bool showsTrace(Dashboard& d, int model, const ndr::Trace& trace) {
    for (int t = 0; t < trace.steps; ++t)
        for (int q = 0; q < trace.positions; ++q) {
            // The views count steps from 1.
            if (d.attention().weight(model, t + 1, 0, q, 0) != double(trace.att(t, 0, q, 0)))
                return false;
            if (!trace.gates.empty() && d.gates().gate(model, t + 1, q) != double(trace.gate(t, q)))
                return false;
        }
    return true;
}

} // namespace

class TestHistory : public QObject {
    Q_OBJECT

private slots:
    void sliderShowsTheChosenEvaluation() {
        ndr::Run run(tiny());
        Dashboard d;
        d.resize(1200, 800);
        d.show();
        const ndr::RunRecord three = trainedRecord(run, 3);
        d.showRecord(three);
        auto* slider = d.findChild<QSlider*>("historySlider");
        auto* live = d.findChild<QPushButton*>("historyLive");
        auto* caption = d.findChild<QLabel*>("historyCaption");
        QVERIFY(slider && live && caption);
        QVERIFY(slider->isEnabled());
        QCOMPARE(slider->maximum(), 2);
        QCOMPARE(slider->value(), 2);
        QVERIFY(live->isChecked());
        QVERIFY(showsTrace(d, 0, three.models[0].history[2].probe));
        QCOMPARE(d.learningCurves().marker(), -1);

        // Drag to the first evaluation (the keyboard moves the slider as a drag does).
        slider->setFocus();
        QTest::keyClick(slider, Qt::Key_Home);
        QCOMPARE(d.selectedEvaluation(), 0);
        QVERIFY(!live->isChecked());
        for (int m = 0; m < 2; ++m)
            QVERIFY(showsTrace(d, m, three.models[size_t(m)].history[0].probe));
        QVERIFY(!showsTrace(d, 0, three.models[0].history[2].probe));
        QCOMPARE(d.learningCurves().marker(), 10);
        QCOMPARE(d.caption(), QString("Evaluation at step 10"));
        QVERIFY2(caption->text().contains("1 of 3"), qPrintable(caption->text()));
        QTest::keyClick(slider, Qt::Key_Right);
        QVERIFY(showsTrace(d, 0, three.models[0].history[1].probe));

        // Training goes on: the slider keeps its evaluation and gains positions.
        const ndr::RunRecord five = trainedRecord(run, 2);
        d.showRecord(five);
        QCOMPARE(slider->maximum(), 4);
        QCOMPARE(slider->value(), 1);
        QVERIFY(showsTrace(d, 0, five.models[0].history[1].probe));

        // Live follows the latest again, also as more evaluations come.
        QTest::mouseClick(live, Qt::LeftButton);
        QCOMPARE(d.selectedEvaluation(), -1);
        QCOMPARE(slider->value(), 4);
        QVERIFY(showsTrace(d, 0, five.models[0].history[4].probe));
        QCOMPARE(d.learningCurves().marker(), -1);
        const ndr::RunRecord six = trainedRecord(run, 1);
        d.showRecord(six);
        QCOMPARE(slider->value(), 5);
        QVERIFY(showsTrace(d, 1, six.models[1].history[5].probe));
    }

    void modelsAtDifferentStepsAreNamed() {
        ndr::Run run(tiny());
        ndr::RunRecord r = trainedRecord(run, 2);
        r.models[1].history.pop_back(); // the Transformer is one evaluation behind
        Dashboard d;
        d.showRecord(r);
        QVERIFY2(d.caption().contains("NDR at step 20") && d.caption().contains("Transformer at step 10"),
                 qPrintable(d.caption()));
    }

    // The depth views name what the task's depths are: depths for table lookup, problem sizes for
    // multi-digit arithmetic (whose tiny run has the stub's models).
    void depthViewsSayDepthsOrSizes() {
        auto titles = [](Dashboard& d) {
            QStringList texts;
            for (QWidget* view :
                 {static_cast<QWidget*>(&d.depthBars()), static_cast<QWidget*>(&d.lengthGeneralisation())})
                texts << view->findChild<QCustomPlot*>()->findChild<QCPTextElement*>("title")->text();
            return texts;
        };
        Dashboard d;
        ndr::Run lookup(tiny());
        d.showRecord(trainedRecord(lookup, 1));
        QCOMPARE(titles(d), (QStringList{"Accuracy per depth", "Accuracy per depth over training"}));
        QCOMPARE(d.depthBars().findChild<QCustomPlot*>()->xAxis->label(),
                 QString("depth (number of functions)"));
        ndr::RunConfig c = tiny();
        c.task = ndr::presetConfig("thoughtnet").task;
        c.task.evalExamplesPerDepth = 8;
        ndr::Run digits(c);
        d.showRecord(trainedRecord(digits, 1));
        QCOMPARE(titles(d), (QStringList{"Accuracy per problem size", "Accuracy per size over training"}));
        QCOMPARE(d.depthBars().findChild<QCustomPlot*>()->xAxis->label(), QString("problem size"));
    }
};

QTEST_MAIN(TestHistory)
#include "test_history.moc"
