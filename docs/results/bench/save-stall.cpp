// How long the window's event loop stalls while a run is saved: a Qt Test, not part of the suite,
// that opens a run file in a TrainingSession and saves it three times with the app's stall meter
// running (docs/results.md, "The app while training"). To run it, copy it into the tests:
//   cp docs/results/bench/save-stall.cpp tests/ui/test_zz_stall.cpp
//   cmake --build build/release --target test_zz_stall
//   QT_QPA_PLATFORM=offscreen NDR_STALL_RUN=RUN/run.json build/release/tests/test_zz_stall
// and remove the copy afterwards.
#include "testutil.h"
#include "ui/common/stall_meter.h"
#include "ui/shell/main_window.h"
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
using namespace ndrui;
class TestZzStall : public QObject {
    Q_OBJECT
private slots:
    void stall() {
        QTemporaryDir dir;
        for (int round = 0; round < 3; ++round) {
            TrainingSession s;
            QString error;
            QVERIFY2(s.open(qEnvironmentVariable("NDR_STALL_RUN"), &error), qPrintable(error));
            QSignalSpy saved(&s, &TrainingSession::saved);
            StallMeter meter;
            meter.start(5);
            QElapsedTimer t;
            t.start();
            s.save(dir.filePath(QString("r%1.json").arg(round)));
            QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, 20000);
            meter.stop();
            qInfo("save took %lld ms; longest stall %.1f ms", t.elapsed(), meter.maxLatenessMs());
        }
    }
};
QTEST_MAIN(TestZzStall)
#include "test_zz_stall.moc"
