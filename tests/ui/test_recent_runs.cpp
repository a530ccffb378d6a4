// The recent runs list: newest first, no repeats, at most eight, removable; kept in the settings only
// when asked to, and the window's Open recent menu lists it.
#include "ui/shell/main_window.h"
#include "ui/shell/recent_runs.h"

#include <QMenu>
#include <QMenuBar>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>

using namespace ndrui;

class TestRecentRuns : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    QString file(int i) const { return dir_.filePath(QString("run-%1/run.json").arg(i)); }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        qputenv("XDG_CONFIG_HOME", dir_.filePath("config").toLocal8Bit());
        QCoreApplication::setOrganizationName("NDR Studio Test");
        QCoreApplication::setApplicationName("test-recent-runs");
    }
    void init() { QSettings().remove("files/recent"); }

    void newestFirstWithoutRepeats() {
        RecentRuns recent(false);
        QVERIFY(recent.files().isEmpty());
        recent.add(file(1));
        recent.add(file(2));
        recent.add(file(1));
        QCOMPARE(recent.files(), QStringList({file(1), file(2)}));
        // Relative paths are kept as absolute ones.
        QDir::setCurrent(dir_.path());
        recent.add("run-2/run.json");
        QCOMPARE(recent.files(), QStringList({file(2), file(1)}));
    }

    void atMostEight() {
        RecentRuns recent(false);
        for (int i = 0; i < 11; ++i)
            recent.add(file(i));
        QStringList want;
        for (int i = 10; i > 10 - RecentRuns::kMax; --i)
            want << file(i);
        QCOMPARE(RecentRuns::kMax, 8);
        QCOMPARE(recent.files(), want);
    }

    void removeTakesOneOff() {
        RecentRuns recent(false);
        for (int i = 0; i < 3; ++i)
            recent.add(file(i));
        recent.remove(file(1));
        QCOMPARE(recent.files(), QStringList({file(2), file(0)}));
        recent.remove(file(7)); // not in the list: nothing changes
        QCOMPARE(recent.files(), QStringList({file(2), file(0)}));
    }

    void persistentListLivesInTheSettings() {
        {
            RecentRuns recent(true);
            recent.add(file(1));
            recent.add(file(2));
        }
        QCOMPARE(RecentRuns(true).files(), QStringList({file(2), file(1)}));
        QCOMPARE(QSettings().value("files/recent").toStringList(), QStringList({file(2), file(1)}));
        // A list without settings neither reads nor writes them.
        RecentRuns memory(false);
        QVERIFY(memory.files().isEmpty());
        memory.add(file(3));
        QCOMPARE(RecentRuns(true).files(), QStringList({file(2), file(1)}));
    }

    void theWindowsMenuListsThem() {
        QSettings().setValue("files/recent", QStringList({file(4), file(5)}));
        MainWindow w(true);
        QCOMPARE(w.recentRuns().files(), QStringList({file(4), file(5)}));
        QMenu* recentMenu = nullptr;
        for (QAction* a : w.menuBar()->actions())
            if (a->menu())
                for (QAction* b : a->menu()->actions())
                    if (b->menu() && b->text().contains("recent"))
                        recentMenu = b->menu();
        QVERIFY(recentMenu);
        QCOMPARE(recentMenu->actions().size(), 2);
        QCOMPARE(recentMenu->actions()[0]->text(), QDir::toNativeSeparators(file(4)));
        QVERIFY(recentMenu->isEnabled());
        // A file that is gone is taken off the list when picked.
        recentMenu->actions()[0]->trigger();
        QCOMPARE(w.recentRuns().files(), QStringList({file(5)}));
        QCOMPARE(recentMenu->actions().size(), 1);
        if (auto* box = w.findChild<QWidget*>("errorBox"))
            box->close();
    }
};

QTEST_MAIN(TestRecentRuns)
#include "test_recent_runs.moc"
