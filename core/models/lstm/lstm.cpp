// The LSTM baseline: forward and backward through time, trace and FLOP count (docs/design.md §2).
#include "core/models/lstm/lstm.h"
#include "core/models/one_example.h"
#include "core/nn/scalars.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

namespace ndr {

template <typename S>
Lstm<S>::Lstm(const ModelConfig& config, int vocabSize, int symbols)
    : Model<S>(config, vocabSize, symbols), hidden_(config.as<LstmConfig>().hidden),
      embed_(config.as<LstmConfig>().embedding) {
    if (hidden_ <= 0 || embed_ <= 0 || vocab_ <= 0 || symbols_ <= 0)
        throw std::invalid_argument("invalid LSTM configuration");
    const int H = hidden_, E = embed_;
    embedding_ = store_.add("embedding", vocab_, E);
    // The gates stacked i, f, g, o (PyTorch's order): one product gives all four.
    wIh_ = store_.add("lstm.w_ih", 4 * H, E);
    wHh_ = store_.add("lstm.w_hh", 4 * H, H);
    // Two bias vectors, as PyTorch's LSTM has: their sum is all the forward sees, but each is a
    // parameter of its own, so the sum starts as the sum of two uniform draws and Adam moves it by up
    // to twice the step of one parameter, as in the paper's training.
    bIh_ = store_.add("lstm.b_ih", 1, 4 * H);
    bHh_ = store_.add("lstm.b_hh", 1, 4 * H);
    head_.declare(store_, symbols_, H);
    store_.finalize();
}

template <typename S> void Lstm<S>::init(uint64_t seed) {
    std::mt19937_64 rng(seed);
    standardNormal<S>(store_.value(embedding_), rng);
    const double bound = 1.0 / std::sqrt(double(hidden_));
    std::uniform_real_distribution<double> uniform(-bound, bound);
    for (int id : {wIh_, wHh_, bIh_, bHh_, head_.w, head_.b}) {
        auto v = store_.value(id);
        for (Index i = 0; i < v.size(); ++i)
            v.data()[i] = S(uniform(rng));
    }
    store_.zeroGrad();
}

template <typename S> void Lstm<S>::arrange(const Batch& batch) {
    const int B = batch.batch, T = batch.positions;
    if (batch.readouts != 1)
        throw std::invalid_argument("an LSTM gives one answer after its last token; this task needs " +
                                    std::to_string(batch.readouts) + " per example");
    count_.resize(size_t(B));
    for (int b = 0; b < B; ++b) {
        const int len = batch.lengths[size_t(b)];
        if (len < 2 || len > T)
            throw std::invalid_argument("an LSTM input is [B] tokens [E]; example " + std::to_string(b) +
                                        " has length " + std::to_string(len));
        count_[size_t(b)] = len - 2;
    }
    std::vector<int> order(static_cast<size_t>(B));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return count_[a] > count_[b]; });
    rank_.resize(size_t(B));
    for (int r = 0; r < B; ++r)
        rank_[size_t(order[r])] = r;
    const int steps = B > 0 ? count_[size_t(order[0])] : 0;
    offset_.assign(size_t(steps) + 1, 0);
    int active = B;
    for (int t = 0; t < steps; ++t) {
        while (active > 0 && count_[size_t(order[active - 1])] <= t)
            --active;
        offset_[t + 1] = offset_[t] + active;
    }
    tokens_.resize(size_t(offset_.back()));
    for (int t = 0; t < steps; ++t)
        for (int r = 0; r < offset_[t + 1] - offset_[t]; ++r)
            tokens_[size_t(offset_[t] + r)] = batch.tokens[size_t(order[r]) * T + 1 + t];
    targets_ = batch.targets;
}

template <typename S>
S Lstm<S>::forward(const Batch& batch, int /*steps*/, bool training, Rng& rng, bool keepCaches) {
    arrange(batch);
    kept_ = keepCaches;
    const int B = batch.batch, H = hidden_, E = embed_, steps = int(offset_.size()) - 1;
    const Index R = offset_.back();
    // x = Dropout(embedding[token])    (R, E)
    auto emb = store_.value(embedding_);
    x_.resize(R, E);
    for (Index r = 0; r < R; ++r)
        x_.row(r) = emb.row(tokens_[size_t(r)]);
    if (training && tc().dropout > 0) {
        dropoutMask(xMask_, R, E, tc().dropout, true, rng);
        x_.array() *= xMask_.array();
    } else {
        xMask_.resize(0, 0);
    }
    // The input part of every step's gate pre-activations in one product: x W_ih^T + b_ih + b_hh.
    bias_ = store_.value(bIh_) + store_.value(bHh_);
    linearForwardBias<S>(x_, store_.value(wIh_), bias_.data(), gates_); // (R, 4H)
    c_.resize(R, H);
    tanhC_.resize(R, H);
    h_.resize(R, H);
    const auto wHh = store_.value(wHh_);
    for (int t = 0; t < steps; ++t) {
        // The k examples of step t are the first k rows of step t-1's block: h_{t-1} and c_{t-1}
        // are h_ and c_ there (zero at t = 0).
        const Index o = offset_[t], k = offset_[t + 1] - o, p = t > 0 ? offset_[t - 1] : 0;
        auto g = gates_.middleRows(o, k);
        if (t > 0)
            g.noalias() += h_.middleRows(p, k) * wHh.transpose();
        // i, f, o = sigmoid;  g = tanh
        g.leftCols(2 * H).array() = (S(1) + (-g.leftCols(2 * H).array()).exp()).inverse();
        g.middleCols(2 * H, H).array() = g.middleCols(2 * H, H).array().tanh();
        g.rightCols(H).array() = (S(1) + (-g.rightCols(H).array()).exp()).inverse();
        // c_t = f * c_{t-1} + i * g;  h_t = o * tanh(c_t)
        auto c = c_.middleRows(o, k);
        c.array() = g.leftCols(H).array() * g.middleCols(2 * H, H).array();
        if (t > 0)
            c.array() += g.middleCols(H, H).array() * c_.middleRows(p, k).array();
        tanhC_.middleRows(o, k).array() = c.array().tanh();
        h_.middleRows(o, k).array() = g.rightCols(H).array() * tanhC_.middleRows(o, k).array();
    }
    head_.rows.setZero(B, H);
    for (int b = 0; b < B; ++b)
        if (count_[size_t(b)] > 0)
            head_.rows.row(b) = h_.row(offset_[size_t(count_[size_t(b)] - 1)] + rank_[size_t(b)]);
    head_.apply(store_);
    stats_ = {};
    stats_.crossEntropy = head_.crossEntropy(targets_);
    return S(stats_.crossEntropy);
}

template <typename S> void Lstm<S>::backward() {
    if (!kept_)
        throw std::logic_error("backward() needs a forward() that kept its caches");
    const int B = int(count_.size()), H = hidden_, steps = int(offset_.size()) - 1;
    const Index R = offset_.back();
    // loss = mean_b -log softmax(logits_b)[target_b]
    head_.backwardRows(store_, targets_);
    dH_.setZero(R, H);
    dC_.setZero(R, H);
    dG_.resize(R, 4 * H); // d loss / d gate pre-activations
    for (int b = 0; b < B; ++b)
        if (count_[size_t(b)] > 0)
            dH_.row(offset_[size_t(count_[size_t(b)] - 1)] + rank_[size_t(b)]) = head_.dRows.row(b);
    const auto wHh = store_.value(wHh_);
    for (int t = steps - 1; t >= 0; --t) {
        // dH_ and dC_ of step t already hold what steps after t passed back.
        const Index o = offset_[t], k = offset_[t + 1] - o, p = t > 0 ? offset_[t - 1] : 0;
        const auto g = gates_.middleRows(o, k);
        const auto i = g.leftCols(H).array(), f = g.middleCols(H, H).array(),
                   cand = g.middleCols(2 * H, H).array(), out = g.rightCols(H).array();
        const auto tc = tanhC_.middleRows(o, k).array();
        const auto dh = dH_.middleRows(o, k).array();
        auto dc = dC_.middleRows(o, k).array();
        auto dg = dG_.middleRows(o, k);
        // h = o * tanh(c):  dc += dh o (1 - tanh^2 c);  do = dh tanh(c), through o's sigmoid
        dc += dh * out * (S(1) - tc.square());
        dg.rightCols(H).array() = dh * tc * out * (S(1) - out);
        // c = f * c_{t-1} + i * g:  di = dc g, dg = dc i, df = dc c_{t-1}, dc_{t-1} += dc f
        dg.leftCols(H).array() = dc * cand * i * (S(1) - i);
        dg.middleCols(2 * H, H).array() = dc * i * (S(1) - cand.square());
        if (t > 0) {
            dg.middleCols(H, H).array() = dc * c_.middleRows(p, k).array() * f * (S(1) - f);
            dC_.middleRows(p, k).array() += dc * f;
            // pre = ... + h_{t-1} W_hh^T:  dh_{t-1} += dpre W_hh
            dH_.middleRows(p, k).noalias() += dg * wHh;
        } else {
            dg.middleCols(H, H).setZero();
        }
    }
    // The weight gradients in one product each over all steps: dW_ih += dpre^T x, and dW_hh += dpre^T
    // h_{t-1} over the rows of steps 1.. (at step 0 h_{t-1} is zero).
    store_.grad(wIh_).noalias() += dG_.transpose() * x_;
    biasBackward(dG_, store_.grad(bIh_));
    biasBackward(dG_, store_.grad(bHh_));
    if (steps > 1) {
        const Index first = offset_[1];
        hPrev_.resize(R - first, H);
        for (int t = 1; t < steps; ++t)
            hPrev_.middleRows(offset_[t] - first, offset_[t + 1] - offset_[t]) =
                h_.middleRows(offset_[t - 1], offset_[t + 1] - offset_[t]);
        store_.grad(wHh_).noalias() += dG_.bottomRows(R - first).transpose() * hPrev_;
    }
    // x = Dropout(embedding[token])
    dX_.noalias() = dG_ * store_.value(wIh_); // (R, E)
    if (xMask_.size() > 0)
        dX_.array() *= xMask_.array();
    auto dEmb = store_.grad(embedding_);
    for (Index r = 0; r < R; ++r)
        dEmb.row(tokens_[size_t(r)]) += dX_.row(r);
}

template <typename S>
Trace Lstm<S>::trace(const std::vector<int>& tokens, int readouts, int /*steps*/, bool /*fullGates*/) {
    const Batch batch = oneExampleBatch(tokens, readouts);
    Rng unused(0);
    forward(batch, 0, false, unused, false);
    const int n = count_[0];
    // The output after 0..n tokens; one example, so step t's block is row t - 1.
    head_.rows.setZero(n + 1, hidden_);
    for (int t = 1; t <= n; ++t)
        head_.rows.row(t) = h_.row(t - 1);
    head_.apply(store_);
    Trace tr = emptyTrace(tokens, n, 0, symbols_, readouts);
    for (int t = 0; t <= n; ++t)
        recordReadouts(head_.probs.middleRows(t, 1), tr);
    return tr;
}

template <typename S> double Lstm<S>::trainingFlops(const Batch& batch, int /*steps*/) const {
    const double H = hidden_, E = embed_;
    double rows = 0, recurrentRows = 0; // every token; every token but the first of its example
    for (int b = 0; b < batch.batch; ++b) {
        const int n = std::max(0, batch.lengths[size_t(b)] - 2);
        rows += n;
        recurrentRows += std::max(0, n - 1);
    }
    const double f = 2 * rows * E * 4 * H + 2 * recurrentRows * H * 4 * H + 2.0 * batch.batch * H * symbols_;
    return 3 * f; // backward: one product for the input gradient and one for the weight gradient
}

template <typename S>
std::unique_ptr<Model<S>> LstmKind::make(const ModelConfig& config, int vocab, int symbols) {
    return std::make_unique<Lstm<S>>(config, vocab, symbols);
}

#define NDR_INSTANTIATE(S)                                                                                   \
    template class Lstm<S>;                                                                                  \
    template std::unique_ptr<Model<S>> LstmKind::make<S>(const ModelConfig&, int, int);
NDR_FOR_EACH_SCALAR(NDR_INSTANTIATE)

} // namespace ndr
