// Head routing's gate network in double precision: the weights it gives (top-k kept, dropped heads at
// exactly 0 or, seed-exact, at e^0 / Z), the entropy term, and every gradient against central finite
// differences, with every head, with top-2 masked and with top-2 seed-exact; and the float router (whose
// GELU runs on SIMD packets) against the double one.
#include "gradient_check.h"

using namespace ndr;
using namespace ndrtest;

namespace {

struct Router {
    ParamStore<double> store;
    HeadRouter<double> r;
    Router(int k, DroppedHeads mode, uint64_t seed) {
        r.declare(store, "", 12, 4, k, mode);
        store.finalize();
        std::mt19937_64 rng(seed);
        r.init(store, rng);
        for (auto& v : store.values())
            v += 0.3 * std::normal_distribution<double>(0, 1)(rng);
    }
};

// The loss the gradients are checked on: a fixed projection of the weights plus coef * entropy.
double lossOf(Router& m, const Md& x, const Md& project, double coef) {
    HeadRouter<double>::Cache c;
    m.r.forward(m.store, x, c);
    return c.weights.cwiseProduct(project).sum() + coef * HeadRouter<double>::entropy(c.weights);
}

} // namespace

class TestHeadRouter : public QObject {
    Q_OBJECT

private slots:
    void weightsKeepTheTopHeads() {
        for (DroppedHeads mode : {DroppedHeads::Masked, DroppedHeads::SeedExact}) {
            Router m(2, mode, 3);
            std::mt19937_64 rng(4);
            const Md x = randomMat(9, 12, rng);
            HeadRouter<double>::Cache c;
            m.r.forward(m.store, x, c);
            for (Index n = 0; n < x.rows(); ++n) {
                QCOMPARE(c.kept.row(n).sum(), 2.0);
                QVERIFY(std::abs(c.weights.row(n).sum() - 1.0) < 1e-12);
                double keptMin = 1e9, droppedMax = -1e9;
                for (int h = 0; h < 4; ++h) {
                    if (c.kept(n, h) > 0)
                        keptMin = std::min(keptMin, c.logits(n, h));
                    else
                        droppedMax = std::max(droppedMax, c.logits(n, h));
                }
                QVERIFY(keptMin >= droppedMax);
                for (int h = 0; h < 4; ++h) {
                    if (c.kept(n, h) > 0)
                        continue;
                    if (mode == DroppedHeads::Masked) {
                        QCOMPARE(c.weights(n, h), 0.0);
                    } else {
                        // e^0 / Z with Z = e^0 + e^0 + the kept heads' e^logit.
                        double z = 2.0;
                        for (int j = 0; j < 4; ++j)
                            if (c.kept(n, j) > 0)
                                z += std::exp(c.logits(n, j));
                        QVERIFY(std::abs(c.weights(n, h) - 1.0 / z) < 1e-12);
                    }
                }
            }
        }
        // k = 0 keeps every head: a plain softmax of the logits.
        Router all(0, DroppedHeads::Masked, 5);
        std::mt19937_64 rng(6);
        const Md x = randomMat(3, 12, rng);
        HeadRouter<double>::Cache c;
        all.r.forward(all.store, x, c);
        for (Index n = 0; n < 3; ++n) {
            const double z = c.logits.row(n).array().exp().sum();
            for (int h = 0; h < 4; ++h)
                QVERIFY(std::abs(c.weights(n, h) - std::exp(c.logits(n, h)) / z) < 1e-12);
        }
    }

    void entropyIsLowForPeakyRouting() {
        Md uniform = Md::Constant(2, 4, 0.25), peaky = Md::Zero(2, 4);
        peaky(0, 1) = peaky(1, 3) = 1.0;
        QVERIFY(std::abs(HeadRouter<double>::entropy(uniform) - std::log(4.0)) < 1e-6);
        QVERIFY(std::abs(HeadRouter<double>::entropy(peaky)) < 1e-6);
    }

    void gradientsMatchFiniteDifferences_data() {
        QTest::addColumn<int>("k");
        QTest::addColumn<bool>("seedExact");
        QTest::newRow("every head") << 0 << false;
        QTest::newRow("top-2, masked") << 2 << false;
        QTest::newRow("top-2, seed-exact") << 2 << true;
    }
    void gradientsMatchFiniteDifferences() {
        QFETCH(int, k);
        QFETCH(bool, seedExact);
        Router m(k, seedExact ? DroppedHeads::SeedExact : DroppedHeads::Masked, 11);
        std::mt19937_64 rng(12);
        const Md x = randomMat(7, 12, rng);
        const Md project = randomMat(7, 4, rng);
        const double coef = 0.3;

        HeadRouter<double>::Cache c;
        m.r.forward(m.store, x, c);
        Md dWeights = project;
        HeadRouter<double>::addEntropyGrad(c.weights, coef, dWeights);
        m.store.zeroGrad();
        Md dx = Md::Zero(7, 12);
        m.r.backward(m.store, x, c, dWeights, dx);

        const double eps = 1e-6;
        // The input.
        for (Index i = 0; i < x.size(); ++i) {
            Md xp = x, xm = x;
            xp.data()[i] += eps;
            xm.data()[i] -= eps;
            const double fd = (lossOf(m, xp, project, coef) - lossOf(m, xm, project, coef)) / (2 * eps);
            QVERIFY2(std::abs(fd - dx.data()[i]) < 1e-6 * std::max(1.0, std::abs(fd)),
                     qPrintable(QString("dx[%1]: %2 vs %3").arg(i).arg(dx.data()[i]).arg(fd)));
        }
        // Every parameter.
        auto& values = m.store.values();
        for (size_t i = 0; i < values.size(); ++i) {
            const double keep = values[i];
            values[i] = keep + eps;
            const double up = lossOf(m, x, project, coef);
            values[i] = keep - eps;
            const double down = lossOf(m, x, project, coef);
            values[i] = keep;
            const double fd = (up - down) / (2 * eps), grad = m.store.grads()[i];
            QVERIFY2(std::abs(fd - grad) < 1e-6 * std::max(1.0, std::abs(fd)),
                     qPrintable(QString("parameter %1: %2 vs %3").arg(i).arg(grad).arg(fd)));
        }
    }

    // The float router on the double router's parameters and inputs: the weights and every gradient
    // agree to float precision. Inputs scaled by 3 put pre-activations beyond +-4, where float erf is
    // clamped to +-1.
    void floatAgreesWithDouble() {
        Router m(0, DroppedHeads::Masked, 21);
        ParamStore<float> fstore;
        HeadRouter<float> fr;
        fr.declare(fstore, "", 12, 4, 0, DroppedHeads::Masked);
        fstore.finalize();
        for (size_t i = 0; i < m.store.values().size(); ++i)
            fstore.values()[i] = float(m.store.values()[i]);
        std::mt19937_64 rng(22);
        const Md x = 3.0 * randomMat(9, 12, rng);
        const Md dWeights = randomMat(9, 4, rng);
        const Mat<float> xf = x.cast<float>(), dWeightsF = dWeights.cast<float>();

        HeadRouter<double>::Cache c;
        m.r.forward(m.store, x, c);
        QVERIFY2(c.pre.cwiseAbs().maxCoeff() > 4, "no pre-activation beyond the clamp");
        m.store.zeroGrad();
        Md dx = Md::Zero(9, 12);
        m.r.backward(m.store, x, c, dWeights, dx);

        HeadRouter<float>::Cache cf;
        fr.forward(fstore, xf, cf);
        fstore.zeroGrad();
        Mat<float> dxf = Mat<float>::Zero(9, 12);
        fr.backward(fstore, xf, cf, dWeightsF, dxf);

        const Md hiddenF = cf.hidden.cast<double>(), weightsF = cf.weights.cast<double>(),
                 dxF = dxf.cast<double>();
        NDR_EXPECT_CLOSE("GELU hidden", hiddenF.data(), c.hidden.data(), size_t(c.hidden.size()), 1e-5, 1e-5);
        NDR_EXPECT_CLOSE("weights", weightsF.data(), c.weights.data(), size_t(c.weights.size()), 1e-5, 1e-4);
        NDR_EXPECT_CLOSE("d/d input", dxF.data(), dx.data(), size_t(dx.size()), 1e-5, 1e-4);
        std::vector<double> gradsF(fstore.grads().begin(), fstore.grads().end());
        NDR_EXPECT_CLOSE("d/d parameters", gradsF.data(), m.store.grads().data(), gradsF.size(), 1e-5, 1e-4);
    }
};

QTEST_APPLESS_MAIN(TestHeadRouter)
#include "test_head_router.moc"
