// The window's training session: both models train on worker threads, report snapshots and finish;
// pause holds them, resume and stop work; saving while training and reopening gives the same
// histories; traces come back from the workers; a bad run file is refused and the open run stays as
// it was.
#include "core/io/files.h"
#include "small_run.h"
#include "testutil.h"
#include "ui/training/training_session.h"

#include <QDir>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <vector>

using namespace ndrui;
using ndrtest::smallRun;

namespace {

int minStep(const TrainingSession& s) {
    int m = INT_MAX;
    for (const auto& p : s.models())
        m = std::min(m, p.stepsDone);
    return m;
}

} // namespace

class TestSession : public QObject {
    Q_OBJECT

private slots:
    void trainsToTheEnd() {
        TrainingSession s;
        QSignalSpy progressed(&s, &TrainingSession::progressed);
        QString error;
        QVERIFY2(s.start(smallRun(400), &error), qPrintable(error));
        QCOMPARE(s.state(), TrainingSession::State::Training);
        QTRY_COMPARE_WITH_TIMEOUT(s.state(), TrainingSession::State::Ready, ndrtest::waitMs(30000));
        QVERIFY(progressed.count() > 0);
        for (const auto& m : s.models()) {
            QCOMPARE(m.stepsDone, 400);
            QVERIFY(m.status == (ndr::ModelStatus{ndr::ModelState::Finished, {}}));
            QCOMPARE(m.history.size(), size_t(8)); // every 50 steps
            QCOMPARE(m.lossLog.steps.size(), size_t(40));
            QCOMPARE(m.lossLog.steps.back(), 400);
        }
    }

    void pausesAndResumes() {
        // Far more steps than the test waits for, so no model can finish before the pause.
        TrainingSession s;
        QString error;
        QVERIFY2(s.start(smallRun(1000000), &error), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(minStep(s) >= 60, ndrtest::waitMs(20000));
        for (const auto& m : s.models())
            QVERIFY(!m.history.empty()); // the evaluation at step 50

        s.pause();
        QCOMPARE(s.state(), TrainingSession::State::Paused);
        // A worker pauses once the evaluation it is running ends, which takes seconds on a busy machine.
        QTRY_VERIFY_WITH_TIMEOUT(
            std::all_of(s.models().begin(), s.models().end(),
                        [](const ndr::ModelRecord& m) { return m.status.state == ndr::ModelState::Paused; }),
            ndrtest::waitMs(20000));
        // Paused workers train no further: a save asks every worker for its trainer's state behind
        // whatever it has queued, and finds each model at the step its paused snapshot reported.
        QTemporaryDir dir;
        QSignalSpy saved(&s, &TrainingSession::saved);
        s.save(dir.filePath("run.json"));
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, ndrtest::waitMs(10000));
        const ndr::RunRecord held = ndr::loadRunRecord(dir.filePath("run.json").toStdString());
        std::vector<int> pausedAt;
        for (size_t i = 0; i < s.models().size(); ++i) {
            QCOMPARE(held.models[i].stepsDone, s.models()[i].stepsDone);
            pausedAt.push_back(s.models()[i].stepsDone);
        }
        QCOMPARE(s.state(), TrainingSession::State::Paused);

        s.resume();
        QCOMPARE(s.state(), TrainingSession::State::Training);
        QTRY_VERIFY_WITH_TIMEOUT(minStep(s) >= *std::max_element(pausedAt.begin(), pausedAt.end()) + 20,
                                 ndrtest::waitMs(20000));
        for (const auto& m : s.models())
            QCOMPARE(m.status.state, ndr::ModelState::Training);
        s.stop();
        QTRY_COMPARE_WITH_TIMEOUT(s.state(), TrainingSession::State::Ready, ndrtest::waitMs(10000));
    }

    void stopEndsTraining() {
        TrainingSession s;
        QString error;
        QVERIFY(s.start(smallRun(100000), &error));
        QTRY_VERIFY_WITH_TIMEOUT(minStep(s) >= 5, ndrtest::waitMs(20000));
        s.stop();
        QTRY_COMPARE_WITH_TIMEOUT(s.state(), TrainingSession::State::Ready, ndrtest::waitMs(5000));
        for (const auto& m : s.models())
            QVERIFY(m.status == (ndr::ModelStatus{ndr::ModelState::Stopped, {}}));
        // Stopping while paused also ends it.
        s.continueTraining(100000);
        QCOMPARE(s.state(), TrainingSession::State::Training);
        s.pause();
        s.stop();
        QTRY_COMPARE_WITH_TIMEOUT(s.state(), TrainingSession::State::Ready, ndrtest::waitMs(5000));
    }

    // ListOps without SM draws its deep held-out sets for half a minute at the first evaluation (on a
    // 2-core EPYC: depth 7 0.5 s, depth 9 27 s); Stop pressed meanwhile ends the run at once.
    void stopEndsTrainingWhileHeldOutSetsAreDrawn() {
        ndr::RunConfig c = ndrtest::smallRun(100000);
        c.task = ndr::presetConfig("listops").task;
        c.task.operations = {"MIN", "MAX", "MED"};
        c.task.testMinDepth = 9; // no depth 8: depth 9's draw follows depth 7's
        c.train.evalInterval = 1;
        TrainingSession s;
        QString error;
        QVERIFY2(s.start(c, &error), qPrintable(error));
        // The small models' first step and their evaluation of depths 2-7 take about a second; three
        // seconds in, the session is drawing depth 9's set.
        QTest::qWait(3000);
        QCOMPARE(s.state(), TrainingSession::State::Training);
        s.stop();
        QTRY_COMPARE_WITH_TIMEOUT(s.state(), TrainingSession::State::Ready, ndrtest::waitMs(5000));
        // Step 1's evaluation never ended (under a sanitizer the stop may come before step 1 is done).
        for (const auto& m : s.models()) {
            QVERIFY(m.status == (ndr::ModelStatus{ndr::ModelState::Stopped, {}}));
            QVERIFY(m.stepsDone <= 1);
            QVERIFY(m.history.empty());
        }
    }

    // A save and a trace asked for during a long evaluation are answered between two of its passes,
    // and the evaluation then goes on: the saved run is at the evaluated step without its evaluation
    // (which a resumed run does first, test_training), the trace comes back before the evaluation
    // ends, and the window's progress says how far the evaluation is.
    void saveAndTraceDuringAnEvaluationAreAnsweredAtOnce() {
        QTemporaryDir dir;
        const QString file = dir.filePath("run.json");
        ndr::RunConfig c = smallRun(1);
        c.models = {ndr::ndrModel(64, 4, 128, 10)};
        c.task.evalExamplesPerDepth = 5000; // about 2 s of evaluation in a release build
        c.train.evalInterval = 1;
        TrainingSession s;
        QSignalSpy saved(&s, &TrainingSession::saved);
        size_t evaluationsWhenTraced = 99;
        connect(&s, &TrainingSession::traced, this,
                [&] { evaluationsWhenTraced = s.models()[0].history.size(); });
        QString error;
        QVERIFY2(s.start(c, &error), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(s.progress(0).evaluating >= 0, ndrtest::waitMs(10000));
        const double seen = s.progress(0).evaluating;
        QVERIFY(seen <= 1);
        QCOMPARE(s.models()[0].stepsDone, 1);
        s.save(file);
        QVERIFY(s.requestTrace(s.probe()) != 0);
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, ndrtest::waitMs(10000));
        QTRY_COMPARE_WITH_TIMEOUT(evaluationsWhenTraced, size_t(0), ndrtest::waitMs(10000));
        // The evaluation goes on from where it was (or has ended meanwhile).
        const double answered = s.progress(0).evaluating;
        QTRY_VERIFY_WITH_TIMEOUT(s.progress(0).evaluating > answered || !s.models()[0].history.empty(),
                                 ndrtest::waitMs(10000));
        s.stop();
        QTRY_COMPARE_WITH_TIMEOUT(s.state(), TrainingSession::State::Ready, ndrtest::waitMs(10000));
        QCOMPARE(s.progress(0).evaluating, -1.0);

        TrainingSession t;
        QVERIFY2(t.open(file, &error), qPrintable(error));
        QCOMPARE(t.models()[0].stepsDone, 1);
        QVERIFY2(t.models()[0].history.empty(), "the save waited for the evaluation to end");
    }

    void saveWhileTrainingThenReopen() {
        QTemporaryDir dir;
        const QString file = dir.filePath("run.json");
        TrainingSession s;
        QSignalSpy saved(&s, &TrainingSession::saved);
        QString error;
        QVERIFY(s.start(smallRun(300), &error));
        QTRY_VERIFY_WITH_TIMEOUT(minStep(s) >= 120, ndrtest::waitMs(20000));
        s.save(file); // models keep training meanwhile
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, ndrtest::waitMs(10000));
        QTRY_COMPARE_WITH_TIMEOUT(s.state(), TrainingSession::State::Ready, ndrtest::waitMs(30000));
        s.save(file);
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 2, ndrtest::waitMs(10000));

        TrainingSession t;
        QVERIFY2(t.open(file, &error), qPrintable(error));
        QCOMPARE(t.state(), TrainingSession::State::Ready);
        QCOMPARE(t.models().size(), s.models().size());
        for (size_t i = 0; i < s.models().size(); ++i) {
            const auto &a = s.models()[i], &b = t.models()[i];
            QCOMPARE(b.stepsDone, 300);
            QCOMPARE(b.history.size(), a.history.size());
            for (size_t k = 0; k < a.history.size(); ++k) {
                QCOMPARE(b.history[k].step, a.history[k].step);
                QCOMPARE(b.history[k].accuracy, a.history[k].accuracy);
            }
            QCOMPARE(b.lossLog.loss, a.lossLog.loss);
        }
        // An opened run trains on.
        t.continueTraining(350);
        QTRY_COMPARE_WITH_TIMEOUT(t.state(), TrainingSession::State::Ready, ndrtest::waitMs(30000));
        for (const auto& m : t.models())
            QCOMPARE(m.stepsDone, 350);
    }

    void startContinuesTheSameRunOrStartsANewOne() {
        TrainingSession s;
        QString error;
        const ndr::RunConfig c = smallRun(60);
        QVERIFY2(s.startOrContinue(c, &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(s.state(), TrainingSession::State::Ready, ndrtest::waitMs(30000));
        const quint64 first = s.runId();

        // The same settings with more steps (and another preset name) train this run further.
        ndr::RunConfig longer = c;
        longer.train.steps = 80;
        longer.preset = "custom";
        QVERIFY2(s.startOrContinue(longer, &error), qPrintable(error));
        QCOMPARE(s.runId(), first);
        QTRY_COMPARE_WITH_TIMEOUT(s.state(), TrainingSession::State::Ready, ndrtest::waitMs(30000));
        for (const auto& m : s.models()) {
            QCOMPARE(m.stepsDone, 80);
            QCOMPARE(m.history.size(), size_t(3)); // at 50, at the end (60), at the new end (80)
        }

        // No more steps than were done: a new run.
        QVERIFY2(s.startOrContinue(longer, &error), qPrintable(error));
        QVERIFY(s.runId() != first);
        const quint64 second = s.runId();
        QTRY_COMPARE_WITH_TIMEOUT(s.state(), TrainingSession::State::Ready, ndrtest::waitMs(30000));
        QCOMPARE(s.models()[0].history.size(), size_t(2)); // at 50 and 80

        // Any other change of settings: a new run, even with more steps.
        ndr::RunConfig other = longer;
        other.train.steps = 100;
        other.models[1].as<ndr::EncoderConfig>().dropout = 0.2f;
        QVERIFY2(s.startOrContinue(other, &error), qPrintable(error));
        QVERIFY(s.runId() != second);
        QCOMPARE(s.config(), other);
        s.stop();
        QTRY_COMPARE_WITH_TIMEOUT(s.state(), TrainingSession::State::Ready, ndrtest::waitMs(10000));
    }

    void badRunFileChangesNothing() {
        QTemporaryDir dir;
        TrainingSession s;
        QString error;
        QVERIFY(s.start(smallRun(60), &error));
        QTRY_COMPARE_WITH_TIMEOUT(s.state(), TrainingSession::State::Ready, ndrtest::waitMs(30000));
        const quint64 id = s.runId();
        QFile bad(dir.filePath("bad.json"));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("{\"format\": \"something-else\"}");
        bad.close();
        QVERIFY(!s.open(bad.fileName(), &error));
        QVERIFY2(error.contains("format"), qPrintable(error));
        QCOMPARE(s.runId(), id);
        QCOMPARE(s.models()[0].stepsDone, 60);
        QVERIFY(!s.open(dir.filePath("missing.json"), &error));
        QCOMPARE(s.runId(), id);
    }

    // A run file that another process trains (it holds the run file's lock) is not saved over: the save
    // fails naming the holder and writes nothing; once the lock is gone it is saved. A missing folder
    // is made.
    void aSaveIntoARunThatIsTrainingElsewhereIsRefused() {
        QTemporaryDir dir;
        const QString file = dir.filePath("run.json");
        TrainingSession s;
        QSignalSpy saved(&s, &TrainingSession::saved), failed(&s, &TrainingSession::saveFailed);
        QString error;
        QVERIFY(s.start(smallRun(20), &error));
        QTRY_COMPARE_WITH_TIMEOUT(s.state(), TrainingSession::State::Ready, ndrtest::waitMs(30000));
        // Into a folder that is not there yet: it is made, as it always was.
        s.save(dir.filePath("new/run.json"));
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, ndrtest::waitMs(10000));
        QVERIFY(QFileInfo::exists(dir.filePath("new/run.json")));
        saved.clear();
        {
            const ndr::RunFileLock elsewhere(file.toStdString());
            s.save(file);
            QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, ndrtest::waitMs(10000));
            QVERIFY2(failed.at(0).at(0).toString().contains("holds a run that another process trains (pid "),
                     qPrintable(failed.at(0).at(0).toString()));
            QVERIFY(!QFileInfo::exists(file));
            QCOMPARE(s.runFile(), dir.filePath("new/run.json"));
        }
        s.save(file);
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, ndrtest::waitMs(10000));
        QCOMPARE(s.runFile(), file);
    }

    // A run file whose checkpoints are gone opens as its history: the curves are there, nothing can be
    // traced or trained further, Start begins a new run; a damaged checkpoint is still refused.
    void aRunWithoutItsCheckpointsOpensAsHistory() {
        QTemporaryDir dir;
        const QString file = dir.filePath("run.json");
        TrainingSession s;
        QSignalSpy saved(&s, &TrainingSession::saved);
        QString error;
        QVERIFY(s.start(smallRun(60), &error));
        QTRY_COMPARE_WITH_TIMEOUT(s.state(), TrainingSession::State::Ready, ndrtest::waitMs(30000));
        s.save(file);
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, ndrtest::waitMs(10000));
        const QStringList checkpoints = QDir(dir.path()).entryList({"*.ckpt"}, QDir::Files, QDir::Name);
        QCOMPARE(checkpoints.size(), 2);

        // One checkpoint damaged: refused, naming it.
        {
            QFile damaged(dir.filePath(checkpoints[0]));
            QVERIFY(damaged.open(QIODevice::ReadWrite));
            damaged.resize(10);
        }
        TrainingSession t;
        QVERIFY(!t.open(file, &error));
        QVERIFY2(error.contains(checkpoints[0]), qPrintable(error));
        QVERIFY(!t.hasRun());

        // Both gone: the history opens.
        for (const QString& c : checkpoints)
            QVERIFY(QFile::remove(dir.filePath(c)));
        QVERIFY2(t.open(file, &error), qPrintable(error));
        QVERIFY(t.hasRun() && !t.hasWeights());
        QCOMPARE(t.missingWeights(), checkpoints);
        QCOMPARE(t.models().size(), s.models().size());
        for (size_t i = 0; i < s.models().size(); ++i) {
            QCOMPARE(t.models()[i].stepsDone, 60);
            QCOMPARE(t.models()[i].history.size(), s.models()[i].history.size());
        }
        QCOMPARE(t.requestTrace(t.probe()), quint64(0));
        ndr::RunConfig more = t.config();
        more.train.steps = 80;
        QVERIFY(!t.canContinue(more));
        QVERIFY2(t.startOrContinue(more, &error), qPrintable(error)); // a new run, with weights
        QVERIFY(t.hasWeights());
        QCOMPARE(t.models()[0].history.size(), size_t(0));
        t.stop();
        QTRY_COMPARE_WITH_TIMEOUT(t.state(), TrainingSession::State::Ready, ndrtest::waitMs(10000));
    }

    void tracesComeBackFromTheWorkers() {
        TrainingSession s;
        QSignalSpy traced(&s, &TrainingSession::traced);
        QString error;
        QVERIFY(s.start(smallRun(1000), &error));
        const quint64 id = s.requestTrace(s.probe(), 6);
        QTRY_COMPARE_WITH_TIMEOUT(traced.count(), 2, ndrtest::waitMs(10000));
        for (const auto& args : traced) {
            const auto r = args.at(0).value<TraceResultPtr>();
            QCOMPARE(r->id, id);
            QVERIFY2(r->error.isEmpty() || r->model == 1, qPrintable(r->error));
            if (r->model == 0)
                QCOMPARE(r->trace.steps, 6); // shared NDR layers run any number of steps
        }
        s.stop();
    }
};

QTEST_MAIN(TestSession)
#include "test_session.moc"
