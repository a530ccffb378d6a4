// Head routing and the thought cost inside the whole model, in double precision: gradients against
// central finite differences (routing on every attention kind, every head or top-2 with masked or
// seed-exact dropped heads, with the entropy term; the thought cost alone and with routing), the packed
// row layout against the padded one, the statistics of a forward, and gate halting at evaluation.
#include "gradient_check.h"

using namespace ndr;
using namespace ndrtest;

namespace {

// Variant `variant` of modelVariant with four heads, routed (top `k`, `dropped`), the entropy term at
// `entropy` and the thought cost at `cost`.
ModelConfig routed(int variant, bool routing, int k, DroppedHeads dropped, double entropy, double cost) {
    ModelConfig m = modelVariant(variant);
    m.as<ndr::EncoderConfig>().heads = 4;
    m.as<ndr::EncoderConfig>().headRouting = routing;
    m.as<ndr::EncoderConfig>().routeTopK = k;
    m.as<ndr::EncoderConfig>().routeDropped = dropped;
    m.as<ndr::EncoderConfig>().routeEntropy = entropy;
    m.as<ndr::EncoderConfig>().thoughtCost = cost;
    return m;
}

ModelConfig rowConfig() {
    QFETCH(int, variant);
    QFETCH(bool, routing);
    QFETCH(int, k);
    QFETCH(bool, seedExact);
    QFETCH(double, entropy);
    QFETCH(double, cost);
    return routed(variant, routing, k, seedExact ? DroppedHeads::SeedExact : DroppedHeads::Masked, entropy,
                  cost);
}

void addRows() {
    QTest::addColumn<int>("variant");
    QTest::addColumn<bool>("routing");
    QTest::addColumn<int>("k");
    QTest::addColumn<bool>("seedExact");
    QTest::addColumn<double>("entropy");
    QTest::addColumn<double>("cost");
    // variant: 0 NDR (geometric + copy gate), 1 vanilla (softmax + residual), 6 +rel+gate, 3 NDR with
    // separate layers.
    QTest::newRow("NDR, routing over every head") << 0 << true << 0 << false << 0.1 << 0.0;
    QTest::newRow("NDR, top-2 masked") << 0 << true << 2 << false << 0.1 << 0.0;
    QTest::newRow("NDR, top-2 seed-exact") << 0 << true << 2 << true << -0.2 << 0.0;
    QTest::newRow("NDR with separate layers, top-2 masked") << 3 << true << 2 << false << 0.1 << 0.0;
    QTest::newRow("vanilla, top-2 masked") << 1 << true << 2 << false << 0.1 << 0.0;
    QTest::newRow("vanilla, top-2 seed-exact") << 1 << true << 2 << true << 0.0 << 0.0;
    QTest::newRow("+rel+gate, top-2 masked") << 6 << true << 2 << false << 0.1 << 0.0;
    QTest::newRow("NDR, thought cost") << 0 << false << 0 << false << 0.0 << 0.5;
    QTest::newRow("+rel+gate, thought cost") << 6 << false << 0 << false << 0.0 << 0.5;
    QTest::newRow("NDR, top-2 routing and thought cost") << 0 << true << 2 << false << 0.1 << 0.5;
}

void perturb(Encoder<double>& model, uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (auto& v : model.params().values())
        v += 0.05 * std::normal_distribution<double>(0, 1)(rng);
}

} // namespace

class TestRoutingGradients : public QObject {
    Q_OBJECT

private slots:
    void wholeModel_data() { addRows(); }
    void wholeModel() {
        const ModelConfig cfg = rowConfig();
        Encoder<double> model(cfg, 7, 3);
        model.init(11);
        perturb(model, 4);
        const Batch batch = smallBatch();
        auto loss = [&] {
            Rng drop(8);
            return model.forward(batch, cfg.as<ndr::EncoderConfig>().steps, true, drop, true);
        };
        model.params().zeroGrad();
        const double total = loss();
        // The loss is the cross-entropy plus the weighted terms, and each term is really there.
        const ForwardStats& s = model.stats();
        QVERIFY(
            std::abs(total - (s.crossEntropy + cfg.as<ndr::EncoderConfig>().routeEntropy * s.routeEntropy +
                              cfg.as<ndr::EncoderConfig>().thoughtCost * s.gateCost)) < 1e-12);
        if (cfg.as<ndr::EncoderConfig>().headRouting)
            QVERIFY(s.routeEntropy > 0.05);
        if (cfg.as<ndr::EncoderConfig>().thoughtCost > 0)
            QVERIFY(s.gateCost > 0.1);
        model.backward();
        const AlignedVector<double> analytic = model.params().grads();
        std::mt19937_64 rng(5);
        checkParams("whole model", model.params().values(), analytic, model.params().layout(), loss, 25, rng);
    }

    // Without dropout the packed and padded row layouts give the same loss and gradients with routing and
    // the thought cost too (their statistics skip the padding rows).
    void packedEqualsPadded_data() { addRows(); }
    void packedEqualsPadded() {
        ModelConfig cfg = rowConfig();
        cfg.as<ndr::EncoderConfig>().dropout = cfg.as<ndr::EncoderConfig>().attentionDropout =
            cfg.as<ndr::EncoderConfig>().gateDropout = 0;
        const Batch batch = smallBatch();
        auto run = [&](bool packed, ForwardStats& stats) {
            Encoder<double> model(cfg, 7, 3);
            model.setPackedRows(packed);
            model.init(11);
            perturb(model, 4);
            Rng drop(8);
            model.params().zeroGrad();
            const double loss = model.forward(batch, cfg.as<ndr::EncoderConfig>().steps, true, drop, true);
            model.backward();
            stats = model.stats();
            return std::make_pair(loss, model.params().grads());
        };
        ForwardStats ps, qs;
        const auto packed = run(true, ps), padded = run(false, qs);
        QVERIFY2(
            std::abs(packed.first - padded.first) < 1e-12,
            qPrintable(QString("loss %1 vs %2").arg(packed.first, 0, 'g', 17).arg(padded.first, 0, 'g', 17)));
        QVERIFY(std::abs(ps.routeEntropy - qs.routeEntropy) < 1e-12);
        QVERIFY(std::abs(ps.gateCost - qs.gateCost) < 1e-12);
        QCOMPARE(ps.headShare.size(), qs.headShare.size());
        for (size_t h = 0; h < ps.headShare.size(); ++h)
            QVERIFY(std::abs(ps.headShare[h] - qs.headShare[h]) < 1e-12);
        double worst = 0;
        for (size_t i = 0; i < packed.second.size(); ++i)
            worst = std::max(worst, std::abs(packed.second[i] - padded.second[i]));
        QVERIFY2(worst < 1e-12, qPrintable(QString("largest gradient difference %1").arg(worst)));
    }

    // Head shares are a distribution over the heads; with top-1 each token uses one head, so the
    // entropy is 0 under masking and positive under seed-exact dropping.
    void statistics() {
        const Batch batch = smallBatch();
        for (DroppedHeads mode : {DroppedHeads::Masked, DroppedHeads::SeedExact}) {
            const ModelConfig cfg = routed(0, true, 1, mode, 0, 0);
            Encoder<double> model(cfg, 7, 3);
            model.init(3);
            Rng rng(1);
            model.forward(batch, cfg.as<ndr::EncoderConfig>().steps, false, rng, false);
            const ForwardStats& s = model.stats();
            QCOMPARE(int(s.headShare.size()), 4);
            double sum = 0;
            for (double share : s.headShare) {
                QVERIFY(share >= 0);
                sum += share;
            }
            QVERIFY(std::abs(sum - 1) < 1e-12);
            if (mode == DroppedHeads::Masked)
                QVERIFY(std::abs(s.routeEntropy) < 1e-6); // the log's epsilon
            else
                QVERIFY(s.routeEntropy > 0.1 && s.routeEntropy < std::log(4.0));
        }
    }

    // Halting at evaluation: gates that are all closed stop every example after its first step, and the
    // answer is the one-step model's; a threshold no gate goes below runs every step.
    void haltingAtEvaluation() {
        ModelConfig cfg = modelVariant(0);
        cfg.as<ndr::EncoderConfig>().steps = 4;
        cfg.as<ndr::EncoderConfig>().dropout = cfg.as<ndr::EncoderConfig>().attentionDropout =
            cfg.as<ndr::EncoderConfig>().gateDropout = 0;
        const Batch batch = smallBatch();
        Encoder<double> model(cfg, 7, 3);
        model.init(7);
        Rng rng(1);
        model.forward(batch, 1, false, rng, false);
        const Md oneStep = model.logits();
        model.forward(batch, cfg.as<ndr::EncoderConfig>().steps, false, rng, false);
        const Md allSteps = model.logits();
        QVERIFY((oneStep - allSteps).cwiseAbs().maxCoeff() > 1e-6);

        cfg.as<ndr::EncoderConfig>().haltThreshold = 0.999; // every gate is below this: halt after step 1
        Encoder<double> closed(cfg, 7, 3);
        closed.init(7);
        closed.forward(batch, cfg.as<ndr::EncoderConfig>().steps, false, rng, false);
        QCOMPARE(closed.stats().haltSteps, std::vector<int>(3, 1));
        QVERIFY((closed.logits() - oneStep).cwiseAbs().maxCoeff() < 1e-12);

        cfg.as<ndr::EncoderConfig>().haltThreshold =
            1e-9; // no gate closes this far: every example runs every step
        Encoder<double> open(cfg, 7, 3);
        open.init(7);
        open.forward(batch, cfg.as<ndr::EncoderConfig>().steps, false, rng, false);
        QCOMPARE(open.stats().haltSteps, std::vector<int>(3, cfg.as<ndr::EncoderConfig>().steps));
        QVERIFY((open.logits() - allSteps).cwiseAbs().maxCoeff() < 1e-12);

        // Training and kept caches never halt.
        open.forward(batch, cfg.as<ndr::EncoderConfig>().steps, true, rng, true);
        QVERIFY(open.stats().haltSteps.empty());
    }
};

QTEST_APPLESS_MAIN(TestRoutingGradients)
#include "test_routing_gradients.moc"
