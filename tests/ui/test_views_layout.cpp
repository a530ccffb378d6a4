// The dashboard views at the sizes a window gives them (a third of a 1280 or 1600 px window, an
// export): attention maps stay square and readable, legends wrap instead of being cut off, depth-band
// labels fit their bands. With NDR_VIEW_SHOTS=<dir> it saves screenshots of what it checks.
#include "ui/plots/attention_grid_view.h"
#include "ui/plots/depth_bars_view.h"
#include "ui/plots/learning_curves_view.h"
#include "ui/plots/length_generalisation_view.h"

#include "view_fixture.h"

#include <QDir>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <algorithm>

using namespace ndr;
using namespace ndrui;
using namespace viewtest;

class TestViewsLayout : public QObject {
    Q_OBJECT

    Run run_;
    QString shots_;

private slots:
    void initTestCase() {
        shots_ = shotsDir();
        run_ = train(40, 10);
    }

    // An export has no scroll bar: the grid shrinks its token labels instead of skipping every other
    // one, so every token of every map is named (the grid's share of an exported dashboard, 10 steps).
    void exportedGridLabelsEveryToken() {
        struct Grid : AttentionGridView {
            using AttentionGridView::layoutFor;
        } view;
        view.setTraces({longTrace(10, 4, true), longTrace(8, 4, false)}, {"NDR", "Transformer"});
        showAt(&view, QSize(420, 330));
        view.layoutFor(QSize(760, 420));
        const int positions = longTrace(1, 1, false).positions;
        for (const QCPColorMap* map : plottables<QCPColorMap>(plotOf(&view)))
            for (QCPAxis* axis : {map->keyAxis(), map->valueAxis()}) {
                auto ticker = axis->ticker().dynamicCast<QCPAxisTickerText>();
                QVERIFY(ticker);
                QCOMPARE(ticker->ticks().size(), positions);
            }
    }

    // At the sizes the dashboard gives the grid (1600x1000, 1280x800 and 1280x720 windows), every map
    // is a square big enough for a readable label per token, the grid scrolls when they do not all
    // fit, nothing (maps, their labels, the colour scale) runs past the plot's right edge, and the
    // colour scale's label shows whole before any scrolling.
    void attentionGridKeepsReadableSquares_data() {
        QTest::addColumn<QSize>("size");
        QTest::addColumn<int>("steps");
        QTest::newRow("1600x1000, 10 steps") << QSize(960, 420) << 10;
        QTest::newRow("1280x800, 10 steps") << QSize(420, 330) << 10;
        QTest::newRow("1280x800, 14 steps") << QSize(420, 330) << 14;
        QTest::newRow("1280x720, 8 steps") << QSize(490, 170) << 8;
        QTest::newRow("large, 8 steps") << QSize(1400, 900) << 8;
    }
    void attentionGridKeepsReadableSquares() {
        QFETCH(QSize, size);
        QFETCH(int, steps);
        AttentionGridView view;
        view.setTraces({longTrace(steps, 4, true), longTrace(steps - 2, 4, false)}, {"NDR", "Transformer"});
        showAt(&view, size);
        QCoreApplication::processEvents();
        QCustomPlot* p = plotOf(&view);
        p->replot();
        const int line =
            QFontMetrics(p->plottable(0)->keyAxis()->axisRect()->axis(QCPAxis::atLeft)->tickLabelFont())
                .height();
        const int positions = longTrace(1, 1, false).positions;
        const auto maps = plottables<QCPColorMap>(p);
        QCOMPARE(int(maps.size()), 2 * steps - 2);
        for (const QCPColorMap* map : maps) {
            const QRect r = map->keyAxis()->axisRect()->rect();
            const QString what = QString("%1: %2x%3 at %4,%5 in a plot of %6x%7")
                                     .arg(map->name())
                                     .arg(r.width())
                                     .arg(r.height())
                                     .arg(r.x())
                                     .arg(r.y())
                                     .arg(p->width())
                                     .arg(p->height());
            QVERIFY2(r.width() == r.height(), qPrintable(what));
            QVERIFY2(r.width() >= positions * line, qPrintable(what));
            QVERIFY2(r.right() < p->width() && r.bottom() < p->height(), qPrintable(what));
        }
        const auto* scale = p->findChild<QCPColorScale*>();
        QVERIFY(scale);
        const QRect bar = scale->axis()->axisRect()->rect();
        const QRect outer = scale->outerRect();
        QVERIFY2(bar.width() >= 8 && bar.height() >= 50 && outer.right() < p->width(),
                 qPrintable(QString("colour bar %1x%2, scale ends at %3 of %4")
                                .arg(bar.width())
                                .arg(bar.height())
                                .arg(outer.right())
                                .arg(p->width())));
        // The plot is as wide as the view shows (no sideways scrolling) and taller only to scroll.
        auto* scroll = view.findChild<QScrollArea*>();
        QVERIFY(scroll && p->width() <= scroll->viewport()->width());
        const int label = QFontMetrics(scale->axis()->labelFont()).horizontalAdvance(scale->axis()->label());
        const int shown = scroll->viewport()->height();
        QVERIFY2(bar.center().y() - label / 2 >= 0 && bar.center().y() + label / 2 < shown,
                 qPrintable(QString("scale label of %1 px centred at %2 in a view %3 px tall")
                                .arg(label)
                                .arg(bar.center().y())
                                .arg(shown)));
        QVERIFY(!scroll->horizontalScrollBar()->isVisible());
        QVERIFY(
            shoot(&view, QString("attention_grid_%1x%2_%3").arg(size.width()).arg(size.height()).arg(steps)));
    }

    // Four models' grids (stub-routing) in a share of a dashboard picture too small for every map with
    // a label per token even in the smallest font: the picture is the screen's, readable maps cut to
    // the first rows, not all 36 shrunk to a few pixels. Two models' maps fit, labelled, and are drawn
    // whole.
    void dashboardPictureOfTheGridKeepsMapsReadable() {
        AttentionGridView view;
        const QSize share(310, 250);
        const int positions = longTrace(1, 1, false).positions;
        const auto longestRun = [](const QImage& image, QRgb background) {
            int longest = 0;
            for (int y = 0; y < image.height(); ++y)
                for (int x = 0, run = 0; x < image.width(); ++x) {
                    const QRgb c = image.pixel(x, y);
                    run = c != background && x > 0 && c == image.pixel(x - 1, y) ? run + 1 : 0;
                    longest = std::max(longest, run + 1);
                }
            return longest;
        };
        view.setTraces(
            {longTrace(10, 4, true), longTrace(10, 4, true), longTrace(8, 4, false), longTrace(8, 4, false)},
            {"NDR", "NDR top-2", "Transformer", "Transformer top-2"});
        showAt(&view, QSize(420, 330));
        const QImage four = view.renderReadable(share);
        QCOMPARE(four.size(), share);
        const QRgb background = view.palette().color(QPalette::Window).rgb();
        const int line = QFontMetrics(view.font()).height();
        // The longest run of one colour is a map's axis line: as long as a readable map is wide.
        QVERIFY2(longestRun(four, background) >= positions * line,
                 qPrintable(QString("longest line %1 px, a readable map %2")
                                .arg(longestRun(four, background))
                                .arg(positions * line)));
        QVERIFY2(longestRun(view.render(share), background) < positions * line, "render() shrinks every map");
        QVERIFY(shoot(&view, "attention_grid_dashboard_four_models"));
        view.setTraces({longTrace(10, 4, true), longTrace(8, 4, false)}, {"NDR", "Transformer"});
        const QSize wide(760, 420);
        QCOMPARE(view.renderReadable(wide), view.render(wide));
    }

    // The paper's split (train 1-5, valid 6-8, test 9-10) in a narrow and a wide plot: each band's
    // label sits inside its band and off the others, long ("test depths") where it fits, short
    // ("test") or none where it does not; the depth ticks and legend stay inside the plot.
    void depthBarLabelsFitTheirBands_data() {
        QTest::addColumn<int>("width");
        QTest::addColumn<bool>("wordy");
        QTest::newRow("1280x800") << 280 << false;
        QTest::newRow("export") << 960 << true;
    }
    void depthBarLabelsFitTheirBands() {
        QFETCH(int, width);
        QFETCH(bool, wordy);
        std::vector<int> depths;
        std::vector<Split> splits;
        for (int d = 1; d <= 10; ++d) {
            depths.push_back(d);
            splits.push_back(d <= 5 ? Split::Train : d <= 8 ? Split::Valid : Split::Test);
        }
        QWidget window;
        auto* layout = new QHBoxLayout(&window);
        layout->setContentsMargins(0, 0, 0, 0);
        auto* view = new DepthBarsView;
        layout->addWidget(view);
        view->setDepths(depths, splits);
        view->setChance(0.25);
        for (int m = 0; m < 2; ++m)
            view->setAccuracy(m, run_.names[m], std::vector<double>(10, 0.5 + 0.05 * m));
        showAt(&window, QSize(width, 380));
        QCustomPlot* p = plotOf(view);
        p->replot();
        QCOMPARE(window.width(), width);
        std::vector<QRect> labels;
        for (int i = 0; i < p->itemCount(); ++i) {
            auto* text = qobject_cast<QCPItemText*>(p->item(i));
            if (!text || text->text().startsWith("chance") || !text->visible())
                continue;
            const QRect r =
                QRectF(text->topLeft->pixelPosition(), text->bottomRight->pixelPosition()).toRect();
            const double key = text->position->coords().x(); // the band's middle
            const QString what = QString("'%1' at %2..%3").arg(text->text()).arg(r.left()).arg(r.right());
            // The two test depths are too narrow for "test depths" at 280 px; every band has room at 960.
            if (wordy || key > 8)
                QVERIFY2(text->text().endsWith(" depths") == wordy, qPrintable(what));
            const double halfBand = key < 4.5 ? 2.5 : key < 7.5 ? 1.5 : 1.0;
            QVERIFY2(r.left() >= p->xAxis->coordToPixel(key - halfBand) &&
                         r.right() <= p->xAxis->coordToPixel(key + halfBand),
                     qPrintable(what));
            for (const QRect& other : labels)
                QVERIFY2(!r.intersects(other), qPrintable(what));
            labels.push_back(r);
        }
        QVERIFY(labels.size() >= 2);
        QVERIFY(p->axisRect()->outerRect().right() < p->width());
        const auto ticks = qSharedPointerCast<QCPAxisTickerText>(p->xAxis->ticker());
        QCOMPARE(ticks->ticks().size(), 10);
        QVERIFY(p->legend->outerRect().right() < p->width());
        QVERIFY(shoot(&window, QString("depth_bars_paper_split_%1").arg(width)));
    }

    // At the sizes the dashboard gives a plot (a third of a 1280 or 1600 px window, or an export),
    // the legend wraps: every entry gets its full width and height, none overlaps another, and none
    // reaches past the plot or into the data; also with a longer model name (the stub-thought-cost
    // preset's) in the top row of a 1280x800 window.
    void legendsWrapWhenNarrow_data() {
        QTest::addColumn<int>("width");
        QTest::addColumn<int>("height");
        QTest::addColumn<QString>("secondName");
        QTest::newRow("narrow") << 260 << 380 << QString();
        QTest::newRow("1280x800") << 280 << 380 << QString();
        QTest::newRow("1280x800, longer name") << 280 << 245 << QString("NDR thought cost");
        QTest::newRow("1600x1000") << 440 << 380 << QString();
        QTest::newRow("wide") << 900 << 380 << QString();
    }
    void legendsWrapWhenNarrow() {
        QFETCH(int, width);
        QFETCH(int, height);
        QFETCH(QString, secondName);
        QStringList names = run_.names;
        if (!secondName.isEmpty())
            names[1] = secondName;
        LearningCurvesView curves;
        curves.setModelNames(names);
        DepthBarsView bars;
        bars.setDepths(run_.task->allDepths(), run_.splits);
        LengthGeneralisationView length;
        length.setDepths(run_.task->allDepths(), run_.splits);
        for (int m = 0; m < 2; ++m) {
            curves.setLoss(m, run_.lossSteps[m], run_.losses[m]);
            curves.setHistory(m, run_.histories[m]);
            bars.setEvaluation(m, names[m], run_.histories[m].back());
            length.setHistory(m, names[m], run_.histories[m]);
        }
        for (PlotView* view : std::initializer_list<PlotView*>{&curves, &bars, &length}) {
            // In a window of that width, as in the dashboard's splitter: the view may not widen it.
            QWidget window;
            auto* layout = new QHBoxLayout(&window);
            layout->setContentsMargins(0, 0, 0, 0);
            layout->addWidget(view);
            showAt(&window, QSize(width, height));
            QCustomPlot* p = plotOf(view);
            p->replot();
            QVERIFY2(window.width() == width, qPrintable(QString("%1 px wide").arg(window.width())));
            auto check = [&](int plotWidth, const QString& where) {
                QCPLegend* legend = p->legend;
                QVERIFY(legend->visible());
                std::vector<QCPAbstractLegendItem*> items;
                for (int i = 0; i < legend->itemCount(); ++i)
                    if (legend->item(i))
                        items.push_back(legend->item(i));
                QVERIFY(!items.empty());
                for (size_t i = 0; i < items.size(); ++i) {
                    const QRect r = items[i]->outerRect();
                    const QString what =
                        QString("%1 %2, '%3': %4 px wide at x %5 (needs %6), plot %7 px")
                            .arg(view->metaObject()->className(), where)
                            .arg(static_cast<QCPPlottableLegendItem*>(items[i])->plottable()->name())
                            .arg(r.width())
                            .arg(r.x())
                            .arg(items[i]->minimumOuterSizeHint().width())
                            .arg(plotWidth);
                    QVERIFY2(r.width() >= items[i]->minimumOuterSizeHint().width(), qPrintable(what));
                    QVERIFY2(r.height() >= items[i]->minimumOuterSizeHint().height(),
                             qPrintable(what + QString(", %1 px high (needs %2)")
                                                   .arg(r.height())
                                                   .arg(items[i]->minimumOuterSizeHint().height())));
                    QVERIFY2(r.right() < plotWidth, qPrintable(what));
                    for (size_t j = 0; j < i; ++j)
                        QVERIFY2(!r.intersects(items[j]->outerRect()), qPrintable(what));
                    for (QCPAxisRect* rect : p->axisRects())
                        QVERIFY2(!r.intersects(rect->rect()), qPrintable(what));
                }
            };
            check(p->width(), "on screen");
            // Exports lay out anew at their own size.
            const QImage image = view->render(QSize(width, height));
            QCOMPARE(image.width(), width);
            p->replot();
            check(p->width(), "after an export");
            if (width == 280)
                QVERIFY(shoot(
                    view,
                    QString("legend_%1_%2x%3").arg(view->metaObject()->className()).arg(width).arg(height)));
            view->setParent(nullptr);
        }
    }

    // Up a left axis at least two labels, a line apart or more, at the heights a window gives the
    // plots (the learning curves' two rects share 260 px at 1280x800), and a tall plot keeps the finer
    // labels: the loss axis over a decade at 1, 1.5, 2, 3, 5, 7.
    void leftAxisLabelsKeepApart_data() {
        QTest::addColumn<int>("height");
        QTest::newRow("1280x800") << 260;
        QTest::newRow("1600x1000") << 400;
        QTest::newRow("tall") << 1000;
    }
    void leftAxisLabelsKeepApart() {
        QFETCH(int, height);
        LearningCurvesView curves;
        curves.setModelNames(run_.names);
        for (int m = 0; m < 2; ++m) {
            curves.setLoss(m, run_.lossSteps[m], run_.losses[m]);
            curves.setHistory(m, run_.histories[m]);
        }
        curves.fixRanges(run_.lossSteps[0].back(), 0.3, 2.0); // within one decade, as early in a run
        showAt(&curves, QSize(320, height));
        QCustomPlot* p = plotOf(&curves);
        p->replot();
        p->replot(); // the tick counts follow the layout of the replot before
        const QList<QCPAxisRect*> rects = p->axisRects();
        QCOMPARE(rects.size(), 2);
        for (QCPAxisRect* rect : rects) {
            QCPAxis* y = rect->axis(QCPAxis::atLeft);
            const double line = QFontMetrics(y->tickLabelFont()).height();
            std::vector<double> pixels;
            for (double t : y->tickVector())
                if (y->range().contains(t))
                    pixels.push_back(y->coordToPixel(t));
            std::sort(pixels.begin(), pixels.end());
            const QString what = QString("%1 px, %2: %3 labels over %4 px (range %5 to %6)")
                                     .arg(height)
                                     .arg(y->label())
                                     .arg(pixels.size())
                                     .arg(rect->height())
                                     .arg(y->range().lower)
                                     .arg(y->range().upper);
            QVERIFY2(pixels.size() >= 2, qPrintable(what));
            for (size_t i = 1; i < pixels.size(); ++i)
                QVERIFY2(pixels[i] - pixels[i - 1] >= line, qPrintable(what));
            if (height == 1000 && y->scaleType() == QCPAxis::stLogarithmic)
                QVERIFY2(pixels.size() >= 5, qPrintable(what));
        }
        QVERIFY(shoot(&curves, QString("left_axis_labels_%1").arg(height)));
    }

    // Four models (the stub-routing preset) wrap the learning curves' legend to four rows at a third
    // of a 1280 px window. In a splitter that offers the view little height, the view's minimum
    // follows its legend and labels: each rect keeps 40 px inside its axes and room for its axis label,
    // and the splitter gives the view that much, taking it from the row below. A wide view, whose
    // legend takes fewer rows, asks for less.
    void plotsKeepRoomUnderALongLegend() {
        const QStringList names{"NDR", "Transformer", "NDR top-2", "Transformer top-2"};
        auto minimumAt = [&](int width, int& minimum) {
            LearningCurvesView* curves = new LearningCurvesView;
            curves->setModelNames(names);
            for (int m = 0; m < 4; ++m) {
                curves->setLoss(m, run_.lossSteps[m % 2], run_.losses[m % 2]);
                curves->setHistory(m, run_.histories[m % 2]);
            }
            QSplitter rows(Qt::Vertical);
            rows.setChildrenCollapsible(false);
            rows.addWidget(curves);
            rows.addWidget(new QWidget);
            showAt(&rows, QSize(width, 700));
            rows.setSizes({150, 550});
            QCustomPlot* p = plotOf(curves);
            for (int i = 0; i < 4; ++i) { // a minimum follows a layout, the layout the minimum before it
                p->replot();
                QCoreApplication::processEvents();
            }
            p->replot();
            const QList<QCPAxisRect*> rects = p->axisRects();
            QCOMPARE(rects.size(), 2);
            for (QCPAxisRect* rect : rects) {
                QCPAxis* y = rect->axis(QCPAxis::atLeft);
                const int label = QFontMetrics(y->labelFont()).horizontalAdvance(y->label());
                const QString what = QString("%1 px wide: '%2' rect %3 px high inside, %4 with its margins, "
                                             "label %5 px, view %6 px high")
                                         .arg(width)
                                         .arg(y->label())
                                         .arg(rect->height())
                                         .arg(rect->outerRect().height())
                                         .arg(label)
                                         .arg(curves->height());
                QVERIFY2(rect->height() >= 40, qPrintable(what));
                QVERIFY2(rect->outerRect().height() >= label, qPrintable(what));
            }
            QVERIFY2(curves->height() > 150, qPrintable(QString("%1 px high").arg(curves->height())));
            QVERIFY(shoot(&rows, QString("long_legend_%1").arg(width)));
            minimum = p->minimumHeight();
        };
        int narrow = 0, wide = 0;
        minimumAt(280, narrow);
        if (QTest::currentTestFailed())
            return;
        minimumAt(900, wide);
        if (QTest::currentTestFailed())
            return;
        QVERIFY2(wide < narrow, qPrintable(QString("minimum %1 px wide, %2 narrow").arg(wide).arg(narrow)));
    }
};

QTEST_MAIN(TestViewsLayout)
#include "test_views_layout.moc"
