// One encoder layer: attention and its update (residual or copy gate), forward, backward and FLOP
// count (see encoder.h).
#include "core/nn/encoder.h"

#include <cmath>
#include <random>
#include <stdexcept>

namespace ndr {

// ---------------------------------------------------------------------------------------------
// EncoderLayer

template <typename S>
void EncoderLayer<S>::declare(ParamStore<S>& store, const std::string& prefix, const ModelConfig& config) {
    cfg = config;
    const int C = cfg.dModel, F = cfg.dFF, H = cfg.heads;
    if (cfg.attention == AttentionKind::Geometric)
        geo.declare(store, prefix, C, H, cfg.geomNorm == GeomNorm::L1);
    else if (relative())
        rel.declare(store, prefix, C, H, cfg.positional == PositionalKind::AbsRel);
    else
        soft.declare(store, prefix, C, H);
    if (cfg.headRouting)
        router.declare(store, prefix, C, H, cfg.routeTopK, cfg.routeDropped);
    ln1g = store.add(prefix + "ln1.gain", 1, C);
    ln1b = store.add(prefix + "ln1.bias", 1, C);
    // W1 and Wg1 both read z: declared consecutively so one product computes both.
    w1 = store.add(prefix + "ffn.w1", F, C);
    if (gated())
        wg1 = store.add(prefix + "gate.w1", C, C);
    b1 = store.add(prefix + "ffn.b1", 1, F);
    if (gated())
        bg1 = store.add(prefix + "gate.b1", 1, C);
    w2 = store.add(prefix + "ffn.w2", C, F);
    b2 = store.add(prefix + "ffn.b2", 1, C);
    if (!tanhUpdate()) { // the tanh update has no second layer norm
        ln2g = store.add(prefix + "ln2.gain", 1, C);
        ln2b = store.add(prefix + "ln2.bias", 1, C);
    }
    if (gated()) {
        wg2 = store.add(prefix + "gate.w2", C, C);
        bg2 = store.add(prefix + "gate.b2", 1, C);
    }
}

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

} // namespace

template <typename S>
template <typename InitRng>
void EncoderLayer<S>::init(ParamStore<S>& store, InitRng& rng) const {
    if (cfg.attention == AttentionKind::Geometric)
        geo.init(store, rng);
    else if (relative())
        rel.init(store, rng);
    else
        soft.init(store, rng);
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
        const int wo = cfg.attention == AttentionKind::Geometric ? geo.p.wo
                       : relative()                              ? rel.p.wo
                                                                 : soft.p.wo;
        uniformFanIn<S>(store.value(wo), rng);
        uniformFanIn<S>(store.value(w1), rng);
        uniformFanIn<S>(store.value(w2), rng);
    }
    store.value(b1).setZero();
    store.value(b2).setZero();
    if (!tanhUpdate()) {
        store.value(ln2g).setOnes();
        store.value(ln2b).setZero();
    }
    if (gated()) {
        xavierUniform<S>(store.value(wg1), reluGain, rng);
        store.value(bg1).setZero();
        xavierUniform<S>(store.value(wg2), 1.0, rng);
        store.value(bg2).setConstant(S(cfg.gateBiasInit));
    }
}

template <typename S>
void EncoderLayer<S>::forward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape, bool training,
                              Rng& rng, Cache& c, Mat<S>& out, const std::vector<Index>* rows) const {
    const int C = cfg.dModel, F = cfg.dFF;
    const Index rowsAll = x.rows();
    const bool drop = training && cfg.dropout > 0;
    // a = Attention(x), each head's output scaled by its routing weight with head routing
    const Mat<S>* routeWeights = nullptr;
    if (cfg.headRouting) {
        router.forward(store, x, c.route);
        routeWeights = &c.route.weights;
    }
    if (cfg.attention == AttentionKind::Geometric)
        geo.forward(store, x, shape, training, cfg.attentionDropout, rng, c.geo, ws.att, routeWeights);
    else if (relative())
        rel.forward(store, x, shape, training, cfg.attentionDropout, rng, c.rel, ws.att, routeWeights);
    else
        soft.forward(store, x, shape, training, cfg.attentionDropout, rng, c.soft, ws.att, routeWeights);
    // The update is row by row: with `rows` it runs on those rows of x and a alone.
    c.rows.clear();
    if (rows) {
        c.rows = *rows;
        gatherRows(x, c.rows, c.xRows);
        gatherRows(ws.att, c.rows, ws.attRows);
    }
    const Mat<S>& xu = rows ? c.xRows : x;
    const Mat<S>& a = rows ? ws.attRows : ws.att;
    const Index N = xu.rows();
    // z = LN1(x + Dropout(a))
    Mat<S>& y = ws.y;
    y.resize(N, C);
    if (drop && rows) {
        dropoutRows(c.attMask, c.rows, rowsAll, C, cfg.dropout, rng, ws.allMask);
        y = xu + a.cwiseProduct(c.attMask);
    } else if (drop) {
        c.attMask.resize(N, C);
        addDropped(y.data(), xu.data(), a.data(), c.attMask.data(), N * C, cfg.dropout, rng);
    } else {
        c.attMask.resize(0, 0);
        forRowRanges(N, C, [&](Index r0, Index r1) {
            const Index n = r1 - r0;
            y.middleRows(r0, n).noalias() = xu.middleRows(r0, n) + a.middleRows(r0, n);
        });
    }
    LayerNorm<S>::forward(y, store.value(ln1g), store.value(ln1b), c.z, c.ln1);
    // hidden = Dropout(ReLU(z [W1; Wg1]^T + [b1 | bg1]))    (N, F) or (N, F + C)
    const int last = gated() ? wg1 : w1;
    Mat<S>& hidden = c.hiddenDropped;
    // b1 and bg1 are consecutive, so they form one bias row of width F (+ C).
    linearForwardBias<S>(c.z, store.valueRows(w1, last), store.valuePtr(b1), hidden);
    c.hiddenKeep = drop ? S(1.0 / (1.0 - cfg.dropout)) : S(1);
    if (drop && rows) {
        dropoutRows(ws.rowMask, c.rows, rowsAll, hidden.cols(), cfg.dropout, rng, ws.allMask);
        hidden = hidden.cwiseMax(S(0)).cwiseProduct(ws.rowMask);
    } else if (drop) {
        reluDropoutInPlace(hidden.data(), hidden.size(), cfg.dropout, rng);
    } else {
        forRowRanges(N, hidden.cols(), [&](Index r0, Index r1) {
            auto block = hidden.middleRows(r0, r1 - r0);
            block = block.cwiseMax(S(0));
        });
    }
    // ff = W2 Dropout(hidden) + b2
    Mat<S>& ff = ws.ff;
    linearForwardBias<S>(hidden.leftCols(F), store.value(w2), store.valuePtr(b2), ff);
    if (!gated()) {
        // out = LN2(z + Dropout(ff))
        if (drop && rows) {
            dropoutRows(c.ffMask, c.rows, rowsAll, C, cfg.dropout, rng, ws.allMask);
            y = c.z + ff.cwiseProduct(c.ffMask);
        } else if (drop) {
            c.ffMask.resize(N, C);
            addDropped(y.data(), c.z.data(), ff.data(), c.ffMask.data(), N * C, cfg.dropout, rng);
        } else {
            c.ffMask.resize(0, 0);
            forRowRanges(N, C, [&](Index r0, Index r1) {
                const Index n = r1 - r0;
                y.middleRows(r0, n).noalias() = c.z.middleRows(r0, n) + ff.middleRows(r0, n);
            });
        }
        LayerNorm<S>::forward(y, store.value(ln2g), store.value(ln2b), out, c.ln2);
        return;
    }
    // u = LN2(ff) or tanh(ff);  g = sigmoid(Wg2 Dropout(gate hidden) + bg2);  out = g u + (1 - g) x
    if (tanhUpdate())
        c.u = ff.array().tanh().matrix();
    else
        LayerNorm<S>::forward(ff, store.value(ln2g), store.value(ln2b), c.u, c.ln2);
    linearForwardBias<S>(hidden.rightCols(C), store.value(wg2), store.valuePtr(bg2), c.gate);
    forRowRanges(N, C, [&](Index r0, Index r1) {
        auto g = c.gate.middleRows(r0, r1 - r0).array();
        g = (S(1) + (-g).exp()).inverse();
    });
    c.gateKeep.assign(N, S(1));
    if (training && cfg.gateDropout > 0) {
        // One draw per row of x, so that computing only some rows keeps their draws.
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

template <typename S>
void EncoderLayer<S>::backward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape, Cache& c,
                               const Mat<S>& dOut, Mat<S>& dx) const {
    const int C = cfg.dModel, F = cfg.dFF;
    // After a forward on some rows the update's backward runs on those rows: dxu and da are its
    // gradients there, scattered into dx and the attention's output gradient before the attention's
    // backward.
    const bool some = !c.rows.empty();
    const Mat<S>& xu = some ? c.xRows : x;
    Mat<S>& dxu = some ? ws.dxRows : dx;
    const Index N = xu.rows();
    Mat<S>& dHidden = ws.dHidden; // d loss / d Dropout(hidden)   (N, F) or (N, F + C)
    dHidden.resize(N, c.hiddenDropped.cols());
    Mat<S>&dz = ws.dz, &dy = ws.dy, &dff = ws.dff;
    auto dHiddenFF = dHidden.leftCols(F);
    if (!gated()) {
        // out = LN2(z + Dropout(ff))
        // dz is LN2's input gradient (W1's input gradient is added to it below); dff = dz * mask
        LayerNorm<S>::backward(dOut, store.value(ln2g), store.grad(ln2g), store.grad(ln2b), c.ln2, dz);
        const Mat<S>* dffIn = &dz;
        if (c.ffMask.size() > 0) {
            maskWithBiasGrad(dz, c.ffMask, dff, store.grad(b2).data());
            dffIn = &dff;
        } else {
            biasBackward(dz, store.grad(b2));
        }
        linearBackward<S>(*dffIn, c.hiddenDropped.leftCols(F), store.value(w2), store.grad(w2), &dHiddenFF);

    } else {
        // out = x + keep * g * (u - x)
        Mat<S>&du = ws.du, &dGateLogit = ws.dGateLogit;
        du.resize(N, C);
        dGateLogit.resize(N, C);
        dxu.resize(N, C);
        const bool split = splitOverThreads(N * C);
        S* dbg2 = store.grad(bg2).data();
        const S *keeps = c.gateKeep.data(), *costs = c.gateCost.empty() ? nullptr : c.gateCost.data();
        const S *gd = c.gate.data(), *dd = dOut.data(), *ud = c.u.data(), *xd = xu.data();
        S *dud = du.data(), *dxd = dxu.data(), *dld = dGateLogit.data();
        forRowRanges(N, C, [=](Index r0, Index r1) {
            for (Index i = r0; i < r1; ++i) {
                const S keep = keeps[i];
                const S dCost = costs ? costs[i] : S(0); // thought cost: d loss / d g, every channel
                const S* g = gd + i * C;
                const S* d = dd + i * C;
                const S* ui = ud + i * C;
                const S* xi = xd + i * C;
                S* dui = dud + i * C;
                S* dxi = dxd + i * C;
                S* dli = dld + i * C;
#pragma omp simd
                for (Index j = 0; j < C; ++j) {
                    dui[j] = keep * (d[j] * g[j]);
                    dxi[j] = d[j] - dui[j];
                    // dg = dOut (u - x);  g = sigmoid(l): dl = dg g (1 - g)
                    dli[j] =
                        keep * (d[j] * (ui[j] - xi[j]) * g[j] * (S(1) - g[j])) + dCost * g[j] * (S(1) - g[j]);
                }
                if (!split) // on one thread the bias gradient is summed while the row is in cache
#pragma omp simd
                    for (Index j = 0; j < C; ++j)
                        dbg2[j] += dli[j];
            }
        });
        if (split)
            biasBackward(dGateLogit, store.grad(bg2));
        auto dHiddenGate = dHidden.rightCols(C);
        linearBackward<S>(dGateLogit, c.hiddenDropped.rightCols(C), store.value(wg2), store.grad(wg2),
                          &dHiddenGate);
        // u = LN2(ff), or u = tanh(ff): dff = du (1 - u^2)
        if (tanhUpdate()) {
            dff = (du.array() * (S(1) - c.u.array().square())).matrix();
            biasBackward(dff, store.grad(b2));
        } else if (split) {
            LayerNorm<S>::backward(du, store.value(ln2g), store.grad(ln2g), store.grad(ln2b), c.ln2, dff);
            biasBackward(dff, store.grad(b2));
        } else { // on one thread b2's gradient is summed as dff is computed
            dff.resize(N, C);
            S* dffd = dff.data();
            S* db2 = store.grad(b2).data();
            LayerNorm<S>::backwardEach(du, store.value(ln2g), store.grad(ln2g), store.grad(ln2b), c.ln2,
                                       [=](Index i, Index j, S v) {
                                           dffd[i * C + j] = v;
                                           db2[j] += v;
                                       });
        }
        linearBackward<S>(dff, c.hiddenDropped.leftCols(F), store.value(w2), store.grad(w2), &dHiddenFF);
    }
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
    linearBackward<S>(dHidden, c.z, store.valueRows(w1, last), store.gradRows(w1, last), &dz, !gated());
    // z = LN1(x + Dropout(a)): LN1's input gradient goes into dx (x reaches the residual layer's
    // output only through LN1 and attention: assigned, or added to the copy gate's share) and, times
    // the dropout mask, into da, as it is computed.
    const bool masked = c.attMask.size() > 0;
    Mat<S>& da = some ? ws.daRows : masked ? ws.da : dy;
    da.resize(N, C);
    if (!gated())
        dxu.resize(N, C);
    {
        S *dxd = dxu.data(), *dad = da.data();
        const S* md = masked ? c.attMask.data() : nullptr;
        auto ln1Backward = [&](auto storeValue) {
            LayerNorm<S>::backwardEach(dz, store.value(ln1g), store.grad(ln1g), store.grad(ln1b), c.ln1,
                                       storeValue);
        };
        if (gated() && masked)
            ln1Backward([=](Index i, Index j, S v) {
                dxd[i * C + j] += v;
                dad[i * C + j] = v * md[i * C + j];
            });
        else if (gated())
            ln1Backward([=](Index i, Index j, S v) {
                dxd[i * C + j] += v;
                dad[i * C + j] = v;
            });
        else if (masked)
            ln1Backward([=](Index i, Index j, S v) {
                dxd[i * C + j] = v;
                dad[i * C + j] = v * md[i * C + j];
            });
        else
            ln1Backward([=](Index i, Index j, S v) {
                dxd[i * C + j] = v;
                dad[i * C + j] = v;
            });
    }
    Mat<S>& daAll = some ? ws.da : da;
    if (some) {
        dx.setZero(x.rows(), C);
        daAll.setZero(x.rows(), C);
        for (size_t k = 0; k < c.rows.size(); ++k) {
            dx.row(c.rows[k]) = dxu.row(Index(k));
            daAll.row(c.rows[k]) = da.row(Index(k));
        }
    }
    // The attention's input gradient is added straight into dx.
    const Mat<S>* routeWeights = cfg.headRouting ? &c.route.weights : nullptr;
    Mat<S>* dRoute = cfg.headRouting ? &ws.dRoute : nullptr;
    if (cfg.attention == AttentionKind::Geometric)
        geo.backward(store, x, shape, c.geo, daAll, dx, ws.dProj, true, routeWeights, dRoute);
    else if (relative())
        rel.backward(store, x, shape, c.rel, daAll, dx, ws.dProj, true, routeWeights, dRoute);
    else
        soft.backward(store, x, shape, c.soft, daAll, dx, ws.dProj, true, routeWeights, dRoute);
    if (cfg.headRouting) {
        if (c.routeEntropyCoef != S(0))
            HeadRouter<S>::addEntropyGrad(c.route.weights, shape, c.routeEntropyCoef, ws.dRoute);
        router.backward(store, x, c.route, ws.dRoute, dx);
    }
}

template <typename S> double EncoderLayer<S>::forwardFlops(const BatchShape& shape, double updateRows) const {
    const double C = cfg.dModel, F = cfg.dFF, H = cfg.heads, D = C / H;
    const double N = double(shape.rows()), U = updateRows < 0 ? N : updateRows;
    double f = 0;
    const bool absRel = relative() && cfg.positional == PositionalKind::AbsRel;
    // projections
    f += 2 * N * C * (cfg.attention == AttentionKind::Geometric ? 3 * C + 2 * H : 3 * C + (absRel ? H : 0));
    double pairs = 0, offsets = 0;
    for (int b = 0; b < shape.batch; ++b) {
        pairs += double(shape.lengths[b]) * shape.lengths[b];
        offsets += double(shape.lengths[b]) * (2 * shape.lengths[b] - 1);
    }
    f += 2 * 2 * pairs * H * D; // q.k and A v
    if (relative()) {
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

template struct EncoderLayer<float>;
template struct EncoderLayer<double>;
// The encoder initialises its layers from a std::mt19937_64 (Encoder::init).
template void EncoderLayer<float>::init(ParamStore<float>&, std::mt19937_64&) const;
template void EncoderLayer<double>::init(ParamStore<double>&, std::mt19937_64&) const;

} // namespace ndr
