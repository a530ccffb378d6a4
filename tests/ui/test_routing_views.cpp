// Head usage, steps used and accuracy per operation on hand-made evaluation histories: the graphs hold
// exactly the recorded figures, the compute saved is the one worked out by hand, models without the
// figures are not offered, a new evaluation updates the views, the dashboard shows the row only for
// runs that have them, and the export draws each view once per model that has its figures.
#include "core/config/config.h"
#include "core/io/files.h"
#include "ui/dashboard/dashboard.h"
#include "ui/export/exporter.h"
#include "ui/plots/model_history_views.h"
#include "view_fixture.h"

#include <QComboBox>
#include <QTemporaryDir>
#include <QtTest>

using namespace ndrui;
using namespace viewtest;

namespace {

// Evaluation k of a routed, halting model: head shares drifting towards head 2, and per depth d
// (1..3) examples halting after d, d + 1 or all 6 steps.
EvalRecord evaluation(int k) {
    EvalRecord e;
    e.step = 500 * (k + 1);
    e.depths = {1, 2, 3};
    e.accuracy = {1, 0.9, 0.5};
    e.headShare = {0.25 - 0.05 * k, 0.25 + 0.1 * k, 0.25 - 0.05 * k, 0.25};
    e.routeEntropy = std::log(4.0) * (1.0 - 0.2 * k);
    for (int d = 1; d <= 3; ++d) {
        std::vector<int> counts(7, 0);
        counts[size_t(d)] = 6 - k;
        counts[size_t(d + 1)] = 2;
        counts[6] = 2 + k;
        e.haltCounts.push_back(counts);
    }
    e.everyStepAccuracy = {1, 0.95, 0.7}; // halting costs 0, 0.05 and 0.2
    return e;
}

ModelRecord routedModel(int evaluations) {
    ModelRecord m;
    m.config = ndrModel(16, 4, 32, 6);
    m.config.name = "NDR routed";
    m.config.as<ndr::EncoderConfig>().headRouting = true;
    m.config.as<ndr::EncoderConfig>().routeTopK = 2;
    m.config.as<ndr::EncoderConfig>().haltThreshold = 0.1;
    for (int k = 0; k < evaluations; ++k)
        m.history.push_back(evaluation(k));
    return m;
}

ModelRecord plainModel() {
    ModelRecord m;
    m.config = vanillaModel(16, 4, 32, 6);
    EvalRecord e;
    e.step = 500;
    e.depths = {1, 2, 3};
    e.accuracy = {1, 0.5, 0.3};
    m.history = {e};
    return m;
}

// Evaluation k of a model on a task with two operations at the root, on depths 1-2 (training) and 3
// (test): MAX learnt a little more at each evaluation, SM at chance; depth 3 has no SM example.
EvalRecord operationEvaluation(int k) {
    EvalRecord e;
    e.step = 1000 * (k + 1);
    e.depths = {1, 2, 3};
    e.accuracy = {0.5, 0.5, 0.5};
    e.operations = {"MAX", "SM"};
    e.operationExamples = {{10, 10}, {20, 10}, {8, 0}};
    e.operationCorrect = {{5 + k, 1}, {10 + 2 * k, 2}, {2 + k, 0}};
    return e;
}

} // namespace

class TestRoutingViews : public QObject {
    Q_OBJECT

private slots:
    void headUsageHoldsTheShares() {
        HeadUsageView view;
        const ModelRecord plain = plainModel(), routed = routedModel(3);
        view.setModel(0, plain.config, plain.history);
        QVERIFY(!view.hasData());
        view.setModel(1, routed.config, routed.history);
        QVERIFY(view.hasData());
        QCOMPARE(view.currentModel(), 1); // the only model with routing
        QCOMPARE(view.findChild<QComboBox*>()->count(), 1);
        showAt(&view);
        QCustomPlot* p = plotOf(&view);
        QCOMPARE(p->graphCount(), 5); // four heads and the entropy
        for (int h = 0; h < 4; ++h) {
            QCOMPARE(p->graph(h)->dataCount(), 3);
            for (int k = 0; k < 3; ++k) {
                QCOMPARE(p->graph(h)->data()->at(k)->key, double(500 * (k + 1)));
                QCOMPARE(p->graph(h)->data()->at(k)->value, routed.history[size_t(k)].headShare[size_t(h)]);
            }
        }
        QVERIFY(std::abs(p->graph(4)->data()->at(2)->value - 0.6) < 1e-12); // entropy / log 4
        // A new evaluation arrives.
        const ModelRecord more = routedModel(4);
        view.setModel(1, more.config, more.history);
        QCOMPARE(p->graph(1)->dataCount(), 4);
        QCOMPARE(p->graph(1)->data()->at(3)->value, 0.55);
        QCoreApplication::processEvents(); // the coalesced replot refits the ranges
        p->replot();
        const QPoint at = pixelOf(p->graph(1), 2000, 0.55);
        QVERIFY2(view.toolTipAt(at).contains("head 2 gets 0.550"), qPrintable(view.toolTipAt(at)));
        QVERIFY(shoot(&view, "head_usage"));
    }

    void stepsUsedHoldsTheMeansAndTheSaving() {
        StepsUsedView view;
        const ModelRecord routed = routedModel(3);
        view.setModel(0, routed.config, routed.history);
        QVERIFY(view.hasData());
        showAt(&view);
        QCustomPlot* p = plotOf(&view);
        QCOMPARE(p->graphCount(), 3); // one per depth
        // Evaluation 2, depth 1: 4 examples after 1 step, 2 after 2, 4 after 6: mean 32 / 10.
        QVERIFY(std::abs(p->graph(0)->data()->at(2)->value - 3.2) < 1e-12);
        // Depth 3 there: 4 after 3, 2 after 4, 4 after 6: 44 / 10.
        QVERIFY(std::abs(p->graph(2)->data()->at(2)->value - 4.4) < 1e-12);
        // Compute saved at the latest evaluation: mean steps (32 + 38 + 44) / 30 = 3.8 of 6.
        QVERIFY(std::abs(view.computeSaved() - (1.0 - 3.8 / 6.0)) < 1e-12);
        const QString tip = view.toolTipAt(pixelOf(p->graph(0), 1500, 3.2));
        QVERIFY2(tip.contains("1 steps: 4 examples") && tip.contains("6 steps: 4 examples"), qPrintable(tip));
        // What halting costs: the largest drop from running every step, at depth 3.
        QVERIFY(std::abs(view.haltingCost() - 0.2) < 1e-12);
        auto* title = qobject_cast<QCPTextElement*>(p->plotLayout()->element(0, 0));
        QVERIFY(title);
        QVERIFY2(title->text().contains("halting costs at most 0.200 accuracy (depth 3)"),
                 qPrintable(title->text()));
        QVERIFY2(title->text().startsWith("Steps used (gates < 0.10): compute saved 37% of 6 steps"),
                 qPrintable(title->text()));
        const QString costTip = view.toolTipAt(pixelOf(p->graph(1), 1500, 3.8));
        QVERIFY2(costTip.contains("accuracy 0.900 halting, 0.950 running every step"), qPrintable(costTip));
        QVERIFY(shoot(&view, "steps_used"));

        // A run saved without the every-step accuracy shows no cost.
        ModelRecord older = routedModel(2);
        for (EvalRecord& e : older.history)
            e.everyStepAccuracy.clear();
        view.setModel(0, older.config, older.history);
        QVERIFY(std::isnan(view.haltingCost()));
        QVERIFY(!qobject_cast<QCPTextElement*>(p->plotLayout()->element(0, 0))->text().contains("costs"));
        // A model that halts on the change says so.
        older.config.as<ndr::EncoderConfig>().haltOn = HaltSignal::Change;
        older.config.as<ndr::EncoderConfig>().haltThreshold = 0.2;
        view.setModel(0, older.config, older.history);
        QVERIFY(qobject_cast<QCPTextElement*>(p->plotLayout()->element(0, 0))
                    ->text()
                    .startsWith("Steps used (change < 0.20): compute saved"));
    }

    void operationAccuracyHoldsTheSplitMeans() {
        OperationAccuracyView view;
        RunConfig config = presetConfig("stub");
        config.task.trainMaxDepth = 2;
        config.task.testMinDepth = 3;
        config.task.testMaxDepth = 3;
        view.setTask(config.task);
        view.setChance(0.1);
        const ModelRecord plain = plainModel();
        view.setModel(0, plain.config, plain.history);
        QVERIFY(!view.hasData());
        ModelRecord m = plainModel();
        m.history = {operationEvaluation(0), operationEvaluation(1)};
        view.setModel(1, m.config, m.history);
        QVERIFY(view.hasData());
        QCOMPARE(view.currentModel(), 1);
        showAt(&view);
        QCustomPlot* p = plotOf(&view);
        // MAX on the test depth and the training depths; SM on the training depths only.
        QCOMPARE(p->graphCount(), 3);
        for (int k = 0; k < 2; ++k) {
            QCOMPARE(p->graph(0)->data()->at(k)->key, 1000.0 * (k + 1));
            QVERIFY(std::abs(p->graph(0)->data()->at(k)->value - (2 + k) / 8.0) < 1e-12);
            // The mean over the training depths of each depth's accuracy
            QVERIFY(std::abs(p->graph(1)->data()->at(k)->value -
                             0.5 * ((5 + k) / 10.0 + (10 + 2 * k) / 20.0)) < 1e-12);
            QVERIFY(std::abs(p->graph(2)->data()->at(k)->value - 0.5 * (0.1 + 0.2)) < 1e-12);
        }
        QVERIFY(p->graph(0)->pen().style() == Qt::SolidLine);
        QVERIFY(p->graph(1)->pen().style() == Qt::DashLine);
        // One legend entry per operation, and chance last.
        QCOMPARE(p->legend->itemCount(), 3);
        auto* chance = qobject_cast<QCPPlottableLegendItem*>(p->legend->item(2));
        QVERIFY(chance && chance->plottable()->name() == "chance 0.100");
        const QString tip = view.toolTipAt(pixelOf(p->graph(2), 2000, 0.15));
        QVERIFY2(tip.contains("SM at the root, training depths: accuracy 0.150") &&
                     tip.contains("20 examples"),
                 qPrintable(tip));
        QVERIFY(shoot(&view, "operation_accuracy"));
    }

    void dashboardShowsTheRowOnlyWithTheFigures() {
        Dashboard dashboard;
        dashboard.resize(1280, 760);
        dashboard.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dashboard));
        RunRecord run;
        run.config = presetConfig("stub");
        run.config.task.trainMaxDepth = 2;
        run.config.task.testMinDepth = 3;
        run.config.task.testMaxDepth = 3;
        run.config.models.resize(1);
        run.models = {plainModel()};
        run.config.models[0] = run.models[0].config;
        dashboard.showRecord(run);
        QVERIFY(!dashboard.headUsage().isVisible());
        QVERIFY(!dashboard.stepsUsed().isVisible());
        QCOMPARE(dashboard.views().size(), size_t(5));

        run.models.push_back(routedModel(3));
        run.config.models.push_back(run.models[1].config);
        dashboard.showRecord(run);
        QCoreApplication::processEvents();
        QVERIFY(dashboard.headUsage().isVisible());
        QVERIFY(dashboard.stepsUsed().isVisible());
        QVERIFY(dashboard.headUsage().height() > 100);
        QCOMPARE(dashboard.views().size(), size_t(7));
        QCOMPARE(dashboard.headUsage().currentModel(), 1);
        QVERIFY(!dashboard.operationAccuracy().isVisible());
        QVERIFY(shoot(&dashboard, "dashboard_routing"));

        // A task with operations adds its view to the row.
        for (EvalRecord& e : run.models[0].history)
            e = operationEvaluation(0);
        dashboard.showRecord(run);
        QCoreApplication::processEvents();
        QVERIFY(dashboard.operationAccuracy().isVisible());
        QVERIFY(dashboard.operationAccuracy().height() > 100);
        QCOMPARE(dashboard.views().size(), size_t(8));
        QCOMPARE(dashboard.views().back().first, QString("operation-accuracy"));
    }

    void exportDrawsEachModelsViewsOnce() {
        // Three models: a plain one, a routed and halting one, and one with operations at the root.
        RunRecord run;
        run.config = presetConfig("stub");
        run.config.task.trainMaxDepth = 2;
        run.config.task.testMinDepth = 3;
        run.config.task.testMaxDepth = 3;
        run.models = {plainModel(), routedModel(3), plainModel()};
        run.models[2].config.name = "Transformer ops";
        for (int k = 0; k < 2; ++k)
            run.models[2].history.push_back(operationEvaluation(k));
        std::vector<ModelConfig> configs;
        for (const auto& m : run.models)
            configs.push_back(m.config);
        run.config.models = configs;
        const std::vector<std::string> stems = checkpointStems(configs);
        auto file = [&](const char* view, int model) {
            return QString::fromLatin1(view) + "-" + QString::fromStdString(stems[size_t(model)]) + ".png";
        };

        ExportOptions options;
        options.frames = false;
        options.viewSize = {640, 400};
        options.dashboardSize = {1000, 700};
        const QStringList files = dashboardExportFiles(run, options);
        for (int m = 0; m < 3; ++m) {
            QVERIFY(files.contains(file("length-generalisation", m)));
            QCOMPARE(files.contains(file("head-usage", m)), m == 1);
            QCOMPARE(files.contains(file("steps-used", m)), m == 1);
            QCOMPARE(files.contains(file("operation-accuracy", m)), m == 2);
        }
        QVERIFY(!files.contains("head-usage.png") && !files.contains("steps-used.png"));

        QTemporaryDir dir;
        QString error;
        const QStringList written = exportDashboard(run, dir.path(), options, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(written.size(), files.size());
        for (const QString& f : files)
            QVERIFY2(QFileInfo::exists(dir.filePath(f)), qPrintable(f));
        // Each model's own figures: the routed model's head usage differs from its steps used, and the
        // operation view is the third model's.
        const QImage heads(dir.filePath(file("head-usage", 1))), steps(dir.filePath(file("steps-used", 1)));
        QVERIFY(!heads.isNull() && !steps.isNull() && heads != steps);
        QVERIFY(!QImage(dir.filePath(file("operation-accuracy", 2))).isNull());
        QVERIFY(!QFileInfo::exists(dir.filePath(file("head-usage", 0))));

        // A second export refuses while any one of those files is there, and writes nothing.
        for (const QString& f : files)
            if (f != file("steps-used", 1))
                QVERIFY(QFile::remove(dir.filePath(f)));
        const QStringList again = exportDashboard(run, dir.path(), options, &error);
        QVERIFY(again.isEmpty());
        QVERIFY2(error.contains(file("steps-used", 1)) && error.contains("already exists"),
                 qPrintable(error));
        QVERIFY(!QFileInfo::exists(dir.filePath("dashboard.png")));
    }
};

QTEST_MAIN(TestRoutingViews)
#include "test_routing_views.moc"
