// Figures as PNG, PDF and SVG: every exported view of the dashboard (head usage, steps used and accuracy
// per operation included), the inspector's steps (heatmaps and gate strips, routing lines of one step
// and of every step) and Compare's bars and curves. Each SVG parses and holds the view's title and
// axis labels as text, each PDF is one whose text pdftotext finds and whose page pdftoppm draws, and
// the three formats of a figure show the same thing. Paper style is a column wide with small text on
// white; the colour-blind-safe scheme draws Okabe-Ito colours and cividis.
#include "core/config/model_kind.h"
#include "core/io/files.h"
#include "figure_check.h"
#include "small_run.h"
#include "testutil.h"
#include "ui/common/export_dialog.h"
#include "ui/common/palette.h"
#include "ui/compare/compare_view.h"
#include "ui/export/exporter.h"
#include "ui/inspector/expression_input.h"
#include "ui/inspector/inspector.h"
#include "ui/plots/color_maps.h"
#include "ui/plots/figure.h"
#include "ui/plots/routing_view.h"
#include "ui/shell/main_window.h"
#include "ui/training/training_session.h"
#include "view_fixture.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>

using namespace ndrui;
using namespace figtest;

namespace {

// A tiny trained run's record with, besides its own figures, head usage and steps run for NDR and
// counts per operation for both models: every per-model view has something to draw.
ndr::RunRecord richRecord(const viewtest::Run& run) {
    ndr::RunRecord r;
    r.config = run.config;
    r.tables = run.task->savedTables();
    r.probe = ndr::defaultProbe(*run.task);
    for (int m = 0; m < 2; ++m) {
        ndr::ModelRecord mr;
        mr.config = run.config.models[size_t(m)];
        mr.history = run.histories[size_t(m)];
        mr.stepsDone = run.config.train.steps;
        mr.status = {ndr::ModelState::Finished, {}};
        for (size_t i = 0; i < run.lossSteps[size_t(m)].size(); ++i) {
            mr.lossLog.steps.push_back(run.lossSteps[size_t(m)][i]);
            mr.lossLog.loss.push_back(run.losses[size_t(m)][i]);
        }
        for (size_t k = 0; k < mr.history.size(); ++k) {
            ndr::EvalRecord& e = mr.history[k];
            const size_t depths = e.depths.size();
            if (m == 0) {
                e.headShare = {0.5 - 0.1 * double(k), 0.5 + 0.1 * double(k)};
                e.routeEntropy = 0.6;
                e.haltCounts.assign(depths, std::vector<int>(size_t(ndr::factsOf(mr.config).steps) + 1, 0));
                for (size_t d = 0; d < depths; ++d)
                    e.haltCounts[d][std::min(d + 2, size_t(ndr::factsOf(mr.config).steps))] = 4;
                e.everyStepAccuracy = e.accuracy;
            }
            e.operations = {"MAX", "SM"};
            e.operationExamples.assign(depths, {10, 10});
            e.operationCorrect.assign(depths, {5 + int(k), 1});
        }
        r.models.push_back(mr);
    }
    return r;
}

QStringList exportedStems(const QString& folder) {
    QStringList stems;
    for (const QString& f : QDir(folder).entryList({"*.svg"}, QDir::Files, QDir::Name))
        stems << f.chopped(4);
    return stems;
}

} // namespace

class TestFigures : public QObject {
    Q_OBJECT

    viewtest::Run run_;
    ndr::RunRecord record_;
    QTemporaryDir dir_;

private slots:
    void initTestCase() {
        run_ = viewtest::train(200, 100);
        record_ = richRecord(run_);
        if (!havePoppler())
            qWarning(
                "pdftotext or pdftoppm not found (poppler-utils): the PDFs' text and pictures go unchecked");
    }

    // Every view of the dashboard export in the three formats, each with its words as text and the same
    // picture in all three.
    void dashboardViewsInEveryFormat() {
        const QString folder = dir_.filePath("screen");
        ExportOptions options;
        options.frames = false;
        options.formats = {FigureFormat::Png, FigureFormat::Pdf, FigureFormat::Svg};
        options.viewSize = {800, 500};
        options.dashboardSize = {1400, 900};
        QString error;
        const QStringList written = exportDashboard(record_, folder, options, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(written.size(), dashboardExportFiles(record_, options).size());
        const QStringList steps1to = [&] {
            QStringList s;
            for (int t = 1; t <= record_.models[0].history.back().probe.steps; ++t)
                s << QString("step %1").arg(t);
            return s;
        }();
        const std::map<QString, QStringList> words = {
            {"learning-curves", {"Training loss and accuracy", "training loss", "training step", "accuracy"}},
            {"depth-accuracy", {"Accuracy per depth", "depth (number of functions)", "accuracy"}},
            {"attention-maps", {"step 1", "attention weight", "NDR", "Evaluation at step 200"}},
            {"gate-map", {"step", "token", "gate openness"}},
            {"change-map", {"token", "change"}},
            {"length-generalisation-ndr", {"Accuracy per depth over training", "training step", "accuracy"}},
            {"length-generalisation-transformer", {"Accuracy per depth over training", "Transformer"}},
            {"head-usage-ndr", {"Head usage over training", "routing share", "training step"}},
            {"steps-used-ndr", {"training step"}},
            {"operation-accuracy-ndr", {"training step", "MAX"}},
            {"operation-accuracy-transformer", {"training step", "SM"}},
            {"steps-ndr", steps1to + QStringList{"gate openness", "attention weight", "token"}},
            {"steps-transformer", {"step 1", "attention weight"}},
            {"dashboard", {"Training loss and accuracy", "Accuracy per depth"}},
        };
        const QStringList stems = exportedStems(folder);
        for (const auto& [stem, expected] : words)
            QVERIFY2(stems.contains(stem), qPrintable(stem + " was not exported: " + stems.join(", ")));
        for (const QString& stem : stems) {
            const auto it = words.find(stem);
            QVERIFY2(it != words.end(), qPrintable("no words to look for in " + stem));
            const QString problem = checkFigure(folder, stem, it->second, figureDpi());
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
        }
        // The PNGs keep the sizes asked for.
        QCOMPARE(QImage(QDir(folder).filePath("depth-accuracy.png")).size(), QSize(800, 500));
        QCOMPARE(QImage(QDir(folder).filePath("dashboard.png")).size(), QSize(1400, 900));
        // The steps figure is as tall as its panels: two rows of NDR's maps below its gates.
        const QImage steps(QDir(folder).filePath("steps-ndr.png"));
        QCOMPARE(steps.width(), 1000);
        QVERIFY2(steps.height() > 300 && steps.height() < 2000, qPrintable(QString::number(steps.height())));
        if (!viewtest::shotsDir().isEmpty())
            for (const QString& stem : QStringList{"steps-ndr", "attention-maps", "learning-curves"})
                QFile::copy(QDir(folder).filePath(stem + ".png"),
                            viewtest::shotsDir() + "/figure_" + stem + ".png");
    }

    // Paper style: a single column (3.5 in) for plots and a double one (7 in) for grids and the
    // dashboard, on white, with text of about 8.5 pt, PNGs at 300 dpi.
    void paperStyleIsAColumnWide() {
        const QString folder = dir_.filePath("paper");
        ExportOptions options;
        options.frames = false;
        options.formats = {FigureFormat::Png, FigureFormat::Pdf, FigureFormat::Svg};
        options.style = FigureStyle::Paper;
        QString error;
        exportDashboard(record_, folder, options, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const QDir dir(folder);
        for (const QString& stem : QStringList{"depth-accuracy", "learning-curves", "steps-ndr"}) {
            const QString problem = checkFigure(folder, stem, {"step"}, 300);
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
        }
        const QImage bars(dir.filePath("depth-accuracy.png"));
        QCOMPARE(bars.width(), 1050); // 3.5 in at 300 dpi
        QCOMPARE(bars.height(), 750); // 2.5 in
        QCOMPARE(int(std::lround(bars.dotsPerMeterX() * 0.0254)), 300);
        QCOMPARE(QColor(bars.pixel(2, bars.height() - 2)), QColor(Qt::white));
        QCOMPARE(QImage(dir.filePath("steps-ndr.png")).width(), 2100); // 7 in
        QCOMPARE(QImage(dir.filePath("dashboard.png")).width(), 2100);
        if (!havePoppler())
            QSKIP("pdfinfo and pdftotext (poppler-utils) are not installed: the PDF's page and text sizes "
                  "go unchecked");
        // The page is the column: 3.5 x 2.5 in = 252 x 180 pt.
        const QString info = run("pdfinfo", {dir.filePath("depth-accuracy.pdf")});
        QVERIFY2(QRegularExpression(R"(Page size:\s+252(\.\d+)? x 180(\.\d+)? pts)").match(info).hasMatch(),
                 qPrintable(info));
        // Every word is small: pdftotext's boxes of 8.5 pt text are about 9-11 pt tall.
        const QString boxes = run("pdftotext", {"-bbox", dir.filePath("depth-accuracy.pdf"), "-"});
        const QRegularExpression word(
            R"re(<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">)re");
        int words = 0;
        for (auto it = word.globalMatch(boxes); it.hasNext();) {
            const auto m = it.next();
            const double h = m.captured(4).toDouble() - m.captured(2).toDouble();
            const double w = m.captured(3).toDouble() - m.captured(1).toDouble();
            QVERIFY2(std::min(h, w) < 12.5, qPrintable(QString("a word %1 x %2 pt").arg(w).arg(h)));
            ++words;
        }
        QVERIFY2(words > 5, qPrintable(boxes.left(400)));
    }

    // The colour-blind-safe scheme draws the models in Okabe-Ito's colours and the heatmaps in cividis,
    // in an export of its own; the app's scheme is as it was afterwards.
    void colourBlindSchemeInExports() {
        QCOMPARE(colourScheme(), ColourScheme::Standard);
        const auto svgOf = [&](ColourScheme scheme, const QString& name) {
            ExportOptions options;
            options.frames = false;
            options.formats = {FigureFormat::Svg};
            options.scheme = scheme;
            QString error;
            exportDashboard(record_, dir_.filePath(name), options, &error);
            QFile f(QDir(dir_.filePath(name)).filePath("depth-accuracy.svg"));
            return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()).toLower() : QString();
        };
        const QString standard = svgOf(ColourScheme::Standard, "standard");
        const QString safe = svgOf(ColourScheme::ColourBlindSafe, "safe");
        QCOMPARE(colourScheme(), ColourScheme::Standard);
        QVERIFY(standard.contains("#1f77b4") && !standard.contains("#0072b2")); // NDR's bars
        QVERIFY(safe.contains("#0072b2") && safe.contains("#e69f00") && !safe.contains("#1f77b4"));
        // Cividis from its dark blue to its yellow; viridis from its purple.
        setColourScheme(ColourScheme::ColourBlindSafe);
        QCPColorGradient cividis = heatmapGradient();
        setColourScheme(ColourScheme::Standard);
        QCOMPARE(QColor(cividis.color(0, QCPRange(0, 1))), QColor(0, 32, 76));
        QCOMPARE(QColor(cividis.color(1, QCPRange(0, 1))), QColor(255, 233, 69));
        QCOMPARE(QColor(heatmapGradient().color(0, QCPRange(0, 1))), QColor(68, 1, 84));
    }

    // The inspector's steps in the three formats, with heatmaps and gate strips, routing lines of the
    // step, and routing lines of every step.
    void inspectorStepsInEveryFormat() {
        TrainingSession session;
        QString error;
        QVERIFY2(session.start(ndrtest::smallRun(100), &error), qPrintable(error));
        QTRY_COMPARE_WITH_TIMEOUT(session.state(), TrainingSession::State::Ready, ndrtest::waitMs(30000));
        Inspector inspector(session);
        inspector.resize(1300, 850);
        inspector.show();
        const ndr::Task& task = *session.task();
        const ndr::Example e = task.evalSet(3)[1];
        inspector.input()->setText(QString::fromStdString(task.format(e)));
        QTRY_VERIFY_WITH_TIMEOUT(inspector.tracesComplete(), ndrtest::waitMs(10000));
        ExportOptions options;
        options.formats = {FigureFormat::Png, FigureFormat::Pdf, FigureFormat::Svg};
        const QString expression = QString::fromStdString(task.format(e));
        const std::vector<std::pair<StepPicture, QStringList>> pictures = {
            {StepPicture::Heatmap, {"target", "source", "attention", "gate", "position", "would answer"}},
            {StepPicture::Lines, {"step 0", "step 1", "head 1", "would answer"}},
            {StepPicture::AllSteps, {"step 0", "step 1", "step 2", "head 1"}},
        };
        for (const auto& [picture, words] : pictures) {
            inspector.setPicture(picture);
            const QString folder = dir_.filePath(QString("inspector-%1").arg(int(picture)));
            QVERIFY2(inspector.exportFrames(folder, options, &error), qPrintable(error));
            QCOMPARE(QDir(folder).entryList({"step-*.svg"}).size(), inspector.maxStep() + 1);
            QVERIFY(QFileInfo::exists(QDir(folder).filePath("inspector.gif")));
            const QString problem =
                checkFigure(folder, "step-01",
                            words + QStringList{"step 1 of", expression.section(' ', 0, 0)}, figureDpi());
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
        }
    }

    // Compare's bars and curves of two saved runs in the three formats.
    void compareInEveryFormat() {
        QStringList files;
        for (int seed : {1, 2}) {
            ndr::RunRecord r = record_;
            r.config.train.seed = uint64_t(seed);
            const QString file = dir_.filePath(QString("run-%1/run.json").arg(seed));
            QDir().mkpath(QFileInfo(file).path());
            ndr::saveRunRecord(file.toStdString(), r);
            files << file;
        }
        CompareView compare;
        compare.resize(1200, 800);
        compare.show();
        QSignalSpy loaded(&compare, &CompareView::loaded);
        QString error;
        for (const QString& f : files)
            QVERIFY2(compare.addSource(f, &error), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(compare.data().finished == 2, ndrtest::waitMs(10000));
        ExportChoice choice;
        choice.formats = {FigureFormat::Png, FigureFormat::Pdf, FigureFormat::Svg};
        compare.setExportChoice(choice);
        const QString folder = dir_.filePath("compare");
        const QStringList written = compare.exportTo(folder, false, &error);
        QVERIFY2(!written.isEmpty(), qPrintable(error));
        QCOMPARE(written.size(), 7);
        for (const auto& [stem, words] : std::vector<std::pair<QString, QStringList>>{
                 {"compare-bars", {"accuracy", "IID (training depths)"}},
                 {"compare-curves", {"training step", "test accuracy"}}}) {
            const QString problem = checkFigure(folder, stem, words, figureDpi());
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
        }
        // No format: refused, nothing written.
        choice.formats.clear();
        compare.setExportChoice(choice);
        QVERIFY(compare.exportTo(dir_.filePath("compare-none"), false, &error).isEmpty());
        QVERIFY2(error.contains("format"), qPrintable(error));
        QVERIFY(!QFileInfo::exists(dir_.filePath("compare-none/compare.csv")));
    }

    // The export dialog says what keeps it from exporting, gives back what was chosen, and keeps it
    // in the settings; the View menu switches the window's colours and remembers them.
    void exportDialogAndColourMenu() {
        QCoreApplication::setOrganizationName("NDR Studio Test");
        QCoreApplication::setApplicationName("test-figures");
        QSettings().clear();
        ExportChoice initial;
        initial.folder = dir_.filePath("chosen");
        initial.formats = {FigureFormat::Pdf};
        ExportDialog dialog("Export the dashboard", initial);
        dialog.show();
        auto* ok = dialog.findChild<QPushButton*>("export.ok");
        auto* pdf = dialog.findChild<QCheckBox*>("export.pdf");
        auto* svg = dialog.findChild<QCheckBox*>("export.svg");
        auto* folder = dialog.findChild<QLineEdit*>("export.folder");
        auto* style = dialog.findChild<QComboBox*>("export.style");
        auto* colours = dialog.findChild<QComboBox*>("export.colours");
        QVERIFY(ok && pdf && svg && folder && style && colours);
        QVERIFY(ok->isEnabled() && pdf->isChecked() && !svg->isChecked());
        pdf->setChecked(false);
        QVERIFY(!ok->isEnabled());
        QVERIFY2(dialog.problem().contains("format"), qPrintable(dialog.problem()));
        svg->setChecked(true);
        folder->clear();
        QVERIFY(!ok->isEnabled() && dialog.problem().contains("folder"));
        folder->setText(initial.folder);
        style->setCurrentIndex(style->findData(int(FigureStyle::Paper)));
        colours->setCurrentIndex(colours->findData(int(ColourScheme::ColourBlindSafe)));
        QVERIFY(ok->isEnabled());
        const ExportChoice chosen = dialog.choice();
        QCOMPARE(chosen.formats, QList<FigureFormat>{FigureFormat::Svg});
        QCOMPARE(chosen.style, FigureStyle::Paper);
        QCOMPARE(chosen.scheme, ColourScheme::ColourBlindSafe);
        chosen.remember("files/exportDir");
        const ExportChoice again = ExportChoice::remembered("files/exportDir", ColourScheme::Standard);
        QCOMPARE(again.folder, chosen.folder);
        QCOMPARE(again.formats, chosen.formats);
        QCOMPARE(again.style, chosen.style);
        QCOMPARE(again.scheme, chosen.scheme);

        MainWindow window(true);
        window.resize(1280, 800);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto* safe = window.findChild<QAction*>("view.colourBlind");
        QVERIFY(safe && !safe->isChecked());
        safe->trigger();
        QCOMPARE(colourScheme(), ColourScheme::ColourBlindSafe);
        QCOMPARE(QSettings().value("view/colours").toString(), QString("colour-blind"));
        QCOMPARE(window.exportChoice().scheme, ColourScheme::ColourBlindSafe);
        if (const QString shots = viewtest::shotsDir(); !shots.isEmpty()) {
            // The dialog over the window, and the View menu open, at 1280x800.
            ExportChoice paper = chosen;
            paper.folder = "runs/pf-11/figures";
            paper.formats = {FigureFormat::Pdf, FigureFormat::Svg};
            ExportDialog shown("Export the dashboard", paper, &window);
            shown.show();
            QVERIFY(QTest::qWaitForWindowExposed(&shown));
            shown.grab().save(shots + "/export-dialog.png");
            QMenu* view = nullptr;
            for (QAction* a : window.menuBar()->actions())
                if (a->text().remove('&') == "View")
                    view = a->menu();
            QVERIFY(view);
            view->popup(window.mapToGlobal(QPoint(120, 30)));
            QVERIFY(QTest::qWaitForWindowExposed(view));
            view->grab().save(shots + "/view-menu.png");
            view->close();
        }
        safe->trigger();
        QCOMPARE(colourScheme(), ColourScheme::Standard);
        QSettings().clear();
    }

    // Bad choices are refused with what is wrong, before anything is written.
    void badFormatsAreRefused() {
        QString error;
        QVERIFY(!parseFormats("png,tiff", &error));
        QVERIFY2(error.contains("tiff") && error.contains("png, pdf and svg"), qPrintable(error));
        QVERIFY(!parseFormats(" , ", &error));
        QVERIFY(error.contains("no format"));
        const auto formats = parseFormats("SVG,png,svg", &error);
        QVERIFY(formats);
        QCOMPARE(*formats, (QList<FigureFormat>{FigureFormat::Svg, FigureFormat::Png}));
        ExportOptions options;
        options.formats.clear();
        const QString folder = dir_.filePath("none");
        QVERIFY(exportDashboard(record_, folder, options, &error).isEmpty());
        QVERIFY(error.contains("format"));
        QVERIFY(!QFileInfo::exists(folder));
    }
};

QTEST_MAIN(TestFigures)
#include "test_figures.moc"
