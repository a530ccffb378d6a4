// One block's small products (core/nn/small_products.h) timed in a loop, for the isolated figures of
// docs/results.md ("`ndr bench`", 2026-11-27). Compile once against each commit's header and compare:
//   g++ -std=c++20 -O2 -fopenmp-simd -march=x86-64-v4 -mprefer-vector-width=256 -DNDEBUG \
//       -I/usr/include/eigen3 -I<source tree> small-products-micro.cpp -o micro
// Prints, per length and head width, the best of 7 timings of A v (accumulated), A^T dMixed and q k^T
// in ns, with checksums of the results.
#include "best_ns.h"
#include "core/nn/small_products.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace ndr;

uint64_t hashOf(const std::vector<float>& v) {
    uint64_t h = 1469598103934665603ULL;
    for (float x : v) {
        uint32_t u;
        std::memcpy(&u, &x, 4);
        h = (h ^ u) * 1099511628211ULL;
    }
    return h;
}

void run(int len, int d) {
    const int p = 4 * d + 8; // a head's columns inside a wider projection row
    std::vector<float> a(size_t(len) * len), b(size_t(len) * p), q(size_t(len) * p), k(size_t(len) * p);
    std::vector<float> c1(size_t(len) * p, 0.25f), c2(size_t(len) * p, 0.25f), s(size_t(len) * len);
    for (size_t i = 0; i < a.size(); ++i)
        a[i] = float((i * 7) % 13) / 13 - 0.5f;
    for (size_t i = 0; i < b.size(); ++i)
        q[i] = k[i] = b[i] = float((i * 5) % 11) / 11 - 0.5f;
    const Block<const float> A{a.data(), len, len, len}, B{b.data(), len, d, p}, Q{q.data(), len, d, p},
        K{k.data(), len, d, p};
    volatile float sink = 0;
    const int reps = 2000000 / (len * len * d / 8 + 10) + 10;
    const double ab = bestNs(
        [&] {
            productAB<float>(A, B, 0.7f, Block<float>{c1.data(), len, d, p}, true);
            sink = c1[0];
        },
        reps);
    const double atb = bestNs(
        [&] {
            productAtB<float>(A, B, 0.7f, Block<float>{c2.data(), len, d, p}, true);
            sink = c2[0];
        },
        reps);
    const double abt = bestNs(
        [&] {
            productABt<float>(Q, K, 0.7f, Block<float>{s.data(), len, len, len});
            sink = s[0];
        },
        reps);
    std::printf("len %2d D %3d: AB %7.0f  AtB %7.0f  ABt %7.0f ns  hashes %016llx %016llx\n", len, d, ab, atb,
                abt, (unsigned long long)hashOf(c1), (unsigned long long)hashOf(c2));
}

int main() {
    for (int len : {6, 12, 28, 45})
        for (int d : {12, 32, 64, 256})
            run(len, d);
}
