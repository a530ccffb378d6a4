// Tests of `ndr sweep` as a separate process: plans, run-one, status and collect on a sweep folder,
// local child processes giving the same runs as one process, and bad input (a hand-edited plan with a
// broken entry, no sbatch, a folder that is not a sweep), each with a message and nothing overwritten.
#include "core/io/files.h"
#include "core/io/sweep_plan.h"
#include "core/train/sweep.h"
#include "run_ndr.h"

#include <QFile>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QtTest>
#include <csignal>
#include <nlohmann/json.hpp>

namespace {

using ndrtest::describe;
using ndrtest::Result;

Result runNdr(const QStringList& args,
              const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
    return ndrtest::runNdr(args, 120000, env); // a sweep trains several runs
}

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool writeAll(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
}

// A one-model stub run that trains in a moment.
const char* kTinyConfig = R"({"preset": "stub",
 "models": [{"preset": "ndr", "name": "NDR", "dModel": 16, "heads": 2, "dFF": 32, "steps": 5, "evalSteps": 6}],
 "train": {"steps": 120, "evalInterval": 60, "batchSize": 32}, "task": {"evalExamplesPerDepth": 40}})";

} // namespace

class TestSweep : public QObject {
    Q_OBJECT
    QTemporaryDir tmp_;
    QString config_;

    QString path(const QString& name) const { return tmp_.filePath(name); }
    // The tiny config with a million steps, to be stopped or killed: its file, empty when not written.
    QString writeLongConfig() const {
        QByteArray text = kTinyConfig;
        text.replace("\"steps\": 120", "\"steps\": 1000000");
        return writeAll(path("long.json"), text) ? path("long.json") : QString();
    }

private slots:
    void initTestCase() {
        QVERIFY(tmp_.isValid());
        config_ = path("tiny.json");
        QVERIFY(writeAll(config_, kTinyConfig));
    }

    void planOnlyWritesThePlanAndNothingElse() {
        const QString dir = path("plan");
        const Result r = runNdr({"sweep", "--config", config_, "--seeds", "3", "--out", dir, "--plan-only"});
        QVERIFY2(r.exitCode == 0, describe(r));
        QCOMPARE(QDir(dir).entryList(QDir::NoDotAndDotDot | QDir::AllEntries), QStringList{"sweep.json"});
        const ndr::SweepPlan plan = ndr::loadSweepPlan(dir.toStdString());
        QCOMPARE(int(plan.runs.size()), 3);
        for (int s = 1; s <= 3; ++s) {
            QCOMPARE(plan.runs[size_t(s - 1)].dir, "seed-" + std::to_string(s));
            QCOMPARE(plan.runs[size_t(s - 1)].config.train.seed, uint64_t(s));
            QCOMPARE(plan.runs[size_t(s - 1)].config.task.seed, uint64_t(s));
        }
        const Result status = runNdr({"sweep", "status", dir});
        QVERIFY2(status.exitCode == 0, describe(status));
        QVERIFY2(status.out.contains("0 done") && status.out.contains("3 not started"), describe(status));
    }

    // run-one executes exactly its entry, is idempotent, and collect summarises what has finished.
    void runOneThenCollect() {
        const QString dir = path("one");
        QCOMPARE(runNdr({"sweep", "--config", config_, "--seeds", "2", "--out", dir, "--plan-only"}).exitCode,
                 0);
        Result r = runNdr({"sweep", "run-one", "--quiet", dir, "1"});
        QVERIFY2(r.exitCode == 0, describe(r));
        QVERIFY(QFile::exists(dir + "/seed-2/run.json"));
        QVERIFY(!QFile::exists(dir + "/seed-1/run.json"));
        const QByteArray saved = readAll(dir + "/seed-2/run.json");
        r = runNdr({"sweep", "run-one", "--quiet", dir, "1"});
        QVERIFY2(r.exitCode == 0 && r.err.contains("already done"), describe(r));
        QCOMPARE(readAll(dir + "/seed-2/run.json"), saved);
        r = runNdr({"sweep", "status", dir});
        QVERIFY2(r.out.contains("1 done") && r.out.contains("1 not started"), describe(r));
        r = runNdr({"sweep", "collect", dir});
        QVERIFY2(r.exitCode == 0 && r.out.contains("over 1 of 2 runs"), describe(r));
        r = runNdr({"sweep", "run-one", "--quiet", dir, "2"});
        QVERIFY2(r.exitCode == 2 && r.err.contains("outside the plan"), describe(r));
    }

    // On a task with operations, collect adds each model's accuracy per operation at the root: per
    // run the mean over the test depths at the run's best evaluation, as its run file counts it.
    void collectPerOperation() {
        const QString config = path("listops.json"), dir = path("listops");
        QVERIFY(writeAll(config, R"({"preset": "listops",
 "task": {"operations": ["MAX", "SM"], "trainMinDepth": 2, "trainMaxDepth": 3, "validMinDepth": 4,
          "validMaxDepth": 4, "testMinDepth": 5, "testMaxDepth": 5, "evalExamplesPerDepth": 32},
 "models": [{"preset": "ndr", "name": "NDR", "dModel": 16, "heads": 2, "dFF": 32, "steps": 4}],
 "train": {"steps": 10, "evalInterval": 10, "batchSize": 16}})"));
        Result r = runNdr({"sweep", "--config", config, "--seeds", "2", "--out", dir, "--quiet"});
        QVERIFY2(r.exitCode == 0, describe(r));
        r = runNdr({"sweep", "collect", dir});
        QVERIFY2(r.exitCode == 0 && r.out.contains("Per operation at the root"), describe(r));
        const auto summary = nlohmann::json::parse(readAll(dir + "/summary.json").toStdString());
        const auto& operations = summary.at("groups")[0].at("models")[0].at("operations");
        QCOMPARE(operations.size(), size_t(2));
        QCOMPARE(operations[0].at("operation").get<std::string>(), std::string("MAX"));
        QCOMPARE(operations[1].at("operation").get<std::string>(), std::string("SM"));
        QVERIFY(!summary.at("groups")[0].at("models")[0].contains("halting"));
        QVERIFY(!r.out.contains("before halting"));
        for (int seed = 1; seed <= 2; ++seed) {
            const ndr::RunRecord run =
                ndr::loadRunRecord((dir + QString("/seed-%1/run.json").arg(seed)).toStdString());
            const ndr::EvalRecord& best = run.models[0].history[size_t(run.models[0].bestEval)];
            QCOMPARE(best.depths.back(), 5); // the one test depth
            for (size_t o = 0; o < 2; ++o)
                QCOMPARE(operations[o].at("test").at("values")[size_t(seed - 1)].get<double>(),
                         best.operationAccuracy(best.depths.size() - 1, o));
        }
    }

    // A model that halts: collect prints and saves its steps run per depth and its every-step accuracy,
    // each run's value that of its run file's best evaluation.
    void collectHalting() {
        const QString config = path("halting.json"), dir = path("halting");
        QVERIFY(writeAll(config, R"({"preset": "stub", "task": {"evalExamplesPerDepth": 32},
 "models": [{"preset": "ndr", "name": "NDR", "dModel": 16, "heads": 2, "dFF": 32, "steps": 4, "haltThreshold": 0.5},
            {"preset": "transformer", "name": "T", "dModel": 16, "heads": 2, "dFF": 32, "steps": 4}],
 "train": {"steps": 10, "evalInterval": 10, "batchSize": 16}})"));
        Result r = runNdr({"sweep", "--config", config, "--seeds", "2", "--out", dir, "--quiet"});
        QVERIFY2(r.exitCode == 0, describe(r));
        r = runNdr({"sweep", "collect", dir});
        QVERIFY2(r.exitCode == 0 && r.out.contains("mean steps run before halting") &&
                     r.out.contains("every step"),
                 describe(r));
        const auto summary = nlohmann::json::parse(readAll(dir + "/summary.json").toStdString());
        const auto& models = summary.at("groups")[0].at("models");
        QVERIFY(!models[1].contains("halting")); // the Transformer does not halt
        const auto& halting = models[0].at("halting");
        for (int seed = 1; seed <= 2; ++seed) {
            const ndr::RunRecord run =
                ndr::loadRunRecord((dir + QString("/seed-%1/run.json").arg(seed)).toStdString());
            const ndr::EvalRecord& best = run.models[0].history[size_t(run.models[0].bestEval)];
            QCOMPARE(halting.at("stepsRun").size(), best.depths.size());
            for (size_t d = 0; d < best.depths.size(); ++d) {
                QCOMPARE(halting.at("stepsRun")[d].at("depth").get<int>(), best.depths[d]);
                const double steps = halting.at("stepsRun")[d].at("values")[size_t(seed - 1)].get<double>();
                QCOMPARE(steps, best.meanHaltStep(d));
                QVERIFY(steps >= 1 && steps <= 4);
                QCOMPARE(halting.at("everyStep")[d].at("values")[size_t(seed - 1)].get<double>(),
                         best.everyStepAccuracy[d]);
            }
        }
    }

    // Two child processes at once give the same runs as one process running them in turn.
    void childProcessesEqualOneProcess() {
        const QString one = path("jobs1"), two = path("jobs2");
        Result r = runNdr({"sweep", "--config", config_, "--seeds", "2", "--out", one, "--quiet"});
        QVERIFY2(r.exitCode == 0, describe(r));
        r = runNdr({"sweep", "--config", config_, "--seeds", "2", "--out", two, "--quiet", "--jobs", "2"});
        QVERIFY2(r.exitCode == 0, describe(r));
        QVERIFY(QFile::exists(two + "/logs/0.log") && QFile::exists(two + "/logs/1.log"));
        const QByteArray a = readAll(one + "/summary.json"), b = readAll(two + "/summary.json");
        QVERIFY(!a.isEmpty());
        QCOMPARE(a, b);
    }

    void brokenPlanEntryIsNamedAndNothingChanges() {
        const QString dir = path("broken");
        QCOMPARE(runNdr({"sweep", "--config", config_, "--seeds", "2", "--out", dir, "--plan-only"}).exitCode,
                 0);
        QByteArray plan = readAll(dir + "/sweep.json");
        const QByteArray entry = "\"dir\": \"seed-2\"";
        QVERIFY(plan.contains(entry));
        plan.replace(entry, "\"dir\": \"../x\"");
        QVERIFY(writeAll(dir + "/sweep.json", plan));
        for (const QStringList& args :
             {QStringList{"sweep", "run-one", dir, "0"}, QStringList{"sweep", "status", dir},
              QStringList{"sweep", "collect", dir}, QStringList{"sweep", "resubmit", dir}}) {
            const Result r = runNdr(args);
            QVERIFY2(r.exitCode != 0 && r.err.contains("runs[1]") && r.err.contains(".."), describe(r));
        }
        QCOMPARE(readAll(dir + "/sweep.json"), plan);
        QCOMPARE(QDir(dir).entryList(QDir::NoDotAndDotDot | QDir::AllEntries), QStringList{"sweep.json"});
    }

    void slurmWithoutSbatchWritesNothing() {
        const QString dir = path("nosbatch");
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("PATH", path("empty-path"));
        const Result r =
            runNdr({"sweep", "--config", config_, "--seeds", "2", "--out", dir, "--engine", "slurm"}, env);
        QVERIFY2(r.exitCode != 0 && r.err.contains("sbatch is not on PATH"), describe(r));
        QVERIFY(!QFileInfo::exists(dir));
    }

    void aFolderThatIsNotASweep() {
        QVERIFY(QDir().mkpath(path("plain")));
        QVERIFY(writeAll(path("plain/notes.txt"), "hello"));
        for (const char* cmd : {"status", "collect", "resubmit"}) {
            const Result r = runNdr({"sweep", cmd, path("plain")});
            QVERIFY2(r.exitCode != 0 && r.err.contains("is not a sweep folder"), describe(r));
        }
        QCOMPARE(QDir(path("plain")).entryList(QDir::NoDotAndDotDot | QDir::AllEntries),
                 QStringList{"notes.txt"});
    }

    // ndr table1: every row in both orders per seed, grouped as the Compare view and collect read them;
    // running it again resumes the same plan, another plan in the folder is refused.
    void tableOnePlan() {
        const QString dir = path("table1");
        Result r = runNdr({"table1", "--seeds", "2", "--steps", "30", "--out", dir, "--plan-only"});
        QVERIFY2(r.exitCode == 0, describe(r));
        const ndr::SweepPlan plan = ndr::loadSweepPlan(dir.toStdString());
        QVERIFY(plan.kind == ndr::SweepKind::Table1);
        QCOMPARE(int(plan.runs.size()), 7 * 2 * 2);
        // Seed by seed: every cell gets its first seed before any gets a second.
        QCOMPARE(plan.runs[0].group, std::string("lstm/forward"));
        QCOMPARE(plan.runs[1].dir, std::string("lstm/backward/seed-1"));
        QCOMPARE(plan.runs[1].config.task.order, ndr::Order::Backward);
        QCOMPARE(plan.runs[13].dir, std::string("ndr/backward/seed-1"));
        QCOMPARE(plan.runs[14].dir, std::string("lstm/forward/seed-2"));
        QCOMPARE(plan.runs[14].config.train.seed, uint64_t(2));
        QCOMPARE(plan.runs.back().dir, std::string("ndr/backward/seed-2"));
        for (const auto& e : plan.runs) {
            QCOMPARE(int(e.config.models.size()), 1);
            QCOMPARE(e.config.train.steps, 30);
            // The laptop recipe stops early, but for + abs/rel + gate and NDR in backward order.
            QCOMPARE(e.config.train.stopPatience > 0,
                     e.group != "absrel-gate/backward" && e.group != "ndr/backward");
        }
        QVERIFY(plan.runs[0].config.models[0].is<ndr::LstmConfig>());
        const QByteArray before = readAll(dir + "/sweep.json");
        r = runNdr({"table1", "--seeds", "2", "--steps", "30", "--out", dir, "--plan-only"});
        QVERIFY2(r.exitCode == 0 && r.err.contains("Resuming"), describe(r));
        r = runNdr({"table1", "--seeds", "3", "--steps", "30", "--out", dir, "--plan-only"});
        QVERIFY2(r.exitCode != 0 && r.err.contains("holds another plan"), describe(r));
        QCOMPARE(readAll(dir + "/sweep.json"), before);
        // --replan keeps the runs whose settings are the same and moves the others aside.
        QVERIFY(QDir().mkpath(dir + "/lstm/forward/seed-1") && QDir().mkpath(dir + "/ndr/forward/seed-1"));
        QVERIFY(writeAll(dir + "/lstm/forward/seed-1/marker", "kept"));
        QVERIFY(writeAll(dir + "/ndr/forward/seed-1/marker", "kept"));
        r = runNdr({"table1", "--seeds", "3", "--steps", "30", "--out", dir, "--plan-only", "--replan"});
        QVERIFY2(r.exitCode == 0 && r.err.contains("0 run folder(s) moved"), describe(r)); // more seeds only
        QCOMPARE(int(ndr::loadSweepPlan(dir.toStdString()).runs.size()), 7 * 2 * 3);
        r = runNdr({"table1", "--seeds", "3", "--steps", "40", "--out", dir, "--plan-only", "--replan"});
        QVERIFY2(r.exitCode == 0 && r.err.contains("2 run folder(s) moved"),
                 describe(r)); // every run changed
        QCOMPARE(readAll(dir + "/replaced-1/lstm/forward/seed-1/marker"), QByteArray("kept"));
        QVERIFY(!QFile::exists(dir + "/lstm/forward/seed-1"));
        QCOMPARE(ndr::loadSweepPlan(dir.toStdString()).runs[0].config.train.steps, 40);
    }

    // --seeds takes a range or list and --rows a subset of the rows; bad values are refused by name.
    void tableOneSeedRangesAndRows() {
        const QString dir = path("table1-report");
        Result r = runNdr({"table1", "--seeds", "11-12", "--rows", "ndr,lstm", "--out", dir, "--plan-only"});
        QVERIFY2(r.exitCode == 0, describe(r));
        const ndr::SweepPlan plan = ndr::loadSweepPlan(dir.toStdString());
        QCOMPARE(int(plan.runs.size()), 2 * 2 * 2);
        QCOMPARE(plan.runs[0].dir, std::string("lstm/forward/seed-11"));
        QCOMPARE(plan.runs.back().dir, std::string("ndr/backward/seed-12"));
        QCOMPARE(plan.runs.back().config.task.seed, uint64_t(12));
        r = runNdr({"table1", "--seeds", "15-11", "--out", path("t1-bad"), "--plan-only"});
        QVERIFY2(r.exitCode == 2 && r.err.contains("runs backwards"), describe(r));
        r = runNdr({"table1", "--rows", "ndr,lsmt", "--out", path("t1-bad"), "--plan-only"});
        QVERIFY2(r.exitCode == 2 && r.err.contains("unknown Table 1 row 'lsmt'"), describe(r));
        QVERIFY(!QFile::exists(path("t1-bad")));
        r = runNdr(
            {"sweep", "--preset", "stub", "--seeds", "11-13", "--out", path("sweep-report"), "--plan-only"});
        QVERIFY2(r.exitCode == 0, describe(r));
        QCOMPARE(ndr::loadSweepPlan(path("sweep-report").toStdString()).runs[2].dir, std::string("seed-13"));
    }

    // SIGTERM to the runner alone (as `kill` or a scheduler sends it) reaches its child runs at once:
    // each saves what it trained, the runner exits, and the runs read as interrupted.
    void aTerminatedRunnerStopsItsChildren() {
        const QString longConfig = writeLongConfig();
        QVERIFY(!longConfig.isEmpty());
        const QString dir = path("terminated");
        QProcess p;
        p.start(QStringLiteral(NDR_BINARY_DIR "/app/ndr"),
                {"sweep", "--config", longConfig, "--seeds", "2", "--jobs", "2", "--quiet", "--out", dir});
        QVERIFY(p.waitForStarted());
        // Both children have saved at least one evaluation.
        QTRY_VERIFY_WITH_TIMEOUT(
            QFile::exists(dir + "/seed-1/run.json") && QFile::exists(dir + "/seed-2/run.json"), 60000);
        ::kill(pid_t(p.processId()), SIGTERM);
        QVERIFY2(p.waitForFinished(30000), "the runner did not exit after SIGTERM");
        const Result status = runNdr({"sweep", "status", dir});
        QVERIFY2(status.out.contains("2 interrupted"), describe(status));
        QVERIFY2(status.out.contains("0 running"), describe(status));
    }

    // A second runner of an entry that is training is refused, and the entry still reads as running
    // under the first runner's pid.
    void aSecondRunnerOfAnEntryIsRefused() {
        const QString longConfig = writeLongConfig();
        QVERIFY(!longConfig.isEmpty());
        const QString dir = path("twice-run");
        QCOMPARE(
            runNdr({"sweep", "--config", longConfig, "--seeds", "1", "--out", dir, "--plan-only"}).exitCode,
            0);
        QProcess first;
        first.start(QStringLiteral(NDR_BINARY_DIR "/app/ndr"), {"sweep", "run-one", "--quiet", dir, "0"});
        QVERIFY(first.waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(dir + "/seed-1/run.json"), 60000);
        const Result second = runNdr({"sweep", "run-one", "--quiet", dir, "0"});
        QCOMPARE(second.exitCode, 1);
        QVERIFY2(second.err.contains("is being trained by another process (pid " +
                                     QString::number(first.processId()) + " on "),
                 describe(second));
        const ndr::RunnerStatus status = *ndr::loadRunnerStatus((dir + "/seed-1").toStdString());
        QCOMPARE(status.pid, (long long)first.processId());
        QVERIFY(status.state == ndr::RunnerStatus::State::Running);
        first.kill();
        QVERIFY(first.waitForFinished(10000));
    }

    void anExistingSweepIsNotOverwritten() {
        const QString dir = path("twice");
        QCOMPARE(runNdr({"sweep", "--config", config_, "--seeds", "1", "--out", dir, "--plan-only"}).exitCode,
                 0);
        const QByteArray before = readAll(dir + "/sweep.json");
        const Result r = runNdr({"sweep", "--config", config_, "--seeds", "3", "--out", dir, "--plan-only"});
        QVERIFY2(r.exitCode != 0 && r.err.contains("already holds a sweep"), describe(r));
        QCOMPARE(readAll(dir + "/sweep.json"), before);
    }
};

QTEST_APPLESS_MAIN(TestSweep)
#include "test_sweep.moc"
