// The directional geometric attention kernel on one (T, T) block: forward, backward, and the naive
// O(T^3) oracle the tests check them against (docs/design.md §2).
#include "core/nn/attention.h"
#include "core/nn/scalars.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ndr {

template <typename S>
void geometricLogScan(const S* logP, const S* logQ, int T, int len, S* logA, S* prefix) {
    for (int i = 0; i < len; ++i) {
        const S* lq = logQ + size_t(i) * T;
        prefix[0] = 0;
        // The column itself is masked: transparent in the scan.
        for (int k = 0; k < len; ++k)
            prefix[k + 1] = prefix[k] + (k != i ? lq[k] : S(0));
        S* a = logA + size_t(i) * T;
        const S* lp = logP + size_t(i) * T;
        for (int j = 0; j < len; ++j) {
            if (j == i) {
                a[j] = -std::numeric_limits<S>::infinity();
                continue;
            }
            // Keys closer than j: (2i-j, j) when j is right of i; (j, 2i-j] when j is left of i.
            const int lo = j > i ? std::max(0, 2 * i - j + 1) : j + 1;
            const int hi = j > i ? j - 1 : std::min(len - 1, 2 * i - j);
            a[j] = lp[j] + prefix[hi + 1] - prefix[lo];
        }
    }
}

// d loss / d s_ik = g_ik (1 - sigmoid(s_ik)) - sigmoid(s_ik) run_k, where run_k sums g_ij over the
// keys j whose window holds k. From the windows of geometricLogScan, with k != i:
//   k right of i: j right of k, or j left of i with j <= 2i - k
//   k left of i:  j left of k,  or j right of i with j >= 2i - k + 1
// so run_k is two ranges of one prefix sum over the row (g_ii counted as 0).
template <typename S> void geometricScoreGrad(const S* g, const S* sigPos, int T, int len, S* ds, S* prefix) {
    for (int i = 0; i < len; ++i) {
        const S* gi = g + size_t(i) * T;
        const S* sp = sigPos + size_t(i) * T;
        S* dsi = ds + size_t(i) * T;
        prefix[0] = 0; // prefix[m] = sum of g_ij over j < m, j != i
        for (int j = 0; j < len; ++j)
            prefix[j + 1] = prefix[j] + (j != i ? gi[j] : S(0));
        const S total = prefix[len];
        // d log sigmoid(s) / ds = sigmoid(-s);  d log sigmoid(-s) / ds = -sigmoid(s)
        for (int k = 0; k < i; ++k) {
            const S run = prefix[k] + total - prefix[std::min(len, 2 * i - k + 1)];
            dsi[k] = gi[k] * (S(1) - sp[k]) - run * sp[k];
        }
        dsi[i] = 0;
        for (int k = i + 1; k < len; ++k) {
            const S run = total - prefix[k + 1] + prefix[std::max(0, 2 * i - k + 1)];
            dsi[k] = gi[k] * (S(1) - sp[k]) - run * sp[k];
        }
    }
}

// The one-block kernels apply the transcendental functions to the whole (T, T) block at once: rows
// are shorter than a SIMD packet at CTL lengths, so per-row array expressions would run scalar.
template <typename S>
void geometricForward(const S* s, int T, int len, S* att, S* logPOut, GeometricWork<S>& w) {
    using Arr = Eigen::Array<S, Eigen::Dynamic, 1>;
    const size_t TT = size_t(T) * T;
    w.a.resize(TT);
    w.prefix.resize(T + 1);
    const Eigen::Map<const Arr> scores(s, TT);
    Eigen::Map<Arr> logP(logPOut, TT), logQ(w.a.data(), TT);
    logP = logSigmoidArray(scores); // log P_ij
    logQ = logP - scores;           // log(1 - P_ij) = log sigmoid(s) - s
    Eigen::Map<Arr> out(att, TT);
    out.setConstant(-std::numeric_limits<S>::infinity()); // padded keys and queries
    geometricLogScan(logPOut, logQ.data(), T, len, att, w.prefix.data());
    out = out.exp(); // exp(-inf) = 0 on masked entries
}

template <typename S> void geometricForward(const S* s, int T, int len, S* att) {
    GeometricWork<S> w;
    AlignedVector<S> logP(size_t(T) * T);
    geometricForward(s, T, len, att, logP.data(), w);
}

template <typename S>
void geometricBackwardFromLogP(const S* logP, const S* att, const S* dAtt, int T, int len, S* ds,
                               GeometricWork<S>& w) {
    using Arr = Eigen::Array<S, Eigen::Dynamic, 1>;
    const size_t TT = size_t(T) * T;
    w.a.resize(TT);
    w.b.resize(TT);
    w.prefix.resize(T + 1);
    Eigen::Map<Arr> sigPos(w.a.data(), TT), g(w.b.data(), TT);
    sigPos = Eigen::Map<const Arr>(logP, TT).exp(); // sigmoid(s)
    // g = d loss / d log A_ij, where log A_ij = log P_ij + sum_{k in window} log(1 - P_ik)
    g = Eigen::Map<const Arr>(dAtt, TT) * Eigen::Map<const Arr>(att, TT);
    std::fill(ds, ds + TT, S(0));
    geometricScoreGrad(g.data(), sigPos.data(), T, len, ds, w.prefix.data());
}

template <typename S> void geometricBackward(const S* s, const S* att, const S* dAtt, int T, int len, S* ds) {
    using Arr = Eigen::Array<S, Eigen::Dynamic, 1>;
    const size_t TT = size_t(T) * T;
    GeometricWork<S> w;
    Arr logP = logSigmoidArray(Eigen::Map<const Arr>(s, TT));
    geometricBackwardFromLogP(logP.data(), att, dAtt, T, len, ds, w);
}

template <typename S> void geometricNaive(const S* s, int T, int len, S* att) {
    for (int i = 0; i < T; ++i)
        for (int j = 0; j < T; ++j) {
            S a = 0;
            if (i < len && j < len && j != i) {
                a = sigmoid(s[size_t(i) * T + j]);
                for (int k = 0; k < len; ++k)
                    if (k != i && geometricCloser(i, j, k))
                        a *= S(1) - sigmoid(s[size_t(i) * T + k]);
            }
            att[size_t(i) * T + j] = a;
        }
}

#define NDR_INSTANTIATE(S)                                                                                   \
    template void geometricLogScan<S>(const S*, const S*, int, int, S*, S*);                                 \
    template void geometricScoreGrad<S>(const S*, const S*, int, int, S*, S*);                               \
    template void geometricForward<S>(const S*, int, int, S*);                                               \
    template void geometricBackward<S>(const S*, const S*, const S*, int, int, S*);                          \
    template void geometricForward<S>(const S*, int, int, S*, S*, GeometricWork<S>&);                        \
    template void geometricBackwardFromLogP<S>(const S*, const S*, const S*, int, int, S*,                   \
                                               GeometricWork<S>&);                                           \
    template void geometricNaive<S>(const S*, int, int, S*);
NDR_FOR_EACH_SCALAR(NDR_INSTANTIATE)

} // namespace ndr
