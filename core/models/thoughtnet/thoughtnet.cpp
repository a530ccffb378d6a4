// ThoughtNet: operators, selector, the iterated model, halting at the fixed point, trace (see
// thoughtnet.h).
#include "core/models/thoughtnet/thoughtnet.h"
#include "core/models/one_example.h"
#include "core/nn/scalars.h"

#include <cmath>
#include <random>
#include <stdexcept>

namespace ndr {

namespace {
// y = tanh(y) and the backward factor 1 - y^2.
template <typename S> void tanhInPlace(Mat<S>& y) {
    y = y.array().tanh().matrix();
}
template <typename S> void tanhBackward(const Mat<S>& y, Mat<S>& d) {
    d.array() *= S(1) - y.array().square();
}
} // namespace

// ---------------------------------------------------------------------------------------------
// ThoughtOperator

template <typename S>
void ThoughtOperator<S>::declare(ParamStore<S>& store, const std::string& prefix, int c, int p, int f,
                                 int heads) {
    channels = c, hidden = f;
    win = store.add(prefix + "in.w", c, c + p);
    bin = store.add(prefix + "in.b", 1, c);
    attention.declare(store, prefix, c, heads);
    w1 = store.add(prefix + "dense.w", f, c);
    b1 = store.add(prefix + "dense.b", 1, f);
    w2 = store.add(prefix + "out.w", c, f);
    r = store.add(prefix + "out.state", c, c);
    b2 = store.add(prefix + "out.b", 1, c);
}

template <typename S>
template <typename InitRng>
void ThoughtOperator<S>::init(ParamStore<S>& store, InitRng& rng) const {
    xavierUniform<S>(store.value(win), 1.0, rng);
    store.value(bin).setZero();
    attention.init(store, rng);
    xavierUniform<S>(store.value(w1), 1.0, rng);
    store.value(b1).setZero();
    xavierUniform<S>(store.value(w2), 1.0, rng);
    xavierUniform<S>(store.value(r), 1.0, rng);
    store.value(b2).setZero();
}

template <typename S>
void ThoughtOperator<S>::forward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape,
                                 Cache& c) const {
    const int C = channels;
    linearForwardBias<S>(x, store.value(win), store.valuePtr(bin), c.u);
    Rng unused(0);
    attention.forward(store, c.u, shape, false, 0.0, unused, c.att, c.a);
    linearForwardBias<S>(c.a, store.value(w1), store.valuePtr(b1), c.z);
    tanhInPlace(c.z);
    linearForwardBias<S>(c.z, store.value(w2), store.valuePtr(b2), c.o);
    c.o.noalias() += x.leftCols(C) * store.value(r).transpose();
    tanhInPlace(c.o);
}

template <typename S>
void ThoughtOperator<S>::backward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape,
                                  const Cache& c, const Mat<S>& dOut, Mat<S>& dx) const {
    const int C = channels;
    // o = tanh(z W2^T + h R^T + b2)
    ws.dPre = dOut;
    tanhBackward(c.o, ws.dPre);
    biasBackward(ws.dPre, store.grad(b2));
    linearBackward<S>(ws.dPre, c.z, store.value(w2), store.grad(w2), &ws.dz);
    store.grad(r).noalias() += ws.dPre.transpose() * x.leftCols(C);
    dx.leftCols(C).noalias() += ws.dPre * store.value(r);
    // z = tanh(a W1^T + b1)
    tanhBackward(c.z, ws.dz);
    biasBackward(ws.dz, store.grad(b1));
    linearBackward<S>(ws.dz, c.a, store.value(w1), store.grad(w1), &ws.da);
    attention.backward(store, c.u, shape, c.att, ws.da, ws.du, ws.scratch);
    // u = x Win^T + bin
    biasBackward(ws.du, store.grad(bin));
    linearBackward<S>(ws.du, x, store.value(win), store.grad(win), &dx, true);
}

// ---------------------------------------------------------------------------------------------
// OperatorSelector

template <typename S>
void OperatorSelector<S>::declare(ParamStore<S>& store, int in, int hidden, int choices) {
    ws1 = store.add("selector.hidden.w", hidden, in);
    bs1 = store.add("selector.hidden.b", 1, hidden);
    ws2 = store.add("selector.out.w", choices, hidden);
    bs2 = store.add("selector.out.b", 1, choices);
}

template <typename S>
template <typename InitRng>
void OperatorSelector<S>::init(ParamStore<S>& store, InitRng& rng) const {
    xavierUniform<S>(store.value(ws1), 1.0, rng);
    store.value(bs1).setZero();
    xavierUniform<S>(store.value(ws2), 1.0, rng);
    store.value(bs2).setZero();
}

template <typename S>
void OperatorSelector<S>::forward(ParamStore<S>& store, const Mat<S>& x, Cache& c) const {
    linearForwardBias<S>(x, store.value(ws1), store.valuePtr(bs1), c.q);
    tanhInPlace(c.q);
    linearForwardBias<S>(c.q, store.value(ws2), store.valuePtr(bs2), c.s);
    for (Index n = 0; n < c.s.rows(); ++n) {
        const S mx = c.s.row(n).maxCoeff();
        c.s.row(n) = (c.s.row(n).array() - mx).exp().matrix();
        c.s.row(n) /= c.s.row(n).sum();
    }
}

template <typename S>
void OperatorSelector<S>::backward(ParamStore<S>& store, const Mat<S>& x, const Cache& c, const Mat<S>& dS,
                                   Mat<S>& dx) const {
    // softmax: dLogit = s * (dS - sum_j s_j dS_j)
    dLogit.resize(c.s.rows(), c.s.cols());
    for (Index n = 0; n < c.s.rows(); ++n) {
        const S dot = c.s.row(n).dot(dS.row(n));
        dLogit.row(n) = (c.s.row(n).array() * (dS.row(n).array() - dot)).matrix();
    }
    biasBackward(dLogit, store.grad(bs2));
    linearBackward<S>(dLogit, c.q, store.value(ws2), store.grad(ws2), &dq);
    tanhBackward(c.q, dq);
    biasBackward(dq, store.grad(bs1));
    linearBackward<S>(dq, x, store.value(ws1), store.grad(ws1), &dx, true);
}

// ---------------------------------------------------------------------------------------------
// ThoughtNet

template <typename S>
ThoughtNet<S>::ThoughtNet(const ModelConfig& config, int vocabSize, int symbols)
    : Model<S>(config, vocabSize, symbols), K_(config.as<ThoughtNetConfig>().operators),
      C_(config.as<ThoughtNetConfig>().stateSize), P_(config.as<ThoughtNetConfig>().positionDims) {
    if (C_ <= 0 || tc().heads <= 0 || C_ % tc().heads != 0 || tc().steps <= 0 || K_ <= 0 || P_ < 0 ||
        tc().hiddenSize <= 0)
        throw std::invalid_argument("invalid ThoughtNet configuration");
    embedding_ = store_.add("expansion", vocab_, C_);
    ops_.resize(size_t(K_));
    for (int k = 0; k < K_; ++k)
        ops_[size_t(k)].declare(store_, "op" + std::to_string(k) + ".", C_, P_, tc().hiddenSize, tc().heads);
    selector_.declare(store_, C_ + P_, tc().hiddenSize, K_ + 1);
    head_.declare(store_, symbols_, C_);
    store_.finalize();
}

template <typename S> void ThoughtNet<S>::init(uint64_t seed) {
    std::mt19937_64 rng(seed);
    xavierUniform<S>(store_.value(embedding_), 1.0, rng);
    for (const auto& op : ops_)
        op.init(store_, rng);
    selector_.init(store_, rng);
    head_.init(store_, rng);
    store_.zeroGrad();
}

template <typename S> void ThoughtNet<S>::setShape(const Batch& batch) {
    batch_ = batch;
    starts_.assign(size_t(batch.batch) + 1, 0);
    for (int b = 0; b < batch.batch; ++b)
        starts_[size_t(b) + 1] = starts_[size_t(b)] + batch.lengths[size_t(b)];
    shape_ = BatchShape{batch_.batch, batch_.positions, batch_.lengths.data(), starts_.data()};
    const int T = batch.positions;
    if (positions_.rows() < T) {
        positions_.resize(T, P_);
        for (int t = 0; t < T; ++t)
            for (int c = 0; c < P_; ++c)
                positions_(t, c) = S(sinusoid(t, c, P_));
    }
}

template <typename S> void ThoughtNet<S>::step(const Mat<S>& h, StepCache& c, Mat<S>& out) {
    const Index N = h.rows();
    c.x.resize(N, C_ + P_);
    c.x.leftCols(C_) = h;
    for (int b = 0; b < batch_.batch; ++b)
        for (Index t = 0; t < shape_.span(b); ++t)
            c.x.row(shape_.start(b) + t).tail(P_) = positions_.row(t);
    c.ops.resize(size_t(K_));
    auto& store = store_;
    selector_.forward(store, c.x, c.sel);
    out = h.array().colwise() * c.sel.s.col(0).array();
    for (int k = 0; k < K_; ++k) {
        ops_[size_t(k)].forward(store, c.x, shape_, c.ops[size_t(k)]);
        out.array() += c.ops[size_t(k)].o.array().colwise() * c.sel.s.col(k + 1).array();
    }
}

template <typename S>
S ThoughtNet<S>::forward(const Batch& batch, int steps, bool training, Rng& /*rng*/, bool keepCaches) {
    if (steps < 1)
        throw std::invalid_argument("forward needs at least one step");
    setShape(batch);
    steps_ = steps;
    kept_ = keepCaches;
    const Index N = shape_.rows();
    const int slots = keepCaches ? steps : 1;
    if (int(caches_.size()) < slots)
        caches_.resize(size_t(slots));
    if (int(h_.size()) < (keepCaches ? steps + 1 : 2))
        h_.resize(size_t(keepCaches ? steps + 1 : 2));
    // Expansion: h0 = tanh(E[token]), the one-hot token through a dense layer.
    h_[0].resize(N, C_);
    for (int b = 0; b < batch_.batch; ++b)
        for (Index t = 0; t < shape_.span(b); ++t)
            h_[0].row(shape_.start(b) + t) =
                store_.value(embedding_).row(batch_.tokens[size_t(b) * batch_.positions + size_t(t)]);
    tanhInPlace(h_[0]);

    stats_ = {};
    const bool halting = !training && !keepCaches && tc().haltThreshold > 0;
    const bool byChange = tc().haltOn == HaltSignal::Change;
    if (halting) {
        stats_.haltSteps.assign(size_t(batch_.batch), 0);
        head_.start(batch_, C_);
    }
    costScale_.assign(size_t(steps), S(0));
    int ran = steps;
    for (int t = 0; t < steps; ++t) {
        const int in = keepCaches ? t : t % 2, out = keepCaches ? t + 1 : (t + 1) % 2;
        StepCache& c = caches_[size_t(keepCaches ? t : 0)];
        step(h_[size_t(in)], c, h_[size_t(out)]);
        // Thought cost: t * the learned operators' weight summed over an example's tokens, mean over
        // the batch.
        const double thinking = double(c.sel.s.rightCols(K_).sum());
        stats_.gateCost += t * thinking / batch_.batch;
        costScale_[size_t(t)] = S(tc().thoughtCost * t / batch_.batch);
        if (!halting)
            continue;
        bool all = true;
        for (int b = 0; b < batch_.batch; ++b) {
            if (stats_.haltSteps[size_t(b)] > 0)
                continue;
            // A fixed point: every token's learned operators' weight below the threshold, or every
            // token's state moved by less than the threshold.
            bool fixed = true;
            if (byChange)
                fixed = rowsStill(h_[size_t(in)], h_[size_t(out)], shape_.start(b), shape_.span(b),
                                  tc().haltThreshold);
            else
                for (Index n = shape_.start(b); fixed && n < shape_.start(b) + shape_.span(b); ++n)
                    fixed = c.sel.s.row(n).tail(K_).sum() < S(tc().haltThreshold);
            if (fixed) {
                stats_.haltSteps[size_t(b)] = t + 1;
                head_.gather(h_[size_t(out)], batch_, shape_, b);
            } else {
                all = false;
            }
        }
        if (all) {
            ran = t + 1;
            break;
        }
    }
    const Mat<S>& final = h_[size_t(keepCaches ? steps : ran % 2)];
    stats_.crossEntropy =
        head_.finish(store_, final, batch_, shape_, halting ? &stats_.haltSteps : nullptr, ran);
    return S(stats_.crossEntropy + tc().thoughtCost * stats_.gateCost);
}

template <typename S> void ThoughtNet<S>::backward() {
    if (!kept_)
        throw std::logic_error("backward() needs a forward() that kept its caches");
    const int B = batch_.batch;
    head_.backward(store_, batch_, shape_, dh_);
    for (int t = steps_ - 1; t >= 0; --t) {
        const StepCache& c = caches_[size_t(t)];
        const Mat<S>& h = h_[size_t(t)];
        // h' = s0 h + sum_k s_k o_k
        dS_.resize(c.sel.s.rows(), K_ + 1);
        dS_.col(0) = (dh_.array() * h.array()).rowwise().sum().matrix();
        dx_.setZero(h.rows(), C_ + P_);
        for (int k = 0; k < K_; ++k) {
            const auto& oc = c.ops[size_t(k)];
            dS_.col(k + 1) = (dh_.array() * oc.o.array()).rowwise().sum().matrix();
            dS_.col(k + 1).array() += costScale_[size_t(t)];
            dPrev_ = dh_.array().colwise() * c.sel.s.col(k + 1).array();
            ops_[size_t(k)].backward(store_, c.x, shape_, oc, dPrev_, dx_);
        }
        selector_.backward(store_, c.x, c.sel, dS_, dx_);
        dPrev_ = dh_.array().colwise() * c.sel.s.col(0).array();
        dPrev_ += dx_.leftCols(C_);
        std::swap(dh_, dPrev_);
    }
    // h0 = tanh(E[token])
    tanhBackward(h_[0], dh_);
    auto dEmb = store_.grad(embedding_);
    for (int b = 0; b < B; ++b)
        for (Index t = 0; t < shape_.span(b); ++t)
            dEmb.row(batch_.tokens[size_t(b) * batch_.positions + size_t(t)]) += dh_.row(shape_.start(b) + t);
}

template <typename S>
Trace ThoughtNet<S>::trace(const std::vector<int>& tokens, int readouts, int steps, bool /*fullGates*/) {
    const Batch batch = oneExampleBatch(tokens, readouts);
    setShape(batch);
    kept_ = false;
    const int T = batch.positions, H = tc().heads;
    Trace tr = emptyTrace(tokens, steps, K_ * H, symbols_, readouts);
    tr.operators = K_ + 1;
    tr.gateMeaning = GateMeaning::OperatorWeight;
    tr.selection.resize(size_t(steps) * T * (K_ + 1));
    tr.gates.resize(size_t(steps) * T);
    Mat<S> h(T, C_), next;
    for (int t = 0; t < T; ++t)
        h.row(t) = store_.value(embedding_).row(tokens[size_t(t)]);
    tanhInPlace(h);
    head_.gatherAll(h, batch_, shape_);
    head_.apply(store_);
    recordReadouts(head_.probs, tr);
    StepCache c;
    for (int s = 0; s < steps; ++s) {
        step(h, c, next);
        for (int k = 0; k < K_; ++k) {
            const auto& att = c.ops[size_t(k)].att.att; // (1, H, T, T)
            std::copy(att.begin(), att.end(), tr.attention.begin() + (size_t(s) * K_ + k) * H * T * T);
        }
        for (int i = 0; i < T; ++i) {
            for (int op = 0; op <= K_; ++op)
                tr.selection[(size_t(s) * T + i) * (K_ + 1) + op] = float(c.sel.s(i, op));
            tr.gates[size_t(s) * T + i] = float(c.sel.s.row(i).tail(K_).sum());
        }
        recordChange(h, next, T, tr);
        std::swap(h, next);
        head_.gatherAll(h, batch_, shape_);
        head_.apply(store_);
        recordReadouts(head_.probs, tr);
    }
    return tr;
}

template <typename S> double ThoughtNet<S>::trainingFlops(const Batch& batch, int steps) const {
    double rows = 0, pairs = 0;
    for (int b = 0; b < batch.batch; ++b) {
        rows += batch.lengths[size_t(b)];
        pairs += double(batch.lengths[size_t(b)]) * batch.lengths[size_t(b)];
    }
    const double C = C_, P = P_, F = tc().hiddenSize;
    const double perOp = 2 * rows * (C * (C + P) + 4 * C * C + C * F + F * C + C * C) + 4 * pairs * C;
    const double selector = 2 * rows * ((C + P) * F + F * (K_ + 1));
    const double f = steps * (K_ * perOp + selector) + 2.0 * batch.batch * batch.readouts * C * symbols_;
    return 3 * f;
}

template <typename S>
std::unique_ptr<Model<S>> ThoughtNetKind::make(const ModelConfig& config, int vocab, int symbols) {
    return std::make_unique<ThoughtNet<S>>(config, vocab, symbols);
}

#define NDR_INSTANTIATE(S)                                                                                   \
    template class ThoughtNet<S>;                                                                            \
    template std::unique_ptr<Model<S>> ThoughtNetKind::make<S>(const ModelConfig&, int, int);
NDR_FOR_EACH_SCALAR(NDR_INSTANTIATE)

} // namespace ndr
