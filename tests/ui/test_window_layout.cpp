// The whole window at a laptop's 1280x800, the default 1400x900 and a large 1920x1080, on every tab
// (the inspector in each of its pictures): no label, plot title or left axis label cut short, every
// row of every table that cannot scroll in view, every view inside the window. With
// NDR_VIEW_SHOTS=<dir> it saves a screenshot of each case for a person to look at.
#include "testutil.h"
#include "ui/compare/compare_view.h"
#include "ui/dashboard/dashboard.h"
#include "ui/inspector/inspector.h"
#include "ui/panel/experiment_panel.h"
#include "ui/shell/main_window.h"

#include <QLabel>
#include <QMap>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <qcustomplot.h>

using namespace ndrui;

namespace {

// Two models, or four as the stub-routing preset has (each with and without head routing).
ndr::RunConfig tinyRun(int models) {
    ndr::RunConfig c = ndr::presetConfig("stub");
    c.task.evalExamplesPerDepth = 32;
    c.models = {ndr::ndrModel(16, 2, 32, 5), ndr::vanillaModel(16, 2, 32, 5)};
    if (models == 4) {
        // Ten steps: the inspector's step-by-step readout then needs its horizontal scroll bar at 1280.
        for (ndr::ModelConfig& m : c.models)
            m.as<ndr::EncoderConfig>().steps = 10;
        for (int m = 0; m < 2; ++m) {
            ndr::ModelConfig routed = c.models[size_t(m)];
            routed.name += " top-1";
            routed.as<ndr::EncoderConfig>().headRouting = true;
            routed.as<ndr::EncoderConfig>().routeTopK = 1;
            c.models.push_back(routed);
        }
    }
    c.train.batchSize = 8;
    c.train.steps = 60;
    c.train.evalInterval = 20;
    return c;
}

bool insideScrollArea(const QWidget* w, const QWidget* top) {
    for (const QWidget* p = w->parentWidget(); p && p != top; p = p->parentWidget())
        if (qobject_cast<const QAbstractScrollArea*>(p))
            return true;
    return false;
}

QString describe(const QWidget* w) {
    return QString("%1 '%2'").arg(w->metaObject()->className(), w->objectName());
}

// Every problem of the window as it is now, one line each.
QStringList problems(QWidget& window) {
    QStringList found;
    const QRect inside = window.rect();
    for (QWidget* w : window.findChildren<QWidget*>()) {
        if (!w->isVisibleTo(&window) || w->width() <= 0 || w->window() != &window)
            continue;
        const QRect at(w->mapTo(&window, QPoint(0, 0)), w->size());
        if (!insideScrollArea(w, &window) && !inside.contains(at.adjusted(1, 1, -1, -1)) && at.width() > 2)
            found << QString("%1 at %2,%3 %4x%5 runs out of the window")
                         .arg(describe(w))
                         .arg(at.x())
                         .arg(at.y())
                         .arg(at.width())
                         .arg(at.height());
        if (auto* label = qobject_cast<QLabel*>(w); label && !label->wordWrap() && !label->text().isEmpty() &&
                                                    label->pixmap().isNull() &&
                                                    label->sizeHint().width() > label->width() + 1)
            found << QString("%1 '%2' needs %3 px, has %4")
                         .arg(describe(label), label->text().left(40))
                         .arg(label->sizeHint().width())
                         .arg(label->width());
        if (auto* table = qobject_cast<QTableWidget*>(w)) {
            const int height = table->viewport()->height();
            const bool scrolls = table->verticalScrollBar()->isVisible();
            for (int r = 0; r < table->rowCount() && !scrolls; ++r)
                if (table->rowViewportPosition(r) + table->rowHeight(r) > height)
                    found << QString("%1: row %2 of %3 hidden (viewport %4 px high)")
                                 .arg(describe(table))
                                 .arg(r + 1)
                                 .arg(table->rowCount())
                                 .arg(height);
        }
        if (auto* plot = qobject_cast<QCustomPlot*>(w)) {
            for (QCPLayoutElement* e : plot->plotLayout()->elements(true)) {
                auto* title = qobject_cast<QCPTextElement*>(e);
                if (!title || title->text().isEmpty() || !title->visible())
                    continue;
                int need = 0; // the widest of its lines
                for (const QString& line : title->text().split('\n'))
                    need = std::max(need, QFontMetrics(title->font()).horizontalAdvance(line));
                if (need > title->outerRect().width() || title->outerRect().right() > plot->width())
                    found << QString("%1 title '%2' needs %3 px, has %4")
                                 .arg(describe(plot->parentWidget()), title->text())
                                 .arg(need)
                                 .arg(title->outerRect().width());
            }
            // A left axis's label runs along its rect and the rect's margins: longer, it is cut.
            for (QCPAxisRect* rect : plot->axisRects()) {
                const QCPAxis* y = rect->axis(QCPAxis::atLeft);
                if (!y || !y->visible() || y->label().isEmpty() || !rect->visible())
                    continue;
                const int need = QFontMetrics(y->labelFont()).horizontalAdvance(y->label());
                if (need > rect->outerRect().height())
                    found << QString("%1 axis label '%2' needs %3 px, has %4")
                                 .arg(describe(plot->parentWidget()), y->label())
                                 .arg(need)
                                 .arg(rect->outerRect().height());
            }
        }
    }
    return found;
}

} // namespace

class TestWindowLayout : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString shots_;
    QMap<int, QString> runs_; // model count -> saved run

    void check(MainWindow& window, const QString& name) {
        window.redrawNow();
        QCoreApplication::processEvents();
        if (!shots_.isEmpty())
            window.grab().save(shots_ + "/" + name + ".png");
        const QStringList found = problems(window);
        QVERIFY2(found.isEmpty(), qPrintable(name + ":\n" + found.join("\n")));
    }

private slots:
    // Finished runs, saved: each size opens one in a window of its own, as a user would.
    void initTestCase() {
        qputenv("XDG_CONFIG_HOME", dir_.filePath("config").toLocal8Bit());
        shots_ = qEnvironmentVariable("NDR_VIEW_SHOTS");
        if (!shots_.isEmpty())
            QDir().mkpath(shots_);
        for (int models : {2, 4}) {
            MainWindow window(false);
            window.setAskBeforeDiscarding(false);
            window.show();
            window.showConfig(tinyRun(models));
            QTest::mouseClick(window.panel().findChild<QPushButton*>("start"), Qt::LeftButton);
            QTRY_COMPARE_WITH_TIMEOUT(window.session().state(), TrainingSession::State::Training,
                                      ndrtest::waitMs(5000));
            QTRY_COMPARE_WITH_TIMEOUT(window.session().state(), TrainingSession::State::Ready,
                                      ndrtest::waitMs(30000));
            runs_[models] = dir_.filePath(QString("run-%1/run.json").arg(models));
            QSignalSpy saved(&window.session(), &TrainingSession::saved);
            window.saveRun(runs_[models]);
            QTRY_COMPARE_WITH_TIMEOUT(saved.count(), 1, ndrtest::waitMs(10000));
        }
    }

    void everyScreenFits_data() {
        QTest::addColumn<QSize>("size");
        QTest::addColumn<int>("models");
        QTest::newRow("1280x800") << QSize(1280, 800) << 2;
        QTest::newRow("1400x900") << QSize(1400, 900) << 2;
        QTest::newRow("1920x1080") << QSize(1920, 1080) << 2;
        // The window keeps a laptop's size with four models: their columns scroll instead.
        QTest::newRow("1280x800, 4 models") << QSize(1280, 800) << 4;
        QTest::newRow("1920x1080, 4 models") << QSize(1920, 1080) << 4;
    }
    void everyScreenFits() {
        QFETCH(QSize, size);
        QFETCH(int, models);
        const QString run = runs_.value(models);
        MainWindow window(false);
        window.setAskBeforeDiscarding(false);
        window.resize(size);
        window.show();
        QVERIFY(window.openRun(run));
        QString error;
        QVERIFY2(window.compare().addSource(run, &error), qPrintable(error));
        QVERIFY(window.inspectRandom(4).isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(window.inspector().tracesComplete(), ndrtest::waitMs(10000));
        window.dashboard().selectEvaluation(1); // the history slider mid-run
        QCoreApplication::processEvents();
        QCOMPARE(window.size(), size);

        const QString at = QString("%1x%2-%3models").arg(size.width()).arg(size.height()).arg(models);
        window.showDashboard();
        check(window, "dashboard-" + at);
        window.showInspector();
        for (auto [picture, name] :
             {std::pair{StepPicture::Heatmap, "heatmaps"}, std::pair{StepPicture::Lines, "lines"},
              std::pair{StepPicture::AllSteps, "every-step"}}) {
            window.inspector().setPicture(picture);
            check(window, QString("inspector-%1-%2").arg(name, at));
        }
        window.showCompare();
        check(window, "compare-" + at);
    }
};

QTEST_MAIN(TestWindowLayout)
#include "test_window_layout.moc"
