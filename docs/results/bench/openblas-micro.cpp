// Eigen's float GEMM against OpenBLAS's cblas_sgemm on the matrix products of one encoder layer step
// (forward, input gradient and weight gradient of each of its maps) at the stub, d128 and paper sizes,
// one thread, for the figures of docs/results.md ("`ndr bench`", 2026-11-28). With Debian 12's
// libopenblas-pthread-dev installed:
//   g++ -std=c++20 -O3 -march=native -DNDEBUG -I/usr/include/eigen3 \
//       -I/usr/include/x86_64-linux-gnu/openblas-pthread openblas-micro.cpp \
//       -L/usr/lib/x86_64-linux-gnu/openblas-pthread -lopenblas -o openblas-micro
//   OPENBLAS_NUM_THREADS=1 ./openblas-micro
// Prints, per size, the best of 5 rates (each over at least 0.4 s of the whole set of products).
#include <Eigen/Dense>
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

using M = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Clock = std::chrono::steady_clock;

struct Shape {
    long m, n, k;
};

// The (out, in) maps of a copy-gated geometric layer: [Wq; Wkv; Wqp], Wo, [W1; Wg1], W2, Wg2; each
// gives Y = X W^T (rows x out), dX = dY W (rows x in) and dW = dY^T X (out x in, depth rows).
std::vector<Shape> layerProducts(long rows, long c, long heads, long ff) {
    const std::vector<std::pair<long, long>> maps = {
        {3 * c + 2 * heads, c}, {c, c}, {ff + c, c}, {c, ff}, {c, c}};
    std::vector<Shape> shapes;
    for (const auto& [out, in] : maps) {
        shapes.push_back({rows, out, in});
        shapes.push_back({rows, in, out});
        shapes.push_back({out, in, rows});
    }
    return shapes;
}

int main() {
    struct Size {
        const char* name;
        long rows, c, heads, ff;
    };
    for (const Size& size :
         {Size{"stub", 352, 48, 4, 96}, Size{"d128", 767, 128, 4, 256}, Size{"paper", 3000, 256, 1, 512}}) {
        const std::vector<Shape> shapes = layerProducts(size.rows, size.c, size.heads, size.ff);
        std::vector<M> a, b, c;
        double flops = 0;
        for (const Shape& s : shapes) {
            a.push_back(M::Random(s.m, s.k));
            b.push_back(M::Random(s.k, s.n));
            c.push_back(M::Zero(s.m, s.n));
            flops += 2.0 * s.m * s.n * s.k;
        }
        for (int method = 0; method < 2; ++method) {
            double best = 0;
            for (int round = 0; round < 5; ++round) {
                int reps = 0;
                double elapsed = 0;
                const auto t0 = Clock::now();
                while (elapsed < 0.4) {
                    for (size_t i = 0; i < shapes.size(); ++i) {
                        const Shape& s = shapes[i];
                        if (method == 0)
                            c[i].noalias() = a[i] * b[i];
                        else
                            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(s.m), int(s.n),
                                        int(s.k), 1.0f, a[i].data(), int(s.k), b[i].data(), int(s.n), 0.0f,
                                        c[i].data(), int(s.n));
                    }
                    ++reps;
                    elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
                }
                best = std::max(best, flops * reps / elapsed / 1e9);
            }
            std::printf("%-6s %-8s %6.1f GFLOP/s\n", size.name, method == 0 ? "Eigen" : "OpenBLAS", best);
        }
    }
}
