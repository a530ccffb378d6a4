// q k^T of one block (core/nn/small_products.h) two ways, timed in a loop: productABtFixed (each dot
// product in SIMD lanes, then summed across them) against productABtByColumns (the keys along
// SIMD vectors over a transposed copy), called directly whatever productABt's dispatch would pick. For
// docs/results.md ("`ndr bench`", 2026-11-30). Built as the x86-64-v3 engine is:
//   g++ -std=c++20 -O2 -fopenmp-simd -march=x86-64-v3 -DNDEBUG -I/usr/include/eigen3 \
//       -I<source tree> dot-columns-micro.cpp -o micro
// Prints, per rows m, keys n and head width D, the best of 7 timings of each in ns and their ratio.
#include "best_ns.h"
#include "core/nn/small_products.h"

#include <cstdio>
#include <vector>

using namespace ndr;

int main() {
    for (int m : {4, 6, 8, 12, 24, 50})
        for (int n : {8, 16, 24, 40, 50})
            for (int d : {12, 32}) {
                if (n < 16 && m > 12)
                    continue;
                const int p = 4 * d + 8; // a head's columns inside a wider projection row
                std::vector<float> q(size_t(64) * p), k(size_t(64) * p), s1(size_t(m) * n), s2(size_t(m) * n);
                for (size_t i = 0; i < q.size(); ++i) {
                    q[i] = float((i * 5) % 11) / 11 - 0.5f;
                    k[i] = float((i * 7) % 13) / 13 - 0.5f;
                }
                const Block<const float> Q{q.data(), m, d, p}, K{k.data(), n, d, p};
                volatile float sink = 0;
                const int reps = 2000000 / (m * n * d / 8 + 10) + 10;
                const double lanes = bestNs(
                    [&] {
                        detail::withKernelWidth(d, [&](auto w) {
                            detail::productABtFixed<w()>(Q, K, 0.7f, Block<float>{s1.data(), m, n, n});
                        });
                        sink = s1[0];
                    },
                    reps);
                const double columns = bestNs(
                    [&] {
                        detail::productABtColumnsFrom<1>((n + 7) / 8, Q, K, 0.7f,
                                                         Block<float>{s2.data(), m, n, n});
                        sink = s2[0];
                    },
                    reps);
                std::printf("m %2d n %2d D %2d: lanes %6.0f  columns %6.0f ns  columns / lanes %.2f\n", m, n,
                            d, lanes, columns, columns / lanes);
            }
}
