// `ndr export-weights` and `ndr import-weights`, run as separate processes: a run exported and imported
// again evaluates and predicts exactly as the original, the reference batch has a tensor per model and
// parameter, and bad files are refused with what is wrong while nothing is written.
#include "core/io/safetensors.h"
#include "core/io/serialize.h"
#include "run_ndr.h"
#include "testutil.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <nlohmann/json.hpp>

using namespace ndr;
using ndrtest::describe;
using ndrtest::Result;
using ndrtest::runNdr;
using nlohmann::json;

namespace {

bool writeText(const QString& path, const std::string& text) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(text.data(), qint64(text.size())) == qint64(text.size());
}

QByteArray readBytes(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Every file under a folder with its bytes.
QMap<QString, QByteArray> contents(const QString& dir) {
    QMap<QString, QByteArray> m;
    for (const QString& name : QDir(dir).entryList(QDir::Files | QDir::Hidden))
        m[name] = readBytes(dir + "/" + name);
    return m;
}

// Four kinds on the stub task, trained for a few dozen steps: quick, and every model answers
// differently.
json tinyConfig() {
    const json sizes = {{"dModel", 16}, {"heads", 2}, {"dFF", 32}, {"steps", 5}, {"evalSteps", 0}};
    json ndr = sizes, rel = sizes, lstm = {{"preset", "lstm"}, {"lstmHidden", 16}, {"lstmEmbedding", 8}};
    rel.update({{"preset", "absrel-gate"}, {"name", "+abs/rel+gate"}});
    json transformer = sizes;
    return {{"preset", "stub"},
            {"task", {{"evalExamplesPerDepth", 64}}},
            {"train", {{"steps", 40}, {"evalInterval", 20}, {"batchSize", 16}}},
            {"models", {ndr, transformer, rel, lstm}}};
}

} // namespace

class TestWeights : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;
    QString runFile_;

    QString path(const QString& name) const { return dir_.filePath(name); }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        QVERIFY(writeText(path("tiny.json"), tinyConfig().dump()));
        const Result r =
            runNdr({"train", "--config", path("tiny.json"), "--out", path("trained"), "--quiet"});
        QVERIFY2(r.exitCode == 0, describe(r));
        runFile_ = path("trained/run.json");
    }

    void helpOnBothCommands() {
        for (const QString cmd : {"export-weights", "import-weights"}) {
            const Result r = runNdr({cmd, "--help"});
            QVERIFY2(r.exitCode == 0 && r.out.contains("--out"), describe(r));
        }
    }

    // The round trip: export, import, and `ndr eval` and `ndr predict` print the same to the last digit.
    void roundTripEvaluatesTheSame() {
        Result r = runNdr({"export-weights", runFile_, "--out", path("exported")});
        QVERIFY2(r.exitCode == 0, describe(r));
        for (const char* stem : {"ndr", "transformer", "abs-rel-gate", "lstm"}) {
            QVERIFY2(QFile::exists(path("exported/") + stem + ".safetensors"), stem);
            QVERIFY2(QFile::exists(path("exported/") + stem + ".json"), stem);
        }
        r = runNdr({"import-weights", path("exported"), "--out", path("imported")});
        QVERIFY2(r.exitCode == 0, describe(r));
        const QString importedRun = path("imported/run.json");
        const Result a = runNdr({"eval", runFile_}, 120000), b = runNdr({"eval", importedRun}, 120000);
        QVERIFY2(a.exitCode == 0, describe(a));
        QVERIFY2(b.exitCode == 0, describe(b));
        // The first line names the run file; everything else must be the same text.
        QString printedB = b.out;
        printedB.replace(importedRun, runFile_);
        QCOMPARE(printedB, a.out);
        QVERIFY2(a.out.count('\n') >= 6, describe(a)); // the header, a row per model, the baseline
        for (const QString question : {"01 a b c", "11 d d a b c a"}) {
            Result p = runNdr({"predict", runFile_, question}),
                   q = runNdr({"predict", importedRun, question});
            QVERIFY2(p.exitCode == 0 && q.exitCode == 0, describe(q));
            q.out.replace(importedRun, runFile_);
            QCOMPARE(q.out, p.out);
        }
        // The run opens with its models finished at the exported step.
        const RunRecord rec = loadRunRecord(importedRun.toStdString());
        QCOMPARE(rec.models.size(), size_t(4));
        QCOMPARE(rec.models[0].stepsDone, 40);
        QVERIFY(rec.models[0].status.state == ModelState::Finished);
    }

    void checkBatchHoldsLogitsAndGradients() {
        const QString file = path("check.safetensors");
        const Result r =
            runNdr({"export-weights", runFile_, "--out", path("exported-check"), "--check-batch", file});
        QVERIFY2(r.exitCode == 0, describe(r));
        const SafetensorsFile check = loadSafetensors(file.toStdString());
        const SafetensorsTensor* tokens = check.find("tokens");
        QVERIFY(tokens && tokens->shape.size() == 2);
        const int64_t B = tokens->shape[0];
        QCOMPARE(B, int64_t(2 * 7)); // two examples of each of the stub's seven depths
        const SafetensorsFile weights = loadSafetensors(path("exported-check/ndr.safetensors").toStdString());
        for (const SafetensorsTensor& w : weights.tensors) {
            const SafetensorsTensor* g = check.find("ndr/grad/" + w.name);
            QVERIFY2(g && g->shape == w.shape, w.name.c_str());
        }
        const SafetensorsTensor* logits = check.find("lstm/logits");
        QVERIFY(logits && logits->shape == (std::vector<int64_t>{B, 4}));
        const SafetensorsTensor* grad = check.find("transformer/grad/readout.w");
        QVERIFY(grad &&
                std::any_of(grad->values.begin(), grad->values.end(), [](float v) { return v != 0; }));
    }

    // Refusals: each names what is wrong, exits 1, and writes nothing.
    void badFilesAreRefusedAndNothingIsWritten() {
        Result r = runNdr({"export-weights", runFile_, "--out", path("bad")});
        QVERIFY2(r.exitCode == 0, describe(r));
        const QByteArray weights = readBytes(path("bad/ndr.safetensors"));
        const QByteArray description = readBytes(path("bad/ndr.json"));
        const auto refusedWith = [&](const QString& mention) {
            const QMap<QString, QByteArray> before = contents(path("bad"));
            const Result res = runNdr({"import-weights", path("bad"), "--out", path("bad-out")});
            QVERIFY2(res.exitCode == 1 && res.err.contains(mention), describe(res));
            QVERIFY2(!QDir(path("bad-out")).exists(), "the run folder was made");
            QCOMPARE(contents(path("bad")), before);
        };
        QVERIFY(writeText(path("bad/ndr.safetensors"), weights.left(weights.size() - 8).toStdString()));
        refusedWith("run past the end of the data");
        QVERIFY(writeText(path("bad/ndr.safetensors"), weights.left(6).toStdString()));
        refusedWith("truncated");
        QVERIFY(writeText(path("bad/ndr.safetensors"), weights.toStdString()));
        json d = json::parse(description.toStdString());
        d["model"]["dModel"] = 32;
        QVERIFY(writeText(path("bad/ndr.json"), d.dump()));
        refusedWith("has shape [11, 16] but this model's is [11, 32]");
        d = json::parse(description.toStdString());
        d["vocabulary"][0] = "000";
        QVERIFY(writeText(path("bad/ndr.json"), d.dump()));
        refusedWith("its vocabulary is not the task's: token 0 is '000' but the task's is '00'");
        QVERIFY(writeText(path("bad/ndr.json"), description.toStdString()));

        // An existing run folder is not overwritten; an existing export neither, unless asked.
        r = runNdr({"import-weights", path("bad"), "--out", path("trained")});
        QVERIFY2(r.exitCode == 1 && r.err.contains("already exists"), describe(r));
        const QMap<QString, QByteArray> exported = contents(path("bad"));
        r = runNdr({"export-weights", runFile_, "--out", path("bad")});
        QVERIFY2(r.exitCode == 1 && r.err.contains("already holds") && r.err.contains("--overwrite"),
                 describe(r));
        QCOMPARE(contents(path("bad")), exported);
        r = runNdr({"export-weights", runFile_, "--out", path("bad"), "--overwrite"});
        QVERIFY2(r.exitCode == 0, describe(r));
    }
};

QTEST_GUILESS_MAIN(TestWeights)
#include "test_weights.moc"
