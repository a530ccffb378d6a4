// Dropout masks and their generator: xoshiro256** (the model's generator), the eight side-by-side
// streams a dropout pass draws from, and the passes that apply the multipliers (alone, with ReLU, or
// added to another stream). Deterministic for a given seed, the same on every engine level.
#pragma once

#include "core/nn/tensor.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

namespace ndr {

class DropoutStreams;

// xoshiro256** (Blackman & Vigna), seeded through SplitMix64: the generator of dropout masks, a few
// integer instructions per 64-bit draw. Satisfies UniformRandomBitGenerator; its state streams as text
// like the standard engines.
class Xoshiro256 {
public:
    using result_type = uint64_t;
    explicit Xoshiro256(uint64_t seed = 1) { this->seed(seed); }
    void seed(uint64_t seed) {
        for (auto& word : s_) {
            seed += 0x9E3779B97F4A7C15ULL;
            uint64_t z = seed;
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
            word = z ^ (z >> 31);
        }
    }
    static constexpr result_type min() { return 0; }
    static constexpr result_type max() { return ~uint64_t(0); }
    result_type operator()() {
        const uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }
    template <typename Os> friend Os& operator<<(Os& os, const Xoshiro256& r) {
        return os << r.s_[0] << ' ' << r.s_[1] << ' ' << r.s_[2] << ' ' << r.s_[3], os;
    }
    template <typename Is> friend Is& operator>>(Is& is, Xoshiro256& r) {
        return is >> r.s_[0] >> r.s_[1] >> r.s_[2] >> r.s_[3], is;
    }

private:
    friend class DropoutStreams;
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    uint64_t s_[4];
};

// The model's generator: dropout masks draw from it through DropoutStreams (each 64-bit draw four
// 16-bit lanes compared with a threshold, p resolved to 1/65536). Deterministic for a given seed.
using Rng = Xoshiro256;

// Bernoulli(keep = 1 - p) draws, four per generator call.
class KeepDraws {
public:
    KeepDraws(double p, Rng& rng)
        : threshold_(uint32_t(std::min(std::max(p, 0.0), 1.0) * 65536.0)), rng_(rng) {}
    bool next() {
        if (left_ == 0) {
            bits_ = rng_();
            left_ = 4;
        }
        const uint32_t lane = uint32_t(bits_ & 0xFFFF);
        bits_ >>= 16;
        --left_;
        return lane >= threshold_;
    }

private:
    uint32_t threshold_;
    Rng& rng_;
    uint64_t bits_ = 0;
    int left_ = 0;
};

// Eight xoshiro256** generators stepped side by side: the draws of one dropout pass. Stream k is
// Xoshiro256(the k-th of eight draws of the model's generator), so a pass advances that generator by
// eight draws whatever its length, and draw w of the pass is stream (w mod 8)'s draw (w div 8). The
// eight states are stepped together in SIMD vectors (shifts, xors and adds: the multiplications by 5
// and 9 are shifts and adds), and the same integer operations give the same draws on every engine.
class DropoutStreams {
public:
    static constexpr int kStreams = 8;
    explicit DropoutStreams(Rng& rng) {
        for (int k = 0; k < kStreams; ++k) {
            const Rng stream(rng());
            s0_[k] = stream.s_[0];
            s1_[k] = stream.s_[1];
            s2_[k] = stream.s_[2];
            s3_[k] = stream.s_[3];
        }
    }
    // Writes `groups` groups of kStreams draws as 16-bit lanes, four per draw, lowest first (the
    // draws' bytes, little-endian): draw g * kStreams + k is stream k's g-th. The states are held in
    // registers as vectors of GCC's vector extension (an array of them is not reliably kept in
    // registers): four of 16 bytes each word, or two of 32 with AVX.
    void fill(uint16_t* lanes, Index groups) {
        static_assert(std::endian::native == std::endian::little, "lanes are a draw's bytes, lowest first");
#ifdef __AVX__
        constexpr int Bytes = 32;
#else
        constexpr int Bytes = 16;
#endif
        constexpr int L = Bytes / 8, NV = kStreams / L;
        typedef uint64_t V __attribute__((vector_size(Bytes), aligned(2), may_alias));
        V a[NV], b[NV], c[NV], d[NV];
        for (int v = 0; v < NV; ++v) {
            std::memcpy(&a[v], s0_ + v * L, Bytes);
            std::memcpy(&b[v], s1_ + v * L, Bytes);
            std::memcpy(&c[v], s2_ + v * L, Bytes);
            std::memcpy(&d[v], s3_ + v * L, Bytes);
        }
        for (Index g = 0; g < groups; ++g) {
            V* o = reinterpret_cast<V*>(lanes + 4 * g * kStreams);
#pragma GCC unroll 8
            for (int v = 0; v < NV; ++v) {
                const V x = b[v];
                const V x5 = (x << 2) + x, r = (x5 << 7) | (x5 >> 57);
                o[v] = (r << 3) + r; // rotl(x * 5, 7) * 9
                const V t = x << 17;
                c[v] ^= a[v];
                d[v] ^= x;
                b[v] = x ^ c[v];
                a[v] ^= d[v];
                c[v] ^= t;
                d[v] = (d[v] << 45) | (d[v] >> 19);
            }
        }
        for (int v = 0; v < NV; ++v) {
            std::memcpy(s0_ + v * L, &a[v], Bytes);
            std::memcpy(s1_ + v * L, &b[v], Bytes);
            std::memcpy(s2_ + v * L, &c[v], Bytes);
            std::memcpy(s3_ + v * L, &d[v], Bytes);
        }
    }

private:
    uint64_t s0_[kStreams], s1_[kStreams], s2_[kStreams], s3_[kStreams];
};

// Calls use(i0, lanes, count) over [0, n) in chunks: lanes[k] is the 16-bit draw of element i0 + k.
// Each 64-bit draw of DropoutStreams is four 16-bit lanes, lowest first, and a chunk's draws come
// first, so that the pass over its lanes is a loop the compiler vectorises.
template <typename Use> void forEachDropoutChunk(Index n, Rng& rng, Use&& use) {
    constexpr Index kLanes = 1024; // a multiple of 4 * DropoutStreams::kStreams
    alignas(64) uint16_t lanes[kLanes];
    DropoutStreams streams(rng);
    for (Index i0 = 0; i0 < n; i0 += kLanes) {
        const Index count = std::min(n - i0, kLanes);
        streams.fill(lanes, (count + 4 * DropoutStreams::kStreams - 1) / (4 * DropoutStreams::kStreams));
        use(i0, lanes, count);
    }
}

// A lane at or above this is kept: p resolved to 1/65536.
inline uint16_t dropoutThreshold(double p) {
    return uint16_t(std::min(p, 65535.0 / 65536.0) * 65536.0);
}

// Calls body(i, multiplier) for every i in [0, n): the dropout multiplier of element i, 0 with
// probability p, else 1/(1-p), from forEachDropoutChunk's draws. A chunk's calls form one SIMD loop, so
// body must treat each i on its own (body's pointers are copied into locals: as the closure's members
// they could alias its stores and be reloaded, which keeps the loop scalar).
template <typename S, typename Body> void forEachDropoutMultiplier(Index n, double p, Rng& rng, Body body) {
    const uint16_t threshold = dropoutThreshold(p);
    const S keep = S(1.0 / (1.0 - p));
    forEachDropoutChunk(n, rng, [=](Index i0, const uint16_t* lanes, Index count) {
        const uint16_t t = threshold;
        const S k1 = keep;
        const Body use = body;
#pragma omp simd
        for (Index k = 0; k < count; ++k)
            use(i0 + k, lanes[k] >= t ? k1 : S(0));
    });
}

// Fills m[0, n) with the dropout multipliers: 0 with probability p, else 1/(1-p).
template <typename S> void dropoutFill(S* m, Index n, double p, Rng& rng) {
    forEachDropoutMultiplier<S>(n, p, rng, [m](Index i, S keep) { m[i] = keep; });
}

// Fills `mask` with 0 (probability p) or 1/(1-p); all ones when p == 0 or not training.
template <typename S>
void dropoutMask(Mat<S>& mask, Index rows, Index cols, double p, bool training, Rng& rng) {
    mask.resize(rows, cols);
    if (!training || p <= 0)
        mask.setOnes();
    else
        dropoutFill(mask.data(), rows * cols, p, rng);
}

// Rows `rows` of the dropout multipliers a pass over (all, cols) values draws, in that order: the pass
// draws every row's (into `scratch`), so the multipliers of a row do not depend on which rows are kept.
template <typename S>
void dropoutRows(Mat<S>& mask, const std::vector<Index>& rows, Index all, Index cols, double p, Rng& rng,
                 Mat<S>& scratch) {
    dropoutMask(scratch, all, cols, p, true, rng);
    gatherRows(scratch, rows, mask);
}

// y = x + a * m over n values, m the dropout multipliers (0 with probability p, else 1/(1-p)) drawn as
// dropoutFill draws them and stored for the backward pass: the draws, the mask and the sum in one pass.
template <typename S> void addDropped(S* y, const S* x, const S* a, S* m, Index n, double p, Rng& rng) {
    forEachDropoutMultiplier<S>(n, p, rng, [y, x, a, m](Index i, S keep) {
        m[i] = keep;
        y[i] = x[i] + a[i] * keep;
    });
}

// x = ReLU(x) * dropout multipliers, in one pass, without storing the multipliers: the caller can tell
// them afterwards from x itself (where x is positive the multiplier was 1/(1-p)). Same draws as
// dropoutFill.
template <typename S> void reluDropoutInPlace(S* x, Index n, double p, Rng& rng) {
    // ReLU as a select, then the multiplier: no branch per element, so the loop vectorises without
    // masked stores (AVX2). Where x > 0 this is x * keep; elsewhere 0 * keep = +0.
    forEachDropoutMultiplier<S>(n, p, rng, [x](Index i, S keep) {
        const S v = x[i];
        x[i] = (v > S(0) ? v : S(0)) * keep;
    });
}

} // namespace ndr
