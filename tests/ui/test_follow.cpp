// Following a run from its folder: `ndr train` trains a tiny run in a child process, saving at every
// evaluation; the window opens it read-only ("trained by pid N on HOST, last save HH:MM"), its
// dashboard's latest evaluation moves on with the child's saves, and when the child ends the run is an
// ordinary finished run; Compare, given the run file, says who trains it until then. Meanwhile Save,
// Save As, exports and recovery copies into the folder are refused or never made, and the app writes
// nothing there: only the child's files ever appear.
#include "core/io/files.h"
#include "testutil.h"
#include "ui/compare/compare_view.h"
#include "ui/dashboard/dashboard.h"
#include "ui/shell/main_window.h"
#include "ui/training/training_session.h"

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QtTest>

#include <map>
#include <set>
#include <unistd.h>

using namespace ndrui;

namespace {

// A run that `ndr train` trains in about ten seconds, evaluating (and saving) every 500 steps.
constexpr int kSteps = 10000;
QByteArray tinyConfig(int steps) {
    return QStringLiteral(R"({"preset": "stub",
  "task": {"evalExamplesPerDepth": 16},
  "train": {"steps": %1, "evalInterval": 500, "batchSize": 16},
  "models": [{"dModel": 16, "heads": 2, "dFF": 32, "steps": 6, "evalSteps": 0},
             {"preset": "vanilla", "dModel": 16, "heads": 2, "dFF": 32, "steps": 4}]})")
        .arg(steps)
        .toUtf8();
}

// The files of a folder with their times of change.
std::map<QString, QDateTime> filesIn(const QString& folder) {
    std::map<QString, QDateTime> files;
    for (const QFileInfo& f : QDir(folder).entryInfoList(QDir::Files | QDir::Hidden | QDir::System))
        files[f.fileName()] = f.lastModified();
    return files;
}

// The step of the dashboard's latest evaluation, from its caption ("Evaluation at step 300").
int captionStep(const Dashboard& d) {
    const auto m = QRegularExpression(R"(step (\d+))").match(d.caption());
    return m.hasMatch() ? m.captured(1).toInt() : -1;
}

} // namespace

class TestFollow : public QObject {
    Q_OBJECT

private slots:
    void followsARunAnotherProcessTrains() {
        QTemporaryDir dir;
        const QString config = dir.filePath("tiny.json");
        {
            QFile f(config);
            QVERIFY(f.open(QIODevice::WriteOnly) && f.write(tinyConfig(kSteps)) > 0);
        }
        const QString folder = dir.filePath("run");
        const QString runFile = QDir(folder).filePath("run.json");
        QProcess child;
        child.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        child.start(NDR_BINARY_DIR "/app/ndr",
                    {"train", "--config", config, "--out", folder, "--quiet", "--autosave-every", "1"});
        QVERIFY2(child.waitForStarted(), qPrintable(child.errorString()));
        const qint64 childPid = child.processId();

        // What may appear in the folder: the child's run file, lock, checkpoints and temporary files.
        const QString childTemp = QString(".tmp-%1-").arg(childPid);
        const QString ownTemp = QString(".tmp-%1-").arg(::getpid());
        std::set<QString> seen;
        const auto look = [&] {
            for (const auto& [name, time] : filesIn(folder)) {
                seen.insert(name);
                if (name.contains(ownTemp))
                    return "the app wrote " + name;
                if (name != "run.json" && name != ".run.json.lock" && !name.endsWith(".ckpt") &&
                    !name.contains(childTemp))
                    return "a file the child does not write: " + name;
            }
            return QString();
        };

        // The child's first save, under its lock.
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo::exists(runFile) && ndr::runFileHolder(runFile.toStdString()).held,
                                 ndrtest::waitMs(60000));
        const QDateTime lockTime = QFileInfo(QDir(folder).filePath(".run.json.lock")).lastModified();

        MainWindow window(false);
        window.setAskBeforeDiscarding(false);
        const QTemporaryDir recovery;
        window.setRecoveryFolder(recovery.path(), 0); // a copy at once, were one ever made
        window.resize(1280, 800);
        window.show();
        QVERIFY(window.openRun(runFile));
        TrainingSession& session = window.session();
        QVERIFY(session.isFollowing());
        QCOMPARE(session.followedHolder().pid, long(childPid));
        const QString host = QString::fromStdString(ndr::hostName());
        QVERIFY2(window.windowTitle().contains(
                     QString("trained by pid %1 on %2, last save ").arg(childPid).arg(host)),
                 qPrintable(window.windowTitle()));
        QVERIFY2(QRegularExpression(R"(last save \d\d:\d\d)").match(window.windowTitle()).hasMatch(),
                 qPrintable(window.windowTitle()));

        // Compare, given the run file, says who trains it.
        CompareView& compare = window.compare();
        QString problem;
        QVERIFY(compare.addSource(runFile, &problem));
        const QString trainedBy = QString("run: trained by pid %1 on %2, last save ").arg(childPid).arg(host);
        QTRY_VERIFY2_WITH_TIMEOUT(compare.statusText().contains(trainedBy), qPrintable(compare.statusText()),
                                  ndrtest::waitMs(20000));

        // Every way the app writes is closed to the folder while the child trains it.
        QString error;
        QVERIFY(!window.exportTo(folder, true, &error));
        QVERIFY2(error.contains("another process trains"), qPrintable(error));
        QSignalSpy failed(&session, &TrainingSession::saveFailed);
        session.save(runFile);
        session.save(QDir(folder).filePath("copy.json"));
        QCOMPARE(failed.size(), 2);
        QVERIFY2(failed.first().first().toString().contains("another process"),
                 qPrintable(failed.first().first().toString()));
        QVERIFY(!session.canContinue(session.config()));

        // The dashboard follows the child's saves: its latest evaluation moves on at least twice.
        std::set<int> steps;
        QElapsedTimer clock;
        clock.start();
        while (steps.size() < 3 && child.state() != QProcess::NotRunning &&
               clock.elapsed() < ndrtest::waitMs(120000)) {
            QTest::qWait(50);
            problem = look();
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
            if (session.isFollowing() && captionStep(window.dashboard()) > 0)
                steps.insert(captionStep(window.dashboard()));
        }
        QVERIFY2(steps.size() >= 3,
                 qPrintable(QString("the dashboard showed %1 evaluations").arg(steps.size())));
        QVERIFY(session.recoveryRunFile().isEmpty());

        // The child ends: the run becomes an ordinary finished run.
        QVERIFY(child.waitForFinished(ndrtest::waitMs(180000)));
        QCOMPARE(child.exitCode(), 0);
        QTRY_VERIFY_WITH_TIMEOUT(!session.isFollowing(), ndrtest::waitMs(10000));
        QVERIFY2(!window.windowTitle().contains("trained by"), qPrintable(window.windowTitle()));
        QCOMPARE(session.state(), TrainingSession::State::Ready);
        QVERIFY(!session.isModified());
        const ndr::RunRecord onDisk =
            ndr::loadRunRecord(runFile.toStdString(), ndr::RunFileParts::WithoutTraces);
        for (size_t m = 0; m < session.models().size(); ++m) {
            QCOMPARE(session.models()[m].stepsDone, onDisk.models[m].stepsDone);
            QCOMPARE(session.models()[m].status.state, ndr::ModelState::Finished);
            QCOMPARE(session.models()[m].history.size(), onDisk.models[m].history.size());
        }
        QTRY_COMPARE_WITH_TIMEOUT(captionStep(window.dashboard()), kSteps, ndrtest::waitMs(5000));
        QTRY_VERIFY2_WITH_TIMEOUT(!compare.statusText().contains("trained by"),
                                  qPrintable(compare.statusText()), ndrtest::waitMs(20000));

        // Nothing of the app's in the folder, and the child's files as it left them.
        const std::map<QString, QDateTime> left = filesIn(folder);
        QTest::qWait(1500);
        QCOMPARE(filesIn(folder), left);
        QCOMPARE(QFileInfo(QDir(folder).filePath(".run.json.lock")).lastModified(), lockTime);
        for (const auto& [name, time] : left)
            QVERIFY2(name == "run.json" || name == ".run.json.lock" || name.endsWith(".ckpt"),
                     qPrintable(name));
        QCOMPARE(QDir(recovery.path()).entryList(QDir::NoDotAndDotDot | QDir::AllEntries), QStringList());
        problem = look();
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QVERIFY(seen.count("run.json") && seen.count(".run.json.lock"));

        // An ordinary run now: saving it works (into another folder, so the child's stay as they were).
        QSignalSpy saved(&session, &TrainingSession::saved);
        session.save(dir.filePath("elsewhere/run.json"));
        QTRY_COMPARE_WITH_TIMEOUT(saved.size(), 1, ndrtest::waitMs(10000));
    }
};

QTEST_MAIN(TestFollow)
#include "test_follow.moc"
