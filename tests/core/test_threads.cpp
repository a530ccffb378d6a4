// Passes split over OpenMP threads (docs/design.md §6, threads) against the same passes on one
// thread, at sizes where they split: layer norm and bias gradients give the same bits; a training step
// of NDR and of the Transformer (whose matrix products and attention also run on both threads) gives
// the same loss and gradients to float rounding.
#include "core/nn/encoder.h"
#include "core/nn/layers.h"
#include "core/task/ctl_task.h"
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
    r.loss = model.forward(batch, cfg.steps, true, drop, true);
    model.backward();
    r.grads.assign(model.params().grads().begin(), model.params().grads().end());
    omp_set_num_threads(1);
    return r;
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
        TaskConfig t;
        t.symbols = 8;
        t.functions = 9;
        t.trainMinDepth = 1;
        t.trainMaxDepth = 5;
        t.evalExamplesPerDepth = 16;
        const CtlTask task(t);
        std::mt19937_64 batchRng(3);
        const Batch batch = task.trainBatch(256, batchRng); // ~2,000 rows of 64: every pass splits
        ModelConfig cfg = gated ? ndrModel(64, 4, 128, 4) : vanillaModel(64, 4, 128, 4);
        cfg.dropout = 0.3f; // masks drawn on one thread in both runs
        const StepResult one = trainingStep(cfg, task, batch, 1), two = trainingStep(cfg, task, batch, 2);
        QVERIFY(std::isfinite(one.loss));
        QCOMPARE(one.grads.size(), two.grads.size());
        NDR_EXPECT_CLOSE("loss", &two.loss, &one.loss, 1, 1e-6, 1e-5);
        NDR_EXPECT_CLOSE("gradients", two.grads.data(), one.grads.data(), one.grads.size(), 1e-6, 1e-3);
    }
};

QTEST_GUILESS_MAIN(TestThreads)
#include "test_threads.moc"
