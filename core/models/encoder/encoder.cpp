// The unrolled encoder: embedding, steps of its layers, readout, backward, trace and FLOP count (its
// layers are in encoder_layer.cpp).
#include "core/models/encoder/encoder.h"
#include "core/models/one_example.h"
#include "core/nn/scalars.h"

#include <cmath>
#include <random>
#include <stdexcept>

namespace ndr {

// ---------------------------------------------------------------------------------------------
// Encoder

template <typename S>
Encoder<S>::Encoder(const ModelConfig& config, int vocabSize, int symbols)
    : Model<S>(config, vocabSize, symbols) {
    if (ec().dModel <= 0 || ec().heads <= 0 || ec().dModel % ec().heads != 0 || ec().steps <= 0)
        throw std::invalid_argument("invalid model configuration");
    embedding_ = store_.add("embedding", vocab_, ec().dModel);
    const int nLayers = ec().sharedWeights ? 1 : ec().steps;
    layers_.resize(nLayers);
    for (int l = 0; l < nLayers; ++l)
        layers_[l].declare(store_, ec().sharedWeights ? "layer." : "layer" + std::to_string(l) + ".", ec());
    head_.declare(store_, symbols_, ec().dModel);
    store_.finalize();
}

template <typename S> void Encoder<S>::init(uint64_t seed) {
    std::mt19937_64 rng(seed);
    standardNormal<S>(store_.value(embedding_), rng);
    for (const auto& l : layers_)
        l.init(store_, rng);
    head_.init(store_, rng);
    store_.zeroGrad();
}

// h0 = Dropout(E[token] + PE); padding rows are not written.
template <typename S> void Encoder<S>::embed(const Batch& batch, bool training, Rng& rng) {
    h_[0].resize(shape_.rows(), ec().dModel);
    input_.forward(store_.value(embedding_), batch, shape_, ec().positional == PositionalKind::Sinusoidal,
                   ec().dropout, training, rng, h_[0]);
}

template <typename S>
S Encoder<S>::forward(const Batch& batch, int steps, bool training, Rng& rng, bool keepCaches) {
    if (steps < 1)
        throw std::invalid_argument("forward needs at least one step");
    if (!ec().sharedWeights && steps > ec().steps)
        throw std::invalid_argument("a model with separate layers cannot run more steps than it has layers");
    batch_ = batch;
    batch_.readFirst = ec().readout == ReadoutColumn::First;
    setShape();
    steps_ = steps;
    kept_ = keepCaches;
    const int slots = keepCaches ? steps : 1;
    if (int(caches_.size()) < slots)
        caches_.resize(slots);
    if (int(h_.size()) < (keepCaches ? steps + 1 : 2))
        h_.resize(keepCaches ? steps + 1 : 2);
    embed(batch_, training, rng);
    stats_ = {};
    realRows_ = 0;
    for (int b = 0; b < batch_.batch; ++b)
        realRows_ += batch_.lengths[b];
    const bool halting =
        !training && !keepCaches && ec().haltThreshold > 0 && hasHaltSignal(cfg_, ec().haltOn);
    if (halting)
        stats_.haltSteps.assign(size_t(batch_.batch), 0);
    if (ec().headRouting)
        stats_.headShare.assign(size_t(ec().heads), 0.0);
    // Only the rows read depend on the last step's update: it runs on them alone, into the head's
    // rows, unless the halting rule or the thought cost needs every row's gates.
    readRowsOnly_ = readsRowsOnly(halting);
    if (readRowsOnly_)
        ReadoutHead<S>::readRows(batch_, shape_, readRows_);
    int last = steps;
    for (int t = 0; t < steps; ++t) {
        const int in = keepCaches ? t : t % 2, out = keepCaches ? t + 1 : (t + 1) % 2;
        auto& c = caches_[keepCaches ? t : 0];
        const bool readOnly = readRowsOnly_ && t == steps - 1;
        Mat<S>& h = readOnly ? head_.rows : h_[out];
        layer(t).forward(store_, h_[in], shape_, training, rng, c, h, readOnly ? &readRows_ : nullptr);
        if (afterStep(t, steps, halting, h_[in], h, c)) {
            last = t + 1;
            break;
        }
    }
    if (readRowsOnly_) {
        stats_.crossEntropy = head_.finishRead(store_, batch_);
    } else {
        const Mat<S>& final = h_[keepCaches ? steps : last % 2];
        // Examples that halted read their answer at their halting step (gathered by afterStep).
        stats_.crossEntropy =
            head_.finish(store_, final, batch_, shape_, halting ? &stats_.haltSteps : nullptr, last);
    }
    return S(stats_.crossEntropy + ec().routeEntropy * stats_.routeEntropy +
             ec().thoughtCost * stats_.gateCost);
}

template <typename S>
bool Encoder<S>::afterStep(int t, int steps, bool halting, const Mat<S>& before, const Mat<S>& h,
                           typename EncoderLayer<S>::Cache& c) {
    const int C = ec().dModel, H = ec().heads;
    if (ec().headRouting) {
        // loss += coef * mean over steps of the step's mean routing entropy over the real tokens
        stats_.routeEntropy += double(HeadRouter<S>::entropy(c.route.weights, shape_)) / steps;
        c.routeEntropyCoef = S(ec().routeEntropy / steps);
        for (int b = 0; b < batch_.batch; ++b)
            for (Index n = shape_.start(b); n < shape_.start(b) + batch_.lengths[b]; ++n)
                for (int hd = 0; hd < H; ++hd)
                    stats_.headShare[size_t(hd)] +=
                        double(c.route.weights(n, hd)) / (double(realRows_) * steps);
    }
    if (copyGated(ec().update))
        addGateCost(t, c);
    else
        c.gateCost.clear();
    if (!halting)
        return false;
    // An example halts at the first step after which every real position's signal is below the
    // threshold: its mean gate, or how far the step moved it; its answer is read there.
    if (t == 0)
        head_.start(batch_, C);
    const bool byChange = ec().haltOn == HaltSignal::Change;
    bool all = true;
    for (int b = 0; b < batch_.batch; ++b) {
        if (stats_.haltSteps[size_t(b)] > 0)
            continue;
        const Index first = shape_.start(b), len = batch_.lengths[b];
        bool still = true;
        if (byChange)
            still = rowsStill(before, h, first, len, ec().haltThreshold);
        else
            for (Index n = first; still && n < first + len; ++n)
                still = c.gate.row(n).mean() < S(ec().haltThreshold);
        if (still) {
            stats_.haltSteps[size_t(b)] = t + 1;
            head_.gather(h, batch_, shape_, b);
        } else {
            all = false;
        }
    }
    return all;
}

template <typename S> void Encoder<S>::addGateCost(int t, typename EncoderLayer<S>::Cache& c) {
    const int C = ec().dModel;
    // loss += urgency * t * (mean over real positions and channels of the gates at step t)
    if (ec().thoughtCost > 0) {
        double open = 0;
        for (int b = 0; b < batch_.batch; ++b)
            for (Index n = shape_.start(b); n < shape_.start(b) + batch_.lengths[b]; ++n)
                open += double(c.gate.row(n).sum());
        stats_.gateCost += t * open / (double(realRows_) * C);
        c.gateCost.assign(size_t(shape_.rows()), S(0));
        const S scale = S(ec().thoughtCost * t / (double(realRows_) * C));
        for (int b = 0; b < batch_.batch; ++b)
            for (Index n = shape_.start(b); n < shape_.start(b) + batch_.lengths[b]; ++n)
                c.gateCost[size_t(n)] = scale;
    } else {
        c.gateCost.clear();
    }
}

template <typename S> void Encoder<S>::backward() {
    if (!kept_)
        throw std::logic_error("backward() needs a forward() that kept its caches");
    Mat<S>&dh = dh_, &dPrev = dPrev_;
    int t = steps_ - 1;
    if (readRowsOnly_) { // the last step's output is the rows read
        head_.backwardRows(store_, batch_);
        layer(t).backward(store_, h_[t], shape_, caches_[t], head_.dRows, dh);
        --t;
    } else {
        head_.backward(store_, batch_, shape_, dh);
    }
    for (; t >= 0; --t) {
        layer(t).backward(store_, h_[t], shape_, caches_[t], dh, dPrev);
        std::swap(dh, dPrev);
    }
    // h0 = Dropout(E[token] + PE)
    input_.backward(store_.grad(embedding_), batch_, shape_, ec().positional == PositionalKind::Sinusoidal,
                    dh);
}

template <typename S>
Trace Encoder<S>::trace(const std::vector<int>& tokens, int readouts, int steps, bool fullGates) {
    if (!ec().sharedWeights && steps > ec().steps)
        throw std::invalid_argument("a model with separate layers cannot run more steps than it has layers");
    batch_ = oneExampleBatch(tokens, readouts);
    batch_.readFirst = ec().readout == ReadoutColumn::First;
    setShape();
    kept_ = false;
    if (caches_.empty())
        caches_.resize(1);
    if (h_.size() < 2)
        h_.resize(2);
    Rng unused(0);
    embed(batch_, false, unused);

    const int T = batch_.positions, H = ec().heads, C = ec().dModel;
    Trace tr = emptyTrace(tokens, steps, H, symbols_, readouts);
    const bool gated = copyGated(ec().update);
    if (gated)
        tr.gates.resize(size_t(steps) * T);
    if (gated && fullGates)
        tr.gateChannels.resize(size_t(steps) * T * C);
    if (ec().headRouting)
        tr.routing.resize(size_t(steps) * T * H);
    auto record = [&](const Mat<S>& h) {
        head_.gatherAll(h, batch_, shape_);
        head_.apply(store_);
        recordReadouts(head_.probs, tr);
    };
    record(h_[0]);
    for (int t = 0; t < steps; ++t) {
        auto& c = caches_[0];
        layer(t).forward(store_, h_[t % 2], shape_, false, unused, c, h_[(t + 1) % 2]);
        const auto& att = layer(t).attentionWeights(c);
        std::copy(att.begin(), att.end(), tr.attention.begin() + size_t(t) * H * T * T);
        if (gated) {
            for (int i = 0; i < T; ++i)
                tr.gates[size_t(t) * T + i] = float(c.gate.row(i).mean());
            if (fullGates)
                for (int i = 0; i < T; ++i)
                    for (int ch = 0; ch < C; ++ch)
                        tr.gateChannels[(size_t(t) * T + i) * C + ch] = float(c.gate(i, ch));
        }
        if (ec().headRouting)
            for (int i = 0; i < T; ++i)
                for (int hd = 0; hd < H; ++hd)
                    tr.routing[(size_t(t) * T + i) * H + hd] = float(c.route.weights(i, hd));
        record(h_[(t + 1) % 2]);
        recordChange(h_[t % 2], h_[(t + 1) % 2], T, tr);
    }
    return tr;
}

template <typename S> void Encoder<S>::setShape() {
    shape_ = BatchShape{batch_.batch, batch_.positions, batch_.lengths.data()};
    if (!packedRows_)
        return;
    starts_.resize(size_t(batch_.batch) + 1);
    starts_[0] = 0;
    for (int b = 0; b < batch_.batch; ++b)
        starts_[b + 1] = starts_[b] + batch_.lengths[b];
    shape_.starts = starts_.data();
}

template <typename S> double Encoder<S>::trainingFlops(const Batch& batch, int steps) const {
    std::vector<int> starts(size_t(batch.batch) + 1, 0);
    for (int b = 0; b < batch.batch; ++b)
        starts[b + 1] = starts[b] + batch.lengths[b];
    BatchShape shape{batch.batch, batch.positions, batch.lengths.data()};
    if (packedRows_)
        shape.starts = starts.data();
    double f = 0;
    for (int t = 0; t < steps; ++t)
        f += layer(t).forwardFlops(
            shape, t == steps - 1 && readsRowsOnly(false) ? double(batch.batch) * batch.readouts : -1.0);
    f += 2.0 * batch.batch * batch.readouts * ec().dModel * symbols_; // readout
    return 3 * f; // backward: one product for the input gradient and one for the weight gradient
}

template <typename S>
std::unique_ptr<Model<S>> EncoderKind::make(const ModelConfig& config, int vocab, int symbols) {
    return std::make_unique<Encoder<S>>(config, vocab, symbols);
}

#define NDR_INSTANTIATE(S)                                                                                   \
    template class Encoder<S>;                                                                               \
    template std::unique_ptr<Model<S>> EncoderKind::make<S>(const ModelConfig&, int, int);
NDR_FOR_EACH_SCALAR(NDR_INSTANTIATE)

} // namespace ndr
