// Finite-difference gradient checks in double precision for every layer (layer norm, softmax, geometric
// and relative attention, residual and both copy-gated layers) and for the whole model in every
// configuration of Table 1, with dropout switched on (masks replayed from the same seed), in both row
// layouts.
#include "gradient_check.h"

using namespace ndr;
using namespace ndrtest;

namespace {

// A layer of `cfg` in `store`, initialised and moved off its initial values so every term is exercised.
void declarePerturbed(const ModelConfig& cfg, ParamStore<double>& store, EncoderLayer<double>& layer,
                      std::mt19937_64& rng) {
    layer.declare(store, "", cfg.as<EncoderConfig>());
    store.finalize();
    layer.init(store, rng);
    for (auto& v : store.values())
        v += 0.05 * std::normal_distribution<double>(0, 1)(rng);
}

// Whether two gradients agree to 1e-12 and are not all zero (a failure says which).
bool sameNonZeroGradients(const AlignedVector<double>& a, const AlignedVector<double>& b) {
    if (a.size() != b.size()) {
        qWarning("gradients of %zu and %zu values", a.size(), b.size());
        return false;
    }
    double worst = 0, largest = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        worst = std::max(worst, std::abs(a[i] - b[i]));
        largest = std::max(largest, std::abs(b[i]));
    }
    if (largest <= 1e-3)
        qWarning("the gradients are all zero");
    else if (worst >= 1e-12)
        qWarning("largest gradient difference %g", worst);
    return largest > 1e-3 && worst < 1e-12;
}

} // namespace

class TestGradients : public QObject {
    Q_OBJECT

private slots:
    void layerNorm() {
        std::mt19937_64 rng(1);
        ParamStore<double> store;
        const int g = store.add("gain", 1, 5), b = store.add("bias", 1, 5);
        store.finalize();
        store.value(g) = randomMat(1, 5, rng);
        store.value(b) = randomMat(1, 5, rng);
        Md x = randomMat(4, 5, rng, 2.0);
        const Md r = randomMat(4, 5, rng);
        auto loss = [&] {
            Md y;
            LayerNorm<double>::Cache c;
            LayerNorm<double>::forward(x, store.value(g), store.value(b), y, c);
            return (y.array() * r.array()).sum();
        };
        Md y, dx;
        LayerNorm<double>::Cache c;
        LayerNorm<double>::forward(x, store.value(g), store.value(b), y, c);
        LayerNorm<double>::backward(r, store.value(g), store.grad(g), store.grad(b), c, dx);
        checkInput("layer norm", x, dx, loss);
        checkParams("layer norm", store.values(), store.grads(), store.layout(), loss, 50, rng);
    }

    void attention_data() {
        QTest::addColumn<bool>("geometric");
        QTest::addColumn<bool>("l1");
        QTest::addColumn<bool>("training");
        // Two heads: a head width of 4 takes the per-head products' general loops, 12 and 32 their
        // vector kernels (core/nn/small_products.h).
        QTest::addColumn<int>("channels");
        QTest::newRow("geometric") << true << false << false << 8;
        QTest::newRow("geometric with key dropout") << true << false << true << 8;
        QTest::newRow("geometric L1 with key dropout") << true << true << true << 8;
        QTest::newRow("softmax") << false << false << false << 8;
        QTest::newRow("softmax with attention dropout") << false << false << true << 8;
        QTest::newRow("geometric, heads of 12") << true << false << false << 24;
        QTest::newRow("geometric, heads of 32, with key dropout") << true << false << true << 64;
        QTest::newRow("softmax, heads of 12") << false << false << false << 24;
        QTest::newRow("softmax, heads of 32, with attention dropout") << false << false << true << 64;
    }
    void attention() {
        QFETCH(bool, geometric);
        QFETCH(bool, l1);
        QFETCH(bool, training);
        QFETCH(int, channels);
        std::mt19937_64 rng(2);
        ParamStore<double> store;
        GeometricAttention<double> geo;
        SoftmaxAttention<double> soft;
        if (geometric)
            geo.declare(store, "", channels, 2, l1);
        else
            soft.declare(store, "", channels, 2);
        store.finalize();
        if (geometric)
            geo.init(store, rng);
        else
            soft.init(store, rng);
        // Move the scalars and biases off their initial values so every term is exercised.
        for (auto& v : store.values())
            v += 0.1 * std::normal_distribution<double>(0, 1)(rng);
        Md x = randomMat(12, channels, rng);
        const Md r = randomMat(12, channels, rng);
        const double p = training ? 0.3 : 0.0;
        auto run = [&](Md& out, auto& cacheG, auto& cacheS) {
            Rng drop(99);
            if (geometric)
                geo.forward(store, x, kShape, training, p, drop, cacheG, out);
            else
                soft.forward(store, x, kShape, training, p, drop, cacheS, out);
        };
        auto loss = [&] {
            Md out;
            GeometricAttention<double>::Cache cg;
            SoftmaxAttention<double>::Cache cs;
            run(out, cg, cs);
            return (out.array() * r.array()).sum();
        };
        Md out, dx, scratch;
        GeometricAttention<double>::Cache cg;
        SoftmaxAttention<double>::Cache cs;
        run(out, cg, cs);
        if (geometric)
            geo.backward(store, x, kShape, cg, r, dx, scratch);
        else
            soft.backward(store, x, kShape, cs, r, dx, scratch);
        const std::string label = geometric ? "geometric attention" : "softmax attention";
        checkInput(label, x, dx, loss);
        checkParams(label, store.values(), store.grads(), store.layout(), loss, 40, rng);
    }

    void relativeAttention_data() {
        QTest::addColumn<bool>("absRel");
        QTest::addColumn<bool>("training");
        QTest::addColumn<bool>("packed");
        for (bool absRel : {false, true})
            for (bool training : {false, true})
                for (bool packed : {true, false})
                    QTest::newRow(qPrintable(QString("%1%2, %3 rows")
                                                 .arg(absRel ? "abs/rel" : "relative")
                                                 .arg(training ? " with key and position dropout" : "")
                                                 .arg(packed ? "packed" : "padded")))
                        << absRel << training << packed;
    }
    void relativeAttention() {
        QFETCH(bool, absRel);
        QFETCH(bool, training);
        QFETCH(bool, packed);
        const BatchShape& shape = packed ? kPackedShape : kShape;
        std::mt19937_64 rng(12);
        ParamStore<double> store;
        RelativeAttention<double> rel;
        rel.declare(store, "", 8, 2, absRel);
        store.finalize();
        rel.init(store, rng);
        // Off their initial values: u, v and the gate bias start at 0, the scale at 1/sqrt(D).
        for (auto& v : store.values())
            v += 0.1 * std::normal_distribution<double>(0, 1)(rng);
        Md x = randomMat(shape.rows(), 8, rng);
        const Md r = randomMat(shape.rows(), 8, rng);
        const double p = training ? 0.3 : 0.0;
        auto run = [&](Md& out, RelativeAttention<double>::Cache& c) {
            Rng drop(99);
            rel.forward(store, x, shape, training, p, drop, c, out);
        };
        auto loss = [&] {
            Md out;
            RelativeAttention<double>::Cache c;
            run(out, c);
            return (out.array() * r.array()).sum();
        };
        Md out, dx, scratch;
        RelativeAttention<double>::Cache c;
        run(out, c);
        QVERIFY2(!training || (c.keyMask.array() == 0).any(), "no key was dropped");
        QVERIFY2(!training || (c.posMask.array() == 0).any(), "no position vector entry was dropped");
        rel.backward(store, x, shape, c, r, dx, scratch);
        const std::string label = absRel ? "abs/rel attention" : "relative attention";
        checkInput(label, x, dx, loss);
        checkParams(label, store.values(), store.grads(), store.layout(), loss, 40, rng);
    }

    void layer_data() {
        QTest::addColumn<int>("attention");
        QTest::addColumn<int>("update");
        QTest::addColumn<int>("positional");
        QTest::addColumn<bool>("training");
        QTest::addColumn<bool>("packed");
        const int geometric = int(AttentionKind::Geometric), softmax = int(AttentionKind::Softmax);
        const int residual = int(UpdateKind::Residual), copy = int(UpdateKind::CopyGate),
                  tanhGate = int(UpdateKind::CopyGateTanh);
        const int none = int(PositionalKind::None), relative = int(PositionalKind::Relative),
                  absRel = int(PositionalKind::AbsRel);
        QTest::newRow("copy gate + geometric (NDR layer), eval")
            << geometric << copy << none << false << false;
        QTest::newRow("copy gate + geometric (NDR layer), dropout")
            << geometric << copy << none << true << false;
        QTest::newRow("residual + softmax (vanilla layer), eval")
            << softmax << residual << none << false << false;
        QTest::newRow("residual + softmax (vanilla layer), dropout")
            << softmax << residual << none << true << false;
        QTest::newRow("copy gate + softmax, dropout") << softmax << copy << none << true << false;
        QTest::newRow("residual + geometric, dropout") << geometric << residual << none << true << false;
        QTest::newRow("residual + relative (+rel layer), dropout")
            << softmax << residual << relative << true << true;
        QTest::newRow("tanh gate + relative (+rel+gate layer), eval")
            << softmax << tanhGate << relative << false << true;
        QTest::newRow("tanh gate + relative (+rel+gate layer), dropout")
            << softmax << tanhGate << relative << true << true;
        QTest::newRow("tanh gate + relative (+rel+gate layer), dropout, padded")
            << softmax << tanhGate << relative << true << false;
        QTest::newRow("tanh gate + abs/rel (+abs/rel+gate layer), dropout")
            << softmax << tanhGate << absRel << true << true;
        QTest::newRow("tanh gate + abs/rel (+abs/rel+gate layer), dropout, padded")
            << softmax << tanhGate << absRel << true << false;
        QTest::newRow("tanh gate + geometric, dropout") << geometric << tanhGate << none << true << true;
    }
    void layer() {
        QFETCH(int, attention);
        QFETCH(int, update);
        QFETCH(int, positional);
        QFETCH(bool, training);
        QFETCH(bool, packed);
        const BatchShape& shape = packed ? kPackedShape : kShape;
        std::mt19937_64 rng(3);
        const ModelConfig cfg = smallModel(AttentionKind(attention), UpdateKind(update),
                                           PositionalKind(positional), true, GeomNorm::Off);
        ParamStore<double> store;
        EncoderLayer<double> layer;
        declarePerturbed(cfg, store, layer, rng);
        Md x = randomMat(shape.rows(), 8, rng);
        const Md r = randomMat(shape.rows(), 8, rng);
        auto loss = [&] {
            Md out;
            EncoderLayer<double>::Cache c;
            Rng drop(5);
            layer.forward(store, x, shape, training, drop, c, out);
            return (out.array() * r.array()).sum();
        };
        Md out, dx;
        EncoderLayer<double>::Cache c;
        Rng drop(5);
        layer.forward(store, x, shape, training, drop, c, out);
        layer.backward(store, x, shape, c, r, dx);
        checkInput("encoder layer", x, dx, loss);
        checkParams("encoder layer", store.values(), store.grads(), store.layout(), loss, 30, rng);
    }

    // A layer's forward on some rows: the update runs on those rows alone, each as the whole forward
    // computes it (dropout draws for every row either way), and its backward is the derivative of a
    // loss on those rows.
    void layerOnSomeRows_data() {
        QTest::addColumn<int>("variant");
        QTest::addColumn<bool>("packed");
        QTest::newRow("NDR layer, dropout") << 0 << true;
        QTest::newRow("NDR layer, dropout, padded") << 0 << false;
        QTest::newRow("vanilla layer, dropout") << 1 << true;
        QTest::newRow("+rel+gate layer, dropout") << 6 << true;
        QTest::newRow("+abs/rel+gate layer, dropout, padded") << 7 << false;
    }
    void layerOnSomeRows() {
        QFETCH(int, variant);
        QFETCH(bool, packed);
        const BatchShape& shape = packed ? kPackedShape : kShape;
        std::mt19937_64 rng(6);
        const ModelConfig cfg = modelVariant(variant);
        ParamStore<double> store;
        EncoderLayer<double> layer;
        declarePerturbed(cfg, store, layer, rng);
        Md x = randomMat(shape.rows(), 8, rng);
        // The last row of each example, and a row in the first one's middle.
        const std::vector<Index> rows = {shape.start(0) + 2, shape.start(0) + 5, shape.start(1) + 3};
        const Md r = randomMat(Index(rows.size()), 8, rng);
        auto forward = [&](Md& out, EncoderLayer<double>::Cache& c, const std::vector<Index>* some) {
            Rng drop(5);
            layer.forward(store, x, shape, true, drop, c, out, some);
        };
        Md all, some;
        EncoderLayer<double>::Cache cacheAll, c;
        forward(all, cacheAll, nullptr);
        forward(some, c, &rows);
        QCOMPARE(some.rows(), Index(rows.size()));
        for (size_t k = 0; k < rows.size(); ++k)
            QVERIFY2((some.row(Index(k)) - all.row(rows[k])).cwiseAbs().maxCoeff() < 1e-12,
                     qPrintable(QString("row %1 differs from the whole forward's").arg(rows[k])));
        auto loss = [&] {
            Md out;
            EncoderLayer<double>::Cache lc;
            forward(out, lc, &rows);
            return (out.array() * r.array()).sum();
        };
        Md dx;
        layer.backward(store, x, shape, c, r, dx);
        QCOMPARE(dx.rows(), x.rows());
        checkInput("encoder layer on some rows", x, dx, loss);
        checkParams("encoder layer on some rows", store.values(), store.grads(), store.layout(), loss, 30,
                    rng);
    }

    // A model runs its last step's update on the rows it reads alone (Encoder::setReadoutRowsOnly);
    // every row's computation is the reference: with dropout on (the same draws) and with several
    // readouts per example, the loss, logits and gradients are the same, in training and evaluation.
    void readoutRowsEqualEveryRow_data() {
        QTest::addColumn<int>("variant");
        QTest::addColumn<int>("readouts");
        QTest::addColumn<bool>("packed");
        QTest::newRow("NDR") << 0 << 1 << true;
        QTest::newRow("NDR, padded") << 0 << 1 << false;
        QTest::newRow("NDR, two readouts") << 0 << 2 << true;
        QTest::newRow("vanilla") << 1 << 1 << true;
        QTest::newRow("NDR with separate layers") << 3 << 1 << true;
        QTest::newRow("vanilla with separate layers, two readouts, padded") << 4 << 2 << false;
        QTest::newRow("+rel") << 5 << 1 << true;
        QTest::newRow("+abs/rel+gate") << 7 << 1 << true;
        QTest::newRow("NDR reading at [B]") << 9 << 1 << true;
    }
    void readoutRowsEqualEveryRow() {
        QFETCH(int, variant);
        QFETCH(int, readouts);
        QFETCH(bool, packed);
        const ModelConfig cfg = modelVariant(variant);
        Batch batch = smallBatch();
        if (readouts == 2) { // the first two positions of each example, as the multi-digit task reads
            batch.readouts = 2;
            batch.targets = {2, 0, 1, 1, 0, 2};
        }
        struct Result {
            double loss, evalLoss;
            Md logits, evalLogits;
            AlignedVector<double> grads;
        };
        auto run = [&](bool readoutRowsOnly) {
            Encoder<double> model(cfg, 7, 3);
            model.setPackedRows(packed);
            model.setReadoutRowsOnly(readoutRowsOnly);
            model.init(11);
            Rng drop(8);
            model.params().zeroGrad();
            Result r;
            r.loss = model.forward(batch, cfg.as<ndr::EncoderConfig>().steps, true, drop, true);
            model.backward();
            r.logits = model.logits();
            r.grads = model.params().grads();
            r.evalLoss = model.forward(batch,
                                       cfg.as<ndr::EncoderConfig>().sharedWeights
                                           ? cfg.as<ndr::EncoderConfig>().steps + 1
                                           : cfg.as<ndr::EncoderConfig>().steps,
                                       false, drop, false);
            r.evalLogits = model.logits();
            return r;
        };
        const Result some = run(true), every = run(false);
        QCOMPARE(some.logits.rows(), Index(batch.batch) * readouts);
        QVERIFY2(std::abs(some.loss - every.loss) < 1e-12,
                 qPrintable(QString("loss %1 vs %2").arg(some.loss, 0, 'g', 17).arg(every.loss, 0, 'g', 17)));
        QVERIFY(std::abs(some.evalLoss - every.evalLoss) < 1e-12);
        QVERIFY((some.logits - every.logits).cwiseAbs().maxCoeff() < 1e-12);
        QVERIFY((some.evalLogits - every.evalLogits).cwiseAbs().maxCoeff() < 1e-12);
        QVERIFY(sameNonZeroGradients(some.grads, every.grads));
    }

    void wholeModel_data() {
        QTest::addColumn<int>("variant");
        QTest::addColumn<bool>("packed");
        QTest::newRow("NDR: geometric + copy gate, no positions, shared") << 0 << true;
        QTest::newRow("vanilla: softmax + residual, sinusoidal, shared") << 1 << true;
        QTest::newRow("NDR with L1-normalised geometric attention") << 2 << true;
        QTest::newRow("NDR with separate layers") << 3 << true;
        QTest::newRow("vanilla with separate layers") << 4 << true;
        QTest::newRow("NDR, padded row layout") << 0 << false;
        QTest::newRow("vanilla, padded row layout") << 1 << false;
        QTest::newRow("+rel: relative softmax + residual") << 5 << true;
        QTest::newRow("+rel+gate: relative softmax + tanh copy gate") << 6 << true;
        QTest::newRow("+abs/rel+gate: abs/rel softmax + tanh copy gate") << 7 << true;
        QTest::newRow("+abs/rel+gate with separate layers") << 8 << true;
        QTest::newRow("+rel, padded row layout") << 5 << false;
        QTest::newRow("+rel+gate, padded row layout") << 6 << false;
        QTest::newRow("+abs/rel+gate, padded row layout") << 7 << false;
        QTest::newRow("NDR reading at [B]") << 9 << true;
        QTest::newRow("NDR reading at [B], padded row layout") << 9 << false;
    }
    void wholeModel() {
        QFETCH(int, variant);
        QFETCH(bool, packed);
        const ModelConfig cfg = modelVariant(variant);
        const int vocab = 7, symbols = 3;
        Encoder<double> model(cfg, vocab, symbols);
        model.setPackedRows(packed);
        model.init(11);
        std::mt19937_64 rng(4);
        for (auto& v : model.params().values())
            v += 0.05 * std::normal_distribution<double>(0, 1)(rng);
        const Batch batch = smallBatch();
        auto loss = [&] {
            Rng drop(8);
            return model.forward(batch, cfg.as<ndr::EncoderConfig>().steps, true, drop, true);
        };
        model.params().zeroGrad();
        loss();
        model.backward();
        const AlignedVector<double> analytic = model.params().grads();
        checkParams("whole model", model.params().values(), analytic, model.params().layout(), loss, 25, rng);
    }

    // The packed row layout (only real positions stored) against the plain padded one: without dropout
    // (whose draws follow the stored rows) the two give the same loss, logits and gradients.
    void packedEqualsPadded_data() {
        QTest::addColumn<int>("variant");
        QTest::newRow("NDR") << 0;
        QTest::newRow("vanilla (sinusoidal positions)") << 1;
        QTest::newRow("NDR with L1-normalised geometric attention") << 2;
        QTest::newRow("NDR with separate layers") << 3;
        QTest::newRow("+rel") << 5;
        QTest::newRow("+rel+gate") << 6;
        QTest::newRow("+abs/rel+gate") << 7;
        QTest::newRow("+abs/rel+gate with separate layers") << 8;
        QTest::newRow("NDR reading at [B]") << 9;
    }
    void packedEqualsPadded() {
        QFETCH(int, variant);
        ModelConfig cfg = modelVariant(variant);
        cfg.as<ndr::EncoderConfig>().dropout = cfg.as<ndr::EncoderConfig>().attentionDropout =
            cfg.as<ndr::EncoderConfig>().gateDropout = 0;
        const Batch batch = smallBatch();
        struct Result {
            double loss;
            Md logits;
            AlignedVector<double> grads;
        };
        auto run = [&](bool packed) {
            Encoder<double> model(cfg, 7, 3);
            model.setPackedRows(packed);
            model.init(11);
            Rng drop(8);
            model.params().zeroGrad();
            Result r;
            r.loss = model.forward(batch, cfg.as<ndr::EncoderConfig>().steps, true, drop, true);
            model.backward();
            r.logits = model.logits();
            r.grads = model.params().grads();
            return r;
        };
        const Result packed = run(true), padded = run(false);
        QVERIFY2(
            std::abs(packed.loss - padded.loss) < 1e-12,
            qPrintable(QString("loss %1 vs %2").arg(packed.loss, 0, 'g', 17).arg(padded.loss, 0, 'g', 17)));
        QVERIFY((packed.logits - padded.logits).cwiseAbs().maxCoeff() < 1e-12);
        QVERIFY(sameNonZeroGradients(packed.grads, padded.grads));
    }

    // ModelConfig::readout chooses the column the answer is read from. Before the first step a
    // model without positional encoding holds each token's embedding, so the answer read at [B] of
    // `[B] x y [E]` is the answer read at the last column of the reversed sequence `[E] y x [B]`.
    void readoutColumn() {
        ModelConfig first = modelVariant(9), last = modelVariant(0);
        QCOMPARE(first.as<ndr::EncoderConfig>().readout, ReadoutColumn::First);
        Encoder<double> a(first, 7, 3), b(last, 7, 3);
        a.init(11);
        b.init(11);
        const std::vector<int> tokens = {4, 0, 3, 1, 5}, reversed(tokens.rbegin(), tokens.rend());
        const Trace atB = a.trace(tokens, 1, 2), atE = b.trace(tokens, 1, 2),
                    reversedAtE = b.trace(reversed, 1, 2);
        for (int s = 0; s < 3; ++s)
            QCOMPARE(atB.probsAfter(0)[s], reversedAtE.probsAfter(0)[s]);
        double differs = 0;
        for (int s = 0; s < 3; ++s)
            differs += std::abs(atB.probsAfter(0)[s] - atE.probsAfter(0)[s]);
        QVERIFY2(differs > 1e-6, "[B] and [E] have different embeddings, so different answers");
        // Training batches read there too: the loss of a one-example batch is -log of the trace's
        // probability of its target after the last step.
        Batch batch;
        batch.batch = 1;
        batch.positions = 5;
        batch.tokens = tokens;
        batch.lengths = {5};
        batch.targets = {2};
        batch.depths = {1};
        Rng drop(1);
        const double loss = a.forward(batch, 2, false, drop, false);
        QVERIFY(std::abs(loss + std::log(double(atB.probsAfter(2)[2]))) < 1e-5);
    }
};

QTEST_APPLESS_MAIN(TestGradients)
#include "test_gradients.moc"
