// The desktop app driven through its real widgets: pick a preset, start both models, watch every
// dashboard view fill, pause, resume, stop, save, reopen the run and get the same curves back; bad
// values do not start; a bad run file is refused with a message and changes nothing; a dropped run
// file opens; an opened run shows each model's progress and trains further; a NaN loss stops only that model;
// closing mid-training stops the workers, and closing during a save waits for it.
#include "core/io/files.h"
#include "core/train/run.h"
#include "message_box_answer.h"
#include "testutil.h"
#include "ui/dashboard/dashboard.h"
#include "ui/export/exporter.h"
#include "ui/export/gif_writer.h"
#include "ui/inspector/inspector.h"
#include "ui/panel/experiment_panel.h"
#include "ui/plots/attention_grid_view.h"
#include "ui/plots/depth_bars_view.h"
#include "ui/plots/gate_map_view.h"
#include "ui/plots/learning_curves_view.h"
#include "ui/plots/length_generalisation_view.h"
#include "ui/shell/main_window.h"
#include "view_fixture.h"

#include <QAction>
#include <QComboBox>
#include <QDirIterator>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QtTest>
#include <limits>
#include <qcustomplot.h>

using namespace ndrui;

namespace {

template <typename W> W* child(QWidget& root, const QString& name) {
    W* w = root.findChild<W*>(name);
    if (!w)
        qFatal("no %s named %s", W::staticMetaObject.className(), qPrintable(name));
    return w;
}

void setSpin(QWidget& root, const QString& name, int value) {
    auto* box = child<QSpinBox>(root, name);
    box->setFocus();
    box->selectAll();
    QTest::keyClicks(box, QString::number(value));
    QTest::keyClick(box, Qt::Key_Tab);
    QCOMPARE(box->value(), value);
}

// Every graph's data of a view's plot, flattened: what the user sees, as numbers.
std::vector<double> plotData(QWidget* view) {
    std::vector<double> out;
    auto* plot = view->findChild<QCustomPlot*>();
    for (int g = 0; g < plot->graphCount(); ++g)
        for (auto it = plot->graph(g)->data()->constBegin(); it != plot->graph(g)->data()->constEnd(); ++it) {
            out.push_back(it->key);
            out.push_back(std::isnan(it->value) ? -1.0
                                                : it->value); // a gap (NaN), so that equal data compare equal
        }
    for (int i = 0; i < plot->plottableCount(); ++i)
        if (auto* bars = qobject_cast<QCPBars*>(plot->plottable(i)))
            for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it)
                out.push_back(it->value);
    return out;
}

int minStep(TrainingSession& s) {
    int m = INT_MAX;
    for (const auto& p : s.models())
        m = std::min(m, p.stepsDone);
    return m;
}

// A quick run through the panel's fields: the stub task with small models.
void fillSmallRun(MainWindow& w) {
    auto* preset = child<QComboBox>(w.panel(), "preset");
    preset->setCurrentIndex(preset->findText("stub"));
    setSpin(w.panel(), "task.evalExamplesPerDepth", 64);
    for (int m = 0; m < 2; ++m) {
        setSpin(w.panel(), QString("models[%1].dFF").arg(m), 32);
        setSpin(w.panel(), QString("models[%1].dModel").arg(m), 16);
        setSpin(w.panel(), QString("models[%1].heads").arg(m), 2);
    }
    setSpin(w.panel(), "train.batchSize", 16);
    setSpin(w.panel(), "train.steps", 400);
    setSpin(w.panel(), "train.evalInterval", 100);
    QVERIFY2(w.panel().problems().isEmpty(), qPrintable(w.panel().problems().join('\n')));
}

} // namespace

class TestStudio : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

private slots:
    void initTestCase() { qputenv("XDG_CONFIG_HOME", dir_.filePath("config").toLocal8Bit()); }

    void trainPauseResumeSaveReopen() {
        MainWindow w(false);
        w.resize(1400, 900);
        w.show();
        fillSmallRun(w);
        auto* start = child<QPushButton>(w.panel(), "start");
        auto* pause = child<QPushButton>(w.panel(), "pauseResume");
        QVERIFY(start->isEnabled());
        QTest::mouseClick(start, Qt::LeftButton);
        QCOMPARE(w.session().state(), TrainingSession::State::Training);
        QVERIFY(!start->isEnabled());

        // Snapshots arrive and every view's data changes.
        const auto before = plotData(&w.dashboard().learningCurves());
        QTRY_VERIFY_WITH_TIMEOUT(minStep(w.session()) >= 100 && !w.session().models()[0].history.empty() &&
                                     !w.session().models()[1].history.empty(),
                                 ndrtest::waitMs(30000));
        w.redrawNow();
        QVERIFY(plotData(&w.dashboard().learningCurves()) != before);
        QVERIFY(!plotData(&w.dashboard().depthBars()).empty());
        QVERIFY(!plotData(&w.dashboard().lengthGeneralisation()).empty());
        // The learning curves' reference line is the Longer depths' majority baseline.
        {
            const ndr::EvalRecord& e = w.session().models()[0].history.back();
            const double longer =
                ndr::splitMean(w.session().config().task, e.depths, e.baseline, ndr::Split::Test);
            QVERIFY(longer > 0);
            // So is the length-generalisation view's.
            for (QWidget* view : {static_cast<QWidget*>(&w.dashboard().learningCurves()),
                                  static_cast<QWidget*>(&w.dashboard().lengthGeneralisation())}) {
                auto* plot = view->findChild<QCustomPlot*>();
                plot->replot();
                QVERIFY(viewtest::legendNames(plot).contains(QString("majority %1").arg(longer, 0, 'f', 3)));
            }
        }
        const auto& probe = w.session().models()[0].history.back().probe;
        QCOMPARE(w.dashboard().attention().weight(0, 1, 0, 2, 1), double(probe.att(0, 0, 2, 1)));
        QCOMPARE(w.dashboard().gates().gate(0, 1, 2), double(probe.gate(0, 2)));

        QTest::mouseClick(pause, Qt::LeftButton);
        QCOMPARE(w.session().state(), TrainingSession::State::Paused);
        QCOMPARE(pause->text().remove('&'), QString("Resume"));
        QTRY_VERIFY_WITH_TIMEOUT(std::all_of(w.session().models().begin(), w.session().models().end(),
                                             [](const ndr::ModelRecord& m) {
                                                 return m.status.state != ndr::ModelState::Training;
                                             }),
                                 ndrtest::waitMs(5000));
        // Paused workers train no further: a save asks every worker for its trainer's state behind
        // whatever it has queued, and finds each model at the step its paused snapshot reported.
        {
            QSignalSpy saved(&w.session(), &TrainingSession::saved);
            const QString file = dir_.filePath("paused/run.json");
            QDir().mkpath(dir_.filePath("paused"));
            w.saveRun(file);
            QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, ndrtest::waitMs(10000));
            const ndr::RunRecord held = ndr::loadRunRecord(file.toStdString());
            for (size_t i = 0; i < w.session().models().size(); ++i)
                QCOMPARE(held.models[i].stepsDone, w.session().models()[i].stepsDone);
            QCOMPARE(w.session().state(), TrainingSession::State::Paused);
        }
        QTest::mouseClick(pause, Qt::LeftButton);
        QCOMPARE(w.session().state(), TrainingSession::State::Training);
        QTRY_COMPARE_WITH_TIMEOUT(w.session().state(), TrainingSession::State::Ready, ndrtest::waitMs(60000));
        QVERIFY(start->isEnabled());

        const QString file = dir_.filePath("run-a/run.json");
        QDir().mkpath(dir_.filePath("run-a"));
        QSignalSpy saved(&w.session(), &TrainingSession::saved);
        w.saveRun(file);
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, ndrtest::waitMs(10000));
        w.redrawNow();

        MainWindow reopened(false);
        reopened.resize(1400, 900);
        reopened.show();
        QVERIFY(reopened.openRun(file));
        QCOMPARE(reopened.session().state(), TrainingSession::State::Ready);
        for (QWidget* v : {static_cast<QWidget*>(&w.dashboard().learningCurves()),
                           static_cast<QWidget*>(&w.dashboard().depthBars()),
                           static_cast<QWidget*>(&w.dashboard().lengthGeneralisation())}) {
            QWidget* same = reopened.dashboard().findChild<QWidget*>(v->objectName());
            QVERIFY(same);
            QCOMPARE(plotData(same), plotData(v));
        }
        QCOMPARE(reopened.dashboard().attention().weight(1, 2, -1, 3, 1),
                 w.dashboard().attention().weight(1, 2, -1, 3, 1));
        // The panel shows the opened run's configuration.
        QCOMPARE(reopened.panel().config().train.steps, 400);

        // The inspector tab traces a typed expression through the reopened models.
        auto* expression = child<QLineEdit>(reopened.inspector(), "inspector.expression");
        const ndr::Task& task = *reopened.session().task();
        expression->setFocus();
        QTest::keyClicks(expression, QString::fromStdString(task.format(reopened.session().probe())));
        QTRY_VERIFY_WITH_TIMEOUT(reopened.inspector().tracesComplete(), ndrtest::waitMs(10000));
        QCOMPARE(reopened.inspector().trace(0)->answer, task.answer(reopened.session().probe()));

        // File > Export into an empty folder: every view, the dashboard, a frame per evaluation, the GIF,
        // and the inspector's steps.
        const QString folder = dir_.filePath("export");
        QVERIFY(reopened.exportTo(folder, false));
        // Every file the export names is there, nothing else, and the status bar counts them all.
        const ExportPlan plan =
            planExport(reopened.session().record(), folder, {}, reopened.inspector().maxStep());
        QCOMPARE(plan.existing(), plan.files());
        int onDisk = 0;
        for (QDirIterator it(folder, QDir::Files, QDirIterator::Subdirectories); it.hasNext(); it.next())
            ++onDisk;
        QCOMPARE(onDisk, int(plan.files().size()));
        QCOMPARE(int(plan.inspectorFiles.size()), reopened.inspector().maxStep() + 2); // frames 0..n, GIF
        QVERIFY2(reopened.statusBar()->currentMessage().startsWith(QString("Exported %1 files").arg(onDisk)),
                 qPrintable(reopened.statusBar()->currentMessage()));
        QCOMPARE(readGifInfo(folder + "/inspector/inspector.gif").frames, reopened.inspector().maxStep() + 1);
        QVERIFY(!QImage(folder + "/dashboard.png").isNull());
        QVERIFY(!QImage(folder + "/attention-maps.png").isNull());
        QCOMPARE(readGifInfo(folder + "/training.gif").frames, 4); // evaluations at 100..400

        // Start on the reopened run with more steps in the panel asks, and "Continue" trains the same run
        // further.
        const auto historyBefore = reopened.session().models()[0].history;
        setSpin(reopened.panel(), "train.steps", 500);
        ndrtest::Answer cont("continueBox", ndrtest::named("continue"));
        QTest::mouseClick(child<QPushButton>(reopened.panel(), "start"), Qt::LeftButton);
        QVERIFY(cont.seen());
        QCOMPARE(reopened.session().runFile(), file);
        QTRY_COMPARE_WITH_TIMEOUT(reopened.session().state(), TrainingSession::State::Ready,
                                  ndrtest::waitMs(60000));
        for (const auto& m : reopened.session().models()) {
            QCOMPARE(m.stepsDone, 500);
            QCOMPARE(int(m.history.size()), 5);
        }
        const auto& historyAfter = reopened.session().models()[0].history;
        for (size_t i = 0; i < historyBefore.size(); ++i)
            QCOMPARE(historyAfter[i].step, historyBefore[i].step);
    }

    void aNonFiniteLossStopsOnlyThatModel() {
        // A run whose NDR weights are NaN: its first step's loss is NaN.
        ndr::RunConfig c = ndr::presetConfig("stub");
        c.task.evalExamplesPerDepth = 32;
        c.models = {ndr::ndrModel(16, 2, 32, 4), ndr::vanillaModel(16, 2, 32, 4)};
        c.train.batchSize = 16;
        c.train.steps = 200;
        c.train.evalInterval = 100;
        const QString file = dir_.filePath("poisoned/run.json");
        {
            ndr::Run run(c);
            for (float& v : run.trainer(0).model().params().values())
                v = std::numeric_limits<float>::quiet_NaN();
            QDir().mkpath(dir_.filePath("poisoned"));
            run.save(file.toStdString());
        }
        MainWindow w(false);
        w.show();
        QVERIFY(w.openRun(file));
        ndrtest::Answer cont("continueBox", ndrtest::named("continue"));
        QTest::mouseClick(child<QPushButton>(w.panel(), "start"), Qt::LeftButton);
        QVERIFY(cont.seen());
        QTRY_COMPARE_WITH_TIMEOUT(w.session().state(), TrainingSession::State::Ready, ndrtest::waitMs(60000));
        const auto& ndrModel = w.session().models()[0];
        const auto& vanilla = w.session().models()[1];
        QVERIFY2(ndrModel.status.state == ndr::ModelState::Diverged,
                 ndr::statusText(ndrModel.status).c_str());
        QVERIFY2(ndrModel.status.message.find("at step 1") != std::string::npos,
                 ndrModel.status.message.c_str());
        QCOMPARE(ndrModel.stepsDone, 0);
        QCOMPARE(vanilla.stepsDone, 200); // the other model trained on
        QVERIFY(vanilla.status.state == ndr::ModelState::Finished);
        QVERIFY2(w.statusBar()->currentMessage().contains("NDR stopped: diverged"),
                 qPrintable(w.statusBar()->currentMessage()));
        auto* bar = child<QProgressBar>(w.panel(), "progress[0]");
        QVERIFY2(bar->toolTip().contains("diverged"), qPrintable(bar->toolTip()));
    }

    void anOpenedRunShowsEachModelsProgress() {
        // One model, where the panel starts with two: 3 of its 50 steps trained.
        ndr::RunConfig c = ndr::presetConfig("stub");
        c.task.evalExamplesPerDepth = 16;
        c.models = {ndr::ndrModel(16, 2, 32, 4)};
        c.train.batchSize = 8;
        c.train.steps = 50;
        const QString file = dir_.filePath("partial/run.json");
        QDir().mkpath(dir_.filePath("partial"));
        {
            ndr::Run run(c);
            for (int i = 0; i < 3; ++i)
                run.trainer(0).trainStep();
            run.save(file.toStdString());
        }
        MainWindow w(false);
        w.show();
        QVERIFY(w.openRun(file));
        QVERIFY(!w.panel().findChild<QProgressBar*>("progress[1]"));
        auto* bar = child<QProgressBar>(w.panel(), "progress[0]");
        QVERIFY2(bar->toolTip().startsWith("NDR  3/50"), qPrintable(bar->toolTip()));
        QCOMPARE(bar->value(), 3);
    }

    // The Training menu's shortcuts do what the buttons do, from anywhere in the window, and nothing
    // when the button could not be clicked; the menu names the toggle as the button does.
    void keyboardShortcutsStartPauseResumeStop() {
        MainWindow w(false);
        w.show();
        QVERIFY(QTest::qWaitForWindowActive(&w));
        fillSmallRun(w);
        setSpin(w.panel(), "train.steps", 100000);
        const auto action = [&](const char* name) { return child<QAction>(w.panel(), name); };
        QVERIFY(!action("pauseResumeAction")->isEnabled() && !action("stopAction")->isEnabled());
        w.showInspector(); // the shortcuts do not need the panel in focus
        QTest::keyClick(&w, Qt::Key_Return, Qt::ControlModifier);
        QTRY_COMPARE_WITH_TIMEOUT(w.session().state(), TrainingSession::State::Training,
                                  ndrtest::waitMs(5000));
        QVERIFY(!action("startAction")->isEnabled());
        QTest::keyClick(&w, Qt::Key_P, Qt::ControlModifier);
        QTRY_COMPARE_WITH_TIMEOUT(w.session().state(), TrainingSession::State::Paused, ndrtest::waitMs(5000));
        QCOMPARE(action("pauseResumeAction")->text(), QString("&Resume"));
        QTest::keyClick(&w, Qt::Key_P, Qt::ControlModifier);
        QTRY_COMPARE_WITH_TIMEOUT(w.session().state(), TrainingSession::State::Training,
                                  ndrtest::waitMs(5000));
        QCOMPARE(action("pauseResumeAction")->text(), QString("&Pause"));
        QTest::keyClick(&w, Qt::Key_Period, Qt::ControlModifier);
        QTRY_COMPARE_WITH_TIMEOUT(w.session().state(), TrainingSession::State::Ready, ndrtest::waitMs(5000));
        QVERIFY(w.session().stepsDone() < 100000);
        // Invalid settings: Start is disabled, and so is its shortcut.
        const quint64 run = w.session().runId();
        setSpin(w.panel(), "models[0].heads", 3);
        QVERIFY(!action("startAction")->isEnabled());
        QTest::keyClick(&w, Qt::Key_Return, Qt::ControlModifier);
        QTest::qWait(200);
        QCOMPARE(w.session().runId(), run);
        QCOMPARE(w.session().state(), TrainingSession::State::Ready);
    }

    void badValuesDoNotStart() {
        MainWindow w(false);
        w.show();
        fillSmallRun(w);
        setSpin(w.panel(), "models[0].heads", 3); // 16 is not divisible by 3
        QVERIFY(!w.panel().problems().isEmpty());
        auto* start = child<QPushButton>(w.panel(), "start");
        QVERIFY(!start->isEnabled());
        QTest::mouseClick(start, Qt::LeftButton);
        QCOMPARE(w.session().state(), TrainingSession::State::Empty);
        auto* note = child<QLabel>(w.panel(), "models[0].heads.problem");
        QVERIFY2(note->text().contains("does not divide"), qPrintable(note->text()));
    }

    void badRunFileIsRefused() {
        MainWindow w(false);
        w.show();
        QFile bad(dir_.filePath("bad.json"));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("{\"format\": \"ndr-studio-run\", \"version\": 99}");
        bad.close();
        QVERIFY(!w.openRun(bad.fileName()));
        auto* box = w.findChild<QMessageBox*>("errorBox");
        QVERIFY(box);
        QVERIFY2(box->text().contains("version"), qPrintable(box->text()));
        box->close();
        QCOMPARE(w.session().state(), TrainingSession::State::Empty);
    }

    void droppedRunFileOpens() {
        ndr::RunConfig c = ndr::presetConfig("stub");
        c.task.evalExamplesPerDepth = 16;
        c.models = {ndr::ndrModel(16, 2, 32, 4), ndr::vanillaModel(16, 2, 32, 4)};
        const QString file = dir_.filePath("dropped/run.json");
        QDir().mkpath(dir_.filePath("dropped"));
        ndr::Run(c).save(file.toStdString());
        MainWindow w(false);
        w.show();
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(file)});
        QDragEnterEvent enter(QPoint(50, 50), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&w, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(50, 50), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(&w, &drop);
        QTRY_COMPARE_WITH_TIMEOUT(w.session().state(), TrainingSession::State::Ready, ndrtest::waitMs(5000));
        QCOMPARE(w.session().runFile(), file);
    }

    void closingDuringASaveWaitsForIt() {
        auto* w = new MainWindow(false);
        w->show();
        fillSmallRun(*w);
        setSpin(w->panel(), "train.steps", 1000000);
        QTest::mouseClick(child<QPushButton>(w->panel(), "start"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!w->session().models()[0].history.empty() &&
                                     !w->session().models()[1].history.empty(),
                                 ndrtest::waitMs(30000));
        const QString file = dir_.filePath("run-b/run.json");
        QDir().mkpath(dir_.filePath("run-b"));
        QSignalSpy saved(&w->session(), &TrainingSession::saved);
        w->saveRun(file);
        QVERIFY(w->session().isSaving());
        QVERIFY(!w->close()); // the close waits for the save, then happens by itself
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, ndrtest::waitMs(10000));
        QTRY_VERIFY_WITH_TIMEOUT(!w->isVisible(), ndrtest::waitMs(5000));
        delete w;
        MainWindow reopened(false);
        QVERIFY(reopened.openRun(file));
        QVERIFY(reopened.session().models()[0].stepsDone >= 100);
    }

    void closingMidTrainingStopsTheWorkers() {
        auto* w = new MainWindow(false);
        w->show();
        fillSmallRun(*w);
        setSpin(w->panel(), "train.steps", 1000000);
        QTest::mouseClick(child<QPushButton>(w->panel(), "start"), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(minStep(w->session()) >= 5, ndrtest::waitMs(20000));
        QElapsedTimer clock;
        clock.start();
        ndrtest::Answer discard("unsavedBox", ndrtest::standard(QMessageBox::Discard));
        QVERIFY(w->close());
        QVERIFY(discard.seen());
        delete w; // joins the worker threads
        qInfo("closed mid-training in %lld ms", clock.elapsed());
    }
};

QTEST_MAIN(TestStudio)
#include "test_studio.moc"
