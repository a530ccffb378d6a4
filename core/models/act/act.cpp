// The Universal Transformer with ACT (see act.h): embedding, the halting steps, the weighted output,
// its backward and the trace.
#include "core/models/act/act.h"
#include "core/models/one_example.h"
#include "core/nn/scalars.h"

#include <random>
#include <stdexcept>

namespace ndr {

template <typename S>
ActTransformer<S>::ActTransformer(const ModelConfig& config, int vocabSize, int symbols)
    : Model<S>(config, vocabSize, symbols) {
    if (ac().dModel <= 0 || ac().heads <= 0 || ac().dModel % ac().heads != 0 || ac().steps <= 0)
        throw std::invalid_argument("invalid model configuration");
    embedding_ = store_.add("embedding", vocab_, ac().dModel);
    layer_.declare(store_, "layer.", ac().layer());
    wp_ = store_.add("halt.w", 1, ac().dModel);
    bp_ = store_.add("halt.b", 1, 1);
    head_.declare(store_, symbols_, ac().dModel);
    store_.finalize();
}

template <typename S> void ActTransformer<S>::init(uint64_t seed) {
    std::mt19937_64 rng(seed);
    standardNormal<S>(store_.value(embedding_), rng);
    layer_.init(store_, rng);
    xavierUniform<S>(store_.value(wp_), 1.0, rng);
    store_.value(bp_).setZero();
    head_.init(store_, rng);
    store_.zeroGrad();
}

template <typename S> void ActTransformer<S>::setShape() {
    shape_ = BatchShape{batch_.batch, batch_.positions, batch_.lengths.data()};
    if (packedRows_) {
        starts_.resize(size_t(batch_.batch) + 1);
        starts_[0] = 0;
        for (int b = 0; b < batch_.batch; ++b)
            starts_[b + 1] = starts_[b] + batch_.lengths[b];
        shape_.starts = starts_.data();
    }
    const Index N = shape_.rows();
    real_.assign(size_t(N), 0);
    realRows_ = 0;
    for (int b = 0; b < batch_.batch; ++b)
        for (Index t = 0; t < batch_.lengths[b]; ++t, ++realRows_)
            real_[size_t(shape_.start(b) + t)] = 1;
}

// h0 = Dropout(E[token] + PE), as the encoder's; padding rows are zero.
template <typename S> void ActTransformer<S>::embed(bool training, Rng& rng) {
    h_[0].setZero(shape_.rows(), ac().dModel);
    input_.forward(store_.value(embedding_), batch_, shape_, ac().positional == PositionalKind::Sinusoidal,
                   ac().dropout, training, rng, h_[0]);
}

template <typename S> bool ActTransformer<S>::halt(int t, int steps, const Mat<S>& h) {
    const Index N = h.rows();
    if (int(haltP_.size()) <= t) {
        haltP_.resize(size_t(t) + 1);
        weight_.resize(size_t(t) + 1);
    }
    AlignedVector<S>& p = haltP_[size_t(t)];
    AlignedVector<S>& w = weight_[size_t(t)];
    p.assign(size_t(N), S(0));
    w.assign(size_t(N), S(0));
    const auto wp = store_.value(wp_).row(0);
    const S bp = store_.value(bp_)(0, 0);
    bool running = false;
    for (Index i = 0; i < N; ++i) {
        if (!real_[size_t(i)] || haltStep_[size_t(i)] >= 0)
            continue;
        p[size_t(i)] = sigmoid(S(h.row(i).dot(wp)) + bp);
        if (t == steps - 1 || cumulative_[size_t(i)] + p[size_t(i)] > S(ac().haltAt)) {
            remainder_[size_t(i)] = S(1) - cumulative_[size_t(i)];
            w[size_t(i)] = remainder_[size_t(i)];
            cumulative_[size_t(i)] = S(1);
            haltStep_[size_t(i)] = t;
        } else {
            w[size_t(i)] = p[size_t(i)];
            cumulative_[size_t(i)] += p[size_t(i)];
            running = true;
        }
    }
    return running;
}

template <typename S>
S ActTransformer<S>::forward(const Batch& batch, int steps, bool training, Rng& rng, bool keepCaches) {
    if (steps < 1)
        throw std::invalid_argument("forward needs at least one step");
    batch_ = batch;
    batch_.readFirst = ac().readout == ReadoutColumn::First;
    setShape();
    kept_ = keepCaches;
    const Index N = shape_.rows();
    const int C = ac().dModel;
    if (int(h_.size()) < (keepCaches ? steps + 1 : 2))
        h_.resize(keepCaches ? steps + 1 : 2);
    if (int(caches_.size()) < (keepCaches ? steps : 1))
        caches_.resize(keepCaches ? steps : 1);
    embed(training, rng);
    cumulative_.assign(size_t(N), S(0));
    remainder_.assign(size_t(N), S(0));
    haltStep_.assign(size_t(N), -1);
    out_.setZero(N, C);
    stats_ = {};
    ran_ = 0;
    for (int t = 0; t < steps; ++t) {
        const int in = keepCaches ? t : t % 2, next = keepCaches ? t + 1 : (t + 1) % 2;
        const bool running = halt(t, steps, h_[in]);
        layer_.forward(store_, h_[in], shape_, training, rng, caches_[keepCaches ? t : 0], h_[next]);
        const AlignedVector<S>& w = weight_[size_t(t)];
        for (Index i = 0; i < N; ++i)
            if (w[size_t(i)] != S(0))
                out_.row(i) += w[size_t(i)] * h_[next].row(i);
        ran_ = t + 1;
        if (!running)
            break;
    }
    double meanRemainder = 0;
    for (Index i = 0; i < N; ++i)
        meanRemainder += double(remainder_[size_t(i)]);
    stats_.gateCost = meanRemainder / double(std::max<Index>(1, realRows_));
    if (!training) {
        stats_.haltSteps.assign(size_t(batch_.batch), 0);
        for (int b = 0; b < batch_.batch; ++b)
            for (Index t = 0; t < batch_.lengths[b]; ++t)
                stats_.haltSteps[size_t(b)] =
                    std::max(stats_.haltSteps[size_t(b)], haltStep_[size_t(shape_.start(b) + t)] + 1);
    }
    stats_.crossEntropy = head_.finish(store_, out_, batch_, shape_, nullptr, ran_);
    return S(stats_.crossEntropy + ac().ponderCost * stats_.gateCost);
}

// With o_i = sum_t w_t,i h_t+1,i and, for a row halting at step n, w_t = p_t (t < n) and
// w_n = R = 1 - sum_{t<n} p_t: dL/dp_t = dO . h_t+1 - dO . h_n+1 - tau / rows for t < n; p at the
// halting step and after it has no gradient.
template <typename S> void ActTransformer<S>::backward() {
    if (!kept_)
        throw std::logic_error("backward() needs a forward() that kept its caches");
    const Index N = shape_.rows();
    head_.backward(store_, batch_, shape_, dOut_);
    const S ponder = S(ac().ponderCost / double(std::max<Index>(1, realRows_)));
    // dO . h_n+1 at each row's halting step: its remainder's gradient.
    AlignedVector<S> dRemainder(size_t(N), S(0));
    for (Index i = 0; i < N; ++i)
        if (haltStep_[size_t(i)] >= 0)
            dRemainder[size_t(i)] = S(dOut_.row(i).dot(h_[size_t(haltStep_[size_t(i)]) + 1].row(i))) + ponder;
    auto wp = store_.value(wp_);
    auto dWp = store_.grad(wp_);
    S& dBp = store_.grad(bp_)(0, 0);
    dh_.setZero(N, ac().dModel);
    for (int t = ran_ - 1; t >= 0; --t) {
        const AlignedVector<S>& w = weight_[size_t(t)];
        const AlignedVector<S>& p = haltP_[size_t(t)];
        for (Index i = 0; i < N; ++i)
            if (w[size_t(i)] != S(0))
                dh_.row(i) += w[size_t(i)] * dOut_.row(i);
        layer_.backward(store_, h_[size_t(t)], shape_, caches_[size_t(t)], dh_, dPrev_);
        for (Index i = 0; i < N; ++i) {
            if (haltStep_[size_t(i)] <= t)
                continue; // halting step or after: p has no gradient (a padding row never runs)
            const S dp = S(dOut_.row(i).dot(h_[size_t(t) + 1].row(i))) - dRemainder[size_t(i)];
            const S da = dp * p[size_t(i)] * (S(1) - p[size_t(i)]);
            dWp.row(0) += da * h_[size_t(t)].row(i);
            dBp += da;
            dPrev_.row(i) += da * wp.row(0);
        }
        std::swap(dh_, dPrev_);
    }
    input_.backward(store_.grad(embedding_), batch_, shape_, ac().positional == PositionalKind::Sinusoidal,
                    dh_);
}

template <typename S>
Trace ActTransformer<S>::trace(const std::vector<int>& tokens, int readouts, int steps, bool) {
    batch_ = oneExampleBatch(tokens, readouts);
    batch_.readFirst = ac().readout == ReadoutColumn::First;
    setShape();
    kept_ = false;
    if (h_.size() < 2)
        h_.resize(2);
    if (caches_.empty())
        caches_.resize(1);
    Rng unused(0);
    embed(false, unused);
    const int T = batch_.positions, H = ac().heads, C = ac().dModel;
    cumulative_.assign(size_t(T), S(0));
    remainder_.assign(size_t(T), S(0));
    haltStep_.assign(size_t(T), -1);
    out_.setZero(T, C);

    Trace tr = emptyTrace(tokens, steps, H, symbols_, readouts);
    tr.gates.resize(size_t(steps) * T);
    tr.gateMeaning = GateMeaning::HaltingWeight;
    AlignedVector<S> total(size_t(T), S(0)); // the weight given so far
    Mat<S> sofar(T, C);
    auto record = [&](const Mat<S>& h) {
        for (int i = 0; i < T; ++i) {
            if (total[size_t(i)] > S(0))
                sofar.row(i) = out_.row(i) / total[size_t(i)];
            else
                sofar.row(i) = h.row(i);
        }
        head_.gatherAll(sofar, batch_, shape_);
        head_.apply(store_);
        recordReadouts(head_.probs, tr);
    };
    record(h_[0]);
    for (int t = 0; t < steps; ++t) {
        const Mat<S>& in = h_[size_t(t % 2)];
        Mat<S>& next = h_[size_t((t + 1) % 2)];
        halt(t, steps, in);
        auto& c = caches_[0];
        layer_.forward(store_, in, shape_, false, unused, c, next);
        const auto& att = layer_.attentionWeights(c);
        std::copy(att.begin(), att.end(), tr.attention.begin() + size_t(t) * H * T * T);
        const AlignedVector<S>& w = weight_[size_t(t)];
        for (int i = 0; i < T; ++i) {
            tr.gates[size_t(t) * T + i] = float(w[size_t(i)]);
            out_.row(i) += w[size_t(i)] * next.row(i);
            total[size_t(i)] += w[size_t(i)];
        }
        record(next);
        recordChange(in, next, T, tr);
    }
    return tr;
}

template <typename S> double ActTransformer<S>::trainingFlops(const Batch& batch, int steps) const {
    std::vector<int> starts(size_t(batch.batch) + 1, 0);
    for (int b = 0; b < batch.batch; ++b)
        starts[b + 1] = starts[b] + batch.lengths[b];
    BatchShape shape{batch.batch, batch.positions, batch.lengths.data()};
    if (packedRows_)
        shape.starts = starts.data();
    // Every step that runs: at most `steps` (the count is an upper bound when the batch halts early).
    double f = steps * layer_.forwardFlops(shape);
    f += 2.0 * steps * double(shape.rows()) * ac().dModel;            // halting unit
    f += 2.0 * batch.batch * batch.readouts * ac().dModel * symbols_; // readout
    return 3 * f;
}

template <typename S>
std::unique_ptr<Model<S>> ActKind::make(const ModelConfig& config, int vocab, int symbols) {
    return std::make_unique<ActTransformer<S>>(config, vocab, symbols);
}

#define NDR_INSTANTIATE(S)                                                                                   \
    template class ActTransformer<S>;                                                                        \
    template std::unique_ptr<Model<S>> ActKind::make<S>(const ModelConfig&, int, int);
NDR_FOR_EACH_SCALAR(NDR_INSTANTIATE)

} // namespace ndr
