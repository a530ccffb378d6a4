// The products of one ThoughtNet step that read the step's input x = [h | positions] (N x (C + P)) at the
// thoughtnet preset's sizes (N = 1152 rows, C = 64, P = 16, F = 64, K = 4 operators): the K operators'
// input maps, the selector's first layer and the K state paths (h R^T, R zero-padded over the position
// columns), forward and both gradients, as nine products each against one product over the weights
// stacked. Prints the median of eleven timings of 200 repetitions each.
// g++ -O3 -march=x86-64-v4 -DNDEBUG -I/usr/include/eigen3 thoughtnet-fused-micro.cpp -o f && ./f
#include <Eigen/Dense>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>
using M = Eigen::Matrix<float, -1, -1, Eigen::RowMajor>;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double msPer(const std::function<void()>& f, int reps) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i)
        f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / reps;
}

int main() {
    const int N = 1152, C = 64, P = 16, F = 64, K = 4;
    const M x = M::Random(N, C + P);
    std::vector<M> w; // K input maps (C x (C + P)), the selector's layer (F x (C + P)), K state paths (C x C)
    for (int k = 0; k < K; ++k)
        w.push_back(M::Random(C, C + P));
    w.push_back(M::Random(F, C + P));
    for (int k = 0; k < K; ++k)
        w.push_back(M::Random(C, C));
    M stacked = M::Zero(2 * K * C + F, C + P);
    for (int i = 0, r = 0; i < int(w.size()); r += int(w[size_t(i)].rows()), ++i)
        stacked.block(r, 0, w[size_t(i)].rows(), w[size_t(i)].cols()) = w[size_t(i)];
    std::vector<M> y(w.size()), dy, dw;
    for (const M& wi : w) {
        dy.push_back(M::Random(N, wi.rows()));
        dw.push_back(M::Zero(wi.rows(), wi.cols()));
    }
    M Y(N, stacked.rows()), dY = M::Random(N, stacked.rows()), dx(N, C + P), dW = M::Zero(stacked.rows(), C + P);
    const auto separate = [&] {
        for (size_t i = 0; i < w.size(); ++i)
            y[i].noalias() = x.leftCols(w[i].cols()) * w[i].transpose();
        dx.setZero();
        for (size_t i = 0; i < w.size(); ++i) {
            dx.leftCols(w[i].cols()).noalias() += dy[i] * w[i];
            dw[i].noalias() += dy[i].transpose() * x.leftCols(w[i].cols());
        }
    };
    const auto fused = [&] {
        Y.noalias() = x * stacked.transpose();
        dx.noalias() = dY * stacked;
        dW.noalias() += dY.transpose() * x;
    };
    std::vector<double> a, b, ratio;
    for (int round = 0; round < 11; ++round) {
        a.push_back(msPer(separate, 200));
        b.push_back(msPer(fused, 200));
        ratio.push_back(a.back() / b.back());
    }
    std::printf("separate %.3f ms, stacked %.3f ms, separate / stacked %.2f (medians of 11)\n", median(a),
                median(b), median(ratio));
}
