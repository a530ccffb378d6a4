// The input of the encoder-style models (docs/design.md §2): h0 = Dropout(E[token] + PE), where the
// sinusoidal encoding PE and the dropout apply only with sinusoidal positions (relative and geometric
// attention carry the positions themselves); and its gradient into the embedding table E.
#pragma once

#include "core/nn/attention.h"
#include "core/nn/dropout.h"
#include "core/nn/layers.h"
#include "core/nn/params.h"
#include "core/task/task.h"

namespace ndr {

template <typename S> class TokenEmbedding {
public:
    // Writes the real rows of h0, which the caller has sized (rows, C); padding rows are left as they are.
    void forward(MatMap<S> emb, const Batch& batch, const BatchShape& shape, bool sinusoidal, double dropout,
                 bool training, Rng& rng, Mat<S>& h0) {
        const int T = batch.positions;
        const Index C = emb.cols();
        // The encoding of each position is computed once and kept: it is the same at every step.
        if (sinusoidal && sinusoids_.rows() < T) {
            sinusoids_.resize(T, C);
            for (int t = 0; t < T; ++t)
                for (int c = 0; c < C; ++c)
                    sinusoids_(t, c) = S(sinusoid(t, c, int(C)));
        }
        for (int b = 0; b < batch.batch; ++b)
            for (Index t = 0; t < shape.span(b); ++t) {
                auto row = h0.row(shape.start(b) + t);
                row = emb.row(batch.tokens[Index(b) * T + t]);
                if (sinusoidal)
                    row += sinusoids_.row(t);
            }
        if (sinusoidal) {
            dropoutMask(mask_, h0.rows(), C, dropout, training, rng);
            h0.array() *= mask_.array();
        }
    }

    // dEmb[token] += dh0 of the token's row, through the dropout of forward(); dh is scaled in place.
    void backward(MatMap<S> dEmb, const Batch& batch, const BatchShape& shape, bool sinusoidal,
                  Mat<S>& dh) const {
        if (sinusoidal)
            dh.array() *= mask_.array();
        for (int b = 0; b < batch.batch; ++b)
            for (Index t = 0; t < shape.span(b); ++t)
                dEmb.row(batch.tokens[Index(b) * batch.positions + t]) += dh.row(shape.start(b) + t);
    }

private:
    Mat<S> mask_;      // (rows, C) dropout on embedding + positions
    Mat<S> sinusoids_; // (T, C) sinusoidal encoding of the positions seen so far
};

} // namespace ndr
