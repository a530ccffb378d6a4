// Tests of the sweep plan file (core/io/sweep_plan.h) and of seed plans and run states
// (core/train/sweep.h): round trip, and every kind of bad plan refused with a message naming the field.
#include "core/io/files.h"
#include "core/io/sweep_plan.h"
#include "core/train/sweep.h"

#include <QTemporaryDir>
#include <QtTest>
#include <nlohmann/json.hpp>

using namespace ndr;

namespace {

SweepPlan tinyPlan() {
    RunConfig c = presetConfig("stub");
    c.train.steps = 10;
    return seedPlan(c, {1, 2});
}

// The message of the FileError sweepPlanFromText throws for `text`, or "" when it accepts it.
std::string refusal(const std::string& text) {
    try {
        sweepPlanFromText(text);
    } catch (const FileError& e) {
        return e.what();
    }
    return "";
}

} // namespace

class TestSweepPlan : public QObject {
    Q_OBJECT
private slots:
    void seedPlanSetsBothSeeds() {
        const SweepPlan plan = tinyPlan();
        QCOMPARE(int(plan.runs.size()), 2);
        QCOMPARE(plan.runs[1].dir, std::string("seed-2"));
        QCOMPARE(plan.runs[1].config.task.seed, uint64_t(2));
        QCOMPARE(plan.runs[1].config.train.seed, uint64_t(2));
        QCOMPARE(plan.runs[0].config.models, presetConfig("stub").models);
    }

    void seedListsReadAsCountsListsAndRanges() {
        QCOMPARE(parseSeeds("3"), (std::vector<uint64_t>{1, 2, 3}));
        QCOMPARE(parseSeeds("11-15"), (std::vector<uint64_t>{11, 12, 13, 14, 15}));
        QCOMPARE(parseSeeds("1,4,9-10"), (std::vector<uint64_t>{1, 4, 9, 10}));
        QCOMPARE(parseSeeds("7-7"), (std::vector<uint64_t>{7}));
        QCOMPARE(seedsText(parseSeeds("11-15")), std::string("11-15"));
        QCOMPARE(seedsText(parseSeeds("1,4,9-10")), std::string("1,4,9-10"));
        const SweepPlan plan = seedPlan(presetConfig("stub"), parseSeeds("11-12"));
        QCOMPARE(plan.runs[0].dir, std::string("seed-11"));
        QCOMPARE(plan.runs[1].config.task.seed, uint64_t(12));
        for (const auto& [text, says] :
             std::vector<std::pair<std::string, std::string>>{{"", "'' is not a seed"},
                                                              {"0", "at least 1"},
                                                              {"15-11", "runs backwards"},
                                                              {"1,,2", "'' is not a seed"},
                                                              {"a-3", "'a-3' is not a seed"},
                                                              {"1-3,2", "seed 2 is given twice"},
                                                              {"1-99999", "more than 10000"}}) {
            try {
                parseSeeds(text);
                QFAIL(("accepted '" + text + "'").c_str());
            } catch (const std::invalid_argument& e) {
                QVERIFY2(std::string(e.what()).find(says) != std::string::npos, e.what());
            }
        }
    }

    void roundTrip() {
        const SweepPlan plan = tinyPlan();
        QVERIFY(sweepPlanFromText(sweepPlanToText(plan)) == plan);
    }

    void badPlansAreRefusedByName_data() {
        QTest::addColumn<QString>("edit"); // JSON pointer of the value to replace
        QTest::addColumn<QString>("value");
        QTest::addColumn<QString>("expected");
        QTest::newRow("format") << "/format"
                                << "\"ndr-studio-run\""
                                << "not a sweep plan";
        QTest::newRow("newer version") << "/version"
                                       << "9"
                                       << "newer than this program reads";
        QTest::newRow("kind") << "/kind"
                              << "\"grid\""
                              << "kind: expected \"seeds\" or \"table1\"";
        QTest::newRow("no runs") << "/runs"
                                 << "[]"
                                 << "the plan has no runs";
        QTest::newRow("absolute dir") << "/runs/1/dir"
                                      << "\"/tmp/x\""
                                      << "runs[1].dir: '/tmp/x' must be a folder inside";
        QTest::newRow("dir climbs out") << "/runs/0/dir"
                                        << "\"a/../../b\""
                                        << "runs[0].dir: 'a/../../b' must not contain '..'";
        QTest::newRow("NUL in dir") << "/runs/1/dir"
                                    << "\"seed-1\\u0000x\""
                                    << "runs[1].dir: must not contain control characters";
        QTest::newRow("line break in dir") << "/runs/0/dir"
                                           << "\"a\\nb\""
                                           << "runs[0].dir: must not contain control characters";
        QTest::newRow("repeated dir") << "/runs/1/dir"
                                      << "\"seed-1\""
                                      << "runs[1].dir: 'seed-1' is also the folder";
        QTest::newRow("dir inside an earlier run's") << "/runs/1/dir"
                                                     << "\"seed-1/run.json\""
                                                     << "runs[1].dir: 'seed-1/run.json' and the folder of an "
                                                        "earlier run, 'seed-1', lie one inside the other";
        QTest::newRow("dir around an earlier run's") << "/runs/0/dir"
                                                     << "\"seed-2/inner\""
                                                     << "runs[1].dir: 'seed-2' and the folder of an earlier "
                                                        "run, 'seed-2/inner', lie one inside the other";
        QTest::newRow("dir not a string") << "/runs/0/dir"
                                          << "3"
                                          << "runs[0].dir: expected a string";
        QTest::newRow("bad config") << "/runs/1/config/task/symbols"
                                    << "1"
                                    << "runs[1].config: task.symbols";
        QTest::newRow("config missing") << "/runs/0/config"
                                        << "null"
                                        << "runs[0].config";
    }
    void badPlansAreRefusedByName() {
        QFETCH(QString, edit);
        QFETCH(QString, value);
        QFETCH(QString, expected);
        nlohmann::json j = nlohmann::json::parse(sweepPlanToText(tinyPlan()));
        j[nlohmann::json::json_pointer(edit.toStdString())] = nlohmann::json::parse(value.toStdString());
        const std::string why = refusal(j.dump());
        QVERIFY2(why.find(expected.toStdString()) != std::string::npos, ("got: " + why).c_str());
    }

    void notJsonAndTooDeep() {
        QVERIFY(refusal("{\"format\": ").find("not JSON") != std::string::npos);
        QVERIFY(!refusal(std::string(100000, '[')).empty());
    }

    // A group's summary carries each run's majority baseline beside its models' figures; a run file
    // without one adds no value.
    void summaryHasTheMajorityBaseline() {
        const RunConfig c = presetConfig("stub"); // train 1-4, test 5-7
        auto runWith = [&](std::vector<double> baseline) {
            RunRecord r;
            r.config = c;
            for (const ModelConfig& m : c.models) {
                ModelRecord mr;
                mr.config = m;
                EvalRecord e;
                e.depths = {1, 2, 3, 4, 5, 6, 7};
                e.accuracy.assign(7, 0.5);
                e.baseline = baseline;
                mr.history = {e};
                mr.bestEval = 0;
                r.models.push_back(mr);
            }
            return r;
        };
        const GroupSummary g =
            summariseRuns("", {runWith({0.25, 0.3, 0.3, 0.3, 0.4, 0.3, 0.2}),
                               runWith({0.25, 0.5, 0.3, 0.3, 0.2, 0.3, 0.2}), runWith({})});
        QCOMPARE(g.baseline.name, std::string("most common answer"));
        QCOMPARE(g.baseline.perDepth[1], (std::vector<double>{0.3, 0.5}));
        QCOMPARE(g.baseline.iid.size(), size_t(2));
        QCOMPARE(g.baseline.iid[1], (0.25 + 0.5 + 0.3 + 0.3) / 4);
        QCOMPARE(g.baseline.test[0], (0.4 + 0.3 + 0.2) / 3);
        QCOMPARE(g.models.size(), c.models.size());
        QCOMPARE(g.models[0].iid.size(), size_t(3));
    }

    void runStatesFromTheFolder() {
        QTemporaryDir tmp;
        const std::filesystem::path dir = tmp.path().toStdString();
        const SweepPlan plan = tinyPlan();
        saveSweepPlan(dir, plan);
        QVERIFY(loadSweepPlan(dir) == plan);
        QCOMPARE(runProgress(dir, plan.runs[0]).state, RunState::NotStarted);
        std::filesystem::create_directories(dir / plan.runs[0].dir);
        RunnerStatus s;
        s.host = hostName();
        s.pid = 0x7ffffff0; // no such process
        saveRunnerStatus(dir / plan.runs[0].dir, s);
        // A runner that is gone from this host: interrupted, to be run again.
        QCOMPARE(runProgress(dir, plan.runs[0]).state, RunState::Interrupted);
        // The scheduler's word wins over the process rule.
        QCOMPARE(runProgress(dir, plan.runs[0], [](const RunnerStatus&) { return true; }).state,
                 RunState::Running);
        s.host = "another-host";
        saveRunnerStatus(dir / plan.runs[0].dir, s);
        QCOMPARE(runProgress(dir, plan.runs[0]).state, RunState::Running);
        s.state = RunnerStatus::State::Failed;
        s.message = "out of memory";
        saveRunnerStatus(dir / plan.runs[0].dir, s);
        const RunProgress failed = runProgress(dir, plan.runs[0]);
        QCOMPARE(failed.state, RunState::Failed);
        QCOMPARE(failed.detail, std::string("out of memory"));
        QCOMPARE(runProgress(dir, plan.runs[1]).state, RunState::NotStarted);
    }
};

QTEST_APPLESS_MAIN(TestSweepPlan)
#include "test_sweep_plan.moc"
