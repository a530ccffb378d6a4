// Eigen's float GEMM against OpenBLAS's cblas_sgemm and BLIS's bli_sgemm on the matrix products of
// one encoder layer step (forward, input gradient and weight gradient of each of its maps) at the
// stub, d128 and paper sizes, one thread, for the figures of docs/results.md ("`ndr bench`",
// 2026-11-28 and 2026-11-29). With Debian 12's libopenblas-pthread-dev, libblis-dev and
// libblis4-serial installed (BLIS's serial build, linked by its path):
//   g++ -std=c++20 -O3 -march=x86-64-v3 -DNDEBUG -I/usr/include/eigen3 \
//       -I/usr/include/x86_64-linux-gnu/openblas-pthread -I/usr/include/x86_64-linux-gnu/blis-openmp \
//       blas-micro.cpp -L/usr/lib/x86_64-linux-gnu/openblas-pthread -lopenblas \
//       /usr/lib/x86_64-linux-gnu/blis-serial/libblis.so.4 \
//       -Wl,-rpath,/usr/lib/x86_64-linux-gnu/blis-serial -o blas-micro
//   OPENBLAS_NUM_THREADS=1 ./blas-micro
// (the 2026-11-28 figures: -march=native, before the BLIS rows were added.)
// Prints, per size and library, the best of 5 rates (each over at least 0.4 s of the whole set of
// products).
#include <Eigen/Dense>
#include <blis.h>
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
        for (int method = 0; method < 3; ++method) {
            double best = 0;
            for (int round = 0; round < 5; ++round) {
                int reps = 0;
                double elapsed = 0;
                const auto t0 = Clock::now();
                while (elapsed < 0.4) {
                    for (size_t i = 0; i < shapes.size(); ++i) {
                        const Shape& s = shapes[i];
                        if (method == 0) {
                            c[i].noalias() = a[i] * b[i];
                        } else if (method == 1) {
                            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(s.m), int(s.n),
                                        int(s.k), 1.0f, a[i].data(), int(s.k), b[i].data(), int(s.n), 0.0f,
                                        c[i].data(), int(s.n));
                        } else {
                            float one = 1,
                                  zero = 0; // row-major: a row stride of the width, a column stride of 1
                            bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, s.m, s.n, s.k, &one, a[i].data(),
                                      s.k, 1, b[i].data(), s.n, 1, &zero, c[i].data(), s.n, 1);
                        }
                    }
                    ++reps;
                    elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
                }
                best = std::max(best, flops * reps / elapsed / 1e9);
            }
            std::printf("%-6s %-8s %6.1f GFLOP/s\n", size.name,
                        method == 0   ? "Eigen"
                        : method == 1 ? "OpenBLAS"
                                      : "BLIS",
                        best);
        }
    }
}
