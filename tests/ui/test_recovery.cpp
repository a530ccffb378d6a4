// A run with unsaved training survives the window: while it trains, a copy is kept in a recovery
// folder of its own; the copy goes when the run is saved or discarded; a killed ndr-studio leaves it,
// and the next window offers to open it (then Save asks where), to discard it or to keep it for later;
// a crashed one says where its copy is.
#include "message_box_answer.h"
#include "small_run.h"
#include "testutil.h"
#include "ui/shell/main_window.h"

#include <QDir>
#include <QLockFile>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <csignal>

using namespace ndrui;
using ndrtest::Answer;
using ndrtest::named;
using ndrtest::smallRun;

namespace {

QStringList subfolders(const QString& dir) {
    return QDir(dir).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
}

} // namespace

class TestRecovery : public QObject {
    Q_OBJECT

private slots:
    void theCopyFollowsTheRunUntilItIsSaved() {
        QTemporaryDir recovery, files;
        TrainingSession s;
        s.setRecoveryFolder(recovery.path(), 0); // at every evaluation
        QSignalSpy kept(&s, &TrainingSession::recoverySaved);
        QString error;
        QVERIFY2(s.start(smallRun(150), &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(s.state(), TrainingSession::State::Ready, ndrtest::waitMs(30000));
        // The last copy is the whole run; no other window may take it. A copy asked for at the first
        // evaluation is captured between two chunks of training, so on a fast machine it can already
        // hold the whole run and be the only one.
        const auto wholeRunKept = [&] {
            if (kept.isEmpty() || kept.last().value(0).toString() != s.recoveryRunFile())
                return false;
            const auto rec = ndr::loadRunRecord(s.recoveryRunFile().toStdString());
            return rec.models[0].stepsDone == 150 && rec.models[1].stepsDone == 150;
        };
        QTRY_VERIFY_WITH_TIMEOUT(wholeRunKept(), ndrtest::waitMs(10000));
        const auto copy = ndr::Run::open(s.recoveryRunFile().toStdString());
        QCOMPARE(copy->record().models[0].stepsDone, 150);
        QCOMPARE(copy->record().models[1].stepsDone, 150);
        QCOMPARE(subfolders(recovery.path()).size(), 1);
        QVERIFY(TrainingSession::recoverableRuns(recovery.path()).isEmpty());
        QVERIFY(!TrainingSession::discardRecovered(s.recoveryRunFile()));

        // Saved where the user chose: the copy goes.
        QSignalSpy saved(&s, &TrainingSession::saved);
        s.save(files.filePath("run.json"));
        QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, ndrtest::waitMs(10000));
        QVERIFY(s.recoveryRunFile().isEmpty());
        QVERIFY(subfolders(recovery.path()).isEmpty());

        // Trained further: a new copy; the run discarded: it goes too.
        s.continueTraining(200);
        QTRY_COMPARE_WITH_TIMEOUT(s.state(), TrainingSession::State::Ready, ndrtest::waitMs(30000));
        QTRY_COMPARE_WITH_TIMEOUT(subfolders(recovery.path()).size(), 1, ndrtest::waitMs(5000));
        s.clear();
        QVERIFY(subfolders(recovery.path()).isEmpty());
        // The file saved before is the user's and stays as it was.
        QCOMPARE(ndr::Run::open(files.filePath("run.json").toStdString())->record().models[0].stepsDone, 150);
    }

    void aKilledWindowLeavesItsRunToRecover() {
        // ndr-studio with its own settings and data folders trains the stub preset; killed once the
        // first copy is kept.
        QTemporaryDir home;
        const QString data = home.filePath("data"), recovery = data + "/NDR Studio/ndr-studio/recovery";
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("XDG_DATA_HOME", data);
        env.insert("XDG_CONFIG_HOME", home.filePath("config"));
        env.insert("QT_QPA_PLATFORM", "offscreen");
        QProcess app;
        app.setProcessEnvironment(env);
        app.start(NDR_BINARY_DIR "/app/ndr-studio", {"--preset", "stub", "--start"});
        QVERIFY2(app.waitForStarted(), qPrintable(app.errorString()));
        auto copies = [&] {
            QStringList runs;
            for (const QString& d : subfolders(recovery))
                if (QFileInfo::exists(recovery + "/" + d + "/run.json"))
                    runs << recovery + "/" + d + "/run.json";
            return runs;
        };
        // A bound, not a measurement: seconds here, over ten minutes under ThreadSanitizer on a busy host.
        QTRY_VERIFY_WITH_TIMEOUT(copies().size() == 1, ndrtest::waitMs(120000));
        // A live window's copy is not offered to another.
        QVERIFY(TrainingSession::recoverableRuns(recovery).isEmpty());
        ::kill(pid_t(app.processId()), SIGKILL);
        QVERIFY(app.waitForFinished(10000));
        QCOMPARE(TrainingSession::recoverableRuns(recovery), copies());

        MainWindow w(false);
        w.setRecoveryFolder(recovery);
        {
            Answer later("recoveryBox", named("recoverLater"));
            w.offerRecovery();
            QVERIFY(later.seen());
            QVERIFY2(later.text().contains("NDR ") && later.text().contains("Transformer "),
                     qPrintable(later.text()));
        }
        QCOMPARE(TrainingSession::recoverableRuns(recovery).size(), 1);
        QVERIFY(!w.session().hasRun());
        {
            Answer open("recoveryBox", named("recoverOpen"));
            w.offerRecovery();
            QVERIFY(open.seen());
        }
        // The run as it was kept, never saved: Save asks where; the copy is this window's now.
        QVERIFY(w.session().hasWeights());
        // The first copy is asked for at the first evaluation of either model (step 500) and taken
        // between two chunks of training: that model is at 500 or a little later, the other anywhere.
        const auto kept = ndr::loadRunRecord(copies().value(0).toStdString());
        QVERIFY(std::max(w.session().models()[0].stepsDone, w.session().models()[1].stepsDone) >= 500);
        for (int i = 0; i < 2; ++i)
            QCOMPARE(w.session().models()[size_t(i)].stepsDone, kept.models[size_t(i)].stepsDone);
        QVERIFY(w.session().runFile().isEmpty());
        QVERIFY(w.session().isModified());
        QCOMPARE(w.session().recoveryRunFile(), copies().value(0));
        QVERIFY(TrainingSession::recoverableRuns(recovery).isEmpty());
        w.session().clear();
        QVERIFY(subfolders(recovery).isEmpty());
    }

    // A crash (SIGSEGV while training): the app says on stderr where the copy of its unsaved run is,
    // the copy was renewed at every evaluation, and the next window offers it, so the crash lost at most
    // the training since the last evaluation.
    void aCrashedWindowSaysWhereItsRunIs() {
        QTemporaryDir home;
        const QString data = home.filePath("data"), recovery = data + "/NDR Studio/ndr-studio/recovery";
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("XDG_DATA_HOME", data);
        env.insert("XDG_CONFIG_HOME", home.filePath("config"));
        env.insert("QT_QPA_PLATFORM", "offscreen");
        QProcess app;
        app.setProcessEnvironment(env);
        app.start(NDR_BINARY_DIR "/app/ndr-studio", {"--preset", "stub", "--start"});
        QVERIFY2(app.waitForStarted(), qPrintable(app.errorString()));
        // The steps of the first model in the copy, each time the copy changes.
        QList<int> seen;
        const auto copySteps = [&] {
            for (const QString& d : subfolders(recovery)) {
                const QString file = recovery + "/" + d + "/run.json";
                try {
                    const int steps = ndr::loadRunRecord(file.toStdString(), ndr::RunFileParts::WithoutTraces)
                                          .models[0]
                                          .stepsDone;
                    if (seen.isEmpty() || seen.back() != steps)
                        seen << steps;
                } catch (const std::exception&) {
                    // being replaced: read it next time
                }
            }
            return seen.size();
        };
        // A bound, not a measurement: seconds here, minutes under the sanitizers on a busy host.
        QTRY_VERIFY_WITH_TIMEOUT(copySteps() >= 3, ndrtest::waitMs(240000));
        // One copy per evaluation (every 500 steps of the stub preset), not one a minute.
        for (int i = 1; i < seen.size(); ++i)
            QVERIFY2(seen[i] - seen[i - 1] <= 1000, qPrintable(QString("copies at steps %1").arg([&] {
                         QStringList l;
                         for (int v : seen)
                             l << QString::number(v);
                         return l.join(", ");
                     }())));
        ::kill(pid_t(app.processId()), SIGSEGV);
        QVERIFY(app.waitForFinished(10000));
        QCOMPARE(app.exitStatus(), QProcess::CrashExit);
        const QString err = QString::fromUtf8(app.readAllStandardError());
        QVERIFY2(err.contains("crashed (SIGSEGV)") && err.contains(recovery), qPrintable(err));
        const QStringList left = TrainingSession::recoverableRuns(recovery);
        QCOMPARE(left.size(), 1);
        const int kept =
            ndr::loadRunRecord(left[0].toStdString(), ndr::RunFileParts::WithoutTraces).models[0].stepsDone;
        QVERIFY(kept >= seen.back());
        MainWindow w(false);
        w.setRecoveryFolder(recovery);
        {
            Answer open("recoveryBox", named("recoverOpen"));
            w.offerRecovery();
            QVERIFY(open.seen());
        }
        QCOMPARE(w.session().models()[0].stepsDone, kept);
        w.session().clear();
    }

    void discardRemovesALeftRun() {
        // A copy left by a window that is gone (its lock file names no live process).
        QTemporaryDir recovery;
        TrainingSession s;
        s.setRecoveryFolder(recovery.path(), 0);
        QString error;
        QVERIFY2(s.start(smallRun(50), &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(s.state(), TrainingSession::State::Ready, ndrtest::waitMs(30000));
        // The copy of the run as it ended may follow the one taken at its last evaluation: the folder
        // is copied once no copy is being written into it.
        QTRY_VERIFY_WITH_TIMEOUT(QFileInfo::exists(s.recoveryRunFile()) && !s.isSavingRecoveryCopy(),
                                 ndrtest::waitMs(5000));
        const QString dir = QFileInfo(s.recoveryRunFile()).absolutePath();
        // Copied aside while held, then released as a crash would leave it: a lock of a dead process.
        QTemporaryDir left;
        const QString copy = left.filePath("run-left");
        QVERIFY(QDir().mkpath(copy));
        for (const QString& f : QDir(dir).entryList(QDir::Files))
            if (f != "session.lock")
                QVERIFY(QFile::copy(dir + "/" + f, copy + "/" + f));
        {
            // QLockFile's own lock file, its first line (the pid) changed to one no process has.
            QLockFile real(copy + "/session.lock");
            QVERIFY(real.tryLock(0));
            QFile f(copy + "/session.lock");
            QVERIFY(f.open(QIODevice::ReadOnly));
            QList<QByteArray> lines = f.readAll().split('\n');
            f.close();
            real.unlock();
            lines[0] = "2147483000";
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(lines.join('\n'));
        }
        QCOMPARE(TrainingSession::recoverableRuns(left.path()), QStringList{copy + "/run.json"});
        MainWindow w(false);
        w.setRecoveryFolder(left.path());
        Answer discard("recoveryBox", named("recoverDiscard"));
        w.offerRecovery();
        QVERIFY(discard.seen());
        QVERIFY(subfolders(left.path()).isEmpty());
        QVERIFY(!w.session().hasRun());
    }
};

QTEST_MAIN(TestRecovery)
#include "test_recovery.moc"
