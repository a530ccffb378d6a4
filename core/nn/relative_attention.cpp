// Relative positional attention: forward, backward and the naive oracle (docs/design.md §2).
#include "core/nn/relative_attention.h"
#include "core/nn/head_router.h"
#include "core/nn/scalars.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <omp.h>

namespace ndr {

template <typename S>
void RelativeAttention<S>::declare(ParamStore<S>& store, const std::string& prefix, int c, int h,
                                   bool absRelGate) {
    channels = c;
    heads = h;
    absRel = absRelGate;
    p.wq = store.add(prefix + "att.wq", c, c);
    p.wkv = store.add(prefix + "att.wkv", 2 * c, c);
    if (absRel) {
        p.wag = store.add(prefix + "att.wag", h, c);
        p.gateBias = store.add(prefix + "att.abs_gate_bias", 1, h);
    }
    p.wr = store.add(prefix + "att.wr", c, c);
    p.contentBias = store.add(prefix + "att.content_bias", 1, c);
    p.positionBias = store.add(prefix + "att.position_bias", 1, c);
    p.scale = store.add(prefix + "att.scale", 1, 1);
    p.wo = store.add(prefix + "att.wo", c, c);
}

template <typename S> const S* RelativeAttention<S>::positionEncoding(int T) const {
    const int C = channels;
    if (encodingT < T) {
        encoding.resize(2 * T - 1, C);
        for (int m = 0; m < 2 * T - 1; ++m)
            for (int ch = 0; ch < C; ++ch)
                encoding(m, ch) = S(sinusoid(m - (T - 1), ch, C));
        encodingT = T;
    }
    return encoding.data() + Index(encodingT - T) * C;
}

namespace {

// qu (len, D) = q + u_h and qv (len, D) = q + v_h for the query rows of one (example, head).
template <typename S>
void biasedQueries(const S* q, Index stride, int len, int D, const S* u, const S* v, S* qu, S* qv) {
    for (int i = 0; i < len; ++i)
        for (int t = 0; t < D; ++t) {
            const S qi = q[Index(i) * stride + t];
            qu[size_t(i) * D + t] = qi + u[t];
            qv[size_t(i) * D + t] = qi + v[t];
        }
}

} // namespace

// The position term of example b, head h reads posDot (T, 2T-1), whose column m holds the dot product
// with drop(r(m - len + 1)): the relative offset j - i is column j - i + len - 1 and the absolute key
// index j (abs/rel) is column j + len - 1. Only offsets within the example, -(len-1)..len-1, are formed.
template <typename S>
void RelativeAttention<S>::forward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape,
                                   bool training, double keyDropout, Rng& rng, Cache& c, Mat<S>& out,
                                   const Mat<S>* headWeights) const {
    const int B = shape.batch, T = shape.positions, C = channels, H = heads, D = C / H, R = 2 * T - 1;
    const Index N = shape.rows(), P = 3 * C + (absRel ? H : 0);
    const int last = absRel ? p.wag : p.wkv;
    // proj (N, P) = x [Wq; Wkv; Wag]^T (+ [0 | 0 | 0 | bag])
    if (absRel) {
        projBias.assign(size_t(P), S(0));
        std::copy(store.valuePtr(p.gateBias), store.valuePtr(p.gateBias) + H, projBias.begin() + 3 * C);
        linearForwardBias<S>(x, store.valueRows(p.wq, last), projBias.data(), c.proj);
        c.absGate = (S(1) + (-c.proj.rightCols(H).array()).exp()).inverse().matrix();
    } else {
        linearForward<S>(x, store.valueRows(p.wq, last), c.proj);
        c.absGate.resize(0, 0);
    }
    // pos (2T-1, C) = PE Wr^T for the offsets -(T-1)..T-1
    const ConstMatMap<S> pe(positionEncoding(T), R, C);
    linearForward<S>(pe, store.value(p.wr), c.pos);
    if (training && keyDropout > 0) {
        dropoutMask(c.keyMask, N, C, keyDropout, training, rng);
        c.proj.middleCols(C, C).array() *= c.keyMask.array();
        // r(p) is one table for the whole batch, so one mask serves every example (as the authors' code).
        dropoutMask(c.posMask, R, C, keyDropout, training, rng);
        c.pos.array() *= c.posMask.array();
    } else {
        c.keyMask.resize(0, 0);
        c.posMask.resize(0, 0);
    }

    const S s = store.value(p.scale)(0, 0);
    const S* u = store.valuePtr(p.contentBias);
    const S* vb = store.valuePtr(p.positionBias);
    const size_t TT = size_t(T) * T, TR = size_t(T) * R;
    // raw and posDot are read only where they were written; att is zero outside the real (i, j) (each
    // map's padding is zeroed after its softmax).
    c.raw.resize(size_t(B) * H * TT);
    c.posDot.resize(size_t(B) * H * TR);
    c.att.resize(size_t(B) * H * TT);
    c.mixed.resize(N, C);
    scratch.resize(std::max<size_t>(scratch.size(), size_t(omp_get_max_threads())));

#pragma omp parallel for if (splitOverExamples(B)) schedule(static)
    for (int b = 0; b < B; ++b) {
        Scratch& w = scratch[omp_get_thread_num()];
        w.qu.resize(size_t(T) * D);
        w.qv.resize(size_t(T) * D);
        const int len = shape.lengths[b], L = 2 * len - 1;
        const Index first = shape.start(b);
        const S* rows = c.proj.data() + first * P;
        c.mixed.middleRows(first + len, shape.span(b) - len).setZero();
        for (int h = 0; h < H; ++h) {
            const size_t base = (size_t(b) * H + h) * TT;
            biasedQueries(rows + h * D, P, len, D, u + h * D, vb + h * D, w.qu.data(), w.qv.data());
            const Block<const S> qu{w.qu.data(), len, D, D}, qv{w.qv.data(), len, D, D},
                k{rows + C + h * D, len, D, P}, v{rows + 2 * C + h * D, len, D, P};
            const Block<const S> r{c.pos.data() + Index(T - len) * C + h * D, L, D, C}; // offsets -(len-1)..
            S* raw = c.raw.data() + base;
            S* pd = c.posDot.data() + (size_t(b) * H + h) * TR;
            productABt<S>(qu, k, S(1), Block<S>{raw, len, len, T});
            productABt<S>(qv, r, S(1), Block<S>{pd, len, L, R});
            S* A = c.att.data() + base;
            for (int i = 0; i < len; ++i) {
                const S* pdi = pd + size_t(i) * R;
                S* rawi = raw + size_t(i) * T;
                S* ai = A + size_t(i) * T;
                if (absRel) {
                    const S g = c.absGate(first + i, h);
                    for (int j = 0; j < len; ++j)
                        rawi[j] += g * pdi[j - i + len - 1] + (S(1) - g) * pdi[j + len - 1];
                } else {
                    for (int j = 0; j < len; ++j)
                        rawi[j] += pdi[j - i + len - 1];
                }
                S mx = s * rawi[0];
                for (int j = 0; j < len; ++j)
                    mx = std::max(mx, ai[j] = s * rawi[j]);
                for (int j = 0; j < len; ++j)
                    ai[j] -= mx;
                std::fill(ai + len, ai + T, -std::numeric_limits<S>::infinity()); // exp: 0
            }
            // The block's rows at once: at CTL lengths a row is shorter than a SIMD packet.
            Eigen::Map<Eigen::Array<S, Eigen::Dynamic, 1>> rowsOfA(A, Index(len) * T);
            rowsOfA = rowsOfA.exp();
            for (int i = 0; i < len; ++i) {
                S* ai = A + size_t(i) * T;
                S sum = 0;
                for (int j = 0; j < len; ++j)
                    sum += ai[j];
                for (int j = 0; j < len; ++j)
                    ai[j] /= sum;
            }
            zeroOutsideBlock(A, T, len);
            productAB<S>(Block<const S>{A, len, len, T}, v, S(1),
                         Block<S>{c.mixed.data() + first * C + h * D, len, D, C}, false);
        }
    }
    projectHeads<S>(c.mixed, headWeights, store.value(p.wo), c.routed, out);
}

template <typename S>
void RelativeAttention<S>::backward(ParamStore<S>& store, const Mat<S>& x, const BatchShape& shape,
                                    const Cache& c, const Mat<S>& dOut, Mat<S>& dx, Mat<S>& dProj,
                                    bool accumulateDx, const Mat<S>* headWeights,
                                    Mat<S>* dHeadWeights) const {
    const int B = shape.batch, T = shape.positions, C = channels, H = heads, D = C / H, R = 2 * T - 1;
    const Index N = shape.rows(), P = 3 * C + (absRel ? H : 0);
    const int last = absRel ? p.wag : p.wkv;
    // out = mixed Wo^T (routed: mixed scaled per head)
    projectHeadsBackward<S>(dOut, c.mixed, c.routed, store.value(p.wo), store.grad(p.wo), headWeights, dMixed,
                            dHeadWeights);

    const S s = store.value(p.scale)(0, 0);
    const S* u = store.valuePtr(p.contentBias);
    const S* vb = store.valuePtr(p.positionBias);
    const size_t TT = size_t(T) * T, TR = size_t(T) * R;
    // Every entry of dProj is assigned below (padded rows set to zero), so no clearing pass.
    dProj.resize(N, P);
    const int threads = omp_get_max_threads();
    scratch.resize(std::max<size_t>(scratch.size(), size_t(threads)));
    for (int t = 0; t < threads; ++t) {
        scratch[t].dPos.setZero(R, C);
        scratch[t].du.setZero(C);
        scratch[t].dv.setZero(C);
    }
    S dScale = 0;

#pragma omp parallel for if (splitOverExamples(B)) schedule(static) reduction(+ : dScale)
    for (int b = 0; b < B; ++b) {
        Scratch& w = scratch[omp_get_thread_num()];
        w.qu.resize(size_t(T) * D);
        w.qv.resize(size_t(T) * D);
        w.dqv.resize(size_t(T) * D);
        w.dA.resize(TT);
        w.dPosDot.resize(TR);
        const int len = shape.lengths[b], L = 2 * len - 1;
        const Index first = shape.start(b);
        const S* rows = c.proj.data() + first * P;
        S* dRows = dProj.data() + first * P;
        dProj.middleRows(first + len, shape.span(b) - len).setZero();
        for (int h = 0; h < H; ++h) {
            const size_t base = (size_t(b) * H + h) * TT;
            biasedQueries(rows + h * D, P, len, D, u + h * D, vb + h * D, w.qu.data(), w.qv.data());
            const Block<const S> qu{w.qu.data(), len, D, D}, qv{w.qv.data(), len, D, D},
                k{rows + C + h * D, len, D, P}, v{rows + 2 * C + h * D, len, D, P};
            const Block<const S> r{c.pos.data() + Index(T - len) * C + h * D, L, D, C};
            const Block<const S> dm{dMixed.data() + first * C + h * D, len, D, C};
            const Block<S> dq{dRows + h * D, len, D, P}, dk{dRows + C + h * D, len, D, P},
                dv{dRows + 2 * C + h * D, len, D, P};
            const S* A = c.att.data() + base;
            const S* raw = c.raw.data() + base;
            const S* pd = c.posDot.data() + (size_t(b) * H + h) * TR;
            S* dA = w.dA.data();
            S* dpd = w.dPosDot.data();
            // mixed = A v
            productABt<S>(dm, v, S(1), Block<S>{dA, len, len, T});
            productAtB<S>(Block<const S>{A, len, len, T}, dm, S(1), dv, false);
            for (int i = 0; i < len; ++i) {
                S* dai = dA + size_t(i) * T;
                const S* ai = A + size_t(i) * T;
                const S* rawi = raw + size_t(i) * T;
                // a = softmax(s raw): d raw_ij = s a_ij (dA_ij - sum_k dA_ik a_ik); ds += sum d score_ij
                // raw_ij
                S inner = 0;
                for (int j = 0; j < len; ++j)
                    inner += dai[j] * ai[j];
                for (int j = 0; j < len; ++j) {
                    const S dScore = ai[j] * (dai[j] - inner);
                    dScale += dScore * rawi[j];
                    dai[j] = s * dScore;
                }
                // raw_ij = content_ij + c_ih rel_ij + (1 - c_ih) abs_ij  (c_ih = 1 without abs/rel)
                S* dpdi = dpd + size_t(i) * R;
                std::fill(dpdi, dpdi + L, S(0));
                const S* pdi = pd + size_t(i) * R;
                if (absRel) {
                    const S g = c.absGate(first + i, h);
                    S dGate = 0;
                    for (int j = 0; j < len; ++j) {
                        dpdi[j - i + len - 1] += g * dai[j];
                        dpdi[j + len - 1] += (S(1) - g) * dai[j];
                        dGate += dai[j] * (pdi[j - i + len - 1] - pdi[j + len - 1]);
                    }
                    dRows[Index(i) * P + 3 * C + h] = dGate * g * (S(1) - g); // c = sigmoid(logit)
                } else {
                    for (int j = 0; j < len; ++j)
                        dpdi[j - i + len - 1] += dai[j];
                }
            }
            // content = qu k^T: dqu = dRaw k, dk = dRaw^T qu
            const Block<const S> dRaw{dA, len, len, T};
            productAB<S>(dRaw, k, S(1), dq, false);
            productAtB<S>(dRaw, qu, S(1), dk, false);
            // k was multiplied by the dropout mask after projection
            if (c.keyMask.size() > 0)
                for (int i = 0; i < len; ++i) {
                    const S* m = c.keyMask.data() + (first + i) * C + h * D;
                    S* dki = dk.row(i);
                    for (int t = 0; t < D; ++t)
                        dki[t] *= m[t];
                }
            // posDot = qv r^T: dqv = dPosDot r, dr += dPosDot^T qv
            const Block<const S> dPD{dpd, len, L, R};
            productAB<S>(dPD, r, S(1), Block<S>{w.dqv.data(), len, D, D}, false);
            productAtB<S>(dPD, qv, S(1), Block<S>{w.dPos.data() + Index(T - len) * C + h * D, L, D, C}, true);
            // qu = q + u_h, qv = q + v_h
            for (int i = 0; i < len; ++i) {
                S* dqi = dq.row(i);
                const S* dqvi = w.dqv.data() + size_t(i) * D;
                for (int t = 0; t < D; ++t) {
                    w.du[h * D + t] += dqi[t];
                    w.dv[h * D + t] += dqvi[t];
                    dqi[t] += dqvi[t];
                }
            }
        }
    }
    // The threads' shares, summed in thread order.
    dPos = scratch[0].dPos;
    auto du = store.grad(p.contentBias), dvb = store.grad(p.positionBias);
    for (int t = 0; t < threads; ++t) {
        if (t > 0)
            dPos += scratch[t].dPos;
        du.row(0) += scratch[t].du;
        dvb.row(0) += scratch[t].dv;
    }
    store.grad(p.scale)(0, 0) += dScale;
    // pos = drop(PE Wr^T)
    if (c.posMask.size() > 0)
        dPos.array() *= c.posMask.array();
    const ConstMatMap<S> pe(positionEncoding(T), R, C);
    linearBackward<S>(dPos, pe, store.value(p.wr), store.grad(p.wr), static_cast<Mat<S>*>(nullptr));
    if (absRel)
        biasBackward(dProj.rightCols(H), store.grad(p.gateBias));
    linearBackward<S>(dProj, x, store.valueRows(p.wq, last), store.gradRows(p.wq, last), &dx, accumulateDx);
}

template <typename S>
void relativeAttentionNaive(ParamStore<S>& store, const RelativeAttention<S>& layer, const Mat<S>& x,
                            const BatchShape& shape, const Mat<S>* keyMask, const Mat<S>* posMask,
                            Mat<S>& out, std::vector<S>* att) {
    const int B = shape.batch, T = shape.positions, C = layer.channels, H = layer.heads, D = C / H;
    const auto& p = layer.p;
    const auto wq = store.value(p.wq), wkv = store.value(p.wkv), wr = store.value(p.wr),
               wo = store.value(p.wo);
    const auto u = store.value(p.contentBias), vb = store.value(p.positionBias);
    const S s = store.value(p.scale)(0, 0);
    out.setZero(shape.rows(), C);
    if (att)
        att->assign(size_t(B) * H * T * T, S(0));
    for (int b = 0; b < B; ++b) {
        const int len = shape.lengths[b];
        const Index first = shape.start(b);
        // Row `o` of W times x_n.
        auto project = [&](const auto& w, Index o, Index n) {
            S sum = 0;
            for (int ch = 0; ch < C; ++ch)
                sum += w(o, ch) * x(first + n, ch);
            return sum;
        };
        // drop(r(p))[h D + t] = (Wr PE(p))[h D + t] times its multiplier
        auto r = [&](int offset, int h, int t) {
            S sum = 0;
            for (int ch = 0; ch < C; ++ch)
                sum += wr(h * D + t, ch) * S(sinusoid(offset, ch, C));
            return posMask ? sum * (*posMask)(offset + T - 1, h * D + t) : sum;
        };
        Mat<S> mixed = Mat<S>::Zero(len, C);
        for (int h = 0; h < H; ++h)
            for (int i = 0; i < len; ++i) {
                S gate = 1;
                if (layer.absRel)
                    gate = sigmoid(project(store.value(p.wag), h, i) + store.value(p.gateBias)(0, h));
                std::vector<S> q(static_cast<size_t>(D)), score(static_cast<size_t>(len));
                for (int t = 0; t < D; ++t)
                    q[t] = project(wq, h * D + t, i);
                for (int j = 0; j < len; ++j) {
                    S content = 0, rel = 0, abs = 0;
                    for (int t = 0; t < D; ++t) {
                        const S k =
                            project(wkv, h * D + t, j) * (keyMask ? (*keyMask)(first + j, h * D + t) : S(1));
                        content += (q[t] + u(0, h * D + t)) * k;
                        rel += (q[t] + vb(0, h * D + t)) * r(j - i, h, t);
                        abs += (q[t] + vb(0, h * D + t)) * r(j, h, t);
                    }
                    score[j] = s * (content + (layer.absRel ? gate * rel + (S(1) - gate) * abs : rel));
                }
                S mx = score[0], sum = 0;
                for (int j = 1; j < len; ++j)
                    mx = std::max(mx, score[j]);
                for (int j = 0; j < len; ++j)
                    sum += std::exp(score[j] - mx);
                for (int j = 0; j < len; ++j) {
                    const S a = std::exp(score[j] - mx) / sum;
                    if (att)
                        (*att)[((size_t(b) * H + h) * T + i) * T + j] = a;
                    for (int t = 0; t < D; ++t)
                        mixed(i, h * D + t) += a * project(wkv, C + h * D + t, j);
                }
            }
        for (int i = 0; i < len; ++i)
            for (int o = 0; o < C; ++o) {
                S sum = 0;
                for (int ch = 0; ch < C; ++ch)
                    sum += wo(o, ch) * mixed(i, ch);
                out(first + i, o) = sum;
            }
    }
}

#define NDR_INSTANTIATE(S)                                                                                   \
    template struct RelativeAttention<S>;                                                                    \
    template void relativeAttentionNaive<S>(ParamStore<S>&, const RelativeAttention<S>&, const Mat<S>&,      \
                                            const BatchShape&, const Mat<S>*, const Mat<S>*, Mat<S>&,        \
                                            std::vector<S>*);
NDR_FOR_EACH_SCALAR(NDR_INSTANTIATE)

} // namespace ndr
