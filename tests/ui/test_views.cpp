// The dashboard views fed with a tiny real training run: plot contents follow the data (points, bars,
// heatmap cells, gates, chance line), clicks and tooltips name the right cell, the palette recolours,
// exports have the asked size. With NDR_VIEW_SHOTS=<dir> it also saves screenshots of every view.
#include "ui/plots/attention_grid_view.h"
#include "ui/plots/depth_bars_view.h"
#include "ui/plots/figure.h"
#include "ui/plots/gate_map_view.h"
#include "ui/plots/heatmap_plot.h"
#include "ui/plots/kept_history.h"
#include "ui/plots/learning_curves_view.h"
#include "ui/plots/length_generalisation_view.h"

#include "testutil.h"
#include "ui/common/palette.h"
#include "view_fixture.h"

#include <QComboBox>
#include <QDir>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QVBoxLayout>
#include <QWheelEvent>

using namespace ndr;
using namespace ndrui;
using namespace viewtest;

class TestViews : public QObject {
    Q_OBJECT

    Run run_;
    QString shots_;

private slots:
    void initTestCase() {
        shots_ = shotsDir();
        // Longer when taking screenshots, so the curves show learning; 40 steps keep the test quick.
        run_ = shots_.isEmpty() ? train(40, 10) : train(600, 25);
        QCOMPARE(run_.histories.size(), size_t(2));
        QVERIFY(!run_.histories[0].back().probe.gates.empty());
        QVERIFY(run_.histories[1].back().probe.gates.empty());
    }

    void modelColoursAreNotSplitColours() {
        // Table 1's seven models side by side: each its own colour, none a split's (Compare draws IID and
        // Longer bars in the split colours beside the models' curves).
        QSet<QRgb> seen;
        for (int m = 0; m < 8; ++m) {
            const QRgb c = modelColor(m).rgb();
            for (const auto split : {Split::Train, Split::Valid, Split::Test})
                QVERIFY2(c != splitColor(split).rgb(), qPrintable(QString::number(m)));
            seen << c;
        }
        QCOMPARE(seen.size(), 8);
    }

    void learningCurvesFollowTheData() {
        LearningCurvesView view;
        view.setModelNames(run_.names);
        view.setReference(1.0 / run_.config.task.symbols);
        for (int m = 0; m < 2; ++m) {
            for (size_t i = 0; i < run_.losses[m].size(); ++i)
                view.appendLoss(m, run_.lossSteps[m][i], run_.losses[m][i]);
            view.setHistory(m, run_.histories[m]);
        }
        showAt(&view);
        QCustomPlot* p = plotOf(&view);
        // Per model: raw loss, smoothed loss, IID and Longer accuracy.
        QCOMPARE(p->graphCount(), 8);
        const size_t evals = run_.histories[0].size();
        for (int m = 0; m < 2; ++m) {
            QCOMPARE(size_t(p->graph(4 * m)->dataCount()), run_.losses[m].size());
            QCOMPARE(size_t(p->graph(4 * m + 2)->dataCount()), evals);
            QCOMPARE(size_t(p->graph(4 * m + 3)->dataCount()), evals);
            QCOMPARE(p->graph(4 * m + 3)->data()->at(int(evals) - 1)->value,
                     run_.histories[m].back().testAccuracy);
            QCOMPARE(p->graph(4 * m + 2)->pen().style(), Qt::SolidLine);
            QCOMPARE(p->graph(4 * m + 3)->pen().style(), Qt::DashLine);
            QCOMPARE(p->graph(4 * m + 2)->pen().color(), modelColor(m));
        }
        QCOMPARE(p->graph(0)->valueAxis()->scaleType(), QCPAxis::stLogarithmic);
        // The legend names each model once (its colour) and each split once (its line style).
        QCOMPARE(legendNames(p),
                 QStringList({run_.names[0], run_.names[1], "IID (train)", "Longer (test)", "chance 0.250"}));
        // The smoothed loss is the exponential moving average with weight 0.9 on the past.
        double ema = run_.losses[0][0];
        for (size_t i = 1; i < run_.losses[0].size(); ++i)
            ema = 0.9 * ema + 0.1 * run_.losses[0][i];
        QVERIFY(std::abs(p->graph(1)->data()->at(p->graph(1)->dataCount() - 1)->value - ema) < 1e-12);
        view.setSmoothing(false);
        QVERIFY(!p->graph(1)->visible());
        QCOMPARE(p->graph(0)->pen().color().alpha(), 255);

        QCPItemStraightLine* chance = nullptr;
        for (int i = 0; i < p->itemCount(); ++i)
            if (auto* line = qobject_cast<QCPItemStraightLine*>(p->item(i));
                line && line->point1->coords().y() == line->point2->coords().y())
                chance = line; // horizontal: the chance line (the step marker is vertical)
        QVERIFY(chance && chance->visible());
        QCOMPARE(chance->point1->coords().y(), 0.25);
        QCOMPARE(chance->point2->coords().y(), 0.25);
        // A chance that would read 0.000 (ThoughtNet's nine-digit answers) is neither drawn nor listed.
        view.setReference(1e-9);
        p->replot();
        QVERIFY(!chance->visible());
        QVERIFY(!legendNames(p).contains("chance 0.000"));
        view.setReference(0.25);
        p->replot();
        QVERIFY(legendNames(p).contains("chance 0.250"));
        // The Longer depths' majority baseline takes the line's place while there is one.
        view.setReference(0.25, 0.3);
        p->replot();
        QVERIFY(chance->visible());
        QCOMPARE(chance->point1->coords().y(), 0.3);
        QCOMPARE(legendNames(p).last(), QString("majority 0.300"));
        QVERIFY(!legendNames(p).contains("chance 0.250"));
        view.setReference(0.25, std::nan(""));
        p->replot();
        QCOMPARE(chance->point1->coords().y(), 0.25);
        QCOMPARE(legendNames(p).last(), QString("chance 0.250"));

        // The tooltip over the last test point names the model, the step and the exact value.
        p->replot();
        const QCPGraph* test = p->graph(3);
        const QCPGraphData& last = *test->data()->at(int(evals) - 1);
        const QString tip = view.toolTipAt(pixelOf(test, last.key, last.value));
        QVERIFY2(tip.startsWith("NDR, step " + QString::number(last.key)), qPrintable(tip));
        QVERIFY2(tip.contains(QString::number(last.value, 'f', 3)), qPrintable(tip));

        view.setSmoothing(true);
        QVERIFY(shoot(&view, "learning_curves"));

        // Streaming draws once per event-loop turn, not once per point.
        // What was asked before, and the few layouts after the first ones that set the plot's minimum
        // height (PlotView::setLeastRectHeight).
        for (int i = 0; i < 5; ++i)
            QCoreApplication::processEvents();
        int replots = 0;
        connect(p, &QCustomPlot::afterReplot, this, [&replots] { ++replots; });
        for (int i = 0; i < 500; ++i)
            view.appendLoss(1, 700 + i, 1.0);
        QCOMPARE(replots, 0);
        QCoreApplication::processEvents();
        QCOMPARE(replots, 1);
        disconnect(p, &QCustomPlot::afterReplot, this, nullptr);
        // Streaming one more point adds one point, and clear() empties the plot.
        view.appendLoss(0, 1000, 0.5);
        QCOMPARE(size_t(p->graph(0)->dataCount()), run_.losses[0].size() + 1);
        view.clear();
        QCOMPARE(p->graphCount(), 0);
    }

    void depthBarsShowTheLastEvaluation() {
        DepthBarsView view;
        const std::vector<int> depths = run_.task->allDepths();
        view.setDepths(depths, run_.splits);
        view.setChance(0.25);
        for (int m = 0; m < 2; ++m)
            view.setEvaluation(m, run_.names[m], run_.histories[m].back());
        showAt(&view);
        QCustomPlot* p = plotOf(&view);
        const auto bars = plottables<QCPBars>(p);
        QCOMPARE(bars.size(), size_t(2));
        QVERIFY(bars[0]->barsGroup() && bars[0]->barsGroup() == bars[1]->barsGroup());
        for (int m = 0; m < 2; ++m) {
            const EvalRecord& r = run_.histories[m].back();
            QCOMPARE(bars[m]->dataCount(), int(depths.size()));
            for (size_t i = 0; i < depths.size(); ++i) {
                QCOMPARE(r.depths[i], depths[i]);
                QCOMPARE(bars[m]->data()->at(int(i))->value, r.accuracy[i]);
            }
        }
        // Stub: train depths 1-4 and test depths 5-7 make two shaded bands.
        std::vector<QCPItemRect*> shades;
        for (int i = 0; i < p->itemCount(); ++i)
            if (auto* r = qobject_cast<QCPItemRect*>(p->item(i)))
                shades.push_back(r);
        QCOMPARE(shades.size(), size_t(2));
        QCOMPARE(shades[0]->brush().color(), splitShade(Split::Train, view.palette()));
        QCOMPARE(shades[1]->brush().color(), splitShade(Split::Test, view.palette()));
        QCOMPARE(shades[1]->topLeft->coords().x(), 3.5);

        // Hover the vanilla bar of the deepest depth.
        const int last = int(depths.size()) - 1;
        const double value = bars[1]->data()->at(last)->value;
        const QPointF centre = bars[1]->dataPixelPosition(last);
        const QPoint inside(int(centre.x()), int(std::lround(p->yAxis->coordToPixel(value / 2))));
        const QString tip = view.toolTipAt(inside);
        // The name says which step the bars are of: models may be at different steps.
        QCOMPARE(tip, QString("%1 at step %2, depth %3 (test): %4")
                          .arg(run_.names[1])
                          .arg(run_.histories[1].back().step)
                          .arg(depths[last])
                          .arg(value, 0, 'f', 3));
        QVERIFY(shoot(&view, "depth_bars"));

        // The majority baseline: a mark across each depth's bars, listed in place of the chance line
        // it lies above; back to the chance line for evaluations without it.
        const auto graphs = plottables<QCPGraph>(p);
        QCOMPARE(graphs.size(), size_t(1));
        QCPGraph* marks = graphs[0];
        const EvalRecord& latest = run_.histories[0].back();
        QCOMPARE(latest.baseline.size(), depths.size());
        QVERIFY(marks->visible());
        QCOMPARE(marks->dataCount(), 3 * int(depths.size()));
        for (size_t i = 0; i < depths.size(); ++i) {
            QCOMPARE(marks->data()->at(3 * int(i))->value, latest.baseline[i]);
            QCOMPARE(marks->data()->at(3 * int(i) + 1)->value, latest.baseline[i]);
            QVERIFY(std::isnan(marks->data()->at(3 * int(i) + 2)->value));
            QVERIFY(marks->data()->at(3 * int(i))->key < double(i) - 0.3);
        }
        p->replot();
        QCOMPARE(legendNames(p), QStringList({QString("%1 at step %2").arg(run_.names[0]).arg(latest.step),
                                              QString("%1 at step %2").arg(run_.names[1]).arg(latest.step),
                                              "most common answer"}));
        const QPoint onMark(int(std::lround(p->xAxis->coordToPixel(0.3))),
                            int(std::lround(p->yAxis->coordToPixel(latest.baseline[0]))));
        QCOMPARE(view.toolTipAt(onMark), QString("Most common answer, depth %1 (train): %2, the accuracy of "
                                                 "always giving it")
                                             .arg(depths[0])
                                             .arg(latest.baseline[0], 0, 'f', 3));
        EvalRecord without = run_.histories[1].back();
        without.baseline.clear();
        view.setEvaluation(1, run_.names[1], without);
        p->replot();
        QVERIFY(!marks->visible());
        QVERIFY(legendNames(p).contains("chance 0.250"));
        QVERIFY(!legendNames(p).contains("most common answer"));
        view.setEvaluation(1, run_.names[1], run_.histories[1].back());
        p->replot();
        QVERIFY(marks->visible());
        QVERIFY(!legendNames(p).contains("chance 0.250"));

        // On a short plot the split labels still clear a full bar: the range above 1 grows to a line.
        for (const int height : {420, 200}) {
            view.resize(420, height);
            p->replot();
            for (int i = 0; i < p->itemCount(); ++i)
                if (auto* label = qobject_cast<QCPItemText*>(p->item(i)); label && label->visible()) {
                    const double bottom = label->bottom->pixelPosition().y();
                    QVERIFY2(bottom <= p->yAxis->coordToPixel(1.0) + 0.5,
                             qPrintable(QString("height %1: label bottom %2, y=1 at %3")
                                            .arg(height)
                                            .arg(bottom)
                                            .arg(p->yAxis->coordToPixel(1.0))));
                }
        }
    }

    void depthViewsNameProblemSizes() {
        // Depths known by name (multi-digit arithmetic's problem sizes): the title, the axis and the
        // bands say sizes; numbered depths keep saying depths.
        const std::vector<Split> splits{Split::Train, Split::Train, Split::Test};
        auto check = [&](const QString& meaning, const QStringList& names, const std::vector<int>& shown,
                         const QString& title, const QString& axis, const QStringList& bands) {
            DepthBarsView view;
            view.setDepthMeaning(meaning, names, meaning == "problem size");
            view.setDepths(shown, splits);
            showAt(&view);
            QCustomPlot* p = plotOf(&view);
            p->replot();
            QCOMPARE(p->findChild<QCPTextElement*>("title")->text(), title);
            QCOMPARE(p->xAxis->label(), axis);
            QStringList labels;
            for (int i = 0; i < p->itemCount(); ++i)
                if (auto* label = qobject_cast<QCPItemText*>(p->item(i)); label && label->visible())
                    labels << label->text();
            QCOMPARE(labels, bands);
        };
        check("problem size", {"1+1", "2+2", "4+4"}, {1, 2, 7}, "Accuracy per problem size", "problem size",
              {"train sizes", "test sizes"});
        check("dependency depth", {"2", "3", "8"}, {2, 3, 8}, "Accuracy per depth",
              "depth (dependency depth)", {"train depths", "test depths"});
        // The accuracy of each depth over training names them the same way.
        LengthGeneralisationView sizes;
        sizes.setDepths({1, 2, 7}, splits, {"1+1", "2+2", "4+4"}, true);
        QCOMPARE(plotOf(&sizes)->findChild<QCPTextElement*>("title")->text(),
                 QString("Accuracy per size over training"));
        LengthGeneralisationView depths;
        depths.setDepths({2, 3, 8}, splits, {"2", "3", "8"});
        QCOMPARE(plotOf(&depths)->findChild<QCPTextElement*>("title")->text(),
                 QString("Accuracy per depth over training"));
    }

    void lengthGeneralisationHasACurvePerDepth() {
        LengthGeneralisationView view;
        const std::vector<int> depths = run_.task->allDepths();
        view.setDepths(depths, run_.splits);
        view.setReference(0.25);
        for (int m = 0; m < 2; ++m)
            view.setHistory(m, run_.names[m], run_.histories[m]);
        showAt(&view);
        QCustomPlot* p = plotOf(&view);
        QVERIFY(legendNames(p).contains("chance 0.250"));
        // The Longer depths' majority baseline takes the chance line's place, as in the learning curves.
        view.setReference(0.25, 0.3);
        p->replot();
        QVERIFY(legendNames(p).contains("majority 0.300"));
        QVERIFY(!legendNames(p).contains("chance 0.250"));
        QCOMPARE(view.currentModel(), 0);
        QCOMPARE(p->graphCount(), int(depths.size()));
        for (size_t i = 0; i < depths.size(); ++i) {
            QCOMPARE(size_t(p->graph(int(i))->dataCount()), run_.histories[0].size());
            QCOMPARE(p->graph(int(i))->pen().style(),
                     run_.splits[i] == Split::Test ? Qt::DashLine : Qt::SolidLine);
        }
        QCOMPARE(p->graph(6)->data()->at(0)->value, run_.histories[0][0].accuracy[6]);
        view.setCurrentModel(1);
        QCOMPARE(p->graphCount(), int(depths.size()));
        QCOMPARE(p->graph(6)->data()->at(0)->value, run_.histories[1][0].accuracy[6]);
        view.setCurrentModel(0);
        QVERIFY(shoot(&view, "length_generalisation"));
    }

    // The history views keep the evaluations they draw and, at a live redraw, append only the new ones;
    // a shorter history (a frame of the past) cuts them, another run's replaces them.
    void historyViewsAppendWhatIsNew() {
        const std::vector<EvalRecord>& full = run_.histories[0];
        QVERIFY(full.size() >= 4);
        std::vector<EvalRecord> withProbes = full;
        for (EvalRecord& e : withProbes)
            e.probe.tokens = {1, 2};
        const std::span<const EvalRecord> all(withProbes);
        std::vector<EvalRecord> kept;
        keepHistory(kept, all.first(2));
        QCOMPARE(kept.size(), size_t(2));
        kept.reserve(full.size());
        const EvalRecord* first = &kept[0];
        keepHistory(kept, all);
        QCOMPARE(kept.size(), full.size());
        QVERIFY(&kept[0] == first); // appended: the kept ones were not copied again
        for (size_t i = 0; i < kept.size(); ++i) {
            QCOMPARE(kept[i].step, full[i].step);
            QCOMPARE(kept[i].accuracy, full[i].accuracy);
            QVERIFY(kept[i].probe.tokens.empty());
        }
        keepHistory(kept, all.first(3));
        QCOMPARE(kept.size(), size_t(3));
        std::vector<EvalRecord> other = full;
        other[0].accuracy[0] += 0.5;
        keepHistory(kept, other);
        QCOMPARE(kept.size(), other.size());
        QCOMPARE(kept[0].accuracy[0], other[0].accuracy[0]);
        keepHistory(kept, {});
        QVERIFY(kept.empty());

        // The loss curve: a longer log that starts as the one shown adds its new points, another
        // replaces the series.
        LearningCurvesView curves;
        curves.setModelNames(run_.names);
        const std::vector<int>& steps = run_.lossSteps[0];
        const std::vector<double>& loss = run_.losses[0];
        QVERIFY(steps.size() >= 4);
        curves.setLoss(0, std::span(steps).first(2), std::span(loss).first(2));
        QCustomPlot* p = plotOf(&curves);
        QCOMPARE(p->graph(0)->dataCount(), 2);
        curves.setLoss(0, steps, loss);
        QCOMPARE(size_t(p->graph(0)->dataCount()), loss.size());
        QCOMPARE(p->graph(0)->data()->at(int(loss.size()) - 1)->value, loss.back());
        std::vector<double> otherLoss = loss;
        otherLoss[1] += 1;
        curves.setLoss(0, std::span(steps).first(3), std::span(otherLoss).first(3));
        QCOMPARE(p->graph(0)->dataCount(), 3);
        QCOMPARE(p->graph(0)->data()->at(1)->value, otherLoss[1]);
    }

    void attentionGridShowsTheTrace() {
        AttentionGridView view;
        const std::vector<Trace> traces = run_.traces();
        view.setTraces(traces, run_.names);
        showAt(&view);
        QCustomPlot* p = plotOf(&view);
        auto maps = plottables<QCPColorMap>(p);
        QCOMPARE(int(maps.size()), traces[0].steps + traces[1].steps);
        // Head mean first; the first maps are NDR's steps in order.
        const Trace& ndr = traces[0];
        const int T = ndr.positions;
        for (int s = 0; s < ndr.steps; ++s) {
            QCOMPARE(maps[s]->data()->keySize(), T);
            QVERIFY(!maps[s]->interpolate());
            for (int i = 0; i < T; ++i)
                for (int j = 0; j < T; ++j) {
                    double mean = 0;
                    for (int h = 0; h < ndr.heads; ++h)
                        mean += ndr.att(s, h, i, j);
                    mean /= ndr.heads;
                    QVERIFY(std::abs(maps[s]->data()->cell(j, i) - mean) < 1e-6);
                }
        }
        view.setHead(1);
        maps = plottables<QCPColorMap>(p);
        for (int i = 0; i < T; ++i)
            for (int j = 0; j < T; ++j)
                QCOMPARE(maps[2]->data()->cell(j, i), double(ndr.att(2, 1, i, j)));

        // Click NDR step 3, target 4, source 1.
        p->replot();
        QSignalSpy clicked(&view, &AttentionGridView::cellClicked);
        const QPoint at = pixelOf(maps[2], 1, 4);
        QTest::mouseClick(p, Qt::LeftButton, {}, at);
        QCOMPARE(clicked.count(), 1);
        const QList<QVariant> args = clicked.takeFirst();
        QCOMPARE(args[0].toInt(), 0);
        QCOMPARE(args[1].toInt(), 3);
        QCOMPARE(args[2].toInt(), 1);
        QCOMPARE(args[3].toInt(), 4);
        QCOMPARE(args[4].toInt(), 1);
        QCOMPARE(args[5].toDouble(), double(ndr.att(2, 1, 4, 1)));
        QVERIFY(view.toolTipAt(at).startsWith("NDR, step 3, head 2"));
        view.setHead(-1);
        QVERIFY(shoot(&view, "attention_grid"));
        // The next evaluation of the same probe refills the same maps (a zoom survives it).
        view.setTraces(traces, run_.names);
        QVERIFY(plottables<QCPColorMap>(p) == maps);

        // A model without a trace is left out; 14 steps wrap into rows and keep square cells.
        view.setTraces({longTrace(14, 4, true), Trace{}}, {"NDR", "Transformer"});
        QCoreApplication::processEvents();
        p->replot();
        maps = plottables<QCPColorMap>(p);
        QCOMPARE(int(maps.size()), 14);
        QVERIFY(maps[0]->keyAxis()->axisRect()->top() < maps[13]->keyAxis()->axisRect()->top());
        const double cellW =
            std::abs(maps[0]->keyAxis()->coordToPixel(1) - maps[0]->keyAxis()->coordToPixel(0));
        const double cellH =
            std::abs(maps[0]->valueAxis()->coordToPixel(1) - maps[0]->valueAxis()->coordToPixel(0));
        QVERIFY2(std::abs(cellW - cellH) < 1.0, qPrintable(QString("cell %1 x %2").arg(cellW).arg(cellH)));
        QVERIFY2(cellW >= 8, qPrintable(QString("cells of %1 px").arg(cellW)));
        view.setTraces({longTrace(14, 4, true), longTrace(14, 4, false)}, {"NDR", "Transformer"});
        QVERIFY(shoot(&view, "attention_grid_14_steps"));
    }

    void heatmapPlotShowsOneStep() {
        // The inspector's piece: one step of one head, square cells, the click names the cell.
        HeatmapPlot view;
        const Trace& t = run_.histories[0].back().probe;
        const int T = t.positions, step = 2, head = 1;
        std::vector<float> values(size_t(T) * T);
        for (int i = 0; i < T; ++i)
            for (int j = 0; j < T; ++j)
                values[size_t(i) * T + j] = t.att(step, head, i, j);
        QStringList tokens;
        for (const std::string& name : t.tokenNames)
            tokens << QString::fromStdString(name);
        view.setNames("target", "source", "attention weight");
        view.setTitle("NDR, step 3, head 2");
        view.setMatrix(T, T, values, tokens, tokens);
        showAt(&view, QSize(600, 500));
        QCustomPlot* p = plotOf(&view);
        const auto maps = plottables<QCPColorMap>(p);
        QCOMPARE(maps.size(), size_t(1));
        for (int i = 0; i < T; ++i)
            for (int j = 0; j < T; ++j)
                QCOMPARE(maps[0]->data()->cell(j, i), double(t.att(step, head, i, j)));
        const QCPAxisRect* rect = maps[0]->keyAxis()->axisRect();
        QVERIFY2(std::abs(rect->width() - rect->height()) <= T,
                 qPrintable(QString("%1 x %2").arg(rect->width()).arg(rect->height())));
        QSignalSpy clicked(&view, &HeatmapPlot::cellClicked);
        const QPoint at = pixelOf(maps[0], 0, T - 1); // source 0 ([B]), target [E]
        QTest::mouseClick(p, Qt::LeftButton, {}, at);
        QCOMPARE(clicked.count(), 1);
        QCOMPARE(clicked[0][0].toInt(), T - 1);
        QCOMPARE(clicked[0][1].toInt(), 0);
        QCOMPARE(view.toolTipAt(at), QString("target [E] (%1), source [B] (0): attention weight %2")
                                         .arg(T - 1)
                                         .arg(t.att(step, head, T - 1, 0), 0, 'f', 3));
        QVERIFY(shoot(&view, "heatmap_plot"));

        // Many tokens in a small map: every n-th label on both axes, so the labels do not run together.
        const int many = 40;
        QStringList names;
        for (int i = 0; i < many; ++i)
            names << QString("t%1").arg(i);
        view.setMatrix(many, many, std::vector<float>(size_t(many) * many, 0.5f), names, names);
        view.resize(300, 300);
        p->replot();
        const QCPColorMap* map = plottables<QCPColorMap>(p).at(0);
        for (QCPAxis* axis : {map->keyAxis(), map->valueAxis()}) {
            auto* ticker = dynamic_cast<QCPAxisTickerText*>(axis->ticker().data());
            QVERIFY(ticker);
            const int line = QFontMetrics(axis->tickLabelFont()).height();
            const int pixels = axis->orientation() == Qt::Horizontal ? axis->axisRect()->width()
                                                                     : axis->axisRect()->height();
            const int shown = int(ticker->ticks().size());
            QVERIFY2(shown < many && shown * line <= pixels + line,
                     qPrintable(QString("%1 labels of %2 px in %3 px").arg(shown).arg(line).arg(pixels)));
        }
    }

    // A title longer than the plot is elided at its end (never clipped at both), whole in the tooltip;
    // inside a scrolling page the wheel scrolls the page and Ctrl+wheel zooms the plot.
    void heatmapTitleFitsAndTheWheelScrollsThePage() {
        QScrollArea area;
        auto* page = new QWidget;
        auto* layout = new QVBoxLayout(page);
        auto* view = new HeatmapPlot;
        view->setMinimumHeight(300);
        layout->addWidget(view);
        layout->addSpacing(1200); // a page taller than the area: there is something to scroll
        area.setWidget(page);
        area.setWidgetResizable(true);
        area.resize(260, 400);
        area.show();
        QVERIFY(QTest::qWaitForWindowExposed(&area));
        const QString title = "attention at step 10, mean of 4 heads, a title longer than the plot is wide";
        view->setTitle(title);
        view->setMatrix(2, 2, {0.1f, 0.2f, 0.3f, 0.4f}, {"a", "b"}, {"a", "b"});
        QApplication::processEvents();
        QCustomPlot* p = plotOf(view);
        const QString shown = view->shownTitle();
        QVERIFY2(shown.endsWith(QChar(0x2026)) && title.startsWith(shown.chopped(1)), qPrintable(shown));
        QFont bold = p->font();
        bold.setBold(true);
        QVERIFY(QFontMetrics(bold).horizontalAdvance(shown) <= p->width());
        QCOMPARE(p->toolTip(), title);
        // Centred on the whole plot, not on the map's column beside the colour scale.
        auto* titleRow = qobject_cast<QCPTextElement*>(p->plotLayout()->element(0, 0));
        QVERIFY(titleRow);
        QCOMPARE(titleRow->outerRect().width(), p->width());

        const QCPRange before = p->axisRect()->axis(QCPAxis::atBottom)->range();
        const QPointF at = p->rect().center();
        QWheelEvent down(at, p->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                         Qt::NoScrollPhase, false);
        QApplication::sendEvent(p, &down);
        QVERIFY2(area.verticalScrollBar()->value() > 0, "the wheel did not scroll the page");
        QCOMPARE(p->axisRect()->axis(QCPAxis::atBottom)->range(), before);
        QWheelEvent zoom(at, p->mapToGlobal(at), QPoint(), QPoint(0, 120), Qt::NoButton, Qt::ControlModifier,
                         Qt::NoScrollPhase, false);
        const int scrolled = area.verticalScrollBar()->value();
        QApplication::sendEvent(p, &zoom);
        QCOMPARE(area.verticalScrollBar()->value(), scrolled);
        QVERIFY(p->axisRect()->axis(QCPAxis::atBottom)->range() != before);
    }

    void gateMapShowsGatesOrANote() {
        GateMapView view;
        const std::vector<Trace> traces = run_.traces();
        view.setTraces(traces, run_.names);
        showAt(&view);
        QCustomPlot* p = plotOf(&view);
        const auto maps = plottables<QCPColorMap>(p);
        QCOMPARE(maps.size(), size_t(1)); // the vanilla Transformer has no gates
        const Trace& ndr = traces[0];
        QCOMPARE(maps[0]->data()->keySize(), ndr.positions);
        QCOMPARE(maps[0]->data()->valueSize(), ndr.steps);
        for (int s = 0; s < ndr.steps; ++s)
            for (int i = 0; i < ndr.positions; ++i)
                QCOMPARE(maps[0]->data()->cell(i, s), double(ndr.gate(s, i)));
        bool note = false;
        for (QCPLayoutElement* e : p->plotLayout()->elements(true))
            if (auto* text = qobject_cast<QCPTextElement*>(e))
                note |= text->text().contains(run_.names[1] + " has no copy gates");
        QVERIFY(note);

        p->replot();
        const QPoint at = pixelOf(maps[0], 2, 1); // position 2, step 2
        QCOMPARE(view.toolTipAt(at), QString("NDR, step 2, token %1 (position 2): gate %2")
                                         .arg(QString::fromStdString(ndr.tokenNames[2]))
                                         .arg(ndr.gate(1, 2), 0, 'f', 3));
        QSignalSpy clicked(&view, &GateMapView::cellClicked);
        QTest::mouseClick(p, Qt::LeftButton, {}, at);
        QCOMPARE(clicked.count(), 1);
        QCOMPARE(clicked[0][1].toInt(), 2);
        QCOMPARE(clicked[0][2].toInt(), 2);
        QVERIFY(shoot(&view, "gate_map"));

        // Switched to the change per step, every model that updates columns has a map, the
        // Transformer too, and the scale, tooltips and clicks speak of the change.
        auto* quantity = view.findChild<QComboBox*>("gateMap.quantity");
        QVERIFY(quantity);
        quantity->setCurrentIndex(quantity->findData(int(GateMapView::Quantity::Change)));
        QCOMPARE(view.quantity(), GateMapView::Quantity::Change);
        QCoreApplication::processEvents();
        const auto changes = plottables<QCPColorMap>(p);
        QCOMPARE(changes.size(), size_t(2));
        for (int m = 0; m < 2; ++m) {
            const Trace& t = traces[size_t(m)];
            QCOMPARE(t.change.size(), size_t(t.steps) * t.positions);
            for (int s = 0; s < t.steps; ++s)
                for (int i = 0; i < t.positions; ++i) {
                    QCOMPARE(changes[size_t(m)]->data()->cell(i, s), double(t.changeAt(s, i)));
                    QCOMPARE(view.change(m, s + 1, i), double(t.changeAt(s, i)));
                }
        }
        bool changeScale = false;
        for (QCPLayoutElement* e : p->plotLayout()->elements(true))
            if (auto* scale = qobject_cast<QCPColorScale*>(e))
                changeScale |= scale->label().startsWith("change");
        QVERIFY(changeScale);
        p->replot();
        const QPoint c = pixelOf(changes[1], 3, 0); // the Transformer, position 3, step 1
        QCOMPARE(view.toolTipAt(c),
                 QString("%1, step 1, token %2 (position 3): change %3 of the state's size")
                     .arg(run_.names[1])
                     .arg(QString::fromStdString(traces[1].tokenNames[3]))
                     .arg(traces[1].changeAt(0, 3), 0, 'f', 3));
        QTest::mouseClick(p, Qt::LeftButton, {}, c);
        QCOMPARE(clicked.count(), 2);
        QCOMPARE(clicked[1][0].toInt(), 1);
        QCOMPARE(clicked[1][3].toDouble(), double(traces[1].changeAt(0, 3)));
        QVERIFY(shoot(&view, "change_map"));
        // A trace saved without the change gets a note in place of its map.
        std::vector<Trace> old = traces;
        old[1].change.clear();
        view.setTraces(old, run_.names);
        QCoreApplication::processEvents();
        QCOMPARE(plottables<QCPColorMap>(p).size(), size_t(1));
        bool oldNote = false;
        for (QCPLayoutElement* e : p->plotLayout()->elements(true))
            if (auto* text = qobject_cast<QCPTextElement*>(e))
                oldNote |= text->text().contains(run_.names[1] + ": no change recorded");
        QVERIFY(oldNote);
        view.setQuantity(GateMapView::Quantity::Gates);
        QCOMPARE(quantity->currentData().toInt(), int(GateMapView::Quantity::Gates));
        // Several models without gates share one note, which names each.
        view.setTraces({traces[0], traces[1], traces[1], traces[1]}, {"NDR", "A", "B", "C"});
        QCoreApplication::processEvents();
        QStringList notes;
        for (QCPLayoutElement* e : p->plotLayout()->elements(true))
            if (auto* text = qobject_cast<QCPTextElement*>(e))
                notes << text->text();
        QCOMPARE(notes, QStringList{"A, B and C\nhave no copy gates (residual connections)."});
        view.setTraces({longTrace(14, 4, true), longTrace(14, 4, false)}, {"NDR", "Transformer"});
        QVERIFY(shoot(&view, "gate_map_14_steps"));

        // ThoughtNet's strip is the weight of its learned operators: the scale and the tooltip say so.
        Trace thought = longTrace(6, 2, true);
        thought.operators = 5;
        thought.gateMeaning = GateMeaning::OperatorWeight;
        view.setTraces({longTrace(6, 2, true), thought}, {"NDR", "ThoughtNet"});
        QCoreApplication::processEvents();
        QStringList labels;
        for (QCPLayoutElement* e : p->plotLayout()->elements(true)) {
            if (auto* rect = qobject_cast<QCPAxisRect*>(e))
                labels << rect->axis(QCPAxis::atTop)->label();
            if (auto* scale = qobject_cast<QCPColorScale*>(e))
                labels << scale->label();
        }
        QVERIFY2(labels.contains("NDR") && labels.contains("ThoughtNet"), qPrintable(labels.join(" | ")));
        QVERIFY2(labels.contains("gate / operator weight"), qPrintable(labels.join(" | ")));
        p->replot();
        const auto both = plottables<QCPColorMap>(p);
        QCOMPARE(int(both.size()), 2);
        QVERIFY(view.toolTipAt(pixelOf(both[1], 1, 1)).contains("learned operators"));
        QVERIFY(view.toolTipAt(pixelOf(both[0], 1, 1)).contains(": gate "));

        // ACT's strip is each position's halting weight of the step.
        Trace act = longTrace(6, 2, true);
        act.gateMeaning = GateMeaning::HaltingWeight;
        view.setTraces({longTrace(6, 2, true), act}, {"NDR", "UT + ACT"});
        QCoreApplication::processEvents();
        labels.clear();
        for (QCPLayoutElement* e : p->plotLayout()->elements(true))
            if (auto* scale = qobject_cast<QCPColorScale*>(e))
                labels << scale->label();
        QCOMPARE(labels, QStringList{"gate / halting weight"});
        p->replot();
        const auto withAct = plottables<QCPColorMap>(p);
        QCOMPARE(int(withAct.size()), 2);
        QVERIFY(view.toolTipAt(pixelOf(withAct[1], 1, 1)).contains("halting weight"));
        view.setTraces({thought}, {"ThoughtNet"});
        QCoreApplication::processEvents();
        bool alone = false;
        for (QCPLayoutElement* e : p->plotLayout()->elements(true))
            if (auto* scale = qobject_cast<QCPColorScale*>(e))
                alone |= scale->label() == "operator weight";
        QVERIFY(alone);
    }

    // Token labels under a narrow map are thinned so that the rotated labels do not overlap; a map
    // wide enough for all of them shows them all.
    void gateMapThinsTokenLabelsToItsWidth() {
        GateMapView view;
        view.setTraces({longTrace(10, 4, true), longTrace(10, 4, true)}, {"NDR", "ThoughtNet"});
        auto ticksUnder = [&view] {
            QCustomPlot* p = plotOf(&view);
            p->replot();
            std::vector<int> counts;
            for (QCPColorMap* map : plottables<QCPColorMap>(p)) {
                auto* ticker = dynamic_cast<QCPAxisTickerText*>(map->keyAxis()->ticker().data());
                counts.push_back(ticker ? int(ticker->ticks().size()) : -1);
            }
            return counts;
        };
        const int positions = longTrace(10, 4, true).positions;
        showAt(&view, QSize(900, 400));
        for (int n : ticksUnder())
            QCOMPARE(n, positions);
        showAt(&view, QSize(200, 400)); // two maps and a scale in 200 pixels
        for (int n : ticksUnder()) {
            QVERIFY2(n > 0 && n < positions, qPrintable(QString::number(n)));
        }
        QVERIFY(shoot(&view, "gate_map_narrow"));
        showAt(&view, QSize(900, 400));
        for (int n : ticksUnder())
            QCOMPARE(n, positions);
    }

    // Step labels beside a short map are thinned to one per line of text, none overlapping the next;
    // a map tall enough for all of them shows them all.
    void gateMapThinsStepLabelsToItsHeight() {
        GateMapView view;
        const int steps = 24;
        view.setTraces({longTrace(steps, 2, true)}, {"NDR"});
        auto stepTicks = [&view] {
            QCustomPlot* p = plotOf(&view);
            p->replot();
            const auto maps = plottables<QCPColorMap>(p);
            QCPAxis* y = maps.front()->valueAxis();
            auto* ticker = dynamic_cast<QCPAxisTickerText*>(y->ticker().data());
            std::vector<double> pixels;
            for (double at : ticker->ticks().keys())
                pixels.push_back(y->coordToPixel(at));
            return std::pair{pixels, QFontMetrics(y->tickLabelFont()).height()};
        };
        showAt(&view, QSize(400, 900));
        QCOMPARE(int(stepTicks().first.size()), steps);
        showAt(&view, QSize(400, 220));
        const auto [pixels, line] = stepTicks();
        QVERIFY2(pixels.size() > 1 && int(pixels.size()) < steps, qPrintable(QString::number(pixels.size())));
        for (size_t i = 1; i < pixels.size(); ++i)
            QVERIFY2(
                std::abs(pixels[i] - pixels[i - 1]) >= line,
                qPrintable(
                    QString("%1 px apart, a line is %2").arg(std::abs(pixels[i] - pixels[i - 1])).arg(line)));
        QVERIFY(shoot(&view, "gate_map_short"));
    }

    // An LSTM's trace (docs/design.md §5: steps = tokens read, no heads, no attention, no gates): the
    // attention grid leaves it out, the gate map names it as recurrent.
    void recurrentTraceHasNoMapsButANote() {
        const Trace lstm = longTrace(6, 0, false);
        AttentionGridView grid;
        grid.setTraces({longTrace(5, 2, true), lstm}, {"NDR", "LSTM"});
        showAt(&grid);
        QCOMPARE(int(plottables<QCPColorMap>(plotOf(&grid)).size()), 5);
        QVERIFY(std::isnan(grid.weight(1, 1, -1, 0, 0)));
        grid.setTraces({lstm}, {"LSTM"});
        QCoreApplication::processEvents();
        QCOMPARE(int(plottables<QCPColorMap>(plotOf(&grid)).size()), 0);
        bool said = false;
        for (QCPLayoutElement* e : plotOf(&grid)->plotLayout()->elements(true))
            if (auto* text = qobject_cast<QCPTextElement*>(e))
                said |= text->text().contains("LSTM has no attention (a recurrent model)");
        QVERIFY(said);
        GateMapView gates;
        gates.setTraces({lstm}, {"LSTM"});
        showAt(&gates);
        QCustomPlot* p = plotOf(&gates);
        QCOMPARE(int(plottables<QCPColorMap>(p).size()), 0);
        bool note = false;
        for (QCPLayoutElement* e : p->plotLayout()->elements(true))
            if (auto* text = qobject_cast<QCPTextElement*>(e))
                note |= text->text().contains("LSTM has no copy gates\n(a recurrent model)");
        QVERIFY(note);
        QVERIFY(std::isnan(gates.gate(0, 1, 1)));
    }

    void paletteChangeRecolours() {
        DepthBarsView view;
        view.setDepths(run_.task->allDepths(), run_.splits);
        view.setChance(0.25);
        for (int m = 0; m < 2; ++m)
            view.setEvaluation(m, run_.names[m], run_.histories[m].back());
        showAt(&view);
        QCustomPlot* p = plotOf(&view);
        QCOMPARE(p->xAxis->tickLabelColor(), view.palette().color(QPalette::WindowText));
        view.setPalette(darkPalette());
        QCOMPARE(p->xAxis->tickLabelColor(), QColor(225, 225, 225));
        QCOMPARE(p->axisRect()->backgroundBrush().color(), QColor(30, 31, 34));
        QCOMPARE(p->legend->textColor(), QColor(225, 225, 225));
        QVERIFY(shoot(&view, "depth_bars_dark"));

        LearningCurvesView curves;
        curves.setPalette(darkPalette());
        curves.setModelNames(run_.names);
        curves.setReference(0.25);
        for (int m = 0; m < 2; ++m) {
            curves.setLoss(m, run_.lossSteps[m], run_.losses[m]);
            curves.setHistory(m, run_.histories[m]);
        }
        showAt(&curves);
        QVERIFY(shoot(&curves, "learning_curves_dark"));
        AttentionGridView grid;
        grid.setPalette(darkPalette());
        grid.setTraces(run_.traces(), run_.names);
        showAt(&grid);
        QVERIFY(shoot(&grid, "attention_grid_dark"));
    }

    void exportsHaveTheAskedSize() {
        AttentionGridView grid;
        grid.setTraces({longTrace(14, 4, true), longTrace(10, 4, false)}, {"NDR", "Transformer"});
        showAt(&grid, QSize(600, 400));
        const QImage image = grid.render(QSize(1400, 900));
        QCOMPARE(image.size(), QSize(1400, 900));
        QVERIFY(image.pixel(700, 450) != image.pixel(5, 5) || image.pixel(300, 300) != image.pixel(5, 5));
        LengthGeneralisationView length;
        length.setDepths(run_.task->allDepths(), run_.splits);
        length.setHistory(0, run_.names[0], run_.histories[0]);
        const QString path = QDir::temp().filePath("ndr_test_views_export.png");
        QVERIFY(writeFigure(
            path, FigureFormat::Png, {QSize(800, 450)},
            [&](QPainter& p, QSize size) { length.paint(p, size); }, nullptr));
        QCOMPARE(QImage(path).size(), QSize(800, 450));
        QFile::remove(path);
        if (!shots_.isEmpty())
            image.save(shots_ + "/attention_grid_export.png");
    }
};

QTEST_MAIN(TestViews)
#include "test_views.moc"
