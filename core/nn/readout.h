// The readout every model shares: the rows read (the [E] column, or one row per readout position),
// a linear map to the answers, softmax, the mean cross-entropy and its backward.
#pragma once

#include "core/nn/attention.h"
#include "core/nn/layers.h"
#include "core/nn/params.h"
#include "core/task/task.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace ndr {

template <typename S> struct ReadoutHead {
    int w = -1, b = -1; // W (S, C), bias (1, S)
    Mat<S> rows;        // (B*R, C) the rows read, example-major
    Mat<S> logits, probs;
    Mat<S> dLogits, dRows; // backward temporaries

    void declare(ParamStore<S>& store, int symbols, int channels) {
        w = store.add("readout.w", symbols, channels);
        b = store.add("readout.b", 1, symbols);
    }
    template <typename InitRng> void init(ParamStore<S>& store, InitRng& rng) const {
        xavierUniform<S>(store.value(w), 1.0, rng);
        store.value(b).setZero();
    }
    // Room for every readout of the batch.
    void start(const Batch& batch, Index channels) {
        rows.resize(Index(batch.batch) * batch.readouts, channels);
    }
    // Example e's readout rows of h (N, C) into rows e*R .. e*R+R-1.
    void gather(const Mat<S>& h, const Batch& batch, const BatchShape& shape, int e) {
        const int R = batch.readouts;
        for (int k = 0; k < R; ++k)
            rows.row(Index(e) * R + k) = h.row(shape.start(e) + batch.readoutPosition(e, k));
    }
    void gatherAll(const Mat<S>& h, const Batch& batch, const BatchShape& shape) {
        start(batch, h.cols());
        for (int e = 0; e < batch.batch; ++e)
            gather(h, batch, shape, e);
    }
    // Ends a forward: reads h's rows of every example not read yet and returns the mean cross-entropy.
    // With halting (haltSteps given) the examples that halted were gathered at their step; the others
    // get `ran` steps and are read from h. Without, every example is read from h.
    double finish(ParamStore<S>& store, const Mat<S>& h, const Batch& batch, const BatchShape& shape,
                  std::vector<int>* haltSteps, int ran) {
        if (!haltSteps) {
            gatherAll(h, batch, shape);
        } else {
            for (int e = 0; e < batch.batch; ++e)
                if ((*haltSteps)[size_t(e)] == 0) {
                    (*haltSteps)[size_t(e)] = ran;
                    gather(h, batch, shape, e);
                }
        }
        apply(store);
        return crossEntropy(batch);
    }
    // Ends a forward whose last step computed the rows read alone, into `rows`: the mean
    // cross-entropy.
    double finishRead(ParamStore<S>& store, const Batch& batch) {
        apply(store);
        return crossEntropy(batch);
    }
    // Rows of h (N, C) each readout is read from, example-major (the order of `rows`).
    static void readRows(const Batch& batch, const BatchShape& shape, std::vector<Index>& out) {
        out.clear();
        for (int e = 0; e < batch.batch; ++e)
            for (int k = 0; k < batch.readouts; ++k)
                out.push_back(shape.start(e) + batch.readoutPosition(e, k));
    }
    // logits and probs from rows.
    void apply(ParamStore<S>& store) {
        linearForward<S>(rows, store.value(w), logits);
        addBias(logits, store.value(b));
        probs.resize(logits.rows(), logits.cols());
        for (Index r = 0; r < logits.rows(); ++r) {
            const S mx = logits.row(r).maxCoeff();
            probs.row(r) = (logits.row(r).array() - mx).exp().matrix();
            probs.row(r) /= probs.row(r).sum();
        }
    }
    // The mean over readouts of -log softmax(logits_r)[target_r].
    double crossEntropy(const Batch& batch) const { return crossEntropy(batch.targets); }
    double crossEntropy(const std::vector<int>& targets) const {
        double loss = 0;
        for (Index r = 0; r < probs.rows(); ++r)
            loss -= std::log(std::max(double(probs(r, targets[size_t(r)])), 1e-300));
        return loss / double(std::max<Index>(1, probs.rows()));
    }
    // Accumulates the readout's parameter gradients of crossEntropy() and assigns dRows (B*R, C), the
    // gradient at the rows read.
    void backwardRows(ParamStore<S>& store, const Batch& batch) { backwardRows(store, batch.targets); }
    void backwardRows(ParamStore<S>& store, const std::vector<int>& targets) {
        dLogits = probs;
        for (Index r = 0; r < dLogits.rows(); ++r)
            dLogits(r, targets[size_t(r)]) -= S(1);
        dLogits /= S(dLogits.rows());
        biasBackward(dLogits, store.grad(b));
        linearBackward<S>(dLogits, rows, store.value(w), store.grad(w), &dRows);
    }
    // backwardRows, and dh (N, C): dRows at the rows read, zero elsewhere.
    void backward(ParamStore<S>& store, const Batch& batch, const BatchShape& shape, Mat<S>& dh) {
        backwardRows(store, batch);
        dh.setZero(shape.rows(), rows.cols());
        const int R = batch.readouts;
        for (int e = 0; e < batch.batch; ++e)
            for (int k = 0; k < R; ++k)
                dh.row(shape.start(e) + batch.readoutPosition(e, k)) += dRows.row(Index(e) * R + k);
    }
};

} // namespace ndr
