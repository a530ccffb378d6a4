// Data for the view tests: a tiny real training run of NDR and the vanilla Transformer on the stub task,
// hand-made traces of many steps, a dark palette, and helpers to find what a QCustomPlot shows.
#pragma once

#include "core/task/ctl_task.h"
#include "core/train/trainer.h"

#include <QDir>
#include <QPalette>
#include <QtTest>
#include <memory>
#include <qcustomplot.h>

namespace viewtest {

using namespace ndr;

// A trace the test owns, handed to a view that it outlives (views share the traces they draw).
inline std::shared_ptr<const Trace> borrowed(const Trace& t) {
    return std::shared_ptr<const Trace>(std::shared_ptr<void>(), &t);
}

struct Run {
    RunConfig config;
    std::unique_ptr<CtlTask> task;
    QStringList names;
    std::vector<std::vector<int>> lossSteps;
    std::vector<std::vector<double>> losses;
    std::vector<std::vector<EvalRecord>> histories;
    std::vector<Split> splits;
    std::vector<Trace> traces() const {
        std::vector<Trace> t;
        for (const auto& h : histories)
            t.push_back(h.back().probe);
        return t;
    }
};

inline Run train(int steps, int evalInterval) {
    Run run;
    run.config = presetConfig("stub");
    run.config.task.evalExamplesPerDepth = 32;
    run.config.models = {ndrModel(16, 2, 32, 8), vanillaModel(16, 2, 32, 5)};
    run.config.train.batchSize = 16;
    run.config.train.steps = steps;
    run.config.train.evalInterval = evalInterval;
    run.task = std::make_unique<CtlTask>(run.config.task);
    for (int m = 0; m < 2; ++m) {
        Trainer trainer(run.config, m, *run.task, defaultProbe(*run.task));
        std::vector<int> at;
        std::vector<double> loss;
        trainer.run(
            [&](const TrainProgress& p) {
                if (!p.eval && p.evaluating < 0)
                    at.push_back(p.step), loss.push_back(p.loss);
            },
            nullptr);
        run.names << QString::fromStdString(run.config.models[m].name);
        run.lossSteps.push_back(at);
        run.losses.push_back(loss);
        run.histories.push_back(trainer.record().history);
    }
    for (int d : run.task->allDepths())
        run.splits.push_back(run.task->splitOf(d));
    return run;
}

inline QCustomPlot* plotOf(QWidget* view) {
    return view->findChild<QCustomPlot*>();
}

// Shows the view at a realistic size and draws it once, so pixel positions are those on screen.
inline void showAt(QWidget* view, QSize size = QSize(900, 500)) {
    view->resize(size);
    view->show();
    QVERIFY(QTest::qWaitForWindowExposed(view));
    QCoreApplication::processEvents();
    plotOf(view)->replot();
}

template <typename T> std::vector<T*> plottables(QCustomPlot* p) {
    std::vector<T*> out;
    for (int i = 0; i < p->plottableCount(); ++i)
        if (auto* t = qobject_cast<T*>(p->plottable(i)))
            out.push_back(t);
    return out;
}

inline QPoint pixelOf(const QCPAbstractPlottable* p, double key, double value) {
    return QPoint(int(std::lround(p->keyAxis()->coordToPixel(key))),
                  int(std::lround(p->valueAxis()->coordToPixel(value))));
}

inline QPalette darkPalette() {
    QPalette p;
    p.setColor(QPalette::Window, QColor(40, 42, 46));
    p.setColor(QPalette::Base, QColor(30, 31, 34));
    p.setColor(QPalette::WindowText, QColor(225, 225, 225));
    p.setColor(QPalette::Text, QColor(225, 225, 225));
    p.setColor(QPalette::Button, QColor(50, 52, 56));
    p.setColor(QPalette::ButtonText, QColor(225, 225, 225));
    return p;
}

// A hand-made trace of many steps, for the grid's wrapping: weights that differ per step, head and cell.
inline Trace longTrace(int steps, int heads, bool gates) {
    Trace t;
    t.tokenNames = {"[B]", "10", "a", "c", "b", "d", "a", "[E]"};
    t.positions = int(t.tokenNames.size());
    t.steps = steps;
    t.heads = heads;
    t.attention.resize(size_t(steps) * heads * t.positions * t.positions);
    for (int s = 0; s < steps; ++s)
        for (int h = 0; h < heads; ++h)
            for (int i = 0; i < t.positions; ++i) {
                // A diagonal shifted by step and head, so maps and heads differ.
                const int focus = (i + s + h) % t.positions;
                for (int j = 0; j < t.positions; ++j)
                    t.attention[((size_t(s) * heads + h) * t.positions + i) * t.positions + j] =
                        j == focus ? 0.7f : 0.3f / (t.positions - 1);
            }
    if (gates) {
        t.gates.resize(size_t(steps) * t.positions);
        for (int s = 0; s < steps; ++s)
            for (int i = 0; i < t.positions; ++i)
                t.gates[size_t(s) * t.positions + i] = i == s % t.positions ? 0.95f : 0.05f + 0.01f * i;
    }
    return t;
}

// The names of a plot's legend entries, in order.
inline QStringList legendNames(QCustomPlot* plot) {
    QStringList names;
    for (int i = 0; i < plot->legend->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot->legend->item(i)))
            names << item->plottable()->name();
    return names;
}

// Screenshots of the views for a person to look at: saved only when NDR_VIEW_SHOTS names a folder.
inline QString shotsDir() {
    const QString dir = qEnvironmentVariable("NDR_VIEW_SHOTS");
    if (!dir.isEmpty())
        QDir().mkpath(dir);
    return dir;
}

inline bool shoot(QWidget* view, const QString& name) {
    const QString dir = shotsDir();
    if (dir.isEmpty())
        return true;
    QCoreApplication::processEvents();
    return view->grab().save(dir + "/" + name + ".png");
}

} // namespace viewtest
