// One encoder layer: attention and its update (residual or copy gate), forward, backward and FLOP
// count (see encoder.h). The forward and backward follow docs/design.md §2 line by line; the parts
// written for speed (fused row passes, one product for [W1; Wg1], the update on the rows read alone)
// sit in the helpers above them.
#include "core/models/encoder/encoder.h"
#include "core/nn/scalars.h"

#include <cmath>
#include <random>
#include <stdexcept>

namespace ndr {

namespace {

// U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for a (out, in) weight: torch.nn.Linear's default, variance 1/(3
// fan_in).
template <typename S, typename WT, typename InitRng> void uniformFanIn(WT&& w, InitRng& rng) {
    const double bound = 1.0 / std::sqrt(double(w.cols()));
    std::uniform_real_distribution<double> u(-bound, bound);
    for (Index i = 0; i < w.rows(); ++i)
        for (Index j = 0; j < w.cols(); ++j)
            w(i, j) = S(u(rng));
}

// The rows an update runs on: every row of x (rows null), or some of them. Dropout draws its
// multipliers for every one of x's rowsAll rows either way, so that a row's draws do not depend on
// which rows are computed.
template <typename S> struct UpdateRows {
    const std::vector<Index>* rows;
    Index rowsAll;
    Mat<S>& allMask; // scratch: the multipliers of every row

    // y = base + Dropout(addend) with probability p when `drop` (mask: the multipliers, empty without).
    void addDropout(const Mat<S>& base, const Mat<S>& addend, bool drop, double p, Rng& rng, Mat<S>& mask,
                    Mat<S>& y) const {
        const Index N = base.rows(), C = base.cols();
        y.resize(N, C);
        if (drop && rows) {
            dropoutRows(mask, *rows, rowsAll, C, p, rng, allMask);
            y = base + addend.cwiseProduct(mask);
        } else if (drop) {
            mask.resize(N, C);
            addDropped(y.data(), base.data(), addend.data(), mask.data(), N * C, p, rng);
        } else {
            mask.resize(0, 0);
            forRowRanges(N, C, [&](Index r0, Index r1) {
                const Index n = r1 - r0;
                y.middleRows(r0, n).noalias() = base.middleRows(r0, n) + addend.middleRows(r0, n);
            });
        }
    }
    // hidden = Dropout(ReLU(hidden)) in place; rowMask is scratch.
    void reluDropout(Mat<S>& hidden, bool drop, double p, Rng& rng, Mat<S>& rowMask) const {
        if (drop && rows) {
            dropoutRows(rowMask, *rows, rowsAll, hidden.cols(), p, rng, allMask);
            hidden = hidden.cwiseMax(S(0)).cwiseProduct(rowMask);
        } else if (drop) {
            reluDropoutInPlace(hidden.data(), hidden.size(), p, rng);
        } else {
            forRowRanges(hidden.rows(), hidden.cols(), [&](Index r0, Index r1) {
                auto block = hidden.middleRows(r0, r1 - r0);
                block = block.cwiseMax(S(0));
            });
        }
    }
};

// LN1's backward, its input gradient v at (i, j) going into dx (assigned, or added to the copy gate's
// share of dx) and, times the attention output's dropout multiplier, into da. One loop per case, so
// that the inner loop has no branch.
template <typename S, bool AddToDx, bool Masked>
void ln1Backward(ParamStore<S>& store, int g, int b, const Mat<S>& dz, const typename LayerNorm<S>::Cache& ln,
                 S* dx, S* da, const S* mask, Index C) {
    LayerNorm<S>::backwardEach(dz, store.value(g), store.grad(g), store.grad(b), ln,
                               [=](Index i, Index j, S v) {
                                   if constexpr (AddToDx)
                                       dx[i * C + j] += v;
                                   else
                                       dx[i * C + j] = v;
                                   if constexpr (Masked)
                                       da[i * C + j] = v * mask[i * C + j];
                                   else
                                       da[i * C + j] = v;
                               });
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Declaration and initialisation

template <typename S>
void EncoderLayer<S>::declare(ParamStore<S>& store, const std::string& prefix, const EncoderConfig& config) {
    cfg = config;
    const int C = cfg.dModel, F = cfg.dFF, H = cfg.heads;
    attention.declare(store, prefix, cfg);
    if (cfg.headRouting)
        router.declare(store, prefix, C, H, cfg.routeTopK, cfg.routeDropped);
    const bool isGated = copyGated(cfg.update), isTanh = cfg.update == UpdateKind::CopyGateTanh;
    ln1g = store.add(prefix + "ln1.gain", 1, C);
    ln1b = store.add(prefix + "ln1.bias", 1, C);
    // W1 and Wg1 both read z: declared consecutively so one product computes both.
    w1 = store.add(prefix + "ffn.w1", F, C);
    if (isGated)
        wg1 = store.add(prefix + "gate.w1", C, C);
    b1 = store.add(prefix + "ffn.b1", 1, F);
    if (isGated)
        bg1 = store.add(prefix + "gate.b1", 1, C);
    w2 = store.add(prefix + "ffn.w2", C, F);
    b2 = store.add(prefix + "ffn.b2", 1, C);
    int ln2g = -1, ln2b = -1;
    if (!isTanh) { // the tanh update has no second layer norm
        ln2g = store.add(prefix + "ln2.gain", 1, C);
        ln2b = store.add(prefix + "ln2.bias", 1, C);
    }
    if (!isGated) {
        update = ResidualUpdate<S>{ln2g, ln2b};
        return;
    }
    CopyGateUpdate<S> g{isTanh, ln2g, ln2b};
    g.wg2 = store.add(prefix + "gate.w2", C, C);
    g.bg2 = store.add(prefix + "gate.b2", 1, C);
    update = g;
}

template <typename S>
template <typename InitRng>
void EncoderLayer<S>::init(ParamStore<S>& store, InitRng& rng) const {
    attention.init(store, rng);
    if (cfg.headRouting)
        router.init(store, rng);
    const double reluGain = std::sqrt(2.0);
    store.value(ln1g).setOnes();
    store.value(ln1b).setZero();
    if (gated()) {
        xavierUniform<S>(store.value(w1), reluGain, rng);
        xavierUniform<S>(store.value(w2), 1.0, rng);
    } else {
        // The residual layer starts close to the identity, as the standard Transformer layer
        // (torch.nn.TransformerEncoderLayer) does: Wo, W1 and W2 at 1/sqrt(fan_in) keep the residual
        // branches small next to the stream. Unrolled with shared weights, branches at Xavier scale
        // (W1 with the ReLU gain) add an input-independent part at every step and the [E] column
        // collapses to one vector for every input (docs/design.md §2).
        uniformFanIn<S>(store.value(attention.outputWeight()), rng);
        uniformFanIn<S>(store.value(w1), rng);
        uniformFanIn<S>(store.value(w2), rng);
    }
    store.value(b1).setZero();
    store.value(b2).setZero();
    std::visit(
        [&](const auto& u) {
            if (u.ln2g >= 0) {
                store.value(u.ln2g).setOnes();
                store.value(u.ln2b).setZero();
            }
        },
        update);
    if (const auto* g = std::get_if<CopyGateUpdate<S>>(&update)) {
        xavierUniform<S>(store.value(wg1), reluGain, rng);
        store.value(bg1).setZero();
        xavierUniform<S>(store.value(g->wg2), 1.0, rng);
        store.value(g->bg2).setConstant(S(cfg.gateBiasInit));
    }
}

// ---------------------------------------------------------------------------------------------
// Forward

template <typename S>
void EncoderLayer<S>::forward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape, bool training,
                              Rng& rng, Cache& c, Mat<S>& out, const std::vector<Index>* rows) const {
    const int F = cfg.dFF;
    const bool drop = training && cfg.dropout > 0;
    // a = Attention(x), each head's output scaled by its routing weight with head routing
    const Mat<S>* routeWeights = nullptr;
    if (cfg.headRouting) {
        router.forward(store, x, c.route);
        routeWeights = &c.route.weights;
    }
    attention.forward(store, x, shape, training, cfg.attentionDropout, rng, c.att, ws.att, routeWeights);
    // The update is row by row: with `rows` it runs on those rows of x and a alone.
    c.rows.clear();
    if (rows) {
        c.rows = *rows;
        gatherRows(x, c.rows, c.xRows);
        gatherRows(ws.att, c.rows, ws.attRows);
    }
    const UpdateRows<S> at{rows ? &c.rows : nullptr, x.rows(), ws.allMask};
    const Mat<S>& xu = rows ? c.xRows : x;
    // z = LN1(x + Dropout(a))
    at.addDropout(xu, rows ? ws.attRows : ws.att, drop, cfg.dropout, rng, c.attMask, ws.y);
    LayerNorm<S>::forward(ws.y, store.value(ln1g), store.value(ln1b), c.z, c.ln1);
    // hidden = Dropout(ReLU(z [W1; Wg1]^T + [b1 | bg1]))    (N, F) or (N, F + C); b1 and bg1 are
    // consecutive, so they form one bias row
    linearForwardBias<S>(c.z, store.valueRows(w1, gated() ? wg1 : w1), store.valuePtr(b1), c.hiddenDropped);
    c.hiddenKeep = drop ? S(1.0 / (1.0 - cfg.dropout)) : S(1);
    at.reluDropout(c.hiddenDropped, drop, cfg.dropout, rng, ws.rowMask);
    // ff = W2 Dropout(hidden) + b2
    linearForwardBias<S>(c.hiddenDropped.leftCols(F), store.value(w2), store.valuePtr(b2), ws.ff);
    if (const auto* r = std::get_if<ResidualUpdate<S>>(&update))
        residualForward(*r, store, drop, rng, c, rows ? &c.rows : nullptr, x.rows(), out);
    else
        gateForward(std::get<CopyGateUpdate<S>>(update), store, xu, training, rng, c,
                    rows ? &c.rows : nullptr, x.rows(), out);
}

// out = LN2(z + Dropout(ff))
template <typename S>
void EncoderLayer<S>::residualForward(const ResidualUpdate<S>& r, ParamStore<S>& store, bool drop, Rng& rng,
                                      Cache& c, const std::vector<Index>* rows, Index rowsAll,
                                      Mat<S>& out) const {
    const UpdateRows<S> at{rows, rowsAll, ws.allMask};
    at.addDropout(c.z, ws.ff, drop, cfg.dropout, rng, c.ffMask, ws.y);
    LayerNorm<S>::forward(ws.y, store.value(r.ln2g), store.value(r.ln2b), out, c.ln2);
}

// u = LN2(ff) or tanh(ff);  g = sigmoid(Wg2 Dropout(gate hidden) + bg2);  out = x + keep g (u - x)
template <typename S>
void EncoderLayer<S>::gateForward(const CopyGateUpdate<S>& g, ParamStore<S>& store, const Mat<S>& xu,
                                  bool training, Rng& rng, Cache& c, const std::vector<Index>* rows,
                                  Index rowsAll, Mat<S>& out) const {
    const int C = cfg.dModel;
    const Index N = xu.rows();
    if (g.tanh)
        c.u = ws.ff.array().tanh().matrix();
    else
        LayerNorm<S>::forward(ws.ff, store.value(g.ln2g), store.value(g.ln2b), c.u, c.ln2);
    linearForwardBias<S>(c.hiddenDropped.rightCols(C), store.value(g.wg2), store.valuePtr(g.bg2), c.gate);
    forRowRanges(N, C, [&](Index r0, Index r1) {
        auto gr = c.gate.middleRows(r0, r1 - r0).array();
        gr = (S(1) + (-gr).exp()).inverse();
    });
    // Gate dropout: one draw per row of x, so that computing only some rows keeps their draws.
    c.gateKeep.assign(N, S(1));
    if (training && cfg.gateDropout > 0) {
        AlignedVector<S>& keepAll = rows ? ws.keepAll : c.gateKeep;
        keepAll.resize(rowsAll);
        KeepDraws draws(cfg.gateDropout, rng);
        for (Index i = 0; i < rowsAll; ++i)
            keepAll[i] = draws.next() ? S(1) : S(0);
        if (rows)
            for (Index k = 0; k < N; ++k)
                c.gateKeep[k] = keepAll[c.rows[size_t(k)]];
    }
    out.resize(N, C);
    // Row passes capture pointers by value: stores of floats cannot alias them.
    const S *keeps = c.gateKeep.data(), *xd = xu.data(), *ud = c.u.data(), *gd = c.gate.data();
    S* od = out.data();
    forRowRanges(N, C, [=](Index r0, Index r1) {
        for (Index i = r0; i < r1; ++i) {
            const S keep = keeps[i];
            const S* xi = xd + i * C;
            const S* ui = ud + i * C;
            const S* gi = gd + i * C;
            S* oi = od + i * C;
#pragma omp simd
            for (Index j = 0; j < C; ++j)
                oi[j] = xi[j] + keep * (gi[j] * (ui[j] - xi[j]));
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Backward

template <typename S>
void EncoderLayer<S>::backward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape, Cache& c,
                               const Mat<S>& dOut, Mat<S>& dx) const {
    const int C = cfg.dModel;
    // After a forward on some rows the update's backward runs on those rows: dxu and da are its
    // gradients there, scattered into dx and the attention's output gradient before the attention's
    // backward.
    const bool some = !c.rows.empty();
    const Mat<S>& xu = some ? c.xRows : x;
    Mat<S>& dxu = some ? ws.dxRows : dx;
    const Index N = xu.rows();
    Mat<S>& dHidden = ws.dHidden; // d loss / d Dropout(hidden)   (N, F) or (N, F + C)
    dHidden.resize(N, c.hiddenDropped.cols());
    // The update: into dHidden's columns, and into dz (residual) or dxu (copy gate)
    if (const auto* r = std::get_if<ResidualUpdate<S>>(&update))
        residualBackward(*r, store, c, dOut, ws.dz);
    else
        gateBackward(std::get<CopyGateUpdate<S>>(update), store, xu, c, dOut, dxu);
    // hidden = Dropout(ReLU(pre)): the gradient passes (times the multiplier) where the output is
    // positive. [b1 | bg1]'s gradient is the column sums of the result (b1 and bg1 are consecutive).
    {
        const S keep = c.hiddenKeep;
        const S* hd = c.hiddenDropped.data();
        S* dh = dHidden.data();
        mapWithColumnSums(N, dHidden.cols(), dh, store.grad(b1).data(), [hd, dh, keep](Index e) {
            // The choice is between two constants and the product unconditional: with a product
            // under the condition, GCC keeps a branch per element where AVX2 has no masked
            // instructions (a product may trap, so it is not executed speculatively).
            return dh[e] * (hd[e] > S(0) ? keep : S(0));
        });
    }
    const int last = gated() ? wg1 : w1;
    linearBackward<S>(dHidden, c.z, store.valueRows(w1, last), store.gradRows(w1, last), &ws.dz, !gated());
    // z = LN1(x + Dropout(a)): LN1's input gradient goes into dx (x reaches the residual layer's
    // output only through LN1 and attention: assigned, or added to the copy gate's share) and, times
    // the dropout mask, into da, as it is computed.
    const bool masked = c.attMask.size() > 0;
    Mat<S>& da = some ? ws.daRows : masked ? ws.da : ws.dy;
    da.resize(N, C);
    if (!gated())
        dxu.resize(N, C);
    auto* ln1Into = gated() ? (masked ? &ln1Backward<S, true, true> : &ln1Backward<S, true, false>)
                            : (masked ? &ln1Backward<S, false, true> : &ln1Backward<S, false, false>);
    ln1Into(store, ln1g, ln1b, ws.dz, c.ln1, dxu.data(), da.data(), masked ? c.attMask.data() : nullptr, C);
    Mat<S>& daAll = some ? ws.da : da;
    if (some) {
        dx.setZero(x.rows(), C);
        daAll.setZero(x.rows(), C);
        for (size_t k = 0; k < c.rows.size(); ++k) {
            dx.row(c.rows[k]) = dxu.row(Index(k));
            daAll.row(c.rows[k]) = da.row(Index(k));
        }
    }
    // a = Attention(x): its input gradient is added straight into dx.
    const Mat<S>* routeWeights = cfg.headRouting ? &c.route.weights : nullptr;
    attention.backward(store, x, shape, c.att, daAll, dx, ws.dProj, routeWeights,
                       cfg.headRouting ? &ws.dRoute : nullptr);
    if (cfg.headRouting) {
        if (c.routeEntropyCoef != S(0))
            HeadRouter<S>::addEntropyGrad(c.route.weights, shape, c.routeEntropyCoef, ws.dRoute);
        router.backward(store, x, c.route, ws.dRoute, dx);
    }
}

// out = LN2(z + Dropout(ff)): dz is LN2's input gradient (W1's input gradient is added to it by the
// caller); dff = dz * mask; dHidden's FFN columns = dff W2.
template <typename S>
void EncoderLayer<S>::residualBackward(const ResidualUpdate<S>& r, ParamStore<S>& store, Cache& c,
                                       const Mat<S>& dOut, Mat<S>& dz) const {
    const int F = cfg.dFF;
    LayerNorm<S>::backward(dOut, store.value(r.ln2g), store.grad(r.ln2g), store.grad(r.ln2b), c.ln2, dz);
    const Mat<S>* dff = &dz;
    if (c.ffMask.size() > 0) {
        maskWithBiasGrad(dz, c.ffMask, ws.dff, store.grad(b2).data());
        dff = &ws.dff;
    } else {
        biasBackward(dz, store.grad(b2));
    }
    auto dHiddenFF = ws.dHidden.leftCols(F);
    linearBackward<S>(*dff, c.hiddenDropped.leftCols(F), store.value(w2), store.grad(w2), &dHiddenFF);
}

// out = x + keep g (u - x):  du = keep dOut g;  dx = dOut - du;  dg = keep dOut (u - x), and the thought
// cost's d loss / d g;  g = sigmoid(l): dl = dg g (1 - g). Then u = LN2(ff) or tanh(ff): dff; and the
// gate's and the FFN's second layers into dHidden's columns.
template <typename S>
void EncoderLayer<S>::gateBackward(const CopyGateUpdate<S>& g, ParamStore<S>& store, const Mat<S>& xu,
                                   Cache& c, const Mat<S>& dOut, Mat<S>& dxu) const {
    const int C = cfg.dModel, F = cfg.dFF;
    const Index N = xu.rows();
    Mat<S>&du = ws.du, &dGateLogit = ws.dGateLogit, &dff = ws.dff;
    du.resize(N, C);
    dGateLogit.resize(N, C);
    dxu.resize(N, C);
    const bool split = splitOverThreads(N * C);
    S* dbg2 = store.grad(g.bg2).data();
    const S *keeps = c.gateKeep.data(), *costs = c.gateCost.empty() ? nullptr : c.gateCost.data();
    const S *gd = c.gate.data(), *dd = dOut.data(), *ud = c.u.data(), *xd = xu.data();
    S *dud = du.data(), *dxd = dxu.data(), *dld = dGateLogit.data();
    forRowRanges(N, C, [=](Index r0, Index r1) {
        for (Index i = r0; i < r1; ++i) {
            const S keep = keeps[i];
            const S dCost = costs ? costs[i] : S(0); // thought cost: d loss / d g, every channel
            const S* gi = gd + i * C;
            const S* d = dd + i * C;
            const S* ui = ud + i * C;
            const S* xi = xd + i * C;
            S* dui = dud + i * C;
            S* dxi = dxd + i * C;
            S* dli = dld + i * C;
#pragma omp simd
            for (Index j = 0; j < C; ++j) {
                dui[j] = keep * (d[j] * gi[j]);
                dxi[j] = d[j] - dui[j];
                dli[j] =
                    keep * (d[j] * (ui[j] - xi[j]) * gi[j] * (S(1) - gi[j])) + dCost * gi[j] * (S(1) - gi[j]);
            }
            if (!split) // on one thread the bias gradient is summed while the row is in cache
#pragma omp simd
                for (Index j = 0; j < C; ++j)
                    dbg2[j] += dli[j];
        }
    });
    if (split)
        biasBackward(dGateLogit, store.grad(g.bg2));
    auto dHiddenGate = ws.dHidden.rightCols(C);
    linearBackward<S>(dGateLogit, c.hiddenDropped.rightCols(C), store.value(g.wg2), store.grad(g.wg2),
                      &dHiddenGate);
    // u = LN2(ff), or u = tanh(ff): dff = du (1 - u^2)
    if (g.tanh) {
        dff = (du.array() * (S(1) - c.u.array().square())).matrix();
        biasBackward(dff, store.grad(b2));
    } else if (split) {
        LayerNorm<S>::backward(du, store.value(g.ln2g), store.grad(g.ln2g), store.grad(g.ln2b), c.ln2, dff);
        biasBackward(dff, store.grad(b2));
    } else { // on one thread b2's gradient is summed as dff is computed
        dff.resize(N, C);
        S* dffd = dff.data();
        S* db2 = store.grad(b2).data();
        LayerNorm<S>::backwardEach(du, store.value(g.ln2g), store.grad(g.ln2g), store.grad(g.ln2b), c.ln2,
                                   [=](Index i, Index j, S v) {
                                       dffd[i * C + j] = v;
                                       db2[j] += v;
                                   });
    }
    auto dHiddenFF = ws.dHidden.leftCols(F);
    linearBackward<S>(dff, c.hiddenDropped.leftCols(F), store.value(w2), store.grad(w2), &dHiddenFF);
}

// ---------------------------------------------------------------------------------------------
// FLOPs

template <typename S> double EncoderLayer<S>::forwardFlops(const BatchShape& shape, double updateRows) const {
    const double C = cfg.dModel, F = cfg.dFF, H = cfg.heads, D = C / H;
    const double N = double(shape.rows()), U = updateRows < 0 ? N : updateRows;
    const bool geometric = cfg.attention == AttentionKind::Geometric;
    const bool relative = !geometric && relativePositions(cfg.positional);
    const bool absRel = relative && cfg.positional == PositionalKind::AbsRel;
    double f = 0;
    // projections
    f += 2 * N * C * (geometric ? 3 * C + 2 * H : 3 * C + (absRel ? H : 0));
    double pairs = 0, offsets = 0;
    for (int b = 0; b < shape.batch; ++b) {
        pairs += double(shape.lengths[b]) * shape.lengths[b];
        offsets += double(shape.lengths[b]) * (2 * shape.lengths[b] - 1);
    }
    f += 2 * 2 * pairs * H * D; // q.k and A v
    if (relative) {
        f += 2 * (2.0 * shape.positions - 1) * C * C; // r = Wr PE
        f += 2 * offsets * H * D;                     // (q + v) . r over the offsets of each example
    }
    f += 2 * N * C * C; // Wo
    if (cfg.headRouting)
        f += 2 * N * C * (C / 2) + 2 * N * (C / 2) * H; // the routing gate network
    f += 2 * U * C * (F + (gated() ? C : 0));           // [W1; Wg1]
    f += 2 * U * F * C;                                 // W2
    if (gated())
        f += 2 * U * C * C; // Wg2
    return f;
}

// The encoder initialises its layers from a std::mt19937_64 (Encoder::init).
#define NDR_INSTANTIATE(S)                                                                                   \
    template struct EncoderLayer<S>;                                                                         \
    template void EncoderLayer<S>::init(ParamStore<S>&, std::mt19937_64&) const;
NDR_FOR_EACH_SCALAR(NDR_INSTANTIATE)

} // namespace ndr
