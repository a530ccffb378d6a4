// The app's last line of defence: an exception out of a slot or a paint is caught where Qt delivers the
// event and reported on the GUI thread, the window goes on (and keeps the unsaved run in its recovery
// copy); one message box however many errors follow.
#include "core/io/files.h"
#include "small_run.h"
#include "testutil.h"
#include "ui/common/guarded_application.h"
#include "ui/shell/main_window.h"

#include <QDir>
#include <QMessageBox>
#include <QPainter>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>
#include <new>
#include <stdexcept>

using namespace ndrui;

namespace {

// A widget whose paint fails as an allocation that cannot be met would.
class FailingPaint : public QWidget {
protected:
    void paintEvent(QPaintEvent*) override { throw std::bad_alloc(); }
};

GuardedApplication* guarded() {
    return static_cast<GuardedApplication*>(QCoreApplication::instance());
}

} // namespace

class TestGuardedApplication : public QObject {
    Q_OBJECT

    QStringList reported_;

private slots:
    void init() {
        reported_.clear();
        guarded()->setErrorHandler([this](const QString& what) { reported_ << what; });
    }

    void anExceptionInASlotIsReportedAndTheLoopGoesOn() {
        const int before = guarded()->caught();
        bool after = false;
        QTimer::singleShot(0, [] { throw std::runtime_error("a slot failed"); });
        QTimer::singleShot(10, [&] { after = true; });
        QTRY_VERIFY(after); // the event loop went on past the failed slot
        QTRY_COMPARE(reported_, QStringList{"a slot failed"});
        QCOMPARE(guarded()->caught(), before + 1);
    }

    void aFailingPaintIsReported() {
        FailingPaint w;
        w.resize(100, 80);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        w.repaint();
        QTRY_VERIFY(!reported_.isEmpty());
        QVERIFY2(reported_.front().contains("out of memory"), qPrintable(reported_.front()));
    }

    // The window's report: one box that does not block, and a recovery copy of the unsaved run.
    void theWindowKeepsTheRunAndSaysWhere() {
        QTemporaryDir recovery;
        MainWindow w(false);
        // A copy at the first evaluation, then none for an hour: the next one is the report's.
        w.setRecoveryFolder(recovery.path(), 60 * 60 * 1000);
        QSignalSpy kept(&w.session(), &TrainingSession::recoverySaved);
        QString error;
        QVERIFY2(w.session().start(ndrtest::smallRun(1000000), &error), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(kept.count() == 1 && !w.session().isSavingRecoveryCopy(),
                                 ndrtest::waitMs(30000));
        const auto stepsKept = [&] {
            return ndr::loadRunRecord(w.session().recoveryRunFile().toStdString(),
                                      ndr::RunFileParts::WithoutTraces)
                .models[0]
                .stepsDone;
        };
        const int first = stepsKept();
        QTRY_VERIFY_WITH_TIMEOUT(w.session().models()[0].stepsDone > first + 200, ndrtest::waitMs(30000));
        guarded()->setErrorHandler([&w](const QString& what) { w.reportUnhandledError(what); });
        QTimer::singleShot(0, [] { throw std::runtime_error("a view failed"); });
        QTRY_VERIFY_WITH_TIMEOUT(w.findChild<QMessageBox*>("unhandledErrorBox"), ndrtest::waitMs(5000));
        auto* box = w.findChild<QMessageBox*>("unhandledErrorBox");
        QVERIFY2(box->text().contains("a view failed") &&
                     box->text().contains(QDir::toNativeSeparators(recovery.path())),
                 qPrintable(box->text()));
        QVERIFY(box->windowModality() != Qt::ApplicationModal); // the window and training go on
        QCOMPARE(w.session().state(), TrainingSession::State::Training);
        QTRY_VERIFY_WITH_TIMEOUT(kept.count() == 2 && !w.session().isSavingRecoveryCopy(),
                                 ndrtest::waitMs(10000));
        QVERIFY2(stepsKept() > first + 200, qPrintable(QString::number(stepsKept())));
        // A second error updates the box rather than stacking another.
        QTimer::singleShot(0, [] { throw std::runtime_error("again"); });
        QTRY_VERIFY_WITH_TIMEOUT(box->text().contains("again"), ndrtest::waitMs(5000));
        QCOMPARE(int(w.findChildren<QMessageBox*>("unhandledErrorBox").size()), 1);
        w.session().stop();
        QTRY_VERIFY_WITH_TIMEOUT(w.session().state() == TrainingSession::State::Ready,
                                 ndrtest::waitMs(10000));
        w.session().clear();
    }
};

int main(int argc, char** argv) {
    GuardedApplication app(argc, argv);
    TestGuardedApplication test;
    return QTest::qExec(&test, argc, argv);
}

#include "test_guarded_application.moc"
