// The real window under a stream of user actions while two models train: a seeded random sequence,
// one action every 20-200 ms, of tab switches, the boxes and sliders of the tab shown (the
// inspector's Show, Heads and Run, the dashboard's history slider, ...), valid and invalid typed
// expressions, Random, Measure, Play, Pause, Resume, Stop, Start (to continue and anew), New run,
// Save, Open recent, Export, Compare on the saved runs, the colours and window sizes between
// 1280x800 and 1920x1080. No action may end in an exception (the application catches and reports
// it), an unexpected dialog, a hang (a watchdog thread) or, under the asan and tsan presets, a
// sanitizer report; afterwards the window still trains, saves and reopens the run.
//
// CTest runs it for one minute with seed 1; `test_stress --minutes N --seed S` runs longer or another
// sequence. A failure prints its seed and the actions done; the actions are also written, one per
// line as they happen, to stress-actions-<seed>.txt in the working folder, which a crash leaves
// behind and a pass removes. The seed fixes the sequence of actions, not the training's progress
// at each, so a replay repeats the actions at about the same moments.
#include "small_run.h"
#include "testutil.h"
#include "ui/common/guarded_application.h"
#include "ui/compare/compare_view.h"
#include "ui/inspector/expression_input.h"
#include "ui/inspector/inspector.h"
#include "ui/panel/experiment_panel.h"
#include "ui/shell/main_window.h"

#include <QAbstractSpinBox>
#include <QAction>
#include <QComboBox>
#include <QDialog>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTextStream>
#include <QTimer>
#include <QtTest>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <thread>

using namespace ndrui;

namespace {

// Two small models that train for as long as the test lasts, evaluating (and so re-tracing the
// inspector's expression) every 200 steps.
ndr::RunConfig endlessRun() {
    ndr::RunConfig c = ndrtest::smallRun(1000000);
    c.train.evalInterval = 200;
    return c;
}

struct StressOptions {
    double minutes = 1.0;
    unsigned seed = 1;
};
StressOptions options;

QStringList unhandledErrors; // what the application caught out of event handlers

std::int64_t nowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Ends the process when the GUI thread has not finished an action for `limitMs`: a hang (a deadlock,
// a modal loop nobody answers) would otherwise stall the suite until CTest's timeout says nothing.
class Watchdog {
public:
    Watchdog(std::int64_t limitMs, QString logFile) : limitMs_(limitMs), logFile_(std::move(logFile)) {
        beat();
        thread_ = std::thread([this] {
            while (!done_.load()) {
                std::this_thread::sleep_for(std::chrono::milliseconds(200));
                if (nowMs() - last_.load() > limitMs_) {
                    std::fprintf(
                        stderr,
                        "test_stress: no action finished for %lld s (seed %u); the actions are in %s\n",
                        static_cast<long long>(limitMs_ / 1000), options.seed, qPrintable(logFile_));
                    std::fflush(stderr);
                    std::abort();
                }
            }
        });
    }
    ~Watchdog() {
        done_ = true;
        thread_.join();
    }
    void beat() { last_ = nowMs(); }

private:
    std::int64_t limitMs_;
    QString logFile_;
    std::atomic<std::int64_t> last_{0};
    std::atomic<bool> done_{false};
    std::thread thread_;
};

} // namespace

class TestStress : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::mt19937 rng_;
    QStringList actions_;
    QFile log_;
    QStringList errorBoxes_; // the window's error messages: answers to actions, not failures
    QStringList unexpected_; // any other dialog that showed
    QStringList validTexts_; // expressions the Random button produced, to type again later
    QStringList savedFiles_; // run files a save wrote
    MainWindow* w_ = nullptr;

    int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

    void record(const QString& action) {
        const QString line = QString("%1 %2").arg(actions_.size()).arg(action);
        actions_ << line;
        QTextStream(&log_) << line << '\n';
        log_.flush();
    }

    QWidget* currentTab() { return w_->findChild<QTabWidget*>("mainTabs")->currentWidget(); }

    template <typename T> T* visible(const QString& name) {
        T* x = w_->findChild<T*>(name);
        return x && x->isVisible() && x->isEnabled() ? x : nullptr;
    }

    bool click(const QString& name) {
        auto* b = visible<QPushButton>(name);
        if (b)
            QTest::mouseClick(b, Qt::LeftButton);
        return b != nullptr;
    }

    // Answers what the window showed: its error messages are closed (they answer an action, such as
    // Open while training), any other dialog is a failure, closed so that the sequence goes on.
    void closeDialogs() {
        for (QWidget* top : QApplication::topLevelWidgets()) {
            auto* dialog = qobject_cast<QDialog*>(top);
            if (!dialog || !dialog->isVisible())
                continue;
            auto* box = qobject_cast<QMessageBox*>(dialog);
            if (box && box->objectName() == "errorBox")
                errorBoxes_ << box->text();
            else
                unexpected_ << QString("%1 '%2' (%3) after action %4")
                                   .arg(dialog->metaObject()->className(), dialog->objectName(),
                                        box ? box->text() : dialog->windowTitle())
                                   .arg(actions_.size() - 1);
            dialog->close();
        }
    }

    // Moves one of the boxes, sliders or spin boxes of the tab shown.
    void changeControl() {
        QList<QWidget*> controls;
        for (QWidget* c : currentTab()->findChildren<QWidget*>()) {
            const bool kind = qobject_cast<QComboBox*>(c) || qobject_cast<QSlider*>(c) ||
                              qobject_cast<QAbstractSpinBox*>(c);
            if (kind && c->isVisible() && c->isEnabled())
                controls << c;
        }
        if (controls.isEmpty())
            return record("no control to change");
        QWidget* c = controls[uniform(0, int(controls.size()) - 1)];
        const QString name = c->objectName().isEmpty() ? c->metaObject()->className() : c->objectName();
        if (auto* box = qobject_cast<QComboBox*>(c)) {
            if (box->count() == 0)
                return record("empty box " + name);
            const int i = uniform(0, box->count() - 1);
            record(QString("box %1 to %2").arg(name, box->itemText(i)));
            box->setCurrentIndex(i);
        } else if (auto* slider = qobject_cast<QSlider*>(c)) {
            const int v = uniform(slider->minimum(), slider->maximum());
            record(QString("slider %1 to %2").arg(name).arg(v));
            slider->setValue(v);
        } else if (auto* spin = qobject_cast<QAbstractSpinBox*>(c)) {
            const int by = uniform(-3, 3);
            record(QString("spin %1 by %2").arg(name).arg(by));
            spin->stepBy(by);
        }
    }

    void typeExpression(const QString& text) {
        QLineEdit* field = w_->inspector().input()->field();
        if (!field->isVisible())
            return;
        field->setFocus();
        field->selectAll();
        QTest::keyClicks(field, text);
        QTest::keyClick(field, Qt::Key_Return);
    }

    QString junk() {
        static const QString pool = "abcdefghij0123456789 ()+-*[]@#%^&|";
        QString s;
        for (int i = uniform(1, 24); i > 0; --i)
            s += pool[uniform(0, int(pool.size()) - 1)];
        return s;
    }

    // An expression that cannot parse: a valid one with junk put into it, or junk alone.
    QString invalidText() {
        if (validTexts_.isEmpty() || uniform(0, 2) == 0)
            return "@@" + junk();
        QString t = validTexts_[uniform(0, int(validTexts_.size()) - 1)];
        return t.insert(uniform(0, int(t.size())), " @" + junk() + " ");
    }

    void startWithSeed() {
        auto* seed = w_->panel().findChild<QSpinBox*>("train.seed");
        if (!seed || !seed->isEnabled())
            return record("start anew: the panel is locked");
        const int s = uniform(1, 99);
        record(QString("start anew with seed %1").arg(s));
        seed->setValue(s);
        click("start");
    }

    void triggerAction(const QString& text) {
        for (QAction* a : w_->findChildren<QAction*>())
            if (a->text() == text && a->isEnabled()) {
                a->trigger();
                return;
            }
    }

    void openRecent() {
        const QStringList files = w_->recentRuns().files();
        if (files.isEmpty())
            return record("open recent: none yet");
        const QString f = QDir::toNativeSeparators(files[uniform(0, int(files.size()) - 1)]);
        record("open recent " + f);
        triggerAction(f);
    }

    // One action drawn by weight.
    void act() {
        struct Action {
            int weight;
            std::function<void()> run;
        };
        const std::vector<Action> table = {
            {6,
             [&] {
                 const int t = uniform(0, 2);
                 record(QStringList{"tab dashboard", "tab inspector", "tab compare"}[t]);
                 if (t == 0)
                     w_->showDashboard();
                 else if (t == 1)
                     w_->showInspector();
                 else
                     w_->showCompare();
             }},
            {14, [&] { changeControl(); }},
            {4,
             [&] {
                 // The inspector's Show box during training: the sequence that once read a freed trace.
                 w_->showInspector();
                 auto* show = visible<QComboBox>("inspector.picture");
                 if (!show)
                     return record("show: no expression traced");
                 const int i = uniform(0, show->count() - 1);
                 record("show " + show->itemText(i));
                 show->setCurrentIndex(i);
             }},
            {4,
             [&] {
                 record("random example");
                 if (click("inspector.random"))
                     validTexts_ << w_->inspector().input()->text();
             }},
            {3,
             [&] {
                 if (validTexts_.isEmpty())
                     return record("type valid: none yet");
                 const QString t = validTexts_[uniform(0, int(validTexts_.size()) - 1)];
                 record("type valid " + t);
                 typeExpression(t);
             }},
            {3,
             [&] {
                 const QString t = invalidText();
                 record("type invalid " + t);
                 typeExpression(t);
                 if (w_->inspector().input()->field()->isVisible())
                     QVERIFY2(!w_->inspector().input()->problem().isEmpty(),
                              qPrintable("no problem shown for '" + t + "'"));
             }},
            {2,
             [&] {
                 record("measure");
                 click("inspector.stepsNeeded.measure");
             }},
            {2,
             [&] {
                 record("play");
                 click("inspector.play");
             }},
            {3,
             [&] {
                 record("pause/resume");
                 click("pauseResume");
             }},
            {1,
             [&] {
                 record("stop");
                 click("stop");
             }},
            {3,
             [&] {
                 record("start");
                 click("start");
             }},
            {1, [&] { startWithSeed(); }},
            {1,
             [&] {
                 record("new run");
                 triggerAction("&New run");
             }},
            {2,
             [&] {
                 const QString f = dir_.filePath(QString("saved-%1/run.json").arg(uniform(0, 2)));
                 record("save " + f);
                 w_->saveRun(f);
                 savedFiles_ << f;
             }},
            {2, [&] { openRecent(); }},
            {1,
             [&] {
                 record("export");
                 QString error;
                 w_->exportTo(dir_.filePath("export"), true, &error);
             }},
            {2,
             [&] {
                 const int kind = uniform(0, 2);
                 const QSize size = kind == 0   ? QSize(1280, 800)
                                    : kind == 1 ? QSize(1920, 1080)
                                                : QSize(uniform(1280, 1920), uniform(800, 1080));
                 record(QString("resize %1x%2").arg(size.width()).arg(size.height()));
                 w_->resize(size);
             }},
            {2,
             [&] {
                 QStringList existing;
                 for (const QString& f : savedFiles_)
                     if (QFileInfo::exists(f))
                         existing << f;
                 if (existing.isEmpty() || uniform(0, 4) == 0) {
                     record("compare: cleared");
                     w_->compare().clearSources();
                     return;
                 }
                 const QString f = existing[uniform(0, int(existing.size()) - 1)];
                 record("compare " + f);
                 QString error;
                 w_->compare().addSource(f, &error);
                 w_->showCompare();
             }},
            {1,
             [&] {
                 record("live");
                 click("historyLive");
             }},
            {1,
             [&] {
                 record("colours");
                 if (auto* a = w_->findChild<QAction*>("view.colourBlind"))
                     a->trigger();
             }},
        };
        int total = 0;
        for (const Action& a : table)
            total += a.weight;
        int pick = uniform(0, total - 1);
        for (const Action& a : table) {
            if (pick < a.weight) {
                a.run();
                return;
            }
            pick -= a.weight;
        }
    }

    void printActions() {
        std::fprintf(stderr, "test_stress: seed %u, %lld actions:\n", options.seed,
                     static_cast<long long>(actions_.size()));
        for (const QString& a : actions_)
            std::fprintf(stderr, "  %s\n", qPrintable(a));
    }

private slots:
    void initTestCase() { qputenv("XDG_CONFIG_HOME", dir_.filePath("config").toLocal8Bit()); }

    void cleanup() {
        if (QTest::currentTestFailed())
            printActions();
    }

    void userActionsWhileTraining() {
        rng_.seed(options.seed);
        log_.setFileName(QString("stress-actions-%1.txt").arg(options.seed));
        QVERIFY2(log_.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text),
                 qPrintable(log_.fileName()));
        const QString logPath = QFileInfo(log_).absoluteFilePath();
        std::fprintf(stderr, "test_stress: seed %u, %.2f minutes; actions written to %s\n", options.seed,
                     options.minutes, qPrintable(logPath));
        Watchdog watchdog(ndrtest::waitMs(120000), logPath);

        MainWindow w(false);
        w_ = &w;
        w.setAskBeforeDiscarding(false);
        w.setRecoveryFolder(dir_.filePath("recovery"), 2000);
        w.resize(1280, 800);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.showConfig(endlessRun());
        QVERIFY(click("start"));
        QCOMPARE(w.session().state(), TrainingSession::State::Training);

        QElapsedTimer clock;
        clock.start();
        const qint64 limit = qint64(options.minutes * 60000);
        while (clock.elapsed() < limit) {
            act();
            if (QTest::currentTestFailed())
                return;
            watchdog.beat();
            QTest::qWait(uniform(20, 200));
            closeDialogs();
            watchdog.beat();
            QVERIFY2(unhandledErrors.isEmpty(), qPrintable(unhandledErrors.join('\n')));
            QVERIFY2(unexpected_.isEmpty(), qPrintable(unexpected_.join('\n')));
        }

        // The window still works: it trains, saves the run and opens it again with the same steps.
        TrainingSession& s = w.session();
        if (s.state() == TrainingSession::State::Paused)
            s.resume();
        if (s.state() != TrainingSession::State::Training) {
            QTRY_VERIFY_WITH_TIMEOUT(!s.isSaving(), ndrtest::waitMs(30000));
            w.showConfig(endlessRun());
            QString error;
            QVERIFY2(s.startOrContinue(endlessRun(), &error), qPrintable(error));
        }
        const int before = s.stepsDone();
        QTRY_VERIFY_WITH_TIMEOUT(s.stepsDone() >= before + 100, ndrtest::waitMs(60000));
        watchdog.beat();
        s.stop();
        QTRY_VERIFY_WITH_TIMEOUT(s.state() == TrainingSession::State::Ready, ndrtest::waitMs(30000));
        QTRY_VERIFY_WITH_TIMEOUT(!s.isSaving(), ndrtest::waitMs(30000));
        const QString last = dir_.filePath("last/run.json");
        QSignalSpy saved(&s, &TrainingSession::saved);
        w.saveRun(last);
        QTRY_VERIFY_WITH_TIMEOUT(saved.count() == 1, ndrtest::waitMs(30000));
        const int steps = s.stepsDone();
        watchdog.beat();
        QVERIFY(w.openRun(last));
        QCOMPARE(s.stepsDone(), steps);
        closeDialogs();
        QVERIFY2(unhandledErrors.isEmpty(), qPrintable(unhandledErrors.join('\n')));
        QVERIFY2(unexpected_.isEmpty(), qPrintable(unexpected_.join('\n')));
        std::fprintf(stderr,
                     "test_stress: %lld actions in %.0f s, seed %u, %lld error messages answered, %d steps\n",
                     static_cast<long long>(actions_.size()), clock.elapsed() / 1000.0, options.seed,
                     static_cast<long long>(errorBoxes_.size()), steps);
        w.session().clear();
        w_ = nullptr;
        log_.close();
        log_.remove();
    }
};

int main(int argc, char** argv) {
    // --minutes N and --seed S are this suite's; the rest go to Qt Test.
    std::vector<char*> rest;
    for (int i = 0; i < argc; ++i) {
        const QString a = QString::fromLocal8Bit(argv[i]);
        if (a == "--minutes" || a == "--seed") {
            bool ok = false;
            const QString value = i + 1 < argc ? QString::fromLocal8Bit(argv[i + 1]) : QString();
            if (a == "--minutes") {
                options.minutes = value.toDouble(&ok);
                ok = ok && options.minutes > 0;
            } else {
                options.seed = value.toUInt(&ok);
            }
            if (!ok) {
                std::fprintf(stderr, "test_stress: %s needs a %s, got '%s'\n", qPrintable(a),
                             a == "--minutes" ? "positive number" : "non-negative whole number",
                             qPrintable(value));
                return 2;
            }
            ++i;
            continue;
        }
        rest.push_back(argv[i]);
    }
    int n = int(rest.size());
    GuardedApplication app(n, rest.data());
    app.setErrorHandler([](const QString& what) { unhandledErrors << what; });
    TestStress test;
    return QTest::qExec(&test, n, rest.data());
}

#include "test_stress.moc"
