// Models of the authors' code (RobertCsordas/ndr) converted by python/import_authors.py, against what
// their own classes answered (tests/fixtures/authors/README.md): the engine must give the same answer
// to each of 200 questions per model and the same attention maps to 1e-4, without torch.
#include "core/io/safetensors.h"
#include "core/train/run.h"
#include "core/train/weights.h"

#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

using namespace ndr;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr double kAttentionTolerance = 1e-4;

fs::path fixtures() {
    return fs::path(NDR_SOURCE_DIR) / "tests" / "fixtures" / "authors";
}

json readJson(const fs::path& p) {
    std::ifstream in(p);
    return json::parse(in);
}

} // namespace

class TestAuthorsFixture : public QObject {
    Q_OBJECT

private slots:
    void engineAnswersAsTheirCode_data() {
        QTest::addColumn<QString>("name");
        int n = 0;
        std::vector<std::string> names;
        for (const auto& entry : fs::directory_iterator(fixtures()))
            if (entry.is_directory() &&
                fs::exists(fixtures() / (entry.path().filename().string() + ".expected.json")))
                names.push_back(entry.path().filename().string());
        std::sort(names.begin(), names.end());
        for (const std::string& name : names) {
            QTest::newRow(name.c_str()) << QString::fromStdString(name);
            ++n;
        }
        QVERIFY2(n >= 9, "fewer fixtures than expected");
    }

    void engineAnswersAsTheirCode() {
        QFETCH(QString, name);
        const std::string stem = name.toStdString();
        const json expected = readJson(fixtures() / (stem + ".expected.json"));
        const SafetensorsFile maps = loadSafetensors(fixtures() / (stem + ".attention.safetensors"));

        QTemporaryDir dir;
        const fs::path runFile = fs::path(dir.path().toStdString()) / "run.json";
        ImportedRun imported = importModels(fixtures() / stem);
        saveRunFiles(runFile, imported.record, imported.checkpoints);
        const std::unique_ptr<Run> run = Run::open(runFile);
        Trainer& trainer = run->trainer(0);
        const Task& task = run->task();

        const auto& questions = expected.at("questions");
        const auto& answers = expected.at("answers");
        QCOMPARE(questions.size(), size_t(200));
        int same = 0, right = 0;
        std::string firstDifference;
        std::vector<Trace> traces;
        for (size_t q = 0; q < questions.size(); ++q) {
            const ParseResult parsed = task.parseQuestion(questions[q].get<std::string>());
            QVERIFY2(parsed.example, (questions[q].get<std::string>() + ": " + parsed.error).c_str());
            const Trace tr = trainer.traceOf(*parsed.example);
            const std::string answer = task.symbolName(tr.stepAnswers.back());
            same += answer == answers[q].get<std::string>();
            right += answer == expected.at("truth")[q].get<std::string>();
            if (answer != answers[q].get<std::string>() && firstDifference.empty())
                firstDifference = questions[q].get<std::string>() + ": engine " + answer + ", theirs " +
                                  answers[q].get<std::string>();
            traces.push_back(tr);
        }
        double worst = 0;
        for (const json& q : expected.at("attention")) {
            const Trace& tr = traces[q.get<size_t>()];
            const SafetensorsTensor* theirs = maps.find("attention/" + std::to_string(q.get<int>()));
            QVERIFY(theirs);
            const std::vector<int64_t> shape = {tr.steps, tr.heads, tr.positions, tr.positions};
            QCOMPARE(theirs->shape, shape);
            for (size_t i = 0; i < theirs->values.size(); ++i)
                worst = std::max(worst, std::abs(double(tr.attention[i]) - double(theirs->values[i])));
        }
        qInfo("%s: the same answer as their code on %d of 200 questions (%d right); attention maps of %d "
              "questions within %.2e",
              stem.c_str(), same, right, int(expected.at("attention").size()), worst);
        QVERIFY2(same == 200, ("answers differ, first: " + firstDifference).c_str());
        QVERIFY2(worst <= kAttentionTolerance, ("attention max abs error " + std::to_string(worst)).c_str());
    }
};

QTEST_APPLESS_MAIN(TestAuthorsFixture)
#include "test_authors_fixture.moc"
