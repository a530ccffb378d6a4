// Tests of the `ndr` command-line tool, run as a separate process: train writes a run that loads,
// predict returns a trace of the right shape, eval and bench print tables, and bad input fails cleanly.
#include "core/io/files.h"
#include "core/io/serialize.h"
#include "core/records/records.h"
#include "core/task/ctl_task.h"
#include "core/train/run.h"
#include "run_ndr.h"
#include "testutil.h"
#include "ui/export/gif_writer.h"

#include <QDateTime>
#include <QFileInfo>
#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>
#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>

using namespace ndr;
using nlohmann::json;

namespace {

using ndrtest::describe;
using ndrtest::Result;
using ndrtest::runNdr;

bool writeText(const QString& path, const std::string& text) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return false;
    return f.write(text.data(), qint64(text.size())) == qint64(text.size());
}

json readJson(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return json();
    return json::parse(f.readAll().toStdString(), nullptr, false);
}

// The stub preset shrunk so that training 40 steps takes a moment.
json tinyConfig() {
    const json model = {{"dModel", 16}, {"heads", 2}, {"dFF", 32}, {"steps", 6}, {"evalSteps", 0}};
    return {{"preset", "stub"},
            {"task", {{"evalExamplesPerDepth", 64}}},
            {"train", {{"steps", 40}, {"evalInterval", 20}, {"batchSize", 16}}},
            {"models", {model, model}}};
}

// tinyConfig's models on ListOps with these operations, depths 2-5 and 10 training steps: quick to draw
// and train.
json tinyListOpsConfig(const std::vector<std::string>& operations, int examplesPerDepth) {
    json c = tinyConfig();
    c["preset"] = "listops";
    c["task"] = {{"operations", operations}, {"trainMinDepth", 2},
                 {"trainMaxDepth", 3},       {"validMinDepth", 4},
                 {"validMaxDepth", 4},       {"testMinDepth", 5},
                 {"testMaxDepth", 5},        {"evalExamplesPerDepth", examplesPerDepth}};
    c["train"]["steps"] = 10;
    c["train"]["evalInterval"] = 10;
    return c;
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;
    QString runFile_; // the tiny run every test that reads a run uses, trained by initTestCase

    QString path(const QString& name) const { return dir_.filePath(name); }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        QVERIFY(writeText(path("tiny.json"), tinyConfig().dump()));
        const Result r =
            runNdr({"train", "--config", path("tiny.json"), "--out", path("fixture"), "--quiet"});
        QVERIFY2(r.exitCode == 0, describe(r));
        runFile_ = path("fixture/run.json");
    }

    void helpOnEveryCommand() {
        for (const QString cmd : {"train", "eval", "predict", "sweep", "bench", "export"}) {
            const Result r = runNdr({cmd, "--help"});
            QVERIFY2(r.exitCode == 0, describe(r));
            QVERIFY2(r.out.contains("--"), describe(r));
        }
    }

    void trainWritesRunAndCheckpoints() {
        const QString out = path("tiny-run");
        const Result r = runNdr({"train", "--config", path("tiny.json"), "--out", out, "--seed", "3"});
        QVERIFY2(r.exitCode == 0, describe(r));
        QVERIFY2(r.out.contains("best valid") || r.out.contains("final"), describe(r));
        QVERIFY2(r.out.contains(out), describe(r)); // says where the files went

        const RunRecord run = loadRunRecord((out + "/run.json").toStdString());
        QCOMPARE(run.config.task.seed, uint64_t(3));
        QCOMPARE(run.config.train.seed, uint64_t(3));
        QCOMPARE(int(run.models.size()), 2);
        for (const ModelRecord& m : run.models) {
            QCOMPARE(int(m.history.size()), 2);
            QCOMPARE(m.history[0].step, 20);
            QCOMPARE(m.history[1].step, 40);
            QVERIFY(m.status == (ModelStatus{ModelState::Finished, {}}));
            QVERIFY(!m.checkpointFile.empty());
            QVERIFY2(m.checkpointFile.find('/') == std::string::npos, m.checkpointFile.c_str());
            const CheckpointData ck = loadCheckpoint((out + "/").toStdString() + m.checkpointFile);
            QCOMPARE(ck.step, int64_t(40));
            QCOMPARE(ck.model.as<ndr::EncoderConfig>().dModel, 16);
            QVERIFY(!ck.params.empty());
        }
        QVERIFY(run.models[0].checkpointFile != run.models[1].checkpointFile);
    }

    // A run trained in two halves, the second with --resume, has the curves of the run trained in one
    // go; what --resume cannot do it refuses with a message, leaving the run as it was.
    void resumeGoesOnAsOneRun() {
        const QString out = path("halves");
        Result r = runNdr({"train", "--config", path("tiny.json"), "--out", out, "--steps", "20", "--quiet"});
        QVERIFY2(r.exitCode == 0, describe(r));
        r = runNdr({"train", "--resume", out, "--steps", "40", "--quiet"});
        QVERIFY2(r.exitCode == 0, describe(r));
        const RunRecord whole = loadRunRecord(runFile_.toStdString());
        const RunRecord halves = loadRunRecord((out + "/run.json").toStdString());
        QCOMPARE(halves.config.train.steps, 40);
        QCOMPARE(halves.models.size(), whole.models.size());
        for (size_t m = 0; m < whole.models.size(); ++m) {
            const ModelRecord &a = whole.models[m], &b = halves.models[m];
            QCOMPARE(b.stepsDone, 40);
            QVERIFY(b.status == (ModelStatus{ModelState::Finished, {}}));
            QCOMPARE(b.history.size(), a.history.size());
            for (size_t e = 0; e < a.history.size(); ++e) {
                QCOMPARE(b.history[e].step, a.history[e].step);
                QCOMPARE(b.history[e].trainLoss, a.history[e].trainLoss);
                QCOMPARE(b.history[e].accuracy, a.history[e].accuracy);
                QCOMPARE(b.history[e].loss, a.history[e].loss);
            }
            QCOMPARE(b.lossLog.loss, a.lossLog.loss);
        }

        QFile file(out + "/run.json");
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray saved = file.readAll();
        file.close();
        const struct {
            QStringList args;
            QString mention;
        } refused[] = {
            {{"--resume", out}, "has trained all its 40 steps"},
            {{"--resume", out, "--steps", "30"}, "fewer than the 40"},
            {{"--resume", path("nowhere")}, "no run.json"},
            {{"--resume", out, "--preset", "stub", "--steps", "60"}, "excludes"},
            {{"--resume", out, "--seed", "4", "--steps", "60"}, "excludes"},
        };
        for (const auto& c : refused) {
            r = runNdr(QStringList{"train"} + c.args);
            QVERIFY2(r.exitCode == 2 && r.err.contains(c.mention), describe(r));
        }
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(file.readAll(), saved);
    }

    // A ListOps run on a subset of its operations says which, in what it prints of the task.
    void listOpsSubsetIsNamed() {
        QVERIFY(writeText(path("listops-subset.json"), tinyListOpsConfig({"MAX", "MIN"}, 32).dump()));
        const QString out = path("listops-subset");
        const Result r = runNdr({"train", "--config", path("listops-subset.json"), "--out", out, "--quiet"});
        QVERIFY2(r.exitCode == 0, describe(r));
        QVERIFY2(r.out.contains("operations MAX MIN, train 2-3, valid 4, test 5"), describe(r));
        const RunRecord run = loadRunRecord((out + "/run.json").toStdString());
        QCOMPARE(run.config.task.operations, (std::vector<std::string>{"MAX", "MIN"}));
    }

    // `--by-operation` measures each root operation's share of every depth's set: the counts add up to
    // the set and each accuracy is the model's on exactly those examples.
    void evalByOperation() {
        QVERIFY(writeText(path("listops-ops.json"), tinyListOpsConfig({"MAX", "MIN", "MED"}, 48).dump()));
        const QString runFile = path("listops-ops/run.json");
        Result r =
            runNdr({"train", "--config", path("listops-ops.json"), "--out", path("listops-ops"), "--quiet"});
        QVERIFY2(r.exitCode == 0, describe(r));
        r = runNdr({"eval", runFile, "--by-operation"});
        QVERIFY2(r.exitCode == 0 && r.out.contains("Accuracy per operation at the root"), describe(r));
        const auto loaded = Run::open(runFile.toStdString());
        const Task& task = loaded->task();
        const std::vector<int> depths = task.allDepths();
        // Training's evaluations keep the same counts in the run file.
        const RunRecord record = loaded->record();
        const std::string model = record.models[0].config.name;
        const EvalRecord& last = record.models[0].history.back();
        QCOMPARE(last.operations, (std::vector<std::string>{"MAX", "MED", "MIN"}));
        QCOMPARE(last.operationExamples.size(), depths.size());
        for (size_t i = 0; i < depths.size(); ++i) {
            const auto& n = last.operationExamples[i];
            QCOMPARE(std::accumulate(n.begin(), n.end(), 0), int(task.evalSet(depths[i]).size()));
            const auto& right = last.operationCorrect[i];
            QCOMPARE(double(std::accumulate(right.begin(), right.end(), 0)),
                     std::round(last.accuracy[i] * double(task.evalSet(depths[i]).size())));
        }
        std::map<int, int> counted; // examples per depth over the operations' rows
        int rows = 0;
        const QStringList lines = r.out.split('\n');
        const qsizetype start = lines.indexOf(QRegularExpression("^Accuracy per operation.*"));
        QVERIFY2(start > 0, describe(r));
        for (qsizetype k = start; k < lines.size(); ++k) {
            const QStringList cells = lines[k].split(' ', Qt::SkipEmptyParts);
            if (cells.size() < 2 + qsizetype(depths.size()))
                continue;
            const std::string op = cells[1].toStdString();
            if (cells[0] == "examples") {
                for (size_t i = 0; i < depths.size(); ++i)
                    if (cells[qsizetype(2 + i)] != "-")
                        counted[depths[i]] += cells[qsizetype(2 + i)].toInt();
            } else if (cells[0] == QString::fromStdString(model)) {
                ++rows;
                for (size_t i = 0; i < depths.size(); ++i) {
                    // Each example of the depth's set answered as the evaluation batches the set
                    const std::vector<Example>& set = task.evalSet(depths[i]);
                    const std::vector<char> right = loaded->trainer(0).answeredRight(set);
                    QCOMPARE(right.size(), set.size());
                    int n = 0, correct = 0;
                    for (size_t e = 0; e < set.size(); ++e)
                        if (task.rootOperation(set[e]) == op) {
                            ++n;
                            correct += right[e];
                        }
                    const QString cell = cells[qsizetype(2 + i)];
                    if (n == 0) {
                        QCOMPARE(cell, QString("-"));
                        continue;
                    }
                    QVERIFY2(std::abs(cell.toDouble() - double(correct) / n) <= 0.0005 + 1e-9,
                             describe(r)); // 3 decimals
                }
            }
        }
        QCOMPARE(rows, 3); // MAX, MED and MIN
        for (int d : depths)
            QCOMPARE(counted[d], int(task.evalSet(d).size()));

        // The export draws the view and writes the counts of every evaluation.
        const QString out = path("listops-ops-export");
        r = runNdr({"export", runFile, "--out", out, "--no-frames", "--width", "900", "--height", "700"});
        QVERIFY2(r.exitCode == 0, describe(r));
        QVERIFY(!QImage(out + "/operation-accuracy-ndr.png").isNull());
        QVERIFY(!QImage(out + "/operation-accuracy-transformer.png").isNull());
        QVERIFY(QImage(out + "/operation-accuracy-ndr.png") !=
                QImage(out + "/operation-accuracy-transformer.png"));
        QFile csv(out + "/operation-accuracy.csv");
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QStringList table = QString::fromUtf8(csv.readAll()).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(table.value(0), QString("model,step,depth,split,operation,examples,right,accuracy"));
        size_t evaluations = 0;
        for (const auto& m : record.models)
            evaluations += m.history.size();
        QCOMPARE(size_t(table.size()), 1 + evaluations * depths.size() * 3);
        const QStringList first = table.value(1).split(',');
        QCOMPARE(first.value(4), QString("MAX"));
        QCOMPARE(first.value(5).toInt(), record.models[0].history[0].operationExamples[0][0]);

        // Table lookup has no operations.
        r = runNdr({"eval", runFile_, "--by-operation"});
        QVERIFY2(r.exitCode == 2 && r.err.contains("no operations to group by"), describe(r));
    }

    void predictReturnsTrace() {
        const RunRecord run = loadRunRecord(runFile_.toStdString());
        CtlTask task(run.config.task);
        task.setTables(run.tables);
        const Example ex = task.evalSet(3).front();
        const Result r = runNdr({"predict", runFile_, QString::fromStdString(task.format(ex))});
        QVERIFY2(r.exitCode == 0, describe(r));
        const json j = json::parse(r.out.toStdString(), nullptr, false);
        QVERIFY2(!j.is_discarded(), describe(r));
        QCOMPARE(j.at("answer").get<std::string>(), task.symbolName(task.answer(ex)));
        const int T = ex.depth() + 3; // [B] x f1..fd [E]
        QCOMPARE(int(j.at("tokens").size()), T);
        QCOMPARE(int(j.at("intermediates").size()), T);
        QCOMPARE(int(j.at("models").size()), 2);
        for (size_t m = 0; m < 2; ++m) {
            const json& model = j.at("models")[m];
            const ModelConfig& cfg = run.config.models[m];
            const int steps = cfg.as<ndr::EncoderConfig>().effectiveEvalSteps();
            QCOMPARE(int(model.at("probabilities").size()), run.config.task.symbols);
            QVERIFY(!model.at("stepsBelowDepth").get<bool>()); // depth 3 needs 4 steps of the 6
            double sum = 0;
            for (const auto& [name, p] : model.at("probabilities").items())
                sum += p.get<double>();
            QVERIFY2(std::abs(sum - 1.0) < 1e-3, std::to_string(sum).c_str());
            const json& tr = model.at("trace");
            QCOMPARE(int(tr.at("attention").size()), steps);
            QCOMPARE(int(tr.at("attention")[0].size()), cfg.as<ndr::EncoderConfig>().heads);
            QCOMPARE(int(tr.at("attention")[0][0].size()), T);
            QCOMPARE(int(tr.at("attention")[0][0][0].size()), T);
            QCOMPARE(int(tr.at("stepAnswers").size()), steps + 1);
            QCOMPARE(int(tr.at("stepProbabilities").size()), steps + 1);
            QCOMPARE(int(tr.at("tokens").size()), T);
            if (cfg.as<ndr::EncoderConfig>().update == UpdateKind::CopyGate) {
                QCOMPARE(int(tr.at("gates").size()), steps);
                QCOMPARE(int(tr.at("gates")[0].size()), T);
            } else {
                QVERIFY(tr.at("gates").is_null());
            }
        }
    }

    void predictAnswersEveryDepthAndRejectsBadExpressions() {
        const RunRecord run = loadRunRecord(runFile_.toStdString());
        const CtlTask task(run.config.task);
        const QString x = QString::fromStdString(task.symbolName(0));
        Result r = runNdr({"predict", runFile_, x + " zz"});
        QVERIFY2(r.exitCode == 2, describe(r));
        QVERIFY2(r.err.contains("zz"), describe(r));
        QVERIFY2(r.out.isEmpty(), describe(r));
        // Six steps route at most five functions one per step; a deeper expression is answered all the
        // same, marked, and more steps lift the mark.
        const QString deep = x + " a a a a a a a a";
        r = runNdr({"predict", runFile_, deep, "--model", "ndr"});
        QVERIFY2(r.exitCode == 0, describe(r));
        json j = json::parse(r.out.toStdString(), nullptr, false);
        QVERIFY2(!j.is_discarded(), describe(r));
        QCOMPARE(j.at("depth").get<int>(), 8);
        QCOMPARE(j.at("routingSteps").get<int>(), 9);
        QCOMPARE(j.at("models")[0].at("steps").get<int>(), 6);
        QVERIFY2(j.at("models")[0].at("stepsBelowDepth").get<bool>(), describe(r));
        QVERIFY2(r.err.contains("NDR runs 6 steps, fewer than the 9"), describe(r));
        r = runNdr({"predict", runFile_, deep, "--model", "ndr", "--steps", "12"});
        QVERIFY2(r.exitCode == 0 && r.err.isEmpty(), describe(r));
        j = json::parse(r.out.toStdString(), nullptr, false);
        QVERIFY2(!j.is_discarded() && !j.at("models")[0].at("stepsBelowDepth").get<bool>(), describe(r));
        // Deeper than the run answers (twice its deepest test depth, 7): refused, naming the limit.
        r = runNdr({"predict", runFile_, x + QString(" a").repeated(15)});
        QVERIFY2(r.exitCode == 2 && r.err.contains("depth 15 is too deep: at most 14 functions"),
                 describe(r));
        r = runNdr({"predict", runFile_, x + " a", "--model", "nosuchmodel"});
        QVERIFY2(r.exitCode != 0 && r.err.contains("nosuchmodel"), describe(r));
    }

    void predictAgreesWithEvalBeyondTheSteps() {
        // A Transformer of 4 steps on the stub's test depths 5-7, which need 6-8 steps one function per step.
        const json config = {
            {"preset", "stub"},
            {"task", {{"evalExamplesPerDepth", 24}}},
            {"train", {{"steps", 1500}, {"evalInterval", 1500}, {"batchSize", 16}}},
            {"models", {{{"preset", "vanilla"}, {"dModel", 16}, {"heads", 2}, {"dFF", 32}, {"steps", 4}}}}};
        QVERIFY(writeText(path("shallow.json"), config.dump()));
        const QString out = path("shallow-run");
        Result r = runNdr({"train", "--config", path("shallow.json"), "--out", out, "--quiet"});
        QVERIFY2(r.exitCode == 0, describe(r));
        const QString runFile = out + "/run.json";
        const auto loaded = Run::open(runFile.toStdString());
        const Task& task = loaded->task();
        const int depth = task.depths(Split::Test).back();
        QVERIFY(stepsBelowDepth(depth, 4));

        // The answer is the Transformer's own: the same as its trace in this process.
        const Example probe = task.evalSet(depth).front();
        r = runNdr(
            {"predict", runFile, QString::fromStdString(task.format(probe)), "--model", "Transformer"});
        QVERIFY2(r.exitCode == 0, describe(r));
        json j = json::parse(r.out.toStdString(), nullptr, false);
        QVERIFY2(!j.is_discarded(), describe(r));
        const json& model = j.at("models")[0];
        QCOMPARE(model.at("name").get<std::string>(), std::string("Transformer"));
        QVERIFY(model.at("stepsBelowDepth").get<bool>());
        const Trace own = loaded->trainer(0).traceOf(probe);
        QCOMPARE(model.at("answer").get<std::string>(), task.symbolName(own.stepAnswers.back()));

        // Over the evaluation set of that depth, predict's answers score what `ndr eval` reports.
        int correct = 0;
        const auto& set = task.evalSet(depth);
        for (const Example& e : set) {
            r = runNdr(
                {"predict", runFile, QString::fromStdString(task.format(e)), "--model", "Transformer"});
            QVERIFY2(r.exitCode == 0, describe(r));
            j = json::parse(r.out.toStdString(), nullptr, false);
            QVERIFY2(!j.is_discarded(), describe(r));
            correct += j.at("models")[0].at("correct").get<bool>();
        }
        r = runNdr({"eval", runFile});
        QVERIFY2(r.exitCode == 0, describe(r));
        // The table: a header naming the depths ("d7"), then one row per model.
        QStringList header, row;
        for (const QString& line : r.out.split('\n')) {
            const QStringList cells = line.split(' ', Qt::SkipEmptyParts);
            if (cells.value(0) == "model")
                header = cells;
            else if (cells.value(0) == "Transformer")
                row = cells;
        }
        const int column = int(header.indexOf(QString("d%1").arg(depth)));
        QVERIFY2(column > 0 && row.size() == header.size(), describe(r));
        const double reported = row[column].toDouble();
        const double measured = double(correct) / double(set.size());
        QVERIFY2(std::abs(reported - measured) < 0.0005,
                 qPrintable(QString("eval reports %1 at depth %2, predict answers %3 of %4 right")
                                .arg(row[column])
                                .arg(depth)
                                .arg(correct)
                                .arg(set.size())));
    }

    void exportDrawsTheDashboardHeadless() {
        const QString out = path("exported");
        Result r = runNdr({"export", runFile_, "--out", out, "--width", "800", "--height", "500"});
        QVERIFY2(r.exitCode == 0, describe(r));
        // Nothing on stderr: the offscreen platform's notices about window sizes are not the user's concern.
        QVERIFY2(r.err.isEmpty(), describe(r));
        for (const QString f :
             {"learning-curves.png", "depth-accuracy.png", "length-generalisation-ndr.png",
              "length-generalisation-transformer.png", "attention-maps.png", "gate-map.png", "change-map.png",
              "dashboard.png", "frames/frame-000.png", "frames/frame-001.png"}) {
            QImage img(out + "/" + f);
            QVERIFY2(!img.isNull(), qPrintable(f));
        }
        // The gate map twice: the copy gates, and switched to the change per step (both models).
        QVERIFY(QImage(out + "/change-map.png") != QImage(out + "/gate-map.png"));
        // The tables: a header and one row per evaluation of each model (two each), per depth and
        // evaluation, and per logged loss.
        auto lines = [&](const QString& f) {
            QFile file(out + "/" + f);
            return file.open(QIODevice::ReadOnly)
                       ? QString::fromUtf8(file.readAll()).split('\n', Qt::SkipEmptyParts)
                       : QStringList();
        };
        const QStringList evals = lines("evaluations.csv");
        QCOMPARE(evals.value(0), QString("model,step,train_loss,iid,validation,longer,steps_per_second"));
        QCOMPARE(evals.size(), 1 + 2 * 2);
        QVERIFY2(evals.value(1).startsWith("NDR,"), qPrintable(evals.value(1)));
        const QStringList depths = lines("depth-accuracy.csv");
        QCOMPARE(depths.value(0), QString("model,step,depth,split,accuracy,loss,most_common_answer"));
        QVERIFY2(depths.size() > 1 + 2 * 2 && depths.value(1).contains(",1,train,"),
                 qPrintable(depths.value(1)));
        // Seven cells, the last the majority baseline, a share.
        const QStringList cells = depths.value(1).split(',');
        QCOMPARE(cells.size(), 7);
        bool isNumber = false;
        const double baseline = cells.last().toDouble(&isNumber);
        QVERIFY2(isNumber && baseline > 0 && baseline <= 1, qPrintable(depths.value(1)));
        QVERIFY(lines("loss.csv").size() > 2);
        QVERIFY(!QFileInfo::exists(out + "/operation-accuracy.csv")); // table lookup has no operations
        QCOMPARE(QImage(out + "/dashboard.png").size(), QSize(800, 500));
        const ndrui::GifInfo gif = ndrui::readGifInfo(out + "/training.gif");
        QCOMPARE(gif.frames, 2); // one per evaluation
        QCOMPARE(QSize(gif.width, gif.height), QSize(800, 500));
        // A second export into the same folder refuses and changes nothing.
        const QDateTime before = QFileInfo(out + "/dashboard.png").lastModified();
        r = runNdr({"export", runFile_, "--out", out});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("already exists"), describe(r));
        QCOMPARE(QFileInfo(out + "/dashboard.png").lastModified(), before);
        r = runNdr({"export", path("nothing.json")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("nothing.json"), describe(r));
    }

    void killedTrainingLeavesALoadableAutosave() {
        // SIGKILL at 20 seeded random moments: whenever a run file is there, it opens with the
        // checkpoints it names, and every checkpoint on disk is whole (its checksum holds). Only
        // temporary files (".tmp-") may be left half-written, and nothing ever reads those.
        json config = tinyConfig();
        config["train"]["steps"] = 100000;
        config["train"]["evalInterval"] = 10;
        QVERIFY(writeText(path("long.json"), config.dump()));
        std::mt19937 rng(11);
        int opened = 0;       // kills after which the run file opened with the checkpoints it names
        QStringList problems; // what went wrong after the other kills
        for (int kill = 0; kill < 20; ++kill) {
            const QString out = path(QString("killed-%1").arg(kill));
            QProcess p;
            p.start(QString(NDR_BINARY_DIR) + "/app/ndr",
                    {"train", "--config", path("long.json"), "--out", out, "--quiet"});
            QVERIFY(p.waitForStarted());
            // After the first autosave, at a random moment: mid-step, mid-evaluation or mid-save.
            QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(out + "/run.json"), ndrtest::waitMs(30000));
            QTest::qWait(std::uniform_int_distribution<int>(0, 800)(rng));
            p.kill();
            QVERIFY(p.waitForFinished(5000));
            QCOMPARE(p.exitStatus(), QProcess::CrashExit);
            const QDir dir(out);
            for (const QString& f : dir.entryList({"*.ckpt"}, QDir::Files)) {
                try {
                    loadCheckpoint(dir.filePath(f).toStdString());
                } catch (const std::exception& e) {
                    QFAIL(qPrintable(f + ": " + e.what()));
                }
            }
            try {
                const auto run = Run::open(dir.filePath("run.json").toStdString());
                const RunRecord record = run->record(); // a copy: history below refers into it
                QStringList mismatches;
                for (int m = 0; m < run->modelCount(); ++m) {
                    const auto& history = record.models[m].history;
                    if (history.empty() || run->trainer(m).step() != history.back().step)
                        mismatches << QString("model %1 at step %2, its last evaluation at %3")
                                          .arg(m)
                                          .arg(run->trainer(m).step())
                                          .arg(history.empty() ? -1 : history.back().step);
                }
                if (mismatches.isEmpty())
                    ++opened;
                else
                    problems << QString("kill %1: %2").arg(kill).arg(mismatches.join("; "));
            } catch (const std::exception& e) {
                problems << QString("kill %1: the autosave does not open: %2").arg(kill).arg(e.what());
            }
        }
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
        QCOMPARE(opened, 20);
    }

    void oneProcessTrainsARunFolderAtATime() {
        // While `ndr train` trains a folder, `train --resume` of it is refused with who holds it and
        // changes nothing; once that process is gone (killed here), the resume goes ahead.
        json config = tinyConfig();
        config["train"]["steps"] = 100000;
        config["train"]["evalInterval"] = 10;
        QVERIFY(writeText(path("held.json"), config.dump()));
        const QString out = path("held");
        QProcess p;
        p.start(QString(NDR_BINARY_DIR) + "/app/ndr",
                {"train", "--config", path("held.json"), "--out", out, "--quiet"});
        QVERIFY(p.waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(out + "/run.json"), ndrtest::waitMs(30000));
        Result r = runNdr({"train", "--resume", out, "--steps", "200000", "--quiet"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("is being trained by another process (pid " + QString::number(p.processId()) +
                                " on "),
                 describe(r));
        p.kill();
        QVERIFY(p.waitForFinished(5000));
        const auto run = Run::open((out + "/run.json").toStdString());
        const int trained = std::max(run->trainer(0).step(), run->trainer(1).step());
        r = runNdr({"train", "--resume", out, "--steps", QString::number(trained + 10), "--quiet"});
        QVERIFY2(r.exitCode == 0, describe(r));
    }

    // Head routing and halting from a config file reach the train and eval summaries and predict's JSON.
    void routingAndHaltingAreReported() {
        const json small = {{"dModel", 16}, {"heads", 4}, {"dFF", 32}, {"steps", 6}, {"evalSteps", 0}};
        const json train = {{"steps", 20}, {"evalInterval", 20}, {"batchSize", 16}};
        const json routing = {{"preset", "stub-routing"},
                              {"task", {{"evalExamplesPerDepth", 32}}},
                              {"train", train},
                              {"models", {small, small, small, small}}};
        QVERIFY(writeText(path("routing.json"), routing.dump()));
        Result r = runNdr({"train", "--config", path("routing.json"), "--out", path("routing"), "--quiet"});
        QVERIFY2(r.exitCode == 0, describe(r));
        for (const char* model : {"NDR top-2", "Transformer top-2"})
            QVERIFY2(r.out.contains(QString(model) + ": head routing (top-2 of 4 heads, masked): entropy "),
                     qPrintable(r.out));
        QVERIFY(!r.out.contains("NDR: head routing"));

        // Untrained gates rest near sigmoid(-3) = 0.05: below 0.9 every example halts after one step.
        json halting = small;
        halting["haltThreshold"] = 0.9;
        const json cost = {{"preset", "stub-thought-cost"},
                           {"task", {{"evalExamplesPerDepth", 32}}},
                           {"train", train},
                           {"models", {halting, halting}}};
        QVERIFY(writeText(path("cost.json"), cost.dump()));
        r = runNdr({"train", "--config", path("cost.json"), "--out", path("cost"), "--quiet"});
        QVERIFY2(r.exitCode == 0, describe(r));
        const QString line = "NDR thought cost: steps used (halting below 0.90, of 6): d1 1.0, d2 1.0";
        QVERIFY2(r.out.contains(line), qPrintable(r.out));
        QVERIFY2(r.out.contains("d7 1.0; compute saved 83%"), qPrintable(r.out));
        const Result e = runNdr({"eval", path("cost/run.json")});
        QVERIFY2(e.exitCode == 0 && e.out.contains(line), describe(e));
        // --halt-threshold replaces every model's threshold for this evaluation: 0 runs every step.
        const Result all = runNdr({"eval", path("cost/run.json"), "--halt-threshold", "0"});
        QVERIFY2(all.exitCode == 0 && !all.out.contains("steps used"), describe(all));
        const Result low = runNdr({"eval", path("cost/run.json"), "--halt-threshold", "0.01"});
        QVERIFY2(low.exitCode == 0 &&
                     low.out.contains("NDR thought cost: steps used (halting below 0.01, of 6)"),
                 describe(low));
        QVERIFY2(!low.out.contains(line), describe(low));
        // --halt-on change halts on how far each step moves the columns; the summary says so.
        const Result change =
            runNdr({"eval", path("cost/run.json"), "--halt-on", "change", "--halt-threshold", "0.5"});
        QVERIFY2(change.exitCode == 0 &&
                     change.out.contains("NDR thought cost: steps used (halting when the change is below "
                                         "0.50, of 6)"),
                 describe(change));
        const Result badSignal = runNdr({"eval", path("cost/run.json"), "--halt-on", "gate"});
        QVERIFY2(badSignal.exitCode != 0 && badSignal.err.contains("--halt-on"), describe(badSignal));
        // A run without halting models: --halt-on alone halts nothing, and says what it needs.
        const Result alone = runNdr({"eval", path("routing/run.json"), "--halt-on", "change"});
        QVERIFY2(alone.exitCode == 0 && !alone.out.contains("steps used") &&
                     alone.err.contains("--halt-on needs --halt-threshold"),
                 describe(alone));

        const RunConfig config = loadRunRecord(path("cost/run.json").toStdString()).config;
        const CtlTask task(config.task);
        const Example ex = task.evalSet(3).front();
        r = runNdr({"predict", path("cost/run.json"), QString::fromStdString(task.format(ex))});
        QVERIFY2(r.exitCode == 0, describe(r));
        const json out = json::parse(r.out.toStdString());
        for (const json& m : out["models"]) {
            QCOMPARE(m["haltedAfter"].get<int>(), 1);
            QCOMPARE(m["answer"], m["trace"]["stepAnswers"][1]);
        }
    }

    void evalPrintsTable() {
        const RunRecord run = loadRunRecord(runFile_.toStdString());
        const Result r = runNdr({"eval", runFile_, "--weights", "best"});
        QVERIFY2(r.exitCode == 0, describe(r));
        QVERIFY2(r.out.contains("d1") && r.out.contains("d7"), describe(r));
        QVERIFY2(r.out.contains(QString::fromStdString(run.config.models[0].name)), describe(r));
    }

    // `--on training` measures each problem of a fixed training set once; `--on independent` draws
    // each depth's examples as the task draws them and says how many of them training holds.
    void evalOnTrainingProblemsAndIndependentSamples() {
        const json config = {{"preset", "thoughtnet"},
                             {"task", {{"evalExamplesPerDepth", 32}}},
                             {"train", {{"steps", 10}, {"evalInterval", 10}, {"batchSize", 16}}},
                             {"models", {{{"dModel", 16}, {"heads", 2}, {"dFF", 16}, {"steps", 3}}}}};
        QVERIFY(writeText(path("digits.json"), config.dump()));
        const QString runFile = path("digits/run.json");
        Result r = runNdr({"train", "--config", path("digits.json"), "--out", path("digits"), "--quiet"});
        QVERIFY2(r.exitCode == 0, describe(r));
        const auto loaded = Run::open(runFile.toStdString());
        const Task& task = loaded->task();
        const std::string model = loaded->record().models[0].config.name;

        // The header, the model's row and the rows labelled `first` (the label's words dropped).
        const auto rows = [&](const Result& res, const QString& first) {
            QStringList header, values, extra;
            for (const QString& line : res.out.split('\n')) {
                QStringList cells = line.split(' ', Qt::SkipEmptyParts);
                if (cells.value(0) == "model")
                    header = cells.mid(3);
                else if (cells.value(0) == QString::fromStdString(model))
                    values = cells.mid(3);
                else if (cells.value(0) == first)
                    extra = cells.mid(cells.size() - (header.size() - 3)); // no IID, valid, Longer
            }
            return std::array<QStringList, 3>{header, values, extra};
        };

        r = runNdr({"eval", runFile, "--on", "training"});
        QVERIFY2(r.exitCode == 0 && r.out.contains("on the problems of the fixed training set"), describe(r));
        auto [header, values, counts] = rows(r, "examples");
        const std::vector<int> train = task.depths(Split::Train);
        // A column per training kind, then IID, valid and Longer.
        QCOMPARE(header.size(), qsizetype(train.size() + 3));
        for (size_t i = 0; i < train.size(); ++i) {
            const auto problems = task.fixedTrainingExamples(train[i]);
            QVERIFY(problems && !problems->empty());
            QCOMPARE(header[qsizetype(i)], QString::fromStdString(depthColumnName(task.config(), train[i])));
            QCOMPARE(counts.value(qsizetype(i)).toInt(), int(problems->size()));
            const double measured = loaded->trainer(0).accuracy(*problems).first;
            QVERIFY2(std::abs(values.value(qsizetype(i)).toDouble() - measured) < 0.0005, describe(r));
        }

        r = runNdr({"eval", runFile, "--on", "independent", "--examples", "40", "--sample-seed", "3"});
        QVERIFY2(r.exitCode == 0 && r.out.contains("40 examples per depth sampled independently"),
                 describe(r));
        auto [allHeader, allValues, shares] = rows(r, "share");
        const std::vector<int> all = task.allDepths();
        QCOMPARE(allHeader.size(), qsizetype(all.size() + 3));
        std::vector<Example> training;
        for (int d : train) {
            const auto problems = task.fixedTrainingExamples(d);
            training.insert(training.end(), problems->begin(), problems->end());
        }
        for (size_t i = 0; i < all.size(); ++i) {
            const std::vector<Example> sample = task.independentSample(all[i], 40, 3);
            const double measured = loaded->trainer(0).accuracy(sample).first;
            QVERIFY2(std::abs(allValues.value(qsizetype(i)).toDouble() - measured) < 0.0005, describe(r));
            int inTraining = 0;
            for (const Example& e : sample)
                inTraining += int(std::count(training.begin(), training.end(), e));
            QVERIFY2(std::abs(shares.value(qsizetype(i)).toDouble() - inTraining / 40.0) < 0.0005,
                     describe(r));
            if (task.splitOf(all[i]) != Split::Train)
                QCOMPARE(inTraining, 0); // 4+4 and 2×3 are never trained on
        }
        // 1+1 (100 problems, 500 draws in training) is nearly all training problems; 2×2 about half.
        QVERIFY2(shares.value(0).toDouble() >= 0.9 && shares.value(5).toDouble() > 0.2, describe(r));
        // The same seed draws the same examples; another seed others.
        QCOMPARE(task.independentSample(6, 40, 3), task.independentSample(6, 40, 3));
        QVERIFY(task.independentSample(6, 40, 3) != task.independentSample(6, 40, 4));

        // A task that draws fresh training examples has no training problems to measure on.
        r = runNdr({"eval", runFile_, "--on", "training"});
        QVERIFY2(r.exitCode == 2 && r.err.contains("no fixed training set"), describe(r));
        r = runNdr({"eval", runFile_, "--examples", "10"});
        QVERIFY2(r.exitCode == 2 && r.err.contains("--on independent"), describe(r));
    }

    void badInputFailsAndWritesNothing_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("configText");
        QTest::addColumn<QString>("mention");
        json heads = tinyConfig();
        heads["models"][0]["heads"] = 3;
        QTest::newRow("heads not dividing dModel")
            << QStringList{"--config", path("bad.json")} << QString::fromStdString(heads.dump()) << "heads";
        QTest::newRow("malformed JSON")
            << QStringList{"--config", path("bad.json")} << "{\"preset\": \"stub\","
            << "bad.json";
        QTest::newRow("unknown preset")
            << QStringList{"--preset", "nosuchpreset"} << QString() << "nosuchpreset";
        QTest::newRow("missing config file")
            << QStringList{"--config", path("absent.json")} << QString() << "absent.json";
        QTest::newRow("bad option value")
            << QStringList{"--preset", "stub", "--steps", "-3"} << QString() << "--steps";
    }

    void badInputFailsAndWritesNothing() {
        QFETCH(QStringList, args);
        QFETCH(QString, configText);
        QFETCH(QString, mention);
        if (!configText.isEmpty())
            QVERIFY(writeText(path("bad.json"), configText.toStdString()));
        const QString out = path("should-not-exist");
        const Result r = runNdr(QStringList{"train"} + args + QStringList{"--out", out});
        QVERIFY2(r.exitCode != 0, describe(r));
        QVERIFY2(r.err.contains(mention), describe(r));
        QVERIFY2(!QFileInfo::exists(out), describe(r));
    }

    void benchPrintsALine() {
        const Result r = runNdr({"bench", "--case", "stub NDR", "--runs", "1", "--seconds", "0.2"});
        QVERIFY2(r.exitCode == 0, describe(r));
        QVERIFY2(r.out.contains("stub NDR"), describe(r));
        QVERIFY2(r.out.contains("GFLOP/s"), describe(r));
        const Result bad = runNdr({"bench", "--case", "no such case"});
        QVERIFY2(bad.exitCode != 0 && bad.err.contains("no such case"), describe(bad));
    }

    void benchMeasuresAModelOtherThanAnEncoder() {
        // ThoughtNet runs through the bench as the encoders do, with a fraction of sgemm in range.
        const QString file = path("bench-thoughtnet.json");
        const Result r = runNdr(
            {"bench", "--case", "thoughtnet ThoughtNet", "--runs", "1", "--seconds", "0.2", "--json", file});
        QVERIFY2(r.exitCode == 0, describe(r));
        const json res = readJson(file)["results"][0];
        QCOMPARE(res["case"].get<std::string>(), std::string("thoughtnet ThoughtNet"));
        QVERIFY(res["flopsPerStep"].get<double>() > 1e9);
        const double fraction = res["fractionOfGemm"].get<double>();
        QVERIFY2(fraction > 0.05 && fraction < 5, qPrintable(QString::number(fraction)));
    }

    void benchReportsPeakMemory() {
        const QString file = path("bench.json");
        const Result r =
            runNdr({"bench", "--case", "stub NDR", "--runs", "1", "--seconds", "0.2", "--json", file});
        QVERIFY2(r.exitCode == 0, describe(r));
        QVERIFY2(r.out.contains("peak MiB"), describe(r));
        const json doc = readJson(file);
        const double peak = doc["results"][0]["peakMemoryMiB"].get<double>();
        QVERIFY2(peak > 1 && peak < 2048, qPrintable(QString::number(peak)));
    }

    void benchPairsEachRunWithTheReference() {
        // Each run's fraction is its own rate over the sgemm rate measured between its steps; the reported
        // fraction is their median (of two runs: their mean).
        const QString file = path("bench-pairs.json");
        const Result r =
            runNdr({"bench", "--case", "stub NDR", "--runs", "2", "--seconds", "0.2", "--json", file});
        QVERIFY2(r.exitCode == 0, describe(r));
        const json res = readJson(file)["results"][0];
        const auto steps = res["stepsPerSecond"].get<std::vector<double>>();
        const auto gemm = res["gemmGflopsPerRun"].get<std::vector<double>>();
        const auto fractions = res["fractionPerRun"].get<std::vector<double>>();
        QCOMPARE(steps.size(), size_t(2));
        QCOMPARE(gemm.size(), size_t(2));
        QCOMPARE(fractions.size(), size_t(2));
        const double flops = res["flopsPerStep"].get<double>();
        for (size_t i = 0; i < 2; ++i) {
            QVERIFY(gemm[i] > 0);
            QVERIFY(qAbs(fractions[i] - flops * steps[i] / 1e9 / gemm[i]) < 1e-9 * fractions[i]);
        }
        QVERIFY(qAbs(res["fractionOfGemm"].get<double>() - 0.5 * (fractions[0] + fractions[1])) < 1e-12);
    }

    void benchTimesAccuracy() {
        // The stub NDR of seed 1 is above 0.25 on its test depths at its first evaluation (step 250) and
        // never reaches 0.999 in 250 steps.
        const QString file = path("accuracy.json");
        const Result r = runNdr({"bench", "--to-accuracy", "--preset", "stub", "--seeds", "1", "--target",
                                 "0.25", "--json", file},
                                60000); // 250 steps and an evaluation: seconds, minutes under ThreadSanitizer
        QVERIFY2(r.exitCode == 0, describe(r));
        QVERIFY2(r.out.contains("median over 1 seeds"), describe(r));
        const json doc = readJson(file);
        const json& one = doc["results"][0];
        QCOMPARE(one["preset"].get<std::string>(), std::string("stub"));
        QCOMPARE(one["threads"].get<int>(), 1);
        QVERIFY(one["reached"].get<bool>());
        QCOMPARE(one["step"].get<int>(), 250);
        QVERIFY(one["testAccuracy"].get<double>() >= 0.25);
        const double seconds = one["seconds"].get<double>(), eval = one["evalSeconds"].get<double>();
        QVERIFY2(eval > 0 && eval < seconds, qPrintable(QString("%1 of %2").arg(eval).arg(seconds)));
        QVERIFY(doc["medians"][0]["medianSeconds"].get<double>() == seconds);

        const Result bad = runNdr({"bench", "--to-accuracy", "--preset", "arith"});
        QVERIFY2(bad.exitCode == 2 && bad.err.contains("--preset arith"), describe(bad));
        const Result alone = runNdr({"bench", "--preset", "stub"});
        QVERIFY2(alone.exitCode == 2 && alone.err.contains("--to-accuracy"), describe(alone));
        const Result threads = runNdr({"bench", "--threads", "2", "--case", "stub NDR"});
        QVERIFY2(threads.exitCode == 2 && threads.err.contains("--to-accuracy"), describe(threads));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
