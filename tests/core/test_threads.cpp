// Passes split over OpenMP threads (docs/design.md §6, threads) against the same passes on one
// thread, at sizes where they split: layer norm and bias gradients give the same bits; a training step
// of NDR and of the Transformer (whose matrix products and attention also run on both threads) gives
// the same loss and gradients to float rounding. A step whose batch splits over threads (SplitStep)
// gives the whole batch's loss and gradients to float rounding, for every kind of model, and training
// that splits is repeatable and resumes exactly.
#include "core/config/model_kind.h"
#include "core/models/encoder/encoder.h"
#include "core/nn/layers.h"
#include "core/task/ctl_task.h"
#include "core/train/split_step.h"
#include "core/train/trainer.h"
#include "testutil.h"

#include <omp.h>
#include <random>

using namespace ndr;

namespace {

Mat<float> randomMat(Index rows, Index cols, std::mt19937_64& rng) {
    std::normal_distribution<float> d(0.f, 1.f);
    Mat<float> m(rows, cols);
    for (Index i = 0; i < m.size(); ++i)
        m.data()[i] = d(rng);
    return m;
}

// One training step's loss and gradients of a model on a batch, on `threads` threads.
struct StepResult {
    float loss = 0;
    std::vector<float> grads;
};

StepResult trainingStep(const ModelConfig& cfg, const CtlTask& task, const Batch& batch, int threads) {
    omp_set_num_threads(threads);
    Encoder<float> model(cfg, task.vocabSize(), task.answerCount());
    model.init(7);
    model.params().zeroGrad();
    Rng drop(11);
    StepResult r;
    r.loss = model.forward(batch, factsOf(cfg).steps, true, drop, true);
    model.backward();
    r.grads.assign(model.params().grads().begin(), model.params().grads().end());
    omp_set_num_threads(1);
    return r;
}

// A batch of the task `config` names.
Batch batchOf(const TaskConfig& config, int size, uint64_t seed) {
    const std::unique_ptr<Task> task = makeTask(config);
    std::mt19937_64 rng(seed);
    return task->trainBatch(size, rng);
}

TaskConfig ctlConfig() {
    TaskConfig t;
    t.symbols = 8;
    t.functions = 9;
    t.trainMinDepth = 1;
    t.trainMaxDepth = 5;
    t.evalExamplesPerDepth = 16;
    return t;
}

// A small NDR's run on the CTL task above, on two threads.
RunConfig twoThreadRun(int batchSize, uint64_t seed) {
    RunConfig run;
    run.task = ctlConfig();
    run.models = {ndrModel(32, 4, 64, 4)};
    run.train.batchSize = batchSize;
    run.train.threads = 2;
    run.train.seed = seed;
    return run;
}

} // namespace

class TestThreads : public QObject {
    Q_OBJECT

private slots:
    void init() { omp_set_num_threads(1); }

    void splitsAtTheseSizes() {
        omp_set_num_threads(2);
        QVERIFY(splitOverThreads(3072 * 256));
        QVERIFY(!splitOverThreads(12 * 8));
        omp_set_num_threads(1);
        QVERIFY(!splitOverThreads(3072 * 256));
    }

    void layerNormAndBiasGiveTheSameBits() {
        std::mt19937_64 rng(1);
        const Index n = 700, C = 96; // 67,200 values: split on two threads
        const Mat<float> x = randomMat(n, C, rng), dy = randomMat(n, C, rng);
        const Mat<float> gain = randomMat(1, C, rng), bias = randomMat(1, C, rng);
        const Mat<float> dg0 = randomMat(1, C, rng), db0 = randomMat(1, C, rng);
        struct Out {
            Mat<float> y, dx, dg, db, biasSum;
        };
        auto run = [&](int threads) {
            omp_set_num_threads(threads);
            Out o;
            LayerNorm<float>::Cache c;
            LayerNorm<float>::forward(x, gain, bias, o.y, c);
            o.dg = dg0;
            o.db = db0;
            LayerNorm<float>::backward(dy, gain, o.dg, o.db, c, o.dx);
            o.biasSum = db0;
            biasBackward(dy, o.biasSum);
            omp_set_num_threads(1);
            return o;
        };
        const Out one = run(1), two = run(2);
        QVERIFY(one.y == two.y);
        QVERIFY(one.dx == two.dx);
        QVERIFY(one.dg == two.dg);
        QVERIFY(one.db == two.db);
        QVERIFY(one.biasSum == two.biasSum);
        // The column sums themselves: every column of dy summed in row order.
        Mat<float> want = db0;
        for (Index i = 0; i < n; ++i)
            for (Index j = 0; j < C; ++j)
                want(0, j) += dy(i, j);
        QVERIFY(two.biasSum == want);
    }

    void trainingStepsAgree_data() {
        QTest::addColumn<bool>("gated");
        QTest::newRow("NDR (geometric attention, copy gate)") << true;
        QTest::newRow("Transformer (softmax attention, residual)") << false;
    }
    void trainingStepsAgree() {
        QFETCH(bool, gated);
        const CtlTask task(ctlConfig());
        std::mt19937_64 batchRng(3);
        const Batch batch = task.trainBatch(256, batchRng); // ~2,000 rows of 64: every pass splits
        ModelConfig cfg = gated ? ndrModel(64, 4, 128, 4) : vanillaModel(64, 4, 128, 4);
        cfg.as<ndr::EncoderConfig>().dropout = 0.3f; // masks drawn on one thread in both runs
        const StepResult one = trainingStep(cfg, task, batch, 1), two = trainingStep(cfg, task, batch, 2);
        QVERIFY(std::isfinite(one.loss));
        QCOMPARE(one.grads.size(), two.grads.size());
        NDR_EXPECT_CLOSE("loss", &two.loss, &one.loss, 1, 1e-6, 1e-5);
        NDR_EXPECT_CLOSE("gradients", two.grads.data(), one.grads.data(), one.grads.size(), 1e-6, 1e-3);
    }

    void examplesOfKeepsEachExample() {
        const Batch batch = batchOf(ctlConfig(), 12, 5);
        const Batch part = examplesOf(batch, 4, 9);
        QCOMPARE(part.batch, 5);
        QCOMPARE(part.readouts, batch.readouts);
        int longest = 0;
        for (int b = 0; b < part.batch; ++b) {
            const int len = batch.lengths[size_t(4 + b)];
            longest = std::max(longest, len);
            QCOMPARE(part.lengths[size_t(b)], len);
            QCOMPARE(part.depths[size_t(b)], batch.depths[size_t(4 + b)]);
            QCOMPARE(part.targets[size_t(b)], batch.targets[size_t(4 + b)]);
            for (int t = 0; t < len; ++t)
                QCOMPARE(part.tokens[size_t(b * part.positions + t)],
                         batch.tokens[size_t((4 + b) * batch.positions + t)]);
        }
        QCOMPARE(part.positions, longest);
    }

    void balancedPartsCoverTheBatch() {
        // Rows 2 + 9 + 3 + 3 + 3 + 9 + 1 = 30: two parts of 14 and 16.
        const std::vector<int> lengths = {2, 9, 3, 3, 3, 9, 1};
        QCOMPARE(balancedParts(lengths, 2), (std::vector<int>{0, 3, 7}));
        QCOMPARE(balancedParts(lengths, 1), (std::vector<int>{0, 7}));
        // Every part has an example, however long the first ones are.
        QCOMPARE(balancedParts({50, 1, 1}, 3), (std::vector<int>{0, 1, 2, 3}));
        QCOMPARE(balancedParts({1, 1, 50}, 3), (std::vector<int>{0, 1, 2, 3}));
        QCOMPARE(balancedParts({4, 4}, 5), (std::vector<int>{0, 1, 2}));
        // Part sizes of a training batch: rows within one example's length of half.
        const Batch batch = batchOf(ctlConfig(), 256, 3);
        const std::vector<int> starts = balancedParts(batch.lengths, 2);
        QCOMPARE(starts.size(), size_t(3));
        int first = 0, total = 0;
        for (int b = 0; b < batch.batch; ++b) {
            total += batch.lengths[size_t(b)];
            if (b < starts[1])
                first += batch.lengths[size_t(b)];
        }
        QVERIFY2(std::abs(2 * first - total) <= 2 * 12,
                 qPrintable(QString("%1 of %2").arg(first).arg(total)));
    }

    // The whole batch on one thread against the batch split over two, dropout off (the parts draw their
    // own masks).
    void splitStepGivesTheWholeBatchGradient_data() {
        QTest::addColumn<QString>("kind");
        QTest::newRow("NDR") << "ndr";
        QTest::newRow("Transformer") << "transformer";
        QTest::newRow("LSTM") << "lstm";
        QTest::newRow("ThoughtNet with thought cost") << "thoughtnet";
    }
    void splitStepGivesTheWholeBatchGradient() {
        QFETCH(QString, kind);
        TaskConfig t = ctlConfig();
        ModelConfig cfg;
        if (kind == "ndr") {
            cfg = ndrModel(32, 4, 64, 4);
        } else if (kind == "transformer") {
            cfg = vanillaModel(32, 4, 64, 4);
        } else if (kind == "lstm") {
            cfg = lstmModel(24, 8);
        } else {
            t = {};
            t.kind = TaskKind::MultiDigit;
            t.trainMinDepth = 1, t.trainMaxDepth = 6;
            t.validMinDepth = 1, t.validMaxDepth = 0;
            t.testMinDepth = 7, t.testMaxDepth = 7;
            t.evalExamplesPerDepth = 8;
            cfg = thoughtNetModel(16, 2, 16, 3, 4);
            cfg.as<ThoughtNetConfig>().thoughtCost = 0.01;
        }
        if (auto* e = std::get_if<EncoderConfig>(&cfg.kind))
            e->dropout = e->attentionDropout = e->gateDropout = 0;
        if (auto* l = std::get_if<LstmConfig>(&cfg.kind))
            l->dropout = 0;
        const std::unique_ptr<Task> task = makeTask(t);
        std::mt19937_64 batchRng(9);
        const Batch batch = task->trainBatch(37, batchRng);
        auto fresh = [&] {
            auto m = makeModel<float>(cfg, task->vocabSize(), task->answerCount());
            m->init(4);
            m->params().zeroGrad();
            return m;
        };
        omp_set_num_threads(1);
        const auto whole = fresh();
        Rng rng(2);
        const float wholeLoss = whole->forward(batch, factsOf(cfg).steps, true, rng, true);
        whole->backward();

        omp_set_num_threads(2);
        const auto split = fresh();
        QVERIFY(SplitStep::applies(*split, 2));
        QVERIFY(!SplitStep::applies(*split, 1));
        SplitStep step(*split, 2);
        Rng rng2(2);
        const float splitLoss = step.forwardBackward(*split, batch, factsOf(cfg).steps, rng2);
        omp_set_num_threads(1);
        QVERIFY(std::isfinite(wholeLoss));
        NDR_EXPECT_CLOSE("loss", &splitLoss, &wholeLoss, 1, 1e-6, 1e-5);
        const auto& g1 = whole->params().grads();
        const auto& g2 = split->params().grads();
        QCOMPARE(g1.size(), g2.size());
        NDR_EXPECT_CLOSE("gradients", g2.data(), g1.data(), g1.size(), 1e-6, 1e-3);
        // A second step on the same copies: they take the model's values again and start from zero.
        split->params().values()[0] += 0.25f;
        whole->params().values()[0] += 0.25f;
        whole->params().zeroGrad();
        split->params().zeroGrad();
        whole->forward(batch, factsOf(cfg).steps, true, rng, true);
        whole->backward();
        omp_set_num_threads(2);
        step.forwardBackward(*split, batch, factsOf(cfg).steps, rng2);
        omp_set_num_threads(1);
        NDR_EXPECT_CLOSE("gradients of a second step", g2.data(), g1.data(), g1.size(), 1e-6, 1e-3);
    }

    // Token-mean terms of the loss keep the batch whole (the passes split instead).
    void tokenMeansDoNotSplit() {
        ModelConfig routed = ndrModel(32, 4, 64, 4);
        routed.as<ndr::EncoderConfig>().headRouting = true;
        routed.as<ndr::EncoderConfig>().routeEntropy = 0.01;
        ModelConfig costly = ndrModel(32, 4, 64, 4);
        costly.as<ndr::EncoderConfig>().thoughtCost = 0.01;
        ModelConfig routedFree = routed;
        routedFree.as<ndr::EncoderConfig>().routeEntropy = 0;
        for (const auto& [cfg, splits] : std::vector<std::pair<ModelConfig, bool>>{
                 {routed, false}, {costly, false}, {routedFree, true}}) {
            const auto m = makeModel<float>(cfg, 20, 8);
            QCOMPARE(SplitStep::applies(*m, 2), splits);
        }
    }

    // Training on two threads is as repeatable as on one: two runs of a seed give the same losses.
    void splitTrainingIsRepeatable() {
        const RunConfig run = twoThreadRun(64, 3);
        const std::unique_ptr<Task> task = makeTask(run.task);
        const Example probe = defaultProbe(*task);
        auto losses = [&] {
            Trainer trainer(run, 0, *task, probe);
            std::vector<double> out;
            for (int i = 0; i < 4; ++i)
                out.push_back(trainer.trainStep());
            omp_set_num_threads(1);
            return out;
        };
        const std::vector<double> a = losses(), b = losses();
        QCOMPARE(a, b);
    }

    // A run on two threads resumed from a checkpoint continues as if it had not stopped: the parts'
    // dropout streams come from the model's, which the checkpoint holds.
    void splitRunResumes() {
        const RunConfig run = twoThreadRun(32, 5);
        const std::unique_ptr<Task> task = makeTask(run.task);
        const Example probe = defaultProbe(*task);
        Trainer a(run, 0, *task, probe);
        for (int i = 0; i < 3; ++i)
            a.trainStep();
        const CheckpointData ckpt = a.checkpoint();
        const ModelRecord rec = a.record();
        std::vector<double> rest, resumed;
        for (int i = 0; i < 3; ++i)
            rest.push_back(a.trainStep());
        Trainer b(run, 0, *task, probe);
        b.restore(ckpt, rec);
        for (int i = 0; i < 3; ++i)
            resumed.push_back(b.trainStep());
        omp_set_num_threads(1);
        QCOMPARE(resumed, rest);
    }
};

QTEST_GUILESS_MAIN(TestThreads)
#include "test_threads.moc"
