// The hand-written kernels against their plain Eigen statements: the per-head small products of
// core/small_products.h on strided blocks, in float and double, at CTL and ListOps lengths and at the
// paper's one-head width; and the dropout multipliers against their definition. Built twice
// (tests/CMakeLists.txt): for plain x86-64 (the kernels' 16-byte forms) and for x86-64-v3 (32-byte).
#include "core/nn/layers.h"
#include "core/nn/small_products.h"
#include "testutil.h"

#include <algorithm>
#include <random>

using namespace ndr;

namespace {

template <typename S> AlignedVector<S> randomBuffer(size_t n, std::mt19937_64& rng) {
    std::normal_distribution<double> d(0.0, 1.0);
    AlignedVector<S> v(n);
    for (auto& x : v)
        x = S(d(rng));
    return v;
}

// Tolerances: double agrees to rounding; float sums of up to 256 terms reordered into SIMD lanes.
template <typename S> constexpr double kTol = sizeof(S) == 8 ? 1e-12 : 2e-5;

// Blocks sit inside wider buffers (stride > cols) at an offset, as a head's columns of `proj` do.
template <typename S> void checkShapes(int m, int n, int d) {
    std::mt19937_64 rng(uint64_t(m * 1000 + n * 10 + d));
    const Index pad = 5, off = 3;
    const Index sA = std::max({m, n, d}) + pad, sB = d + pad + 2, sC = std::max({m, n, d}) + pad + 1;
    const int rowsMax = std::max(m, n);
    auto a = randomBuffer<S>(size_t(rowsMax * sA + off), rng);
    auto b = randomBuffer<S>(size_t(rowsMax * sB + off), rng);
    auto b2 = randomBuffer<S>(size_t(rowsMax * sB + off), rng);
    const S scale = S(0.7);
    const std::string shape = " m" + std::to_string(m) + " n" + std::to_string(n) + " d" + std::to_string(d) +
                              (sizeof(S) == 8 ? " double" : " float");
    auto cBuffers = [&] {
        auto c = randomBuffer<S>(size_t(std::max(m, n) * sC + off), rng);
        return std::make_pair(c, c);
    };
    auto cmp = [&](const std::string& label, const AlignedVector<S>& got, const AlignedVector<S>& want) {
        NDR_EXPECT_CLOSE(label + shape, got.data(), want.data(), got.size(), kTol<S>, kTol<S>);
    };
    {
        // c (m, n) = a (m, d) b (n, d)^T, e.g. q k^T
        auto [fast, ref] = cBuffers();
        const Block<const S> x{a.data() + off, m, d, sA}, y{b.data() + off, n, d, sB};
        productABt<S>(x, y, scale, Block<S>{fast.data() + off, m, n, sC});
        reference::productABt<S>(x, y, scale, Block<S>{ref.data() + off, m, n, sC});
        cmp("productABt", fast, ref);
    }
    for (bool acc : {false, true}) {
        // c (m, d) (+)= a (m, n) b (n, d), e.g. A v
        auto [fast, ref] = cBuffers();
        const Block<const S> x{a.data() + off, m, n, sA}, y{b2.data() + off, n, d, sB};
        productAB<S>(x, y, scale, Block<S>{fast.data() + off, m, d, sC}, acc);
        reference::productAB<S>(x, y, scale, Block<S>{ref.data() + off, m, d, sC}, acc);
        cmp(acc ? "productAB accumulate" : "productAB", fast, ref);
    }
    for (bool acc : {false, true}) {
        // c (n, d) (+)= a (m, n)^T b (m, d), e.g. A^T dMixed
        auto [fast, ref] = cBuffers();
        const Block<const S> x{a.data() + off, m, n, sA}, y{b.data() + off, m, d, sB};
        productAtB<S>(x, y, scale, Block<S>{fast.data() + off, n, d, sC}, acc);
        reference::productAtB<S>(x, y, scale, Block<S>{ref.data() + off, n, d, sC}, acc);
        cmp(acc ? "productAtB accumulate" : "productAtB", fast, ref);
    }
}

} // namespace

class TestKernels : public QObject {
    Q_OBJECT

private slots:
    void smallProducts_data() {
        QTest::addColumn<int>("m");
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("d");
        // D 8, 12, 16, 32 and 64 take the fixed-width paths, the others the general loops.
        QTest::newRow("one position") << 1 << 1 << 12;
        QTest::newRow("T6, D8") << 6 << 6 << 8;
        QTest::newRow("T9, D16") << 9 << 9 << 16;
        QTest::newRow("T5, D64") << 5 << 5 << 64;
        QTest::newRow("stub head: T7, D12") << 7 << 7 << 12;
        QTest::newRow("ragged: 5 x 7, D3") << 5 << 7 << 3;
        QTest::newRow("d128 head: T8, D32") << 8 << 8 << 32;
        QTest::newRow("paper head: T8, D256") << 8 << 8 << 256;
        QTest::newRow("odd: T13, D17") << 13 << 13 << 17;
        // Longer examples (16 and 17 positions, a ListOps head's 37 x 41 block) and a width just past 32.
        QTest::newRow("T16, D32") << 16 << 16 << 32;
        QTest::newRow("T17, D12") << 17 << 17 << 12;
        QTest::newRow("listops head: 37 x 41, D32") << 37 << 41 << 32;
        QTest::newRow("T7, D33") << 7 << 7 << 33;
        // q k^T along the keys from 16 of them (8 in double): row blocks and their tails, whole vectors
        // only, and the shapes that fall back (few rows, more than eight vectors, a copy past 32 KiB).
        QTest::newRow("keys along vectors: 12 x 20, D32") << 12 << 20 << 32;
        QTest::newRow("keys along vectors: 23 x 64, D16") << 23 << 64 << 16;
        QTest::newRow("ListOps' longest: 50 x 50, D32") << 50 << 50 << 32;
        QTest::newRow("few rows: 5 x 40, D32") << 5 << 40 << 32;
        QTest::newRow("past eight vectors: 30 x 70, D12") << 30 << 70 << 12;
        QTest::newRow("copy past 32 KiB: 20 x 40, D256") << 20 << 40 << 256;
    }
    void smallProducts() {
        QFETCH(int, m);
        QFETCH(int, n);
        QFETCH(int, d);
        checkShapes<float>(m, n, d);
        checkShapes<double>(m, n, d);
    }

    // Element i is dropped when 16-bit lane i % 4 (lowest first) of the pass's draw w = i / 4 is below
    // p * 65536, and kept as 1/(1-p) otherwise; draw w is the (w / 8)-th of stream w % 8, stream k being
    // Xoshiro256 seeded with the k-th of eight draws of the model's generator. The in-place form
    // multiplies the ReLU of its input by the same draws, and addDropped adds its input times them to
    // another while storing them. Sizes around the chunk of 1024 elements the draws are made in.
    void dropoutDraws() {
        const double p = 0.3;
        const float keep = float(1.0 / (1.0 - p));
        const uint16_t threshold = uint16_t(p * 65536.0);
        for (Index n : {1, 3, 4, 5, 31, 32, 33, 1023, 1024, 1025, 3001}) {
            Rng plain(42), fill(42), inPlace(42), added(42);
            const size_t count = static_cast<size_t>(n);
            std::vector<float> want(count), got(count), scaled(count), base(count), y(count), stored(count);
            const std::vector<float> a(count, 0.25f);
            for (size_t i = 0; i < count; ++i) {
                scaled[i] = i % 3 == 1 ? -1.5f : 2.0f; // the ReLU zeroes every third
                base[i] = float(i % 7);
            }
            std::vector<Rng> streams;
            for (int k = 0; k < 8; ++k)
                streams.emplace_back(plain());
            uint64_t bits = 0;
            for (Index i = 0; i < n; ++i) {
                if (i % 4 == 0)
                    bits = streams[size_t(i / 4 % 8)]();
                want[size_t(i)] = uint16_t(bits >> (16 * (i % 4))) >= threshold ? keep : 0.0f;
            }
            dropoutFill(got.data(), n, p, fill);
            reluDropoutInPlace(scaled.data(), n, p, inPlace);
            addDropped(y.data(), base.data(), a.data(), stored.data(), n, p, added);
            int dropped = 0;
            for (Index i = 0; i < n; ++i) {
                QVERIFY2(got[size_t(i)] == want[size_t(i)],
                         qPrintable(QString("n %1, element %2").arg(n).arg(i)));
                QCOMPARE(scaled[size_t(i)], i % 3 == 1 ? 0.0f : 2.0f * want[size_t(i)]);
                QCOMPARE(stored[size_t(i)], want[size_t(i)]);
                QCOMPARE(y[size_t(i)], base[size_t(i)] + 0.25f * want[size_t(i)]);
                dropped += want[size_t(i)] == 0.0f;
            }
            // Each took eight draws of the model's generator, whatever n: the next draws agree.
            const uint64_t next = plain();
            QCOMPARE(fill(), next);
            QCOMPARE(inPlace(), next);
            QCOMPARE(added(), next);
            if (n > 1000)
                QVERIFY2(std::abs(double(dropped) / double(n) - p) < 0.05,
                         qPrintable(QString::number(dropped)));
        }
    }
};

QTEST_APPLESS_MAIN(TestKernels)
#include "test_kernels.moc"
