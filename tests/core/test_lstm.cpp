// The LSTM baseline: finite-difference gradients in double precision over a batch of several lengths,
// padding that changes nothing, its trace, checkpoints and reopened runs, determinism, its configuration
// (JSON, validation, per-model weight decay) and a short training run on the stub task.
#include "core/io/files.h"
#include "core/io/serialize.h"
#include "core/models/lstm/lstm.h"
#include "core/task/ctl_task.h"
#include "core/train/run.h"
#include "core/train/trainer.h"
#include "testutil.h"
#include "training_helpers.h"

#include <QTemporaryDir>
#include <nlohmann/json.hpp>
#include <random>

using namespace ndr;
using nlohmann::json;

namespace {

constexpr double kStep = 1e-6, kAtol = 1e-7, kRtol = 1e-5;
constexpr int kVocab = 7, kSymbols = 3;

ModelConfig smallLstm(float dropout) {
    ModelConfig m = lstmModel(5, 3);
    m.as<ndr::LstmConfig>().dropout = dropout;
    return m;
}

// A batch of `lengths` (each counting [B] and [E]) with random tokens and targets, padded with -1, which
// would fail loudly if a padded position were ever read.
Batch randomBatch(const std::vector<int>& lengths, std::mt19937_64& rng) {
    Batch b;
    b.batch = int(lengths.size());
    b.positions = *std::max_element(lengths.begin(), lengths.end());
    b.lengths = lengths;
    std::uniform_int_distribution<int> token(0, kVocab - 1), symbol(0, kSymbols - 1);
    for (int i = 0; i < b.batch; ++i) {
        for (int t = 0; t < b.positions; ++t)
            b.tokens.push_back(t < lengths[size_t(i)] ? token(rng) : -1);
        b.targets.push_back(symbol(rng));
        b.depths.push_back(lengths[size_t(i)] - 3);
    }
    return b;
}

// The examples of `batch` listed in `which`, re-padded to the longest of them.
Batch subBatch(const Batch& batch, const std::vector<int>& which) {
    Batch b;
    b.batch = int(which.size());
    for (int i : which)
        b.positions = std::max(b.positions, batch.lengths[size_t(i)]);
    for (int i : which) {
        for (int t = 0; t < b.positions; ++t)
            b.tokens.push_back(t < batch.lengths[size_t(i)] ? batch.tokens[size_t(i) * batch.positions + t]
                                                            : -1);
        b.lengths.push_back(batch.lengths[size_t(i)]);
        b.targets.push_back(batch.targets[size_t(i)]);
        b.depths.push_back(batch.depths[size_t(i)]);
    }
    return b;
}

QString errorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

} // namespace

class TestLstm : public QObject {
    Q_OBJECT

private slots:
    // Every parameter (the model is small enough to check them all) against central differences, on a
    // batch whose examples read 0 to 6 tokens, so that blocks of every size and the examples that
    // stop early are exercised. With dropout the same masks are drawn again from the same seed.
    void gradientsMatchFiniteDifferences_data() {
        QTest::addColumn<float>("dropout");
        QTest::newRow("dropout off") << 0.0f;
        QTest::newRow("dropout 0.5 on the embeddings, masks replayed") << 0.5f;
    }
    void gradientsMatchFiniteDifferences() {
        QFETCH(float, dropout);
        Lstm<double> model(smallLstm(dropout), kVocab, kSymbols);
        model.init(11);
        std::mt19937_64 rng(4);
        const Batch batch = randomBatch({5, 3, 8, 2, 6, 8, 4}, rng);
        auto loss = [&] {
            Rng drop(8);
            return model.forward(batch, 0, true, drop, true);
        };
        model.params().zeroGrad();
        loss();
        model.backward();
        const AlignedVector<double> analytic = model.params().grads();
        auto& values = model.params().values();
        size_t offset = 0;
        for (const TensorInfo& t : model.params().layout()) {
            const size_t n = size_t(t.rows) * t.cols;
            std::vector<double> fd(n);
            for (size_t i = 0; i < n; ++i) {
                const double keep = values[offset + i];
                values[offset + i] = keep + kStep;
                const double lp = loss();
                values[offset + i] = keep - kStep;
                const double lm = loss();
                values[offset + i] = keep;
                fd[i] = (lp - lm) / (2 * kStep);
            }
            double largest = 0;
            for (size_t i = 0; i < n; ++i)
                largest = std::max(largest, std::abs(fd[i]));
            QVERIFY2(largest > 1e-6, qPrintable(QString("d/d %1 is all zero").arg(t.name.c_str())));
            NDR_EXPECT_CLOSE("LSTM d/d " + t.name, analytic.data() + offset, fd.data(), n, kAtol, kRtol);
            offset += n;
        }
    }

    // An example's logits and loss gradient do not depend on the other examples of its batch or on
    // how far it is padded: alone, and among longer and shorter ones, they agree to rounding.
    void paddingChangesNothing() {
        Lstm<double> model(smallLstm(0), kVocab, kSymbols);
        model.init(3);
        std::mt19937_64 rng(9);
        const Batch batch = randomBatch({4, 9, 3, 7, 4}, rng);
        Rng unused(0);
        model.forward(batch, 0, false, unused, false);
        const Mat<double> together = model.logits();
        for (int b = 0; b < batch.batch; ++b) {
            model.forward(subBatch(batch, {b}), 0, false, unused, false);
            const double diff = (model.logits().row(0) - together.row(b)).cwiseAbs().maxCoeff();
            QVERIFY2(diff < 1e-12, qPrintable(QString("example %1 alone differs by %2").arg(b).arg(diff)));
        }
        // The same in float, where the products see blocks of other sizes: close, not necessarily equal.
        Lstm<float> f(smallLstm(0), kVocab, kSymbols);
        f.init(3);
        f.forward(batch, 0, false, unused, false);
        const Mat<float> fTogether = f.logits();
        f.forward(subBatch(batch, {0}), 0, false, unused, false);
        QVERIFY((f.logits().row(0) - fTogether.row(0)).cwiseAbs().maxCoeff() < 1e-5f);
    }

    // The trace reads the tokens without [B] and [E]: one readout per token read, and the last is
    // the model's answer on that example.
    void traceHasOneReadoutPerToken() {
        Lstm<double> model(smallLstm(0), kVocab, kSymbols);
        model.init(5);
        std::mt19937_64 rng(2);
        const Batch batch = randomBatch({6}, rng);
        Rng unused(0);
        model.forward(batch, 0, false, unused, false);
        const Mat<double> logits = model.logits();
        const Trace tr = model.trace(batch.tokens, 1, 14);
        QCOMPARE(tr.steps, 4);
        QCOMPARE(tr.heads, 0);
        QCOMPARE(tr.positions, 6);
        QVERIFY(tr.attention.empty());
        QVERIFY(tr.gates.empty());
        QVERIFY(tr.change.empty()); // its steps read tokens: no column is updated in place
        QCOMPARE(int(tr.stepAnswers.size()), tr.steps + 1);
        QCOMPARE(int(tr.stepProbs.size()), (tr.steps + 1) * kSymbols);
        Index best;
        logits.row(0).maxCoeff(&best);
        QCOMPARE(tr.stepAnswers.back(), int(best));
        // Before any token the state is zero: the readout is that of its bias alone.
        const auto bias = model.params().value(int(model.params().layout().size()) - 1);
        Index biasBest;
        bias.row(0).maxCoeff(&biasBest);
        QCOMPARE(tr.stepAnswers.front(), int(biasBest));
        // A trace without attention or gates is a valid record (the run file keeps probe traces).
        Trace named = tr;
        named.tokenNames.assign(size_t(tr.positions), "x");
        named.intermediates.assign(size_t(tr.positions), 0);
        named.answer = 0;
        const Trace back = json(named).get<Trace>();
        QCOMPARE(back.steps, named.steps);
        QCOMPARE(back.stepAnswers, named.stepAnswers);
    }

    void configuration() {
        const ModelConfig m = lstmModel();
        QVERIFY(m.is<LstmConfig>());
        QCOMPARE(m.as<ndr::LstmConfig>().hidden, 200);
        QCOMPARE(m.as<ndr::LstmConfig>().embedding, 16);
        QCOMPARE(m.as<ndr::LstmConfig>().dropout, 0.5f);
        QCOMPARE(m.learningRate, 1e-3);
        QCOMPARE(m.weightDecay, 0.0);
        // JSON keeps the kind and the LSTM's fields; a model written before they existed is an encoder.
        ModelConfig custom = lstmModel(32, 8);
        custom.weightDecay = 0.05;
        const ModelConfig back = json(custom).get<ModelConfig>();
        QVERIFY(back.is<LstmConfig>());
        QCOMPARE(back.as<ndr::LstmConfig>().hidden, 32);
        QCOMPARE(back.as<ndr::LstmConfig>().embedding, 8);
        QCOMPARE(back.weightDecay, 0.05);
        json old = json(ndrModel(16, 2, 32, 4));
        for (const char* key : {"kind", "weightDecay", "lstmHidden", "lstmEmbedding"})
            old.erase(key);
        const ModelConfig fromOld = old.get<ModelConfig>();
        QVERIFY(fromOld.is<EncoderConfig>());
        QCOMPARE(fromOld.weightDecay, -1.0);
        json wrong = json(custom);
        wrong["kind"] = "gru";
        QVERIFY(errorOf([&] { (void)wrong.get<ModelConfig>(); }).contains("kind: unknown value 'gru'"));

        // A config file names the model preset; its fields override.
        const RunConfig file = runConfigFromJson(
            R"({"preset": "stub", "models": [{"preset": "lstm", "lstmHidden": 64}], "train": {"batchSize": 256}})");
        QCOMPARE(int(file.models.size()), 1);
        QVERIFY(file.models[0].is<LstmConfig>());
        QCOMPARE(file.models[0].as<ndr::LstmConfig>().hidden, 64);
        QCOMPARE(file.models[0].name, std::string("LSTM"));
        const QString unknown =
            errorOf([] { runConfigFromJson(R"({"preset": "stub", "models": [{"preset": "gru"}]})"); });
        QVERIFY2(unknown.startsWith("models[0].preset: unknown model preset 'gru'; expected one of ") &&
                     unknown.contains("lstm") && unknown.contains("thoughtnet"),
                 qPrintable(unknown));

        // Validation checks the LSTM's own fields.
        RunConfig c = presetConfig("stub");
        c.models[1] = lstmModel();
        QVERIFY(validate(c).empty());
        c.models[1].as<ndr::LstmConfig>().hidden = 0;
        c.models[1].as<ndr::LstmConfig>().embedding = 5000;
        c.models[1].as<ndr::LstmConfig>().dropout = 1;
        c.models[1].weightDecay = -0.5;
        const std::vector<std::string> expected = {
            "models[1].lstmHidden: must be between 1 and 4096, got 0",
            "models[1].lstmEmbedding: must be between 1 and 4096, got 5000",
            "models[1].dropout: must be at least 0 and below 1, got 1",
            "models[1].weightDecay: must be -1 (the run's weight decay) or between 0 and 1, got -0.5"};
        QCOMPARE(problemTexts(validate(c)), expected);
    }

    // A model's own weight decay replaces the run's: -1 (the run's) and the run's value give the same
    // losses, 0 others.
    void perModelWeightDecay() {
        auto run = [](double modelDecay) {
            ModelConfig m = lstmModel(16, 4);
            m.weightDecay = modelDecay;
            RunConfig c = ndrtest::quickStubRun({m}, 2);
            c.train.weightDecay = 0.1;
            const CtlTask task(c.task);
            Trainer t(c, 0, task, defaultProbe(task));
            return ndrtest::nextLosses(t, 6);
        };
        const auto runs = run(-1);
        QCOMPARE(run(0.1), runs);
        QVERIFY(run(0) != runs);
    }

    void sameSeedSameLosses() {
        const RunConfig c = ndrtest::quickStubRun({lstmModel(24, 8)}, 7);
        const CtlTask task(c.task);
        Trainer a(c, 0, task, defaultProbe(task)), b(c, 0, task, defaultProbe(task));
        const auto la = ndrtest::nextLosses(a, 12), lb = ndrtest::nextLosses(b, 12);
        for (size_t i = 0; i < la.size(); ++i)
            QCOMPARE(la[i], lb[i]); // bit for bit
        Trainer d(ndrtest::quickStubRun({lstmModel(24, 8)}, 8), 0, task, defaultProbe(task));
        QVERIFY2(ndrtest::nextLosses(d, 12) != la, "a different seed gave the same losses");
    }

    // Saved beside an encoder and opened again, the LSTM's weights, moments and generator come back:
    // training continues with the very losses of the run that was never stopped.
    void checkpointsRoundTrip() {
        QTemporaryDir dir;
        const std::filesystem::path file = dir.filePath("run.json").toStdString();
        const RunConfig c = ndrtest::quickStubRun({lstmModel(24, 8), ndrModel(16, 2, 32, 5)}, 9);
        Run whole(c), halves(c);
        const auto expected = ndrtest::trainWholeAndHalves(whole, halves);
        halves.save(file);
        const auto opened = Run::open(file);
        QVERIFY(opened->record().models[0].config.is<LstmConfig>());
        QCOMPARE(opened->record().models[0].checkpointFile, std::string("lstm@6.ckpt"));
        QCOMPARE(opened->record().models[0].history.back().probe.heads, 0);
        for (int m = 0; m < 2; ++m) {
            QCOMPARE(opened->trainer(m).step(), 6);
            QCOMPARE(ndrtest::nextLosses(opened->trainer(m), 6), expected[m]);
        }

        // An LSTM's checkpoint does not fit an encoder, nor an LSTM of another size.
        const CheckpointData ckpt = halves.trainer(0).checkpoint();
        const CheckpointData back = checkpointFromBytes(checkpointToBytes(ckpt));
        QVERIFY(back.model.is<LstmConfig>());
        QCOMPARE(back.params, ckpt.params);
        const ModelConfig encoder = ndrModel(16, 2, 32, 5);
        QVERIFY(errorOf([&] {
                    checkCheckpointMatches(back, encoder, ckpt.layout);
                }).contains("saved for kind lstm but the run's model has kind encoder"));
        ModelConfig wider = lstmModel(32, 8);
        QVERIFY(errorOf([&] {
                    checkCheckpointMatches(back, wider, ckpt.layout);
                }).contains("saved for lstmHidden 24 but the run's model has lstmHidden 32"));
    }

    // On the stub task (S4 F4, depths 1-4) the LSTM learns: its training loss falls well below chance
    // (ln 4) and the shallowest depth is answered.
    void learnsTheStubTask() {
        RunConfig c = ndrtest::quickStubRun({lstmModel(64, 16)}, 1);
        c.train.batchSize = 64;
        c.train.steps = 400;
        c.train.evalInterval = 400;
        const CtlTask task(c.task);
        Trainer t(c, 0, task, defaultProbe(task));
        const auto l = ndrtest::nextLosses(t, 400);
        const auto meanOf = [&](size_t from, size_t to) {
            double s = 0;
            for (size_t i = from; i < to; ++i)
                s += l[i];
            return s / double(to - from);
        };
        const double first = meanOf(0, 20), last = meanOf(380, 400);
        QVERIFY2(first > 1.2, qPrintable(QString("first losses %1, not near ln 4").arg(first)));
        QVERIFY2(last < 0.8, qPrintable(QString("losses fell from %1 to %2 only").arg(first).arg(last)));
        const EvalRecord r = t.evaluate();
        QVERIFY2(r.accuracy[0] > 0.9, qPrintable(QString("depth 1 accuracy %1").arg(r.accuracy[0])));
        QCOMPARE(r.probe.steps, int(task.tokens(defaultProbe(task)).size()) - 2);
    }
};

QTEST_APPLESS_MAIN(TestLstm)
#include "test_lstm.moc"
