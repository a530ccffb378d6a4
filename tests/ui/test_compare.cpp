// Tests of the Compare tab through its widgets: a seed sweep and a Table 1 sweep read from their
// folders (table cells, bars with the paper's markers, one curve per finished run and model), cells
// filling in as runs finish, hiding a curve from the legend, exports (files and CSV), bad sources, and
// the run dialog opening where the last one was left.
#include "core/io/sweep_plan.h"
#include "core/train/run.h"
#include "core/train/sweep.h"
#include "core/train/table_one.h"
#include "ui/compare/compare_data.h"
#include "ui/compare/compare_view.h"
#include "ui/plots/compare_bars_view.h"
#include "ui/plots/overlay_curves_view.h"

#include <QApplication>
#include <QComboBox>
#include <QFileDialog>
#include <QLineEdit>
#include <QPushButton>
#include <QSet>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>
#include <cmath>
#include <functional>
#include <memory>
#include <qcustomplot.h>

using namespace ndrui;

namespace {

ndr::RunConfig tinyRun() {
    ndr::RunConfig c = ndr::presetConfig("stub");
    c.task.evalExamplesPerDepth = 16;
    c.models = {ndr::ndrModel(16, 2, 32, 4), ndr::vanillaModel(16, 2, 32, 4)};
    c.train.batchSize = 16;
    c.train.steps = 40;
    c.train.evalInterval = 20;
    return c;
}

// tinyRun() on the task of `preset`, trained 10 steps with one evaluation.
ndr::RunConfig tinyRunOn(const char* preset) {
    ndr::RunConfig c = tinyRun();
    c.preset = preset;
    c.task = ndr::presetConfig(preset).task;
    c.task.evalExamplesPerDepth = 16;
    c.train.steps = 10;
    c.train.evalInterval = 10;
    return c;
}

// Trains entry `index` of the plan in `dir` to the end and saves it where run-one would.
void trainEntry(const std::filesystem::path& dir, const ndr::SweepPlan& plan, int index) {
    const ndr::SweepEntry& e = plan.runs[size_t(index)];
    ndr::Run run(e.config);
    for (int m = 0; m < run.modelCount(); ++m)
        run.trainer(m).run([](const ndr::TrainProgress&) {}, nullptr);
    std::filesystem::create_directories(dir / e.dir);
    run.save(dir / e.dir / "run.json");
}

// A sweep folder `dir` of `config` over `seeds` seeds, every run trained; returns its plan.
ndr::SweepPlan trainedSweep(const std::filesystem::path& dir, const ndr::RunConfig& config, int seeds) {
    std::filesystem::create_directories(dir);
    const ndr::SweepPlan plan = ndr::seedPlan(config, ndr::parseSeeds(std::to_string(seeds)));
    ndr::saveSweepPlan(dir, plan);
    for (int i = 0; i < seeds; ++i)
        trainEntry(dir, plan, i);
    return plan;
}

// Clicks `button` and hands the file dialog it opens to `use` once it shows.
void withDialog(QPushButton* button, const std::function<void(QFileDialog*)>& use) {
    bool used = false;
    QTimer poll;
    QObject::connect(&poll, &QTimer::timeout, [&] {
        for (QWidget* w : QApplication::topLevelWidgets())
            if (auto* dialog = qobject_cast<QFileDialog*>(w); dialog && dialog->isVisible() && !used) {
                used = true;
                use(dialog);
                return;
            }
    });
    poll.start(20);
    button->click();
    QVERIFY(used);
}

bool waitLoaded(CompareView& view, QSignalSpy& spy) {
    return spy.wait(20000) && !view.data().header.isEmpty();
}

} // namespace

class TestCompare : public QObject {
    Q_OBJECT
    QTemporaryDir tmp_;

private slots:
    void seedSweepFillsInAsRunsFinish() {
        const std::filesystem::path dir = tmp_.filePath("seeds").toStdString();
        std::filesystem::create_directories(dir);
        const ndr::SweepPlan plan = ndr::seedPlan(tinyRun(), {1, 2});
        ndr::saveSweepPlan(dir, plan);
        trainEntry(dir, plan, 0);

        CompareView view;
        view.resize(1280, 800);
        QSignalSpy spy(&view, &CompareView::loaded);
        QString error;
        QVERIFY2(view.addSource(QString::fromStdString(dir.string()), &error), qPrintable(error));
        QCOMPARE(view.statusText(), QString("Reading 1 source…")); // until the reading is shown
        QVERIFY(waitLoaded(view, spy));
        QCOMPARE(view.statusText(), QString("1 of 2 runs finished"));
        QCOMPARE(view.data().finished, 1);
        QCOMPARE(view.data().planned, 2);
        QVERIFY(!view.data().tableOne);
        QCOMPARE(view.table()->rowCount(), 2); // one row per model
        QCOMPARE(view.data().header, (QStringList{"source", "group", "model", "runs", "IID", "Longer"}));
        QCOMPARE(view.table()->item(0, 2)->text(), QString("NDR"));
        QCOMPARE(view.table()->item(0, 3)->text(), QString("1/2"));
        // The sweep has no groups: their column is hidden, the others shown.
        QCOMPARE(view.table()->horizontalHeaderItem(1)->text(), QString("group"));
        QVERIFY(view.table()->isColumnHidden(1));
        for (int c : {0, 2, 3, 4, 5})
            QVERIFY(!view.table()->isColumnHidden(c));
        QCOMPARE(int(view.bars()->categories().size()), 2);
        QCOMPARE(view.curves()->curveCount(), 2); // one finished run, two models

        trainEntry(dir, plan, 1);
        spy.clear();
        view.refresh();
        // Reading the same sources again keeps the figures and their status on screen.
        QCOMPARE(view.statusText(), QString("1 of 2 runs finished"));
        QVERIFY(waitLoaded(view, spy));
        QCOMPARE(view.statusText(), QString("2 of 2 runs finished"));
        QCOMPARE(view.data().finished, 2);
        QCOMPARE(view.table()->item(1, 3)->text(), QString("2/2"));
        QCOMPARE(view.curves()->curveCount(), 4);
        // The bars show the mean over the two runs, as the sweep's own summary does.
        const auto groups = ndr::summariseSweep(dir, plan);
        const auto& longer = groups[0].models[1].test;
        QCOMPARE(view.bars()->categories()[1].longer, (longer[0] + longer[1]) / 2);
        // Each run shows as a dot over its bar, named by its seed, and the table counts the runs that
        // solved the split.
        QCOMPARE(view.bars()->categories()[1].longerValues, longer);
        QCOMPARE(view.bars()->categories()[1].seeds, (std::vector<uint64_t>{1, 2}));
        const int solved = int(longer[0] >= ndr::kSolvedAccuracy) + int(longer[1] >= ndr::kSolvedAccuracy);
        QVERIFY2(view.table()->item(1, 5)->text().endsWith(QString(" %1/2").arg(solved)),
                 qPrintable(view.table()->item(1, 5)->text()));
        {
            auto* plot = view.bars()->findChild<QCustomPlot*>();
            view.show();
            QVERIFY(QTest::qWaitForWindowExposed(&view));
            plot->replot();
            QCPGraph* dots = nullptr;
            for (int i = 0; i < plot->graphCount(); ++i)
                if (plot->graph(i)->name() == "each run")
                    dots = plot->graph(i);
            QVERIFY(dots && dots->visible());
            QCOMPARE(dots->dataCount(), 4); // IID of 2 categories x 2 runs
            QCPGraph* longerDots = nullptr;
            for (int i = 0; i < plot->graphCount(); ++i)
                if (plot->graph(i) != dots && plot->graph(i)->dataCount() == 4 &&
                    plot->graph(i)->scatterStyle().shape() == QCPScatterStyle::ssDisc)
                    longerDots = plot->graph(i);
            QVERIFY(longerDots);
            const auto second = longerDots->data()->at(3); // category 1, run 2
            QCOMPARE(second->value, longer[1]);
            const QPoint at(int(plot->xAxis->coordToPixel(second->key)),
                            int(plot->yAxis->coordToPixel(second->value)));
            const QString tip = view.bars()->toolTipAt(at);
            QVERIFY2(tip.contains("Longer, seed 2"), qPrintable(tip));
            view.hide();
        }
        // The reference line is the Longer depths' majority baseline, the mean over the runs.
        const auto& baseline = groups[0].baseline.test;
        QCOMPARE(baseline.size(), size_t(2));
        QCOMPARE(view.data().longerBaseline, (baseline[0] + baseline[1]) / 2);
        for (QWidget* plotView : {static_cast<QWidget*>(view.bars()), static_cast<QWidget*>(view.curves())}) {
            auto* plot = plotView->findChild<QCustomPlot*>();
            plot->replot();
            QStringList names;
            for (int i = 0; i < plot->legend->itemCount(); ++i)
                if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(i)))
                    names << item->plottable()->name();
            QVERIFY2(names.contains(QString("majority %1").arg(view.data().longerBaseline, 0, 'f', 3)),
                     qPrintable(names.join(", ")));
        }

        // The bars are coloured by split, the curves by model: no bar has a curve's colour.
        QSet<QRgb> curveColors;
        auto* curvesPlot = view.curves()->findChild<QCustomPlot*>();
        for (int i = 0; i < curvesPlot->graphCount(); ++i)
            curveColors << curvesPlot->graph(i)->pen().color().rgb();
        QVERIFY(curveColors.size() >= 2);
        auto* barsPlot = view.bars()->findChild<QCustomPlot*>();
        int bars = 0;
        for (int i = 0; i < barsPlot->plottableCount(); ++i)
            if (auto* b = qobject_cast<QCPBars*>(barsPlot->plottable(i))) {
                ++bars;
                QVERIFY2(!curveColors.contains(b->brush().color().rgb()), qPrintable(b->name()));
            }
        QCOMPARE(bars, 2);

        // The curves show Longer accuracy, or IID when picked above the plot, each run's own figures.
        auto curveValues = [&] {
            std::vector<double> values;
            for (int i = 0; i < curvesPlot->graphCount(); ++i)
                for (auto it = curvesPlot->graph(i)->data()->begin();
                     it != curvesPlot->graph(i)->data()->end(); ++it)
                    values.push_back(it->value);
            return values;
        };
        auto runValues = [&](bool iid) {
            std::vector<double> values;
            for (const auto& c : view.data().curves)
                values.insert(values.end(), (iid ? c.iid : c.test).begin(), (iid ? c.iid : c.test).end());
            return values;
        };
        QVERIFY(runValues(false) != runValues(true));
        QCOMPARE(curveValues(), runValues(false));
        auto* series = view.curves()->findChild<QComboBox*>("curveSeries");
        QVERIFY(series);
        series->setCurrentIndex(1);
        QCOMPARE(curveValues(), runValues(true));
        QCOMPARE(curvesPlot->yAxis->label(), QString("IID accuracy (training depths)"));
        series->setCurrentIndex(0);
        QCOMPARE(curveValues(), runValues(false));

        view.curves()->setCurveVisible(1, false);
        QVERIFY(!view.curves()->curveVisible(1));
        QVERIFY(view.curves()->curveVisible(0));

        // Exports: the files, the CSV as the table shows it, and no silent replacing.
        const QString out = tmp_.filePath("export");
        QStringList written = view.exportTo(out, false, &error);
        QVERIFY2(written.size() == 3, qPrintable(error));
        QFile csv(out + "/compare.csv");
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QStringList lines = QString::fromUtf8(csv.readAll()).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 3);
        QCOMPARE(lines[0], QString("source,group,model,runs,IID,Longer"));
        QVERIFY(lines[2].contains("Transformer") && lines[2].contains(view.table()->item(1, 5)->text()));
        QVERIFY(!QImage(out + "/compare-bars.png").isNull());
        written = view.exportTo(out, false, &error);
        QVERIFY(written.isEmpty() && error.contains("compare.csv"));
        if (const QString shots = qEnvironmentVariable("NDR_COMPARE_SHOTS"); !shots.isEmpty())
            view.grab().save(shots + "/compare-seeds.png");
    }

    // A ListOps sweep: a column of Longer and one of IID per operation at the root, each cell the mean
    // over the finished runs of the sweep summary's figure.
    void operationColumns() {
        const std::filesystem::path dir = tmp_.filePath("listops").toStdString();
        ndr::RunConfig c = tinyRunOn("listops");
        c.task.operations = {"MAX", "SM"};
        c.task.trainMinDepth = 2;
        c.task.trainMaxDepth = 3;
        c.task.validMinDepth = c.task.validMaxDepth = 4;
        c.task.testMinDepth = c.task.testMaxDepth = 5;
        const ndr::SweepPlan plan = trainedSweep(dir, c, 2);
        const CompareData data = loadCompareData({{CompareSource::Kind::Sweep, dir}});
        QVERIFY2(data.problems.isEmpty(), qPrintable(data.problems.join("; ")));
        QCOMPARE(data.header.mid(6), (QStringList{"Longer MAX", "Longer SM", "IID MAX", "IID SM"}));
        const auto groups = ndr::summariseSweep(dir, plan);
        for (size_t m = 0; m < 2; ++m) {
            const auto& model = groups[0].models[m];
            for (const auto& [column, runs] :
                 {std::pair{7, model.operationTest[1]}, {9, model.operationIid[1]}}) {
                QCOMPARE(runs.size(), size_t(2));
                const double mean = (runs[0] + runs[1]) / 2;
                QVERIFY2(data.rows[m][column].startsWith(QString::number(mean, 'f', 3) + " ± "),
                         qPrintable(data.rows[m][column]));
            }
        }
        // The training depths' figures differ from the test depths' somewhere, or the columns could be
        // swapped.
        QVERIFY(data.rows[0].mid(6, 2) != data.rows[0].mid(8, 2) ||
                data.rows[1].mid(6, 2) != data.rows[1].mid(8, 2));
    }

    // Multi-digit arithmetic: a column per problem size, named as the task names it, with the mean
    // over the runs of each size's accuracy.
    void sizeColumns() {
        const std::filesystem::path dir = tmp_.filePath("multidigit").toStdString();
        ndr::RunConfig c = tinyRunOn("thoughtnet");
        c.task.trainMinDepth = 1;
        c.task.trainMaxDepth = 2;
        c.task.validMinDepth = 1;
        c.task.validMaxDepth = 0;
        c.task.testMinDepth = c.task.testMaxDepth = 4;
        const ndr::SweepPlan plan = trainedSweep(dir, c, 2);
        const CompareData data = loadCompareData({{CompareSource::Kind::Sweep, dir}});
        QVERIFY2(data.problems.isEmpty(), qPrintable(data.problems.join("; ")));
        const auto groups = ndr::summariseSweep(dir, plan);
        const auto& depths = groups[0].models[0].depths;
        QStringList names;
        for (int d : depths)
            names << QString::fromStdString(ndr::depthLabel(c.task, d));
        QVERIFY2(names.startsWith("1+1") && names.contains(QString::fromUtf8("1×1")),
                 qPrintable(names.join(" ")));
        QCOMPARE(data.header.mid(6), names);
        for (size_t m = 0; m < 2; ++m)
            for (size_t d = 0; d < depths.size(); ++d) {
                const auto& runs = groups[0].models[m].perDepth[d];
                QCOMPARE(runs.size(), size_t(2));
                const double mean = (runs[0] + runs[1]) / 2;
                QVERIFY2(data.rows[m][6 + int(d)].startsWith(QString::number(mean, 'f', 3) + " ± "),
                         qPrintable(data.rows[m][6 + int(d)]));
            }
    }

    // The reference line: the majority baseline of the Longer depths where the runs share a task,
    // chance where they share only the number of answers, and none where even that differs.
    void referenceLineOfMixedTasks() {
        const std::filesystem::path dir = tmp_.filePath("mixed").toStdString();
        ndr::RunConfig four = tinyRun(), eight = tinyRun(), otherDepths = tinyRun();
        four.train.steps = eight.train.steps = otherDepths.train.steps = 20;
        eight.task.symbols = 8;
        otherDepths.task.testMaxDepth = 6;
        std::vector<CompareSource> sources;
        for (const auto& [name, config] :
             {std::pair{"four", four}, {"eight", eight}, {"other", otherDepths}}) {
            ndr::Run run(config);
            for (int m = 0; m < run.modelCount(); ++m)
                run.trainer(m).run([](const ndr::TrainProgress&) {}, nullptr);
            std::filesystem::create_directories(dir / name);
            run.save(dir / name / "run.json");
            sources.push_back({CompareSource::Kind::Run, dir / name / "run.json"});
        }
        const CompareData same = loadCompareData({sources[0], sources[0]});
        QVERIFY(same.longerBaseline > 0);
        const CompareData depths = loadCompareData({sources[0], sources[2]});
        QVERIFY(std::isnan(depths.longerBaseline));
        QCOMPARE(depths.chance, 0.25);
        const CompareData answers = loadCompareData({sources[0], sources[1]});
        QVERIFY(std::isnan(answers.longerBaseline));
        QCOMPARE(answers.chance, 0.0);
    }

    // A model that halts: one column of the steps run on the test depths, its runs' mean of the
    // summary's per-depth figures; "-" for the model that does not halt.
    void haltingColumn() {
        const std::filesystem::path dir = tmp_.filePath("halting").toStdString();
        ndr::RunConfig c = tinyRun();
        c.models[0].as<ndr::EncoderConfig>().haltThreshold = 0.5;
        c.train.steps = 20;
        const ndr::SweepPlan plan = trainedSweep(dir, c, 2);
        const CompareData data = loadCompareData({{CompareSource::Kind::Sweep, dir}});
        QVERIFY2(data.problems.isEmpty(), qPrintable(data.problems.join("; ")));
        QCOMPARE(data.header.last(), QString("Steps run (Longer)"));
        QCOMPARE(data.rows[1].last(), QString("-"));
        const auto groups = ndr::summariseSweep(dir, plan);
        const ndr::ModelSummary& ms = groups[0].models[0];
        const std::vector<int> test = ndr::depthsOf(c.task, ndr::Split::Test);
        double sum = 0;
        for (size_t r = 0; r < 2; ++r) {
            double runSum = 0;
            for (size_t d = 0; d < ms.depths.size(); ++d)
                if (std::count(test.begin(), test.end(), ms.depths[d]))
                    runSum += ms.haltSteps[d][r];
            sum += runSum / double(test.size());
        }
        QVERIFY2(data.rows[0].last().startsWith(QString::number(sum / 2, 'f', 2) + " ± "),
                 qPrintable(data.rows[0].last()));
    }

    // Slanted labels run left from their bars, and QCustomPlot leaves out one that would cross the
    // plot's left edge: long names of single runs widen the margin, so every label is drawn.
    void longLabelsStayInsideThePlot() {
        auto drawn = [](const CompareBarsView& view) {
            const QCustomPlot* p = view.findChild<QCustomPlot*>();
            const QCPAxis* x = p->xAxis;
            const QFontMetrics fm(x->tickLabelFont());
            const double angle = std::abs(x->tickLabelRotation()) * M_PI / 180;
            int count = 0;
            for (size_t i = 0; i < view.categories().size(); ++i) {
                // QCustomPlot's placement of a bottom label turned by a negative angle, and its test.
                const QRect bounds =
                    fm.boundingRect(0, 0, 0, 0, Qt::TextDontClip, view.categories()[i].label);
                const double left = x->coordToPixel(double(i)) - std::cos(angle) * bounds.width() -
                                    std::sin(angle) * bounds.height() / 2.0;
                count += left >= p->viewport().left();
            }
            return count;
        };
        auto longNames = [](int runs) {
            std::vector<CompareBarsView::Category> categories;
            for (int run = 1; run <= runs; ++run)
                for (const char* model : {"ThoughtNet", "NDR"})
                    categories.push_back({QString("thoughtnet-seed%1 · %2").arg(run).arg(model),
                                          0.7,
                                          0,
                                          0.01,
                                          0,
                                          NAN,
                                          NAN,
                                          1,
                                          {},
                                          {},
                                          {}});
            return categories;
        };
        // Each view shown at the same size, laid out and drawn.
        auto shown = [](const std::vector<CompareBarsView::Category>& categories) {
            auto view = std::make_unique<CompareBarsView>();
            view->setCategories(categories);
            view->resize(600, 420);
            view->show();
            if (QTest::qWaitForWindowExposed(view.get()))
                view->findChild<QCustomPlot*>()->replot();
            return view;
        };
        const auto view = shown(longNames(2));
        const QCPAxis* x = view->findChild<QCustomPlot*>()->xAxis;
        QCOMPARE(drawn(*view), 4);
        QCOMPARE(x->tickLabelRotation(), -25.0);
        // Bars standing closer turn their labels steeper, and every label is still drawn.
        const auto crowded = shown(longNames(4));
        const double steeper = crowded->findChild<QCustomPlot*>()->xAxis->tickLabelRotation();
        QCOMPARE(drawn(*crowded), 8);
        QVERIFY2(steeper < -25.0, qPrintable(QString::number(steeper)));
        // Short labels keep the plot's own margin.
        const auto shortNames = shown({{"NDR", 0.7, 0, 0.2, 0, NAN, NAN, 1, {}, {}, {}},
                                       {"Transformer", 0.6, 0, 0.1, 0, NAN, NAN, 1, {}, {}, {}}});
        QCOMPARE(drawn(*shortNames), 2);
        QVERIFY(x->axisRect()->margins().left() >
                shortNames->findChild<QCustomPlot*>()->axisRect()->margins().left() + 50);
    }

    void tableOneSweepShowsThePapersTable() {
        const std::filesystem::path dir = tmp_.filePath("t1").toStdString();
        std::filesystem::create_directories(dir);
        ndr::SweepPlan plan;
        plan.kind = ndr::SweepKind::Table1;
        for (const char* row : {"transformer", "ndr"})
            for (ndr::Order order : {ndr::Order::Forward, ndr::Order::Backward}) {
                ndr::SweepEntry e;
                e.group = ndr::tableOneGroup(row, order);
                e.name = e.dir = e.group + "/seed-1";
                e.config = tinyRun();
                e.config.task.order = order;
                e.config.models = {std::string(row) == "ndr" ? ndr::ndrModel(16, 2, 32, 4)
                                                             : ndr::vanillaModel(16, 2, 32, 4)};
                plan.runs.push_back(e);
            }
        ndr::saveSweepPlan(dir, plan);
        for (int i = 0; i < 3; ++i) // the last one has not finished
            trainEntry(dir, plan, i);

        CompareView view;
        view.resize(1400, 900);
        QSignalSpy spy(&view, &CompareView::loaded);
        QString error;
        QVERIFY(view.addSource(QString::fromStdString(dir.string()), &error));
        QVERIFY(waitLoaded(view, spy));
        QVERIFY(view.data().tableOne);
        QCOMPARE(view.table()->columnCount(), 6);
        QCOMPARE(view.table()->horizontalHeaderItem(3)->text(), QString("Longer forward"));
        QCOMPARE(view.table()->rowCount(), 2); // the paper's order: Transformer, then NDR
        QCOMPARE(view.table()->item(0, 0)->text(), QString("Transformer"));
        QVERIFY(view.table()->item(0, 3)->text().endsWith("(0.13)"));
        // One seed: its value alone, no "± 0.000".
        QVERIFY2(!view.table()->item(0, 3)->text().contains(QChar(0x00B1)),
                 qPrintable(view.table()->item(0, 3)->text()));
        QVERIFY(view.table()->item(1, 4)->text().startsWith("- ") ||
                view.table()->item(1, 4)->text().startsWith("-")); // NDR backward has not finished
        const auto& cats = view.bars()->categories();
        QCOMPARE(int(cats.size()), 4);
        QCOMPARE(cats[0].paperLonger, 0.13);
        QVERIFY(std::isnan(cats[3].longer)); // no finished run yet
        QCOMPARE(view.curves()->curveCount(), 3);
        if (const QString shots = qEnvironmentVariable("NDR_COMPARE_SHOTS"); !shots.isEmpty())
            view.grab().save(shots + "/compare-table1.png");
    }

    void theRunDialogOpensWhereTheLastWasLeft() {
        const QString folder = tmp_.filePath("dialog-runs");
        QDir().mkpath(folder);
        const QString file = folder + "/run.json";
        ndr::Run(tinyRun()).save(file.toStdString());
        CompareView view;
        view.show();
        auto* addRuns = view.findChild<QPushButton*>("compareAddRuns");
        QVERIFY(addRuns);
        QSignalSpy spy(&view, &CompareView::loaded);
        withDialog(addRuns, [&](QFileDialog* dialog) {
            auto* name = dialog->findChild<QLineEdit*>("fileNameEdit");
            QVERIFY(name);
            name->setText(file);
            QTest::keyClick(name, Qt::Key_Return);
        });
        QCOMPARE(int(view.sources().size()), 1);
        QVERIFY(waitLoaded(view, spy));
        QString opened;
        withDialog(addRuns, [&](QFileDialog* dialog) {
            opened = dialog->directory().absolutePath();
            dialog->reject();
        });
        QCOMPARE(opened, QDir(folder).absolutePath());
        QCOMPARE(int(view.sources().size()), 1);
    }

    void badSourcesAreNamed() {
        CompareView view;
        QString error;
        QVERIFY(!view.addSource(tmp_.path(), &error)); // a folder without sweep.json
        QVERIFY(error.contains("neither a run file"));
        QVERIFY(view.sources().empty());
        // A damaged run file is listed as a problem; the view stays usable.
        const QString bad = tmp_.filePath("bad.json");
        QFile f(bad);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"format\": \"ndr-studio-run\"");
        f.close();
        QSignalSpy spy(&view, &CompareView::loaded);
        QVERIFY(view.addSource(bad, &error));
        QVERIFY(spy.wait(20000));
        QCOMPARE(view.data().problems.size(), 1);
        QCOMPARE(view.table()->rowCount(), 0);
    }
};

QTEST_MAIN(TestCompare)
#include "test_compare.moc"
