// No work is lost without a word: the title marks a run with unsaved training; closing, File > New
// run and dropping another run ask "Save changes?" and each answer does what it says; Start on a run
// with the same settings asks "Continue to N steps" or "New run".
#include "message_box_answer.h"
#include "testutil.h"
#include "ui/dashboard/dashboard.h"
#include "ui/panel/experiment_panel.h"
#include "ui/plots/learning_curves_view.h"
#include "ui/shell/main_window.h"

#include <QAbstractButton>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>
#include <functional>
#include <memory>
#include <qcustomplot.h>

using namespace ndrui;
using ndrtest::Answer;
using ndrtest::named;
using ndrtest::standard;

namespace {

ndr::RunConfig tinyRun(int steps) {
    ndr::RunConfig c = ndr::presetConfig("stub");
    c.task.evalExamplesPerDepth = 32;
    c.models = {ndr::ndrModel(16, 2, 32, 5), ndr::vanillaModel(16, 2, 32, 5)};
    c.train.batchSize = 8;
    c.train.steps = steps;
    c.train.evalInterval = 20;
    return c;
}

QPushButton* startButton(MainWindow& w) {
    return w.panel().findChild<QPushButton*>("start");
}

// Trains the panel's configuration to its end through the Start button (no question: nothing shown).
void trainToEnd(MainWindow& w, const ndr::RunConfig& c) {
    w.showConfig(c);
    QTest::mouseClick(startButton(w), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(w.session().state(), TrainingSession::State::Training, ndrtest::waitMs(5000));
    QTRY_COMPARE_WITH_TIMEOUT(w.session().state(), TrainingSession::State::Ready, ndrtest::waitMs(30000));
}

// File > New run, as the menu holds it.
QAction* newRunAction(MainWindow& w) {
    for (QAction* a : w.findChildren<QAction*>())
        if (a->shortcut() == QKeySequence(QKeySequence::New))
            return a;
    qFatal("no File > New run");
}

int graphPoints(QWidget* view) {
    int n = 0;
    auto* plot = view->findChild<QCustomPlot*>();
    for (int g = 0; g < plot->graphCount(); ++g)
        n += plot->graph(g)->dataCount();
    return n;
}

} // namespace

class TestUnsaved : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

private slots:
    void initTestCase() { qputenv("XDG_CONFIG_HOME", dir_.filePath("config").toLocal8Bit()); }

    void titleMarksUnsavedTraining() {
        MainWindow w(false);
        w.show();
        QVERIFY(!w.isWindowModified());
        trainToEnd(w, tinyRun(40));
        w.redrawNow();
        QVERIFY(w.session().isModified());
        QVERIFY(w.isWindowModified());
        QSignalSpy saved(&w.session(), &TrainingSession::saved);
        w.saveRun(dir_.filePath("title/run.json"));
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, ndrtest::waitMs(10000));
        QVERIFY(!w.session().isModified());
        QVERIFY(!w.isWindowModified());
    }

    void closeAsksCancelKeepsDiscardCloses() {
        MainWindow w(false);
        w.show();
        trainToEnd(w, tinyRun(40));
        {
            Answer cancel("unsavedBox", standard(QMessageBox::Cancel));
            QVERIFY(!w.close());
            QVERIFY(cancel.seen());
            QVERIFY2(cancel.text().contains("40 steps"), qPrintable(cancel.text()));
        }
        QVERIFY(w.isVisible());
        QVERIFY(w.session().hasRun());
        Answer discard("unsavedBox", standard(QMessageBox::Discard));
        QVERIFY(w.close());
        QVERIFY(discard.seen());
    }

    void closeWithSaveWritesThenCloses() {
        auto* w = new MainWindow(false);
        w->show();
        trainToEnd(*w, tinyRun(40));
        const QString file = dir_.filePath("close-save/run.json");
        QDir().mkpath(dir_.filePath("close-save"));
        QSignalSpy saved(&w->session(), &TrainingSession::saved);
        w->saveRun(file);
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, ndrtest::waitMs(10000));
        w->close(); // nothing unsaved: no question
        QVERIFY(!w->isVisible());
        w->show();
        {
            Answer cont("continueBox", named("continue")); // the same settings, 60 steps: go on to 60
            trainToEnd(*w, tinyRun(60));
            QVERIFY(cont.seen());
        }
        QCOMPARE(w->session().stepsDone(), 60);
        QVERIFY(w->session().isModified());
        Answer save("unsavedBox", standard(QMessageBox::Save));
        QVERIFY(!w->close()); // waits for the save
        QVERIFY(save.seen());
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 2, ndrtest::waitMs(10000));
        QTRY_VERIFY_WITH_TIMEOUT(!w->isVisible(), ndrtest::waitMs(5000));
        delete w;
        MainWindow reopened(false);
        QVERIFY(reopened.openRun(file));
        QCOMPARE(reopened.session().stepsDone(), 60);
    }

    void newRunAsksThenClearsTheDashboard() {
        MainWindow w(false);
        w.show();
        trainToEnd(w, tinyRun(40));
        w.redrawNow();
        QVERIFY(graphPoints(&w.dashboard().learningCurves()) > 0);
        {
            Answer cancel("unsavedBox", standard(QMessageBox::Cancel));
            newRunAction(w)->trigger();
            QVERIFY(cancel.seen());
        }
        QVERIFY(w.session().hasRun());
        Answer discard("unsavedBox", standard(QMessageBox::Discard));
        newRunAction(w)->trigger();
        QVERIFY(discard.seen());
        QVERIFY(!w.session().hasRun());
        QCOMPARE(w.session().state(), TrainingSession::State::Empty);
        QCOMPARE(graphPoints(&w.dashboard().learningCurves()), 0);
    }

    void startOnAFinishedRunAsksContinueOrNew() {
        MainWindow w(false);
        w.show();
        trainToEnd(w, tinyRun(40));
        const quint64 firstRun = w.session().runId();
        {
            // The panel still says 40 steps, all done: continuing goes 40 further.
            Answer cont("continueBox", named("continue"));
            QTest::mouseClick(startButton(w), Qt::LeftButton);
            QVERIFY(cont.seen());
            QVERIFY2(cont.text().contains("40 steps") && cont.text().contains("80 steps"),
                     qPrintable(cont.text()));
        }
        QCOMPARE(w.session().runId(), firstRun);
        QTRY_COMPARE_WITH_TIMEOUT(w.session().state(), TrainingSession::State::Ready, ndrtest::waitMs(30000));
        QCOMPARE(w.session().stepsDone(), 80);
        {
            Answer cancel("continueBox", standard(QMessageBox::Cancel));
            QTest::mouseClick(startButton(w), Qt::LeftButton);
            QVERIFY(cancel.seen());
        }
        QCOMPARE(w.session().runId(), firstRun);
        QCOMPARE(w.session().stepsDone(), 80);
        // The progress bars show the run's steps again, not the cleared "0/40".
        const auto* bar = w.findChild<QProgressBar*>("progress[0]");
        QVERIFY(bar);
        QVERIFY2(bar->text().contains("80/80"), qPrintable(bar->text()));
        // New run: the unsaved steps are asked about, then a run starts from step 0.
        Answer fresh("continueBox", named("newRun"));
        Answer discard("unsavedBox", standard(QMessageBox::Discard));
        QTest::mouseClick(startButton(w), Qt::LeftButton);
        QVERIFY(fresh.seen());
        QTRY_VERIFY_WITH_TIMEOUT(discard.seen(), ndrtest::waitMs(5000));
        QVERIFY(w.session().runId() != firstRun);
        QTRY_COMPARE_WITH_TIMEOUT(w.session().state(), TrainingSession::State::Ready, ndrtest::waitMs(30000));
        QCOMPARE(w.session().stepsDone(), 40);
    }

    // Start with other settings asks about the unsaved run first; cancelling leaves the run shown,
    // its progress bars included.
    void startWithOtherSettingsCancelledKeepsTheRun() {
        MainWindow w(false);
        w.show();
        trainToEnd(w, tinyRun(40));
        const quint64 firstRun = w.session().runId();
        ndr::RunConfig other = tinyRun(60);
        other.train.batchSize = 16; // other settings: not a continuation
        w.showConfig(other);
        {
            Answer cancel("unsavedBox", standard(QMessageBox::Cancel));
            QTest::mouseClick(startButton(w), Qt::LeftButton);
            QVERIFY(cancel.seen());
        }
        QCOMPARE(w.session().runId(), firstRun);
        QCOMPARE(w.session().state(), TrainingSession::State::Ready);
        const auto* bar = w.findChild<QProgressBar*>("progress[0]");
        QVERIFY(bar);
        QVERIFY2(bar->text().contains("40/40"), qPrintable(bar->text()));
        // Discard: the new run starts from step 0 of its 60.
        Answer discard("unsavedBox", standard(QMessageBox::Discard));
        QTest::mouseClick(startButton(w), Qt::LeftButton);
        QVERIFY(discard.seen());
        QVERIFY(w.session().runId() != firstRun);
        QTRY_COMPARE_WITH_TIMEOUT(w.session().state(), TrainingSession::State::Ready, ndrtest::waitMs(30000));
        QVERIFY2(bar->text().contains("60/60"), qPrintable(bar->text()));
    }

    void droppingAnotherRunAsksFirst() {
        const QString file = dir_.filePath("drop/run.json");
        {
            MainWindow saver(false);
            trainToEnd(saver, tinyRun(20));
            QDir().mkpath(dir_.filePath("drop"));
            QSignalSpy saved(&saver.session(), &TrainingSession::saved);
            saver.saveRun(file);
            QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, ndrtest::waitMs(10000));
        }
        MainWindow w(false);
        w.show();
        trainToEnd(w, tinyRun(40));
        // A drop as the window gets it: a drag entering, then the drop.
        const auto dropFile = [&w, &file] {
            QMimeData mime;
            mime.setUrls({QUrl::fromLocalFile(file)});
            QDragEnterEvent enter(QPoint(50, 50), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
            QApplication::sendEvent(&w, &enter);
            QDropEvent drop(QPointF(50, 50), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
            QApplication::sendEvent(&w, &drop);
            return enter.isAccepted();
        };
        {
            Answer cancel("unsavedBox", standard(QMessageBox::Cancel));
            QVERIFY(dropFile());
            QTRY_VERIFY_WITH_TIMEOUT(cancel.seen(), ndrtest::waitMs(5000));
        }
        QCOMPARE(w.session().stepsDone(), 40);
        QVERIFY(w.session().runFile().isEmpty());
        Answer discard("unsavedBox", standard(QMessageBox::Discard));
        QVERIFY(dropFile());
        QTRY_VERIFY_WITH_TIMEOUT(discard.seen(), ndrtest::waitMs(5000));
        QTRY_COMPARE_WITH_TIMEOUT(w.session().runFile(), file, ndrtest::waitMs(5000));
        QCOMPARE(w.session().stepsDone(), 20);
    }
};

QTEST_MAIN(TestUnsaved)
#include "test_unsaved.moc"
