// Eigen's float GEMM on weight-gradient shapes dW (M x N) = X^T dY with K = 352 rows (one step of the
// stub's batch) against K = 2816 (eight steps at once); best of five timings of about 2 GFLOP each.
// g++ -O3 -march=x86-64-v4 -DNDEBUG -I/usr/include/eigen3 weight-grad-k-micro.cpp -o k && ./k
#include <Eigen/Dense>
#include <chrono>
#include <cstdio>
using M = Eigen::Matrix<float, -1, -1, Eigen::RowMajor>;
double rate(int m, int k, int n, int reps) {
    M a = M::Random(k, m), b = M::Random(k, n), c = M::Zero(m, n);
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r)
        c.noalias() += a.transpose() * b;
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return 2.0 * m * n * k * reps / s / 1e9;
}
int main() {
    int shapes[][2] = {{48, 144}, {48, 48}, {48, 96}, {96, 48}, {128, 384}, {128, 256}, {256, 128}};
    for (auto& s : shapes) {
        for (int k : {352, 2816}) {
            int reps = int(2e9 / (2.0 * s[0] * s[1] * k));
            double best = 0;
            for (int i = 0; i < 5; ++i)
                best = std::max(best, rate(s[0], k, s[1], reps));
            std::printf("%4dx%4d K=%5d  %.1f GFLOP/s\n", s[0], s[1], k, best);
        }
    }
}
