// The inspector on a tiny trained run, driven through its widgets: parsing and its messages, the true
// answer and intermediates, each model's answer, stepping and clicking the heatmaps, more steps than
// trained, halting (also as a pure function), steps needed, stale answers, exports and a run change.
#include "core/train/halting.h"
#include "testutil.h"
#include "ui/common/palette.h"
#include "ui/export/gif_writer.h"
#include "ui/inspector/expression_input.h"
#include "ui/inspector/inspector.h"
#include "ui/inspector/model_step_view.h"
#include "ui/inspector/steps_needed.h"
#include "ui/plots/heatmap_plot.h"
#include "ui/plots/routing_view.h"
#include "ui/training/training_session.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCompleter>
#include <QDir>
#include <QDoubleSpinBox>
#include <QHeaderView>
#include <QImageReader>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>
#include <cmath>

using namespace ndrui;
using ndr::haltingStep;
using ndr::HaltingSummary;
using ndr::summariseHalting;

namespace {

ndr::RunConfig tinyRun(int steps) {
    ndr::RunConfig c = ndr::presetConfig("stub");
    c.task.evalExamplesPerDepth = 16;
    c.models = {ndr::ndrModel(16, 2, 32, 4), ndr::vanillaModel(16, 2, 32, 4)};
    c.train.batchSize = 16;
    c.train.steps = steps;
    c.train.evalInterval = 100;
    c.train.seed = 4;
    return c;
}

// The text of a table cell, empty (rather than a crash) when the cell has no item.
QString textAt(const QTableWidget* table, int row, int column) {
    const QTableWidgetItem* i = table ? table->item(row, column) : nullptr;
    return i ? i->text() : QString();
}

int argmax(const float* p, int n) {
    return int(std::max_element(p, p + n) - p);
}

// A trace with only the gates filled: (steps, T) row-major.
ndr::Trace gateTrace(int steps, int positions, std::vector<float> gates) {
    ndr::Trace t;
    t.steps = steps;
    t.positions = positions;
    t.gates = std::move(gates);
    t.symbols = 2;
    t.answer = 1;
    for (int s = 0; s <= steps; ++s) {
        t.stepAnswers.push_back(s >= 2 ? 1 : 0);
        t.stepProbs.insert(t.stepProbs.end(), {s >= 2 ? 0.1f : 0.9f, s >= 2 ? 0.9f : 0.1f});
    }
    return t;
}

} // namespace

class TestInspector : public QObject {
    Q_OBJECT

    TrainingSession session_;
    Inspector* inspector_ = nullptr;
    QLineEdit* field_ = nullptr;

    template <typename W> W* child(const QString& name) {
        W* w = inspector_->findChild<W*>(name);
        if (!w)
            qWarning("no widget %s", qPrintable(name));
        return w;
    }
    const ndr::Task& task() { return *session_.task(); }
    // Types `text` key by key; characters beyond ASCII arrive as key events carrying text, the way an
    // input method delivers them.
    void type(const QString& text) {
        field_->clear();
        for (int i = 0; i < text.size(); ++i) {
            if (text[i].unicode() < 128) {
                QTest::keyClick(field_, text[i].toLatin1());
            } else {
                const int n = text[i].isHighSurrogate() ? 2 : 1;
                QTest::sendKeyEvent(QTest::Click, field_, Qt::Key_unknown, text.mid(i, n), Qt::NoModifier);
                i += n - 1;
            }
        }
    }
    // Types `text` and waits for both models' traces of it.
    void traceOf(const QString& text) {
        type(text);
        QTRY_VERIFY_WITH_TIMEOUT(inspector_->tracesComplete(), ndrtest::waitMs(10000));
    }

private slots:
    void initTestCase() {
        QString error;
        QVERIFY2(session_.start(tinyRun(300), &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(session_.state(), TrainingSession::State::Ready, ndrtest::waitMs(30000));
        inspector_ = new Inspector(session_);
        inspector_->resize(1300, 850);
        inspector_->show();
        field_ = child<QLineEdit>("inspector.expression");
        QVERIFY(field_);
    }
    void cleanupTestCase() { delete inspector_; }

    void withoutARunShowsAHint() {
        TrainingSession empty;
        Inspector view(empty);
        view.show();
        auto* hint = view.findChild<QLabel*>("inspector.hint");
        QVERIFY(hint && hint->isVisible());
        QVERIFY(hint->text().contains("Start or open a run"));
        QVERIFY(!view.findChild<QLineEdit*>("inspector.expression")->isVisible());
        QVERIFY(view.stepFrames(QSize(400, 300)).empty());
        QString error;
        QTemporaryDir dir;
        QVERIFY(!view.exportFrames(dir.path(), &error));
        QVERIFY(error.contains("Nothing to export"));
    }

    void haltingStepIsTheStartOfTheFixedPoint() {
        // Steps 1..5 over 3 positions.
        const std::vector<float> g = {0.9f,  0.2f,  0.05f,  // step 1
                                      0.05f, 0.5f,  0.0f,   // step 2
                                      0.01f, 0.02f, 0.03f,  // step 3
                                      0.2f,  0.0f,  0.0f,   // step 4
                                      0.0f,  0.0f,  0.05f}; // step 5
        const ndr::Trace t = gateTrace(5, 3, g);
        QCOMPARE(haltingStep(t, 0.1f), 4);  // step 4 still opens a gate
        QCOMPARE(haltingStep(t, 0.25f), 2); // after step 2 every gate stays below 0.25
        QCOMPARE(haltingStep(t, 0.95f), 0); // never above: already a fixed point
        QCOMPARE(haltingStep(t, 0.04f), 5); // the last step still writes: no halt within the run
        std::vector<float> withNan = g;
        withNan[10] = NAN;
        QCOMPARE(haltingStep(gateTrace(5, 3, withNan), 0.25f), 4); // NaN is not closed
        ndr::Trace residual = gateTrace(5, 3, {});
        QCOMPARE(haltingStep(residual, 0.1f), -1);

        const ndr::Trace early = gateTrace(5, 3, std::vector<float>(15, 0.0f)); // halts at 0: wrong then
        const HaltingSummary s = summariseHalting({&t, &early, &residual}, 0.25f);
        QCOMPARE(s.examples, 3);
        QCOMPARE(s.halted, 2);
        QCOMPARE(s.minStep, 0);
        QCOMPARE(s.maxStep, 2);
        QCOMPARE(s.meanStep, 1.0);
        QCOMPARE(s.correctAtHalt, 2); // t at step 2 and the residual at its last step
    }

    void validExpressionShowsTruthAndAnswers() {
        ndr::Example e;
        e.symbol = 2;
        e.functions = {1, 3, 0};
        const QString text = QString::fromStdString(task().format(e));
        // Extra spaces anywhere are accepted.
        traceOf("  " + QString(text).replace(" ", "   ") + " ");
        QVERIFY(inspector_->input()->problem().isEmpty());
        QCOMPARE(*inspector_->input()->example(), e);
        QCOMPARE(child<QComboBox>("inspector.depth")->currentData().toInt(), 3); // the typed depth
        const QString answer = QString::fromStdString(task().symbolName(task().answer(e)));
        QVERIFY2(child<QLabel>("inspector.truth")->text().contains("<b>" + answer + "</b>"),
                 qPrintable(child<QLabel>("inspector.truth")->text()));
        auto* tokens = child<QTableWidget>("inspector.tokens");
        const std::vector<int> ids = task().tokens(e), inter = task().intermediates(e);
        QCOMPARE(tokens->columnCount(), int(ids.size()));
        for (int p = 0; p < int(ids.size()); ++p) {
            QCOMPARE(textAt(tokens, 0, p), QString::fromStdString(task().tokenName(ids[size_t(p)])));
            const QString want =
                inter[size_t(p)] >= 0 ? QString::fromStdString(task().symbolName(inter[size_t(p)])) : "";
            QCOMPARE(textAt(tokens, 1, p), want);
        }
        auto* answers = child<QTableWidget>("inspector.answers");
        auto* distribution = child<QTableWidget>("inspector.distribution");
        for (int m = 0; m < inspector_->modelCount(); ++m) {
            const ndr::Trace* t = inspector_->trace(m);
            QVERIFY(t);
            QCOMPARE(t->answer, task().answer(e));
            const int a = argmax(t->probsAfter(t->steps), t->symbols);
            QVERIFY(textAt(answers, m, 0).startsWith(QString::fromStdString(task().symbolName(a)) + " "));
            for (int s = 0; s < t->symbols; ++s)
                QCOMPARE(textAt(distribution, s, m),
                         QString::number(double(t->probsAfter(t->steps)[s]), 'f', 3));
        }
        // The models' columns are equally wide (their bars compare) and fill the table, whatever the
        // lengths of their names; narrower than their contents, the table scrolls sideways.
        const auto* header = distribution->horizontalHeader();
        const auto equal = [&] { return std::abs(header->sectionSize(0) - header->sectionSize(1)) <= 1; };
        QVERIFY2(
            equal(),
            qPrintable(
                QString("columns %1 and %2 px").arg(header->sectionSize(0)).arg(header->sectionSize(1))));
        QVERIFY(std::abs(header->length() - distribution->viewport()->width()) <= 1);
        const QSize side = distribution->size();
        distribution->resize(60, side.height());
        QTRY_VERIFY(distribution->horizontalScrollBar()->maximum() > 0);
        QVERIFY(equal());
        distribution->resize(side);
        QTRY_VERIFY(std::abs(header->length() - distribution->viewport()->width()) <= 1);
        // The per-step readout row of each model.
        auto* readout = child<QTableWidget>("inspector.readout");
        const ndr::Trace* t0 = inspector_->trace(0);
        QCOMPARE(readout->columnCount(), t0->steps + 1);
        for (int s = 0; s <= t0->steps; ++s)
            QVERIFY(textAt(readout, 0, s)
                        .startsWith(QString::fromStdString(task().symbolName(t0->stepAnswers[size_t(s)]))));
    }

    void badInputNamesTheProblemAndTracesNothing() {
        std::mt19937_64 rng(3);
        traceOf(QString::fromStdString(task().format(task().sample(2, rng))));
        QSignalSpy traced(&session_, &TrainingSession::traced);
        const QString sym = QString::fromStdString(task().symbolName(1));
        const QString deep = sym + QString(" a").repeated(15);
        const std::vector<std::pair<QString, QString>> cases = {
            {"   ", "empty"},
            {sym + " zz b", "unknown token 'zz' at position 2"},
            {"a " + sym, "forward order"},
            {deep, "depth 15 is too deep: at most 14 functions"},
            {sym + " b ä", "unknown token 'ä'"},
            {sym + " 😀", "unknown token '😀'"},
        };
        for (const auto& [text, want] : cases) {
            type(text);
            QVERIFY2(inspector_->input()->problem().contains(want),
                     qPrintable(text + " -> " + inspector_->input()->problem()));
            QVERIFY(!inspector_->input()->example());
        }
        QVERIFY(inspector_->input()->problem().contains("twice its deepest test depth") == false);
        type(deep);
        QVERIFY(inspector_->input()->problem().contains("twice its deepest test depth"));
        // The offending token is underlined under the field.
        QVERIFY(child<QLabel>("inspector.problem")->text().contains("underline"));
        // 10,000 characters, pasted: one unknown token, and a long valid-looking run that is too deep.
        field_->setText(sym + " " + QString(9997, 'x'));
        QVERIFY(inspector_->input()->problem().contains("unknown token 'xxxx"));
        QVERIFY(inspector_->input()->problem().size() < 400);
        field_->setText(sym + QString(" b").repeated(4999) + " ");
        QVERIFY(inspector_->input()->problem().contains("depth 4999"));
        // Nothing is asked later either: no timer is left to fire a request, and nothing queued traces.
        QCoreApplication::processEvents();
        for (const QTimer* timer : inspector_->findChildren<QTimer*>(QString(), Qt::FindDirectChildrenOnly))
            QVERIFY(!timer->isActive());
        QCOMPARE(traced.count(), 0);
        QCOMPARE(inspector_->pendingRequest(), quint64(0)); // the last good expression's request is dropped
        QVERIFY(!inspector_->tracesComplete());
    }

    void completionOffersTheRunsNames() {
        type("");
        QTest::keyClicks(field_, QString::fromStdString(task().symbolName(2)) + " ");
        auto* completer = inspector_->input()->completer();
        QTest::keyClicks(field_, "b");
        QCOMPARE(completer->completionPrefix(), QString("b"));
        QCOMPARE(completer->currentCompletion(), QString("b"));
        // The first word of a forward expression is the symbol: symbols are offered there.
        type("1");
        QVERIFY(completer->completionCount() >= 1);
        QVERIFY(completer->currentCompletion().startsWith("1"));
    }

    void randomExampleHasThePickedDepth() {
        auto* depth = child<QComboBox>("inspector.depth");
        auto* random = child<QPushButton>("inspector.random");
        QCOMPARE(depth->count(), int(task().allDepths().size()));
        for (int i = 0; i < depth->count(); ++i) {
            depth->setCurrentIndex(i);
            QVERIFY(depth->currentText().contains("train") || depth->currentText().contains("test") ||
                    depth->currentText().contains("valid"));
            QTest::mouseClick(random, Qt::LeftButton);
            const ndr::ParseResult r = task().parseQuestion(field_->text().toStdString());
            QVERIFY2(r.example, qPrintable(field_->text()));
            QCOMPARE(r.example->depth(), depth->currentData().toInt());
        }
    }

    void sliderStepsTheHeatmapAndClicksNameCells() {
        traceOf(QString::fromStdString(task().format(task().evalSet(3)[5])));
        const ndr::Trace* t = inspector_->trace(0);
        QVERIFY(t);
        auto* slider = child<QSlider>("inspector.step");
        QCOMPARE(slider->maximum(), t->steps);
        QCOMPARE(slider->value(), t->steps); // a new trace opens at its answer
        ModelStepView* view = inspector_->modelView(0);
        const int T = t->positions;
        for (int s : {1, 3, 2}) {
            slider->setValue(s);
            for (int i = 0; i < T; ++i)
                for (int j = 0; j < T; ++j) {
                    float mean = 0;
                    for (int h = 0; h < t->heads; ++h)
                        mean += t->att(s - 1, h, i, j) / float(t->heads);
                    QVERIFY(std::abs(view->attentionPlot()->value(i, j) - mean) < 1e-6);
                }
            // The strip: the gates, and under them how far the step moved each position's state.
            QCOMPARE(view->changeRow(), 1);
            QCOMPARE(view->gatePlot()->rows(), 2);
            for (int p = 0; p < T; ++p) {
                QCOMPARE(view->gatePlot()->value(0, p), double(t->gate(s - 1, p)));
                QCOMPARE(view->gatePlot()->value(1, p), double(t->changeAt(s - 1, p)));
            }
            // A residual model has no gates: its strip is the change alone.
            const ndr::Trace* r = inspector_->trace(1);
            QVERIFY(r && r->gates.empty());
            ModelStepView* residual = inspector_->modelView(1);
            QVERIFY(residual->gatePlot()->isVisible());
            QCOMPARE(residual->changeRow(), 0);
            QCOMPARE(residual->gatePlot()->rows(), 1);
            QVERIFY(residual->gatePlot()->shownTitle().startsWith("change"));
            for (int p = 0; p < T; ++p)
                QCOMPARE(residual->gatePlot()->value(0, p), double(r->changeAt(s - 1, p)));
        }
        slider->setValue(0);
        QCOMPARE(view->attentionPlot()->value(T - 1, 1), 0.0);
        // One head.
        slider->setValue(2);
        auto* head = child<QComboBox>("inspector.head");
        head->setCurrentIndex(2); // head 2
        QCOMPARE(view->attentionPlot()->value(T - 1, 2), double(t->att(1, 1, T - 1, 2)));
        head->setCurrentIndex(0);

        // Click the cell target [E], source position 2 of step 2.
        QTest::qWait(50); // the queued replot lays the plot out
        HeatmapPlot* plot = view->attentionPlot();
        const QPoint at = plot->cellCenter(T - 1, 2);
        QWidget* target = plot->childAt(at);
        QVERIFY(target);
        QTest::mouseClick(target, Qt::LeftButton, {}, target->mapFrom(plot, at));
        const QString info = inspector_->cellInfo();
        float mean = 0;
        for (int h = 0; h < t->heads; ++h)
            mean += t->att(1, h, T - 1, 2) / float(t->heads);
        QVERIFY2(info.contains("step 2") && info.contains("<b>[E]</b> (position " + QString::number(T - 1)) &&
                     info.contains("<b>" + QString::fromStdString(t->tokenNames[2]) + "</b> (position 2)") &&
                     info.contains(QString::number(double(mean), 'f', 3)),
                 qPrintable(info));
        auto* tokens = child<QTableWidget>("inspector.tokens");
        QCOMPARE(tokens->columnCount(), T);
        QVERIFY(tokens->item(0, T - 1)->background().style() != Qt::NoBrush);
        QVERIFY(tokens->item(0, 2)->background().style() != Qt::NoBrush);
        QVERIFY(tokens->item(0, 1)->background().style() == Qt::NoBrush);

        // A gate cell.
        HeatmapPlot* gates = view->gatePlot();
        const QPoint g = gates->cellCenter(0, 1);
        QWidget* gw = gates->childAt(g);
        QVERIFY(gw);
        QTest::mouseClick(gw, Qt::LeftButton, {}, gw->mapFrom(gates, g));
        QVERIFY2(inspector_->cellInfo().contains("gate of <b>" + QString::fromStdString(t->tokenNames[1])) &&
                     inspector_->cellInfo().contains(QString::number(double(t->gate(1, 1)), 'f', 3)),
                 qPrintable(inspector_->cellInfo()));
        // A change cell, under it.
        const QPoint c = gates->cellCenter(1, 2);
        QWidget* cw = gates->childAt(c);
        QVERIFY(cw);
        QTest::mouseClick(cw, Qt::LeftButton, {}, cw->mapFrom(gates, c));
        QVERIFY2(inspector_->cellInfo().contains("moved the state of <b>" +
                                                 QString::fromStdString(t->tokenNames[2])) &&
                     inspector_->cellInfo().contains(QString::number(double(t->changeAt(1, 2)), 'f', 3)),
                 qPrintable(inspector_->cellInfo()));

        // Play runs to the end and stops.
        slider->setValue(0);
        child<QComboBox>("inspector.speed")->setCurrentIndex(4);
        QTest::mouseClick(child<QPushButton>("inspector.play"), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(slider->value(), t->steps, ndrtest::waitMs(5000));
        QTRY_COMPARE(child<QPushButton>("inspector.play")->text(), QString("Play"));
    }

    void staleAnswersAreIgnored() {
        traceOf(QString::fromStdString(task().format(task().evalSet(2)[1])));
        const ndr::Trace before = *inspector_->trace(0);
        auto fake = std::make_shared<TraceResult>();
        fake->id = inspector_->pendingRequest() - 1;
        fake->model = 0;
        fake->trace = before;
        fake->trace.stepAnswers.assign(fake->trace.stepAnswers.size(), 0);
        emit session_.traced(fake);
        QCOMPARE(inspector_->trace(0)->stepAnswers, before.stepAnswers);
    }

    // Each evaluation of a training run traces the shown expression again. A user who switches Show to
    // "routing, every step" before the answers arrive sees the picture already shown, drawn from a
    // trace that is still alive: the views share it. The UI suites run with freed memory overwritten
    // (MALLOC_PERTURB_ without glibc's thread cache, tests/CMakeLists.txt), so drawing a freed trace
    // would read garbage here.
    void switchingThePictureWhileARetraceIsPendingDrawsTheShownTrace() {
        traceOf(QString::fromStdString(task().format(task().evalSet(3)[0])));
        inspector_->setPicture(StepPicture::Lines);
        inspector_->retrace();
        QVERIFY(!inspector_->tracesComplete());
        inspector_->setPicture(StepPicture::AllSteps);
        for (int m = 0; m < inspector_->modelCount(); ++m) {
            ModelStepView* view = inspector_->modelView(m);
            QVERIFY(view->trace());
            QCOMPARE(int(view->routingView()->columns().size()), view->trace()->steps + 1);
            QCOMPARE(view->routingView()->lines().empty(), false);
            QVERIFY(!view->grab().isNull());
        }
        QTRY_VERIFY_WITH_TIMEOUT(inspector_->tracesComplete(), ndrtest::waitMs(10000));
        inspector_->setPicture(StepPicture::Heatmap);
    }

    void deeperThanTheStepsIsAnsweredWithANote() {
        // Depth 2 needs 3 steps, which both models run: no note.
        traceOf(QString::fromStdString(task().format(task().evalSet(2)[0])));
        QVERIFY(inspector_->routingNotes().isEmpty());
        // The deepest test depth needs more steps than either model runs: both answer it, each with a
        // note beside the answers.
        const int depth = task().depths(ndr::Split::Test).back();
        traceOf(QString::fromStdString(task().format(task().evalSet(depth)[0])));
        QVERIFY(inspector_->trace(0) && inspector_->trace(1));
        QCOMPARE(inspector_->routingNotes().size(), 2);
        auto* statusLabel = child<QLabel>("inspector.status");
        const QString status = statusLabel->text();
        const QString want = QString("%1 runs %2 steps, fewer than the %3 that route a depth-%4 expression")
                                 .arg(modelName(session_.models()[1]))
                                 .arg(inspector_->trace(1)->steps)
                                 .arg(depth + 1)
                                 .arg(depth);
        QVERIFY2(inspector_->trace(1)->steps < depth + 1 && inspector_->routingNotes()[1].startsWith(want),
                 qPrintable(inspector_->routingNotes()[1]));
        // On screen, one sentence names both models.
        QVERIFY(statusLabel->isVisible());
        const QString shown =
            QString("%1 and %2 run at most %3 steps, fewer than the %4 that route a depth-%5")
                .arg(modelName(session_.models()[0]), modelName(session_.models()[1]))
                .arg(std::max(inspector_->trace(0)->steps, inspector_->trace(1)->steps))
                .arg(depth + 1)
                .arg(depth);
        QVERIFY2(status.contains(shown), qPrintable(status));
        // NDR run for as many steps as the depth needs: its note goes.
        auto* steps = child<QSpinBox>("inspector.steps");
        steps->setValue(depth + 1);
        QTRY_VERIFY_WITH_TIMEOUT(inspector_->tracesComplete() && inspector_->trace(0) &&
                                     inspector_->trace(0)->steps == depth + 1,
                                 ndrtest::waitMs(10000));
        for (const QString& note : inspector_->routingNotes())
            QVERIFY2(!note.startsWith(modelName(session_.models()[0])), qPrintable(note));
        steps->setValue(0);
        QTRY_VERIFY_WITH_TIMEOUT(
            inspector_->tracesComplete() && inspector_->trace(0) &&
                inspector_->trace(0)->steps ==
                    session_.models()[0].config.as<ndr::EncoderConfig>().effectiveEvalSteps(),
            ndrtest::waitMs(10000));
    }

    void moreStepsThanTrainedForNdrAndHalting() {
        const int trained = session_.models()[0].config.as<ndr::EncoderConfig>().steps;
        auto* steps = child<QSpinBox>("inspector.steps");
        QVERIFY(steps->maximum() >= 4 * trained);
        // The up arrow from "as trained" goes to one step more than the models run, not to 1.
        steps->setValue(0);
        int asTrained = 0;
        for (const auto& m : session_.models())
            asTrained = std::max(asTrained, m.config.as<ndr::EncoderConfig>().effectiveEvalSteps());
        steps->stepUp();
        QCOMPARE(steps->value(), asTrained + 1);
        steps->stepDown();
        QCOMPARE(steps->value(), asTrained);
        traceOf(QString::fromStdString(task().format(task().evalSet(5)[0])));
        steps->setValue(3 * trained);
        QTRY_VERIFY_WITH_TIMEOUT(inspector_->tracesComplete() && inspector_->trace(0) &&
                                     inspector_->trace(0)->steps == 3 * trained,
                                 ndrtest::waitMs(10000));
        QCOMPARE(child<QSlider>("inspector.step")->maximum(), 3 * trained);
        // The vanilla model either runs them too (shared layers) or says why it cannot.
        const ndr::Trace* vanilla = inspector_->trace(1);
        QVERIFY(vanilla ? vanilla->steps == 3 * trained
                        : !child<QLabel>("inspector.status")->text().isEmpty());

        auto* halt = child<QCheckBox>("inspector.halt");
        halt->setChecked(true);
        auto* answers = child<QTableWidget>("inspector.answers");
        // The threshold is the run's own: above the level its gates rest at.
        const float threshold = float(child<QDoubleSpinBox>("inspector.threshold")->value());
        QCOMPARE(threshold, ndr::suggestedHaltingThreshold(session_.models()[0].history.back().probe));
        const int h = haltingStep(*inspector_->trace(0), threshold);
        QCOMPARE(inspector_->haltingStepOf(0), h);
        QVERIFY(textAt(answers, 0, 2).startsWith(h < 3 * trained ? QString::number(h) : "never"));
        QCOMPARE(textAt(answers, 1, 2), QString("no gates"));
        QCOMPARE(textAt(child<QTableWidget>("inspector.readout"), 0, h).endsWith("■"), h < 3 * trained);
        // Halting by change: every model with a change record halts on it, the Transformer too; the
        // threshold is the change's own and the gates' comes back when they are chosen again.
        auto* signal = child<QComboBox>("inspector.haltSignal");
        auto* thresholdBox = child<QDoubleSpinBox>("inspector.threshold");
        signal->setCurrentIndex(signal->findData(int(ndr::HaltSignal::Change)));
        QCOMPARE(thresholdBox->value(), 0.2);
        thresholdBox->setValue(0.3);
        const ndr::HaltingRule byChange{ndr::HaltSignal::Change, 0.3f};
        for (int m = 0; m < 2; ++m) {
            const int hc = haltingStep(*inspector_->trace(m), byChange);
            QVERIFY(hc >= 0);
            QCOMPARE(inspector_->haltingStepOf(m), hc);
            QVERIFY(textAt(answers, m, 2).startsWith(hc < 3 * trained ? QString::number(hc) : "never"));
        }
        signal->setCurrentIndex(signal->findData(int(ndr::HaltSignal::Gates)));
        QCOMPARE(float(thresholdBox->value()), threshold);
        QCOMPARE(inspector_->haltingStepOf(0), h);
        signal->setCurrentIndex(signal->findData(int(ndr::HaltSignal::Change)));
        QCOMPARE(thresholdBox->value(), 0.3);
        signal->setCurrentIndex(signal->findData(int(ndr::HaltSignal::Gates)));
        halt->setChecked(false);
        steps->setValue(0);
        QTRY_VERIFY_WITH_TIMEOUT(inspector_->tracesComplete() && inspector_->trace(0)->steps == trained,
                                 ndrtest::waitMs(10000));
    }

    void stepsNeededCountsEveryDepth() {
        child<QSpinBox>("inspector.stepsNeeded.count")->setValue(3);
        QSignalSpy finished(inspector_->stepsNeeded(), &StepsNeededPanel::finished);
        QTest::mouseClick(child<QPushButton>("inspector.stepsNeeded.measure"), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, ndrtest::waitMs(15000));
        auto* table = child<QTableWidget>("inspector.stepsNeeded");
        const std::vector<int> depths = task().allDepths();
        QCOMPARE(table->rowCount(), int(depths.size()) + 1);
        // Per model: halts (the NDR only: the Transformer has no gates), settles, right.
        const QString ndrName = modelName(session_.models()[0]),
                      transformer = modelName(session_.models()[1]);
        QCOMPARE(table->columnCount(), 6);
        QCOMPARE(table->horizontalHeaderItem(4)->text(), QString("settles"));
        QCOMPARE(table->horizontalHeaderItem(5)->text(), QString("right"));
        QCOMPARE(table->horizontalHeaderItem(1)->text(), QString("halts"));
        // The first row names each model once over its columns; each header's tooltip names it.
        QCOMPARE(textAt(table, 0, 1), ndrName);
        QCOMPARE(table->columnSpan(0, 1), 3);
        QCOMPARE(textAt(table, 0, 4), transformer);
        QCOMPARE(table->columnSpan(0, 4), 2);
        QVERIFY(table->horizontalHeaderItem(5)->toolTip().startsWith(transformer));
        QVERIFY(table->horizontalHeaderItem(2)->toolTip().startsWith(ndrName));
        for (int r = 1; r <= int(depths.size()); ++r) {
            // The depth cell names the depth; its split is its shade (the dashboard's) and its tooltip.
            const ndr::Split split = task().splitOf(depths[size_t(r - 1)]);
            QCOMPARE(textAt(table, r, 0),
                     QString::fromStdString(ndr::depthLabel(task().config(), depths[size_t(r - 1)])));
            QCOMPARE(table->item(r, 0)->background().color(), splitShade(split, table->palette()));
            QVERIFY(table->item(r, 0)->toolTip().endsWith(split == ndr::Split::Train ? "train depth"
                                                                                     : "test depth"));
            const HaltingSummary ndr = inspector_->stepsNeeded()->summary(depths[size_t(r - 1)], 0);
            QCOMPARE(ndr.examples, 3);
            QVERIFY(ndr.maxStep <= session_.models()[0].config.as<ndr::EncoderConfig>().steps);
            QCOMPARE(textAt(table, r, 3), QString("%1/3").arg(ndr.correctAtHalt));
            const HaltingSummary vanilla = inspector_->stepsNeeded()->summary(depths[size_t(r - 1)], 1);
            QCOMPARE(textAt(table, r, 5), QString("%1/3").arg(vanilla.correctAtHalt));
            QCOMPARE(textAt(table, r, 2).isEmpty(), false);
            if (ndr.settled == 0) {
                QCOMPARE(textAt(table, r, 2), QString("never"));
                QVERIFY(table->item(r, 2)->toolTip().endsWith("every example is wrong at the end"));
            } else
                QVERIFY(ndr.maxSettled <=
                        session_.models()[0].config.as<ndr::EncoderConfig>().effectiveEvalSteps());
            // A cell shows the mean step, its range in the tooltip. Examples that never halt (counted at
            // their full run) and examples wrong at the end (left out of "settles"): a star, counted in
            // the tooltip.
            const bool neverSome = ndr.halted > 0 && ndr.halted < ndr.examples;
            QCOMPARE(textAt(table, r, 1).endsWith('*'), neverSome);
            QCOMPARE(table->item(r, 1)->toolTip().contains(
                         QString("%1 of the 3 examples never halt").arg(ndr.examples - ndr.halted)),
                     neverSome);
            if (ndr.halted > 0)
                QVERIFY(table->item(r, 1)->toolTip().contains(
                    QString("from %1 to %2").arg(ndr.minStep).arg(ndr.maxStep)));
            QVERIFY(!textAt(table, r, 1).contains('(') && !textAt(table, r, 2).contains('('));
            for (const auto& [column, s] : {std::pair{2, ndr}, std::pair{4, vanilla}}) {
                const bool partial = s.settled > 0 && s.settled < s.examples;
                QCOMPARE(textAt(table, r, column).endsWith('*'), partial);
                QCOMPARE(table->item(r, column)->toolTip().contains(
                             QString("%1 of the 3 examples are wrong").arg(s.examples - s.settled)),
                         partial);
            }
        }
        // Halting by change: the Transformer records it too, so it gets a halts column, and every cell
        // is its summary under that rule.
        auto* signal = child<QComboBox>("inspector.haltSignal");
        signal->setCurrentIndex(signal->findData(int(ndr::HaltSignal::Change)));
        QCOMPARE(table->columnCount(), 7);
        QCOMPARE(table->horizontalHeaderItem(4)->text(), QString("halts"));
        QCOMPARE(table->columnSpan(0, 4), 3);
        QVERIFY(table->horizontalHeaderItem(1)->toolTip().contains("moves a position's state"));
        for (int r = 1; r <= int(depths.size()); ++r)
            for (int m = 0; m < 2; ++m) {
                const HaltingSummary s = inspector_->stepsNeeded()->summary(depths[size_t(r - 1)], m);
                QCOMPARE(s.examples, 3);
                const QString cell = textAt(table, r, m == 0 ? 1 : 4);
                const QString mean =
                    s.minStep == s.maxStep ? QString::number(s.minStep) : QString::number(s.meanStep, 'f', 1);
                QCOMPARE(cell, s.halted == 0 ? QString("never") : mean + (s.halted < s.examples ? "*" : ""));
                QCOMPARE(textAt(table, r, m == 0 ? 3 : 6), QString("%1/3").arg(s.correctAtHalt));
            }
        signal->setCurrentIndex(signal->findData(int(ndr::HaltSignal::Gates)));
        QCOMPARE(table->columnCount(), 6);
    }

    void exportsFramesAndGifWithoutOverwriting() {
        traceOf(QString::fromStdString(task().format(task().evalSet(4)[2])));
        const int n = inspector_->maxStep();
        QTemporaryDir dir;
        const QString folder = dir.filePath("frames");
        QString error;
        QVERIFY2(inspector_->exportFrames(folder, &error), qPrintable(error));
        const QStringList pngs = QDir(folder).entryList({"step-*.png"}, QDir::Files, QDir::Name);
        QCOMPARE(pngs.size(), n + 1);
        QCOMPARE(pngs.first(), QString("step-00.png"));
        for (const QString& png : pngs) {
            QImageReader reader(QDir(folder).filePath(png));
            const QImage image = reader.read();
            QVERIFY2(!image.isNull(), qPrintable(png + ": " + reader.errorString()));
            QCOMPARE(image.size(), Inspector::kFrameSize);
        }
        const GifInfo gif = readGifInfo(QDir(folder).filePath("inspector.gif"));
        QCOMPARE(gif.frames, n + 1);
        QVERIFY(gif.loops);
        // Frames differ from step to step (the heatmaps change).
        const std::vector<QImage> frames = inspector_->stepFrames(QSize(600, 400));
        QCOMPARE(int(frames.size()), n + 1);
        QVERIFY(frames[1] != frames[2]);

        const QDateTime stamp = QFileInfo(QDir(folder).filePath("step-00.png")).lastModified();
        QVERIFY(!inspector_->exportFrames(folder, &error));
        QVERIFY2(error.contains("step-00.png") && error.contains("exists"), qPrintable(error));
        QCOMPARE(QFileInfo(QDir(folder).filePath("step-00.png")).lastModified(), stamp);
        QVERIFY2(inspector_->exportFrames(folder, &error, true), qPrintable(error));
    }

    void screenshots() {
        const QString dir = qEnvironmentVariable("NDR_INSPECTOR_SHOTS");
        if (dir.isEmpty())
            QSKIP("set NDR_INSPECTOR_SHOTS to a folder to grab screenshots");
        QDir().mkpath(dir);
        // A run trained long enough for the routing to show (a few seconds).
        QString error;
        ndr::RunConfig config = tinyRun(qEnvironmentVariableIntValue("NDR_INSPECTOR_SHOT_STEPS") > 0
                                            ? qEnvironmentVariableIntValue("NDR_INSPECTOR_SHOT_STEPS")
                                            : 3000);
        config.models = {ndr::ndrModel(32, 4, 64, 8), ndr::vanillaModel(32, 4, 64, 8)};
        QVERIFY(session_.start(config, &error));
        QTRY_COMPARE_WITH_TIMEOUT(session_.state(), TrainingSession::State::Ready, ndrtest::waitMs(120000));
        traceOf(QString::fromStdString(task().format(task().evalSet(5)[3])));
        child<QCheckBox>("inspector.halt")->setChecked(true);
        child<QSpinBox>("inspector.stepsNeeded.count")->setValue(5);
        QSignalSpy finished(inspector_->stepsNeeded(), &StepsNeededPanel::finished);
        QTest::mouseClick(child<QPushButton>("inspector.stepsNeeded.measure"), Qt::LeftButton);
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, ndrtest::waitMs(30000));
        child<QSlider>("inspector.step")->setValue(2);
        QTest::qWait(100);
        HeatmapPlot* plot = inspector_->modelView(0)->attentionPlot();
        const QPoint at = plot->cellCenter(3, 2);
        QWidget* w = plot->childAt(at);
        if (w)
            QTest::mouseClick(w, Qt::LeftButton, {}, w->mapFrom(plot, at));
        QTest::qWait(100);
        inspector_->grab().save(dir + "/inspector.png");
        const auto frames = inspector_->stepFrames(Inspector::kFrameSize);
        if (frames.size() > 2)
            frames[2].save(dir + "/frame-2.png");
        type(QString::fromStdString(task().symbolName(1)) + " b zz d");
        QTest::qWait(100);
        inspector_->grab().save(dir + "/inspector-error.png");
        child<QCheckBox>("inspector.halt")->setChecked(false);
    }

    void aNewRunResetsEverything() {
        traceOf(QString::fromStdString(task().format(task().evalSet(1)[0])));
        QString error;
        // The new run's vanilla model has separate layers: it cannot run more steps than it has.
        ndr::RunConfig unshared = tinyRun(50);
        unshared.models[1].as<ndr::EncoderConfig>().sharedWeights = false;
        QVERIFY(session_.start(unshared, &error));
        QCOMPARE(inspector_->pendingRequest(), quint64(0));
        QVERIFY(field_->text().isEmpty());
        QVERIFY(!inspector_->trace(0));
        QCOMPARE(inspector_->modelCount(), 2);
        QCOMPARE(child<QSlider>("inspector.step")->maximum(), 0);
        // While it trains, traces still come back between chunks.
        traceOf(QString::fromStdString(task().format(task().evalSet(2)[0])));
        session_.stop();
        QTRY_COMPARE_WITH_TIMEOUT(session_.state(), TrainingSession::State::Ready, ndrtest::waitMs(10000));
        // More steps than trained: NDR runs them, the unshared model's refusal is shown as a note.
        const int trained = session_.models()[1].config.as<ndr::EncoderConfig>().steps;
        child<QSpinBox>("inspector.steps")->setValue(2 * trained);
        QTRY_VERIFY_WITH_TIMEOUT(inspector_->tracesComplete() && inspector_->trace(0) &&
                                     inspector_->trace(0)->steps == 2 * trained,
                                 ndrtest::waitMs(10000));
        QVERIFY(!inspector_->trace(1));
        const QString status = child<QLabel>("inspector.status")->text();
        QVERIFY2(status.contains(modelName(session_.models()[1])) && status.contains("more steps"),
                 qPrintable(status));
        QCOMPARE(textAt(child<QTableWidget>("inspector.answers"), 1, 0), QString("error"));
        QCOMPARE(int(inspector_->stepFrames(QSize(600, 400)).size()), 2 * trained + 1);
        if (const QString shots = qEnvironmentVariable("NDR_INSPECTOR_SHOTS"); !shots.isEmpty())
            inspector_->grab().save(shots + "/inspector-unshared.png");
    }

    // A run with an LSTM: its trace has no attention and no gates; its view says so instead of drawing
    // empty maps, the readout table shows its answer after each token, and frames still export.
    void anLstmShowsItsReadoutAndANote() {
        ndr::RunConfig c = tinyRun(60);
        c.models[1] = ndr::lstmModel(16, 4);
        QString error;
        QVERIFY2(session_.start(c, &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(session_.state(), TrainingSession::State::Ready, ndrtest::waitMs(30000));
        const ndr::Example e = task().evalSet(3)[0];
        traceOf(QString::fromStdString(task().format(e)));
        const ndr::Trace* lstm = inspector_->trace(1);
        QVERIFY(lstm);
        QCOMPARE(lstm->heads, 0);
        QCOMPARE(lstm->steps, int(task().tokens(e).size()) - 2);
        QVERIFY(lstm->attention.empty() && lstm->gates.empty());
        ModelStepView* view = inspector_->modelView(1);
        inspector_->setStep(2);
        QVERIFY(view->attentionPlot()->isHidden());
        QVERIFY(view->gatePlot()->isHidden()); // no gates, and no column updated in place
        QCOMPARE(view->changeRow(), -1);
        QVERIFY(!inspector_->modelView(0)->attentionPlot()->isHidden());
        const QTableWidget* readout = child<QTableWidget>("inspector.readout");
        QVERIFY(readout);
        for (int s = 0; s <= lstm->steps; ++s)
            QCOMPARE(textAt(readout, 1, s),
                     QString::fromStdString(task().symbolName(lstm->stepAnswers[size_t(s)])));
        QCOMPARE(int(inspector_->stepFrames(QSize(600, 400)).size()), inspector_->maxStep() + 1);
        child<QCheckBox>("inspector.halt")->setChecked(true);
        QCOMPARE(inspector_->haltingStepOf(1), -1);
        QCOMPARE(textAt(child<QTableWidget>("inspector.answers"), 1, 2), QString("no gates"));
        child<QCheckBox>("inspector.halt")->setChecked(false);
        if (const QString shots = qEnvironmentVariable("NDR_INSPECTOR_SHOTS"); !shots.isEmpty())
            inspector_->grab().save(shots + "/inspector-lstm.png");
    }
};

QTEST_MAIN(TestInspector)
#include "test_inspector.moc"
