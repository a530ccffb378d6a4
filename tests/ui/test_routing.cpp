// The routing lines (BertViz style): which lines are drawn for a step, one head or all, every step
// stacked; hovering a token isolates its lines; and in the inspector, the "Show" box swaps the heatmaps
// for the lines, whose frames export as PNGs and a GIF.
#include "testutil.h"
#include "ui/export/gif_writer.h"
#include "ui/inspector/inspector.h"
#include "ui/inspector/model_step_view.h"
#include "ui/plots/heatmap_plot.h"
#include "ui/plots/routing_view.h"
#include "ui/training/training_session.h"

#include "view_fixture.h"

#include <QComboBox>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QSlider>
#include <QTemporaryDir>
#include <QtTest>

using namespace ndrui;
using viewtest::longTrace;

namespace {

// The weights a picture of `steps` (1-based) and heads [h0, h1) must draw: every one >= kMinWeight.
int expectedLines(const ndr::Trace& t, const std::vector<int>& steps, int h0, int h1) {
    int n = 0;
    for (int s : steps)
        for (int h = h0; h < h1; ++h)
            for (int i = 0; i < t.positions; ++i)
                for (int j = 0; j < t.positions; ++j)
                    n += t.att(s - 1, h, i, j) >= RoutingView::kMinWeight;
    return n;
}

// longTrace with some weights below the drawing threshold, so that filtering is visible.
ndr::Trace sparseTrace(int steps, int heads) {
    ndr::Trace t = longTrace(steps, heads, true);
    for (size_t k = 0; k < t.attention.size(); k += 3)
        t.attention[k] = 0.01f;
    return t;
}

} // namespace

class TestRouting : public QObject {
    Q_OBJECT

    TrainingSession session_;

private slots:
    void oneStepDrawsItsWeights() {
        const ndr::Trace t = sparseTrace(5, 3);
        RoutingView view;
        view.setTrace(viewtest::borrowed(t));
        view.setStep(3);
        QCOMPARE(view.columns(), (std::vector<int>{2, 3}));
        const auto lines = view.lines();
        QCOMPARE(int(lines.size()), expectedLines(t, {3}, 0, 3));
        QVERIFY(int(lines.size()) < 3 * t.positions * t.positions); // the faint ones are left out
        for (const auto& l : lines) {
            QCOMPARE(l.step, 3);
            QCOMPARE(l.weight, t.att(2, l.head, l.target, l.source));
            QVERIFY(l.weight >= RoutingView::kMinWeight);
        }
        view.setHead(1);
        QCOMPARE(int(view.lines().size()), expectedLines(t, {3}, 1, 2));
        for (const auto& l : view.lines())
            QCOMPARE(l.head, 1);
        // Step 0 is the embeddings: one column, no lines; beyond the trace, its last step.
        view.setStep(0);
        QCOMPARE(view.columns(), std::vector<int>{0});
        QVERIFY(view.lines().empty());
        view.setStep(99);
        QCOMPARE(view.columns(), (std::vector<int>{4, 5}));
    }

    void everyStepStacksTheStepsUpToTheCurrentOne() {
        const ndr::Trace t = sparseTrace(6, 2);
        RoutingView view;
        view.setTrace(viewtest::borrowed(t));
        view.setStacked(true);
        view.setStep(4);
        QCOMPARE(view.columns(), (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
        // Steps 5 and 6 are shown faded, without lines: not routed yet at step 4.
        QCOMPARE(int(view.lines().size()), expectedLines(t, {1, 2, 3, 4}, 0, 2));
        view.setStep(6);
        QCOMPARE(int(view.lines().size()), expectedLines(t, {1, 2, 3, 4, 5, 6}, 0, 2));
    }

    void hoveringATokenIsolatesItsLines() {
        const ndr::Trace t = sparseTrace(5, 2);
        RoutingView view;
        view.resize(480, 420);
        view.setTrace(viewtest::borrowed(t));
        view.setStep(3);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        // A target of the step (right column): only the lines into it.
        QTest::mouseMove(&view, view.tokenCenter(3, 4));
        QTRY_VERIFY(!view.lines().empty());
        QCOMPARE(view.tokenAt(view.tokenCenter(3, 4)), std::make_pair(3, 4));
        for (const auto& l : view.lines())
            QCOMPARE(l.target, 4);
        int into = 0;
        for (int h = 0; h < 2; ++h)
            for (int j = 0; j < t.positions; ++j)
                into += t.att(2, h, 4, j) >= RoutingView::kMinWeight;
        QCOMPARE(int(view.lines().size()), into);
        // A source (left column): only the lines out of it.
        QTest::mouseMove(&view, view.tokenCenter(2, 1));
        for (const auto& l : view.lines())
            QCOMPARE(l.source, 1);
        QVERIFY(!view.lines().empty());
        // Between the columns: every line again.
        const QPoint gap((view.tokenCenter(2, 1).x() + view.tokenCenter(3, 1).x()) / 2,
                         view.tokenCenter(2, 1).y());
        QTest::mouseMove(&view, gap);
        QCOMPARE(int(view.lines().size()), expectedLines(t, {3}, 0, 2));

        // Stacked: a token of a middle step has lines in (from the step before) and out (to the next).
        view.setStacked(true);
        view.setStep(5);
        QTest::mouseMove(&view, view.tokenCenter(2, 6));
        QCOMPARE(view.tokenAt(view.tokenCenter(2, 6)), std::make_pair(2, 6));
        bool in = false, out = false;
        for (const auto& l : view.lines()) {
            QVERIFY((l.step == 2 && l.target == 6) || (l.step == 3 && l.source == 6));
            in = in || l.step == 2;
            out = out || l.step == 3;
        }
        QVERIFY(in && out);
    }

    void everyTokenFitsThePicture_data() {
        QTest::addColumn<QSize>("size");
        QTest::addColumn<bool>("stacked");
        QTest::newRow("1280x800 column, one step") << QSize(330, 380) << false;
        QTest::newRow("1280x800 column, every step") << QSize(330, 380) << true;
        QTest::newRow("1920x1080 column, every step") << QSize(640, 620) << true;
        QTest::newRow("export frame, every step") << QSize(600, 640) << true;
    }
    void everyTokenFitsThePicture() {
        QFETCH(QSize, size);
        QFETCH(bool, stacked);
        const ndr::Trace t = longTrace(10, 4, true);
        RoutingView view;
        view.resize(size);
        view.setTrace(viewtest::borrowed(t));
        view.setStacked(stacked);
        view.setStep(4);
        const QRect inside(QPoint(0, 0), size);
        QList<QRect> boxes;
        for (int column : view.columns())
            for (int p = 0; p < t.positions; ++p) {
                const QPoint c = view.tokenCenter(column, p);
                QVERIFY2(inside.contains(c), qPrintable(QString("step %1, token %2 at %3,%4 outside %5x%6")
                                                            .arg(column)
                                                            .arg(p)
                                                            .arg(c.x())
                                                            .arg(c.y())
                                                            .arg(size.width())
                                                            .arg(size.height())));
                QCOMPARE(view.tokenAt(c), std::make_pair(column, p)); // boxes do not overlap
            }
        const QImage image = view.render(size);
        QCOMPARE(image.size(), size);
        viewtest::shoot(&view, QString("routing-%1x%2-%3").arg(size.width()).arg(size.height()).arg(stacked));
    }

    void theInspectorShowsLinesAndExportsThem() {
        ndr::RunConfig c = ndr::presetConfig("stub");
        c.task.evalExamplesPerDepth = 16;
        c.models = {ndr::ndrModel(16, 2, 32, 4), ndr::vanillaModel(16, 2, 32, 4)};
        c.train.batchSize = 16;
        c.train.steps = 200;
        c.train.evalInterval = 100;
        c.train.seed = 4;
        QString error;
        QVERIFY2(session_.start(c, &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(session_.state(), TrainingSession::State::Ready, ndrtest::waitMs(30000));
        Inspector inspector(session_);
        inspector.resize(1300, 850);
        inspector.show();
        auto* field = inspector.findChild<QLineEdit*>("inspector.expression");
        QVERIFY(field);
        field->setText(QString::fromStdString(session_.task()->format(session_.task()->evalSet(3)[0])));
        QTRY_VERIFY_WITH_TIMEOUT(inspector.tracesComplete(), ndrtest::waitMs(10000));
        inspector.setStep(2);
        const std::vector<QImage> heatmaps = inspector.stepFrames(QSize(800, 500));

        auto* picture = inspector.findChild<QComboBox*>("inspector.picture");
        QVERIFY(picture);
        picture->setCurrentIndex(picture->findData(int(StepPicture::Lines)));
        QCOMPARE(inspector.picture(), StepPicture::Lines);
        for (int m = 0; m < inspector.modelCount(); ++m) {
            ModelStepView* v = inspector.modelView(m);
            QVERIFY(v->routingView()->isVisible());
            QVERIFY(!v->attentionPlot()->isVisible());
            QVERIFY(!v->gatePlot()->isVisible()); // the token boxes carry the gates
            QCOMPARE(v->routingView()->columns(), (std::vector<int>{1, 2}));
            QVERIFY(!v->routingView()->lines().empty());
        }
        // The slider moves the lines to its step.
        inspector.findChild<QSlider*>("inspector.step")->setValue(3);
        QCOMPARE(inspector.modelView(0)->routingView()->columns(), (std::vector<int>{2, 3}));

        // Exported frames show the lines: the same step differs from its heatmap frame.
        inspector.setStep(2);
        const std::vector<QImage> lines = inspector.stepFrames(QSize(800, 500));
        QCOMPARE(lines.size(), heatmaps.size());
        QVERIFY(lines[2] != heatmaps[2]);
        QTemporaryDir dir;
        QVERIFY2(inspector.exportFrames(dir.path(), &error), qPrintable(error));
        const int n = inspector.maxStep();
        QCOMPARE(QDir(dir.path()).entryList({"step-*.png"}, QDir::Files).size(), n + 1);
        QCOMPARE(readGifInfo(QDir(dir.path()).filePath("inspector.gif")).frames, n + 1);

        // The titles name the weights' training step; training on re-traces at each evaluation.
        auto* title = inspector.modelView(0)->findChild<QLabel*>();
        QVERIFY(title && title->text().contains("weights of training step 200"));
        const quint64 before = inspector.pendingRequest();
        session_.continueTraining(400);
        QTRY_VERIFY_WITH_TIMEOUT(inspector.pendingRequest() != before, ndrtest::waitMs(30000));
        QTRY_COMPARE_WITH_TIMEOUT(session_.state(), TrainingSession::State::Ready, ndrtest::waitMs(30000));
        QTRY_VERIFY_WITH_TIMEOUT(inspector.tracesComplete(), ndrtest::waitMs(10000));
        QVERIFY2(!title->text().contains("weights of training step 200"), qPrintable(title->text()));

        picture->setCurrentIndex(picture->findData(int(StepPicture::AllSteps)));
        QCOMPARE(inspector.modelView(0)->routingView()->columns().size(),
                 size_t(inspector.modelView(0)->trace()->steps + 1));
        picture->setCurrentIndex(picture->findData(int(StepPicture::Heatmap)));
        QVERIFY(inspector.modelView(0)->attentionPlot()->isVisible());
        QVERIFY(!inspector.modelView(0)->routingView()->isVisible());
    }
};

QTEST_MAIN(TestRouting)
#include "test_routing.moc"
