// The fast geometric attention kernel against the O(T^3) formula, its backward against finite
// differences, and the equal-distance rule on a hand-worked case.
#include "core/nn/attention.h"
#include "testutil.h"

#include <random>

using namespace ndr;

class TestGeometric : public QObject {
    Q_OBJECT

private:
    static std::vector<double> randomScores(int T, std::mt19937_64& rng, double scale) {
        std::normal_distribution<double> n(0.0, scale);
        std::vector<double> s(size_t(T) * T);
        for (auto& v : s)
            v = n(rng);
        return s;
    }

private slots:
    void fastEqualsNaive_data() {
        QTest::addColumn<int>("T");
        QTest::addColumn<int>("len");
        QTest::addColumn<double>("scale");
        QTest::newRow("T1") << 1 << 1 << 1.0;
        QTest::newRow("T2") << 2 << 2 << 1.0;
        QTest::newRow("T7 full") << 7 << 7 << 2.0;
        QTest::newRow("T7 padded") << 7 << 4 << 2.0;
        QTest::newRow("T13 padded") << 13 << 11 << 3.0;
        QTest::newRow("T24 large scores") << 24 << 24 << 10.0;
        QTest::newRow("T40 padded") << 40 << 31 << 1.0;
        QTest::newRow("T50 short example") << 50 << 9 << 2.0; // row by row, one packet per row
    }
    void fastEqualsNaive() {
        QFETCH(int, T);
        QFETCH(int, len);
        QFETCH(double, scale);
        std::mt19937_64 rng(T * 100 + len);
        for (int rep = 0; rep < 5; ++rep) {
            const auto s = randomScores(T, rng, scale);
            std::vector<double> fast(s.size()), naive(s.size());
            geometricForward(s.data(), T, len, fast.data());
            geometricNaive(s.data(), T, len, naive.data());
            NDR_EXPECT_CLOSE("geometric fast vs naive", fast.data(), naive.data(), s.size(), 1e-13, 1e-11);
            // Padding: padded keys and queries get exactly zero; rows sum to at most 1.
            for (int i = 0; i < T; ++i) {
                double sum = 0;
                for (int j = 0; j < T; ++j) {
                    const double a = fast[size_t(i) * T + j];
                    if (i >= len || j >= len || i == j)
                        QCOMPARE(a, 0.0);
                    sum += a;
                }
                QVERIFY2(sum <= 1.0 + 1e-12, "a row of geometric attention sums to more than 1");
            }
        }
        // The float version agrees with the double oracle too.
        const auto s = randomScores(T, rng, scale);
        std::vector<float> sf(s.begin(), s.end()), fastF(s.size());
        std::vector<double> sd(sf.begin(), sf.end()), naive(s.size());
        geometricForward(sf.data(), T, len, fastF.data());
        geometricNaive(sd.data(), T, len, naive.data());
        NDR_EXPECT_CLOSE("geometric float vs double naive", fastF.data(), naive.data(), s.size(), 1e-6, 1e-4);
    }

    void equalDistanceScansRightFirst() {
        // T = 3, query i = 1: keys 0 and 2 are both at distance 1; key 2 (right) is scanned first.
        const double s01 = 0.3, s02 = -0.7; // scores of query 1 against keys 0 and 2
        std::vector<double> s = {0, 0, 0, s01, 0, s02, 0, 0, 0};
        std::vector<double> a(9);
        geometricForward(s.data(), 3, 3, a.data());
        auto sig = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
        QVERIFY(std::abs(a[1 * 3 + 2] - sig(s02)) < 1e-15);
        QVERIFY(std::abs(a[1 * 3 + 0] - sig(s01) * (1 - sig(s02))) < 1e-15);
        QVERIFY(geometricCloser(1, 0, 2));
        QVERIFY(!geometricCloser(1, 2, 0));
        // Scan order from i = 3: 4, 2, 5, 1, 6, 0.
        const int order[] = {4, 2, 5, 1, 6, 0};
        for (int a1 = 0; a1 < 6; ++a1)
            for (int b1 = a1 + 1; b1 < 6; ++b1) {
                QVERIFY(geometricCloser(3, order[b1], order[a1]));
                QVERIFY(!geometricCloser(3, order[a1], order[b1]));
            }
    }

    void backwardMatchesFiniteDifferences_data() {
        QTest::addColumn<int>("T");
        QTest::addColumn<int>("len");
        QTest::newRow("T5") << 5 << 5;
        QTest::newRow("T9 padded") << 9 << 6;
        QTest::newRow("T12") << 12 << 12;
        // Long batches: each row its own range (a packet, then two) with padding columns inside it.
        QTest::newRow("T34 short example") << 34 << 9;
        QTest::newRow("T34 padded") << 34 << 21;
    }
    void backwardMatchesFiniteDifferences() {
        QFETCH(int, T);
        QFETCH(int, len);
        std::mt19937_64 rng(7 + T);
        auto s = randomScores(T, rng, 2.0);
        const auto r = randomScores(T, rng, 1.0); // loss = sum A .* r
        std::vector<double> a(s.size()), ds(s.size());
        geometricForward(s.data(), T, len, a.data());
        geometricBackward(s.data(), a.data(), r.data(), T, len, ds.data());
        std::vector<double> fd(s.size(), 0.0);
        const double h = 1e-6;
        for (size_t k = 0; k < s.size(); ++k) {
            const double keep = s[k];
            auto loss = [&] {
                std::vector<double> out(s.size());
                geometricNaive(s.data(), T, len, out.data());
                double l = 0;
                for (size_t m = 0; m < s.size(); ++m)
                    l += out[m] * r[m];
                return l;
            };
            s[k] = keep + h;
            const double lp = loss();
            s[k] = keep - h;
            const double lm = loss();
            s[k] = keep;
            fd[k] = (lp - lm) / (2 * h);
        }
        // Masked scores (diagonal, padding) have no influence: both must be exactly zero there.
        NDR_EXPECT_CLOSE("geometric backward vs finite differences", ds.data(), fd.data(), s.size(), 1e-8,
                         1e-6);
    }
};

QTEST_APPLESS_MAIN(TestGeometric)
#include "test_geometric.moc"
